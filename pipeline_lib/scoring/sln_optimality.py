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
    vs = stats["variants"]
    if variant not in vs or vs[variant]["n_queries_under_10"] == 0:
        return claims.not_run(f"variant {variant!r} on graphs under 10 nodes not in the analysis")
    k, n = vs[variant]["n_optimal_under_10"], vs[variant]["n_queries_under_10"]
    p, lo, hi = claims.rate(k, n)
    beside = (claims.fmt_rate(f"{other}:", vs[other]["n_optimal_under_10"], vs[other]["n_queries_under_10"])
              if other in vs and vs[other]["n_queries_under_10"] else f"{other}: not run")
    return claims.score(p, (lo, hi), None, f"threshold {TALK_RATE}; {beside}", claims.above(p, lo, TALK_RATE))


def score_claims(stats: dict, params: Params) -> dict:
    return {"tian.sln_optimality.chosen_reading_above_99": score_chosen(stats),
            "tian.sln_optimality.scaled_above_99": score_variant(stats, "scaled", "unscaled"),
            "tian.sln_optimality.unscaled_above_99": score_variant(stats, "unscaled", "scaled")}
