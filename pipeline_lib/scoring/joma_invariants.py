"""Scoring of figure joma_invariants's claims from its statistics (its sidecar's ``stats``, or the copy kept in
``docs/stats``): the ledger job and ``publish`` call :func:`score_claims`; the figure job does not."""
from __future__ import annotations

import numpy as np

from .. import claims
from ..figures.joma_invariants import SATISFIED, Params, slot_values


def score_claims(stats: dict, params: Params) -> dict:
    """The invariant of each attention kind at rho = 1 on the Gaussian X, at every other ratio of both kinds, and
    of both kinds at rho = 1 on the uniform X; a case this config does not draw is not run."""
    out = {}
    for kind in ("exp", "linear"):
        s = stats.get(kind)
        out[f"tian.joma_invariants.{kind}_invariant"] = (
            _holds(slot_values(s, "violation", True), slot_values(s, "control_violation", True), "the other form")
            if s and slot_values(s, "violation", True) else claims.not_run(f"no {kind} run at rho = 1"))
    own = [v for k in ("exp", "linear") if k in stats for v in slot_values(stats[k], "violation", False)]
    ctrl = [v for k in ("exp", "linear") if k in stats for v in slot_values(stats[k], "violation_ignoring_rho", False)]
    out["tian.joma_invariants.any_learning_rates"] = (_holds(own, ctrl, "the estimate ignoring rho") if own
                                                      else claims.not_run("no slot with eta_z != eta_W"))
    uniform = [stats[k] for k in ("exp_uniform", "linear_uniform") if k in stats]
    own = [v for s in uniform for v in slot_values(s, "violation", True)]
    ctrl = [v for s in uniform for v in slot_values(s, "control_violation", True)]
    out["tian.joma_invariants.no_data_assumption"] = (_holds(own, ctrl, "the other form") if own
                                                      else claims.not_run("no run on the uniform X"))
    return out


def _holds(violation: list[float], control: list[float], control_label: str) -> dict:
    """Every slot's violation at most SATISFIED (share_holds), and the control's median above it (its interval:
    the statistic tells the invariant from the control); the weakest of the two."""
    v = np.array(violation, dtype=float)
    k, n = int(np.sum(v <= SATISFIED)), len(v)  # NaN (the side never moved) does not hold
    p, lo, hi = claims.rate(k, n)
    m, clo, chi = claims.median_interval(np.nan_to_num(np.array(control, dtype=float), nan=0.0))
    return claims.score(p, (lo, hi), n, claims.fmt_interval(f"{control_label}: median violation", m, clo, chi)
                        + "; violations " + ", ".join(f"{x:.2g}" for x in v),
                        claims.weakest(claims.share_holds(k, n), claims.above(m, clo, SATISFIED)))
