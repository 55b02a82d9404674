"""Scoring of figure sln_optimality's claims from its statistics (its sidecar's ``stats``, or the copy kept in
``docs/stats``): the ledger job and ``publish`` call :func:`score_claims`; the figure job does not."""
from __future__ import annotations

from .. import claims
from ..figures.sln_optimality import TALK_RATE, Params


def score_chosen(stats: dict) -> dict:
    """The talk's > 99% on the report graphs, for the reading chosen on the exploration graphs."""
    chosen = stats.get("chosen_reading")
    if chosen is None:
        return claims.not_run("no exploration graphs in the analysis")
    out = score_variant(stats, chosen, "scaled" if chosen == "unscaled" else "unscaled")
    out["control"] = (f"reading chosen on the exploration graphs: {chosen} (their rates: "
                      + ", ".join(f"{v} {r:.4f}" for v, r in stats["explore_rate_under_10"].items()) + "); "
                      + out["control"])
    return out


def score_variant(stats: dict, variant: str, other: str) -> dict:
    """The share of optimal queries on the report graphs under 10 nodes for one reading, its interval resampling
    whole graphs (the queries of one graph are not independent draws)."""
    vs = stats["variants"]
    if variant not in vs or vs[variant]["n_queries_under_10"] == 0:
        return claims.not_run(f"variant {variant!r} on graphs under 10 nodes not in the analysis")
    if "graph_optimal_under_10" not in vs[variant]:
        return claims.not_run("per-graph counts not kept (statistics of an older sln analysis): rerun the analysis")
    queries = stats["graph_queries_under_10"]
    p, lo, hi = _per_graph(vs[variant], queries)
    beside = (claims.fmt_interval(f"{other}:", *_per_graph(vs[other], queries), digits=4)
              if "graph_optimal_under_10" in vs.get(other, {}) else f"{other}: not run")
    missed = sum(k < q for k, q in zip(vs[variant]["graph_optimal_under_10"], queries))
    return claims.score(p, (lo, hi), None,
                        f"threshold {TALK_RATE}; {vs[variant]['n_optimal_under_10']} of "
                        f"{vs[variant]['n_queries_under_10']} queries over {len(queries)} graphs, {missed} of them "
                        f"with a query not solved optimally; {beside}", claims.above(p, lo, TALK_RATE))


def _per_graph(variant: dict, queries: list) -> tuple[float, float, float]:
    return claims.cluster_rate(variant["graph_optimal_under_10"], queries)


def score_claims(stats: dict, params: Params) -> dict:
    return {"tian.sln_optimality.chosen_reading_above_99": score_chosen(stats),
            "tian.sln_optimality.scaled_above_99": score_variant(stats, "scaled", "unscaled"),
            "tian.sln_optimality.unscaled_above_99": score_variant(stats, "unscaled", "scaled")}
