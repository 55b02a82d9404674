"""Scoring of figure relation_theorems' claims from its statistics (its sidecar's ``stats``, or the copy kept in
``docs/stats``): the ledger job and ``publish`` call :func:`score_claims`; the figure job does not."""
from __future__ import annotations

import numpy as np

from .. import claims
from ..figures.relation_theorems import Params

PREFIX = "tian.relation_theorems."
# per theorem: (the lower bound's claim, the upper bound's claim, the sequences each reads)
IDS = {"reversal": ("reversal_trained_to_one", "reversal_unseen_at_most_chance",
                    "every training sequence (A_i -> B_i of every item, B_i <- A_i of the others)",
                    "the reverses B_i <- A_i of the held-out items"),
       "chain": ("chain_steps_to_one", "chain_direct_at_most_chance",
                 "both steps A_i -> B_i and B_i -> C_i of every held-out item",
                 "the direct A_i ~> C_i of the held-out items")}
MIN_STEPS = 3  # recorded steps after t0 that a decay exponent is fitted on


def score_claims(stats: dict, params: Params) -> dict:
    """Per theorem: "p >= 1 - (M-1) / (2 (M eta_Y t / N)^c) -> 1 for some c > 0": the decay exponent of 1 - p over
    the recorded steps after t0 = N ln M / eta_Y is above 0; "p <= 1/M": M times the highest probability of a
    held-out sequence over those steps is below 1. Not run outside the theorems' assumptions that a config states,
    or with fewer than :data:`MIN_STEPS` recorded steps after t0."""
    out = {}
    for kind, (low_id, high_id, low_what, high_what) in IDS.items():
        s = stats[kind]
        ids = (PREFIX + low_id, PREFIX + high_id)
        why = None
        if not s["theorem_setting"]:
            why = f"run {s['run']!r} is outside the theorem's assumptions: " + "; ".join(s["outside_theorem"])
        elif s["steps_after_t0"] < MIN_STEPS:
            why = (f"run {s['run']!r} records {s['steps_after_t0']} step(s) after t0 = N ln M / eta_Y = "
                   f"{s['t0']:.0f} (the theorem's time), under {MIN_STEPS}: train it longer")
        if why:
            out.update({i: claims.not_run(why) for i in ids})
            continue
        c = np.array([np.nan if v is None else v for v in s["decay_exponent_per_seed"]], dtype=float)
        m, lo, hi = claims.median_interval(c)
        gap = 1.0 - np.asarray(s["p_low_last_per_seed"], dtype=float)
        setting = (f"M = {s['M']}, N = {s['N']} training sequences, eta_Y = {s['eta_Y']:g}, fitted over the "
                   f"{s['steps_after_t0']} recorded steps from t0 = N ln M / eta_Y = {s['t0']:.0f} to "
                   f"{s['last_step']:.0f}")
        control = (f"1 - p of the lowest of {low_what} at the last step: median {np.median(gap):.2e} (largest "
                   f"{gap.max():.2e}); {setting}; per seed {', '.join(f'{v:.2f}' for v in c)}")
        out[ids[0]] = claims.score(m, (lo, hi), int(np.isfinite(c).sum()), control, claims.above(m, lo, 0.0))
        high = np.asarray(s["p_high_times_M_per_seed"], dtype=float)
        ctrl = np.asarray(s["control_times_M_per_seed"], dtype=float)
        m, lo, hi = claims.median_interval(high)
        control = (f"the trained sequences of that kind (the other items'), M x their highest p at the last step: "
                   f"median {np.nanmedian(ctrl):.1f} (training raises them, the held-out ones not); {setting}; per "
                   f"seed {', '.join(f'{v:.4f}' for v in high)}")
        out[ids[1]] = claims.score(m, (lo, hi), len(high), control, claims.below(m, hi, 1.0))
    return out
