"""Scoring of figure edge_spectrum's claims from its statistics (its sidecar's ``stats``, or the copy kept in
``docs/stats``): the ledger job and ``publish`` call :func:`score_claims`; the figure job does not."""
from __future__ import annotations

from .. import claims
from ..figures.edge_spectrum import TALK_CORR, Params


def _median(stats: dict, source: str, key: str) -> tuple[float, float, float, int]:
    v = [x for x in stats["sources"][source]["per_graph"][key] if x is not None]
    return (*claims.median_interval(v), len(v))


def score_claims(stats: dict, params: Params) -> dict:
    if "per_graph" not in stats["sources"].get("trained", {}):
        return {}
    m, lo, hi, n = _median(stats, "trained", "u1")
    nulls = {s: _median(stats, s, "u1") for s in ("untrained", "gaussian", "endpoint_sum")}
    beside = "; ".join(claims.fmt_interval(s, *v[:3]) for s, v in nulls.items())
    # the unit of the interval is the graph (each the mean over seeds): the seed count is not the sample size
    units = f"{n} graphs, each the mean over seeds"
    out = {"tian.edge_spectrum.u1_corr_above_0_9": claims.score(
        m, (lo, hi), None, f"{units}; threshold {TALK_CORR}; nulls: {beside}", claims.above(m, lo, TALK_CORR))}
    for s, (m0, lo0, hi0, _) in nulls.items():
        out[f"tian.edge_spectrum.u1_corr_vs_{s}"] = claims.score(
            m, (lo, hi), None, f"{units}; " + claims.fmt_interval(s, m0, lo0, hi0), claims.exceeds(m, lo, m0, hi0))
    m, lo, hi, n = _median(stats, "trained", "principal_cos")
    m0, lo0, hi0, _ = _median(stats, "untrained", "principal_cos")
    out["tian.edge_spectrum.subspace_vs_untrained"] = claims.score(
        m, (lo, hi), None, f"{n} graphs, each the mean over seeds; " + claims.fmt_interval("untrained", m0, lo0, hi0),
        claims.exceeds(m, lo, m0, hi0))
    return out
