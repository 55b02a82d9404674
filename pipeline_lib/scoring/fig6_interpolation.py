"""Scoring of figure fig6_interpolation's claims from its statistics (its sidecar's ``stats``, or the copy kept in
``docs/stats``): the ledger job and ``publish`` call :func:`score_claims`; the figure job does not."""
from __future__ import annotations

import math

from .. import claims
from ..figures.fig6_interpolation import Params

# Fig. 6's "high potential barrier" between theta_4 and theta_2->4 (p = 4): high read as above the loss of a
# uniform guess over the p = 4 classes, so that the straight path passes through models worse than guessing (a
# barrier is >= 0 by construction, so "above 0" could not fail); the paper prints no value
CHANCE_LOSS = math.log(4)


def score_claims(stats: dict, params: Params) -> dict:
    controls = stats.get("controls", {})
    out = {"circuits.fig6.barrier_between_solutions": high_barrier(stats, controls),
           "circuits.fig6.test_barrier_exceeds_same_arm": exceeds_controls(stats, controls, "test")}
    out["circuits.fig6.barrier_exceeds_same_arm_shifted"] = (
        exceeds_controls(stats["cross_arm_shifted"], controls) if "cross_arm_shifted" in stats
        else claims.not_run("no cross_arm_shifted entry configured"))
    return out


def high_barrier(measured: dict, controls: dict) -> dict:
    """The median train loss barrier against the chance-level loss (:data:`CHANCE_LOSS`), with the same-arm
    controls' medians beside it."""
    values = measured["barrier_train"]["per_seed"]
    med, lo, hi = claims.median_interval(values)
    beside = [claims.fmt_interval(label, *claims.median_interval(st["barrier_train"]["per_seed"]))
              for label, st in controls.items()]
    return claims.score(med, (lo, hi), len(values), f"chance-level loss ln 4 = {CHANCE_LOSS:.3f}"
                        + ("; same-arm barriers: " + "; ".join(beside) if beside else ""),
                        claims.above(med, lo, CHANCE_LOSS))


def exceeds_controls(measured: dict, controls: dict, split: str = "train") -> dict:
    """The median ``split`` loss barrier of ``measured`` against every control's (bootstrap intervals):
    the weakest of the :func:`claims.exceeds` verdicts."""
    if not controls:
        return claims.not_run("no same-arm control entries configured (controls)")
    values = measured[f"barrier_{split}"]["per_seed"]
    med, lo, hi = claims.median_interval(values)
    verdicts, texts = [], []
    for label, st in controls.items():
        m0, lo0, hi0 = claims.median_interval(st[f"barrier_{split}"]["per_seed"])
        verdicts.append(claims.exceeds(med, lo, m0, hi0))
        texts.append(claims.fmt_interval(label, m0, lo0, hi0))
    return claims.score(med, (lo, hi), len(values), "; ".join(texts), claims.weakest(*verdicts))
