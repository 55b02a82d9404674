"""Scoring of figure llc_trajectories's claims from its statistics (its sidecar's ``stats``, or the copy kept in
``docs/stats``): the ledger job and ``publish`` call :func:`score_claims`; the figure job does not."""
from __future__ import annotations

from .. import claims
from ..figures.llc_trajectories import Params


def score_claims(stats: dict, params: Params) -> dict:
    out = {}
    for cid, key, what in (("llc.moves_at_eureka", "eureka", "Eureka-moments"),
                           ("llc.moves_at_curriculum_switch", "switch", "curriculum switches")):
        s = stats[key]
        if s["n"] == 0:
            out[cid] = claims.not_run(f"no {what} among the drawn runs")
            continue
        lo, hi = s["ci95"]
        out[cid] = claims.score(s["mean_difference"], (lo, hi), s["n"], "|LLC change| at random epochs of the seed",
                                claims.above(s["mean_difference"], lo, 0.0))
    return out
