"""Scoring of figure scan_snap_gain's claims from its statistics (its sidecar's ``stats``, or the copy kept in
``docs/stats``): the ledger job and ``publish`` call :func:`score_claims`; the figure job does not."""
from __future__ import annotations

import numpy as np

from .. import claims
from ..figures.scan_snap_gain import Params

ID = "tian.scan_snap_gain.closed_form"
TOLERANCE = 0.10  # the closed form predicts no spread; the project's tolerance for a point reference (REL_TOL)
MIN_GAIN = 0.1  # log chi_l0 below this at the last step: the dominant token gained too little to compare estimates
OVERTAKEN = 1e6  # the spread of a seed where another token overtook the dominant one: no common factor at all


def score_claims(stats: dict, params: Params) -> dict:
    """"r_{l/l'|n}(t) = r_{l/l'|n}(0) chi_l(t)": the estimates of log chi_l0 at the last step, one per other distinct
    token, agree (their spread within :data:`TOLERANCE` of the closed form's 0); not run outside the theorem's
    assumptions, or where the dominant token gained less than :data:`MIN_GAIN` (nothing to compare)."""
    if not stats["theorem_setting"]:
        return {ID: claims.not_run(f"run {params.run!r} is outside the theorem's assumptions: "
                                   + "; ".join(stats["outside_theorem"]))}
    gain, g_lo, g_hi = claims.median_interval(stats["log_chi_per_seed"])
    if not gain >= MIN_GAIN:
        return {ID: claims.not_run(f"the dominant token's log chi at step {stats['last_step']} is {gain:.3g} "
                                   f"(median over seeds), under {MIN_GAIN}: too little gain to compare its estimates")}
    # a seed where another token overtook the dominant one has no common factor: larger than any spread
    spread = np.array([OVERTAKEN if k else (np.nan if s is None else s)
                       for s, k in zip(stats["spread_per_seed"], stats["overtaken_per_seed"])], dtype=float)
    m, lo, hi = claims.median_interval(spread)
    first, f_lo, f_hi = claims.median_interval(stats["spread_first_power_per_seed"])
    smaller = int(np.sum(spread < np.array([np.nan if s is None else s
                                            for s in stats["spread_first_power_per_seed"]], dtype=float)))
    rho, _, _ = claims.median_interval(stats["trend_per_seed"])
    lowest = np.nanmin(stats["lowest_multiple_per_seed"])
    overtaken = sum(stats["overtaken_per_seed"])
    control = (f"the same spread for the first power (c_l0 / c_l' - 1, not the theorem's form) "
               f"{first:.3f} [{f_lo:.3f}, {f_hi:.3f}], above the squared form's in {smaller} of {len(spread)} seeds; "
               f"Spearman's rho of the estimates with the other token's frequency {rho:.2f} (median over seeds; 0 "
               f"for estimates that differ by noise alone); log chi_l0 {gain:.3f} [{g_lo:.3f}, {g_hi:.3f}] at step "
               f"{stats['last_step']}; the smallest r(t)/r(0) over every step, class and token {lowest:.4f} "
               + ("(at least 1, the theorem's lower bound)" if lowest >= 1 else "(below 1: the theorem's lower bound "
                  "is broken at some step)")
               + (f"; {overtaken} (seed, class, token) overtook the dominant token" if overtaken else "")
               + f"; per seed {', '.join(f'{v:.3f}' for v in spread)}")
    n = int((~np.isnan(spread)).sum())  # the seeds the median reads
    return {ID: claims.score(m, (lo, hi), n, control, claims.near(m, lo, hi, 0.0, TOLERANCE))}
