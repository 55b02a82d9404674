"""Scoring of figure relation_theorems' claims from its statistics (its sidecar's ``stats``, or the copy kept in
``docs/stats``): the ledger job and ``publish`` call :func:`score_claims`; the figure job does not."""
from __future__ import annotations

import numpy as np

from .. import claims
from ..figures.relation_theorems import Params
from ..intervals import read_floats

PREFIX = "tian.relation_theorems."
# per theorem: (the lower bound's claim, the upper bound's claim, the sequences each reads)
IDS = {"reversal": ("reversal_trained_to_one", "reversal_unseen_at_most_chance",
                    "every training sequence (A_i -> B_i of every item, B_i <- A_i of the others)",
                    "the reverses B_i <- A_i of the held-out items"),
       "chain": ("chain_steps_to_one", "chain_direct_at_most_chance",
                 "both steps A_i -> B_i and B_i -> C_i of every held-out item",
                 "the direct A_i ~> C_i of the held-out items")}
MIN_STEPS = 3  # recorded steps after t0 that a decay exponent is fitted on
LEARNED = 0.5  # p of the lowest lower-bound sequence at the last step: the label is the most probable token


def score_claims(stats: dict, params: Params) -> dict:
    """Per theorem, seed by seed (the bounds hold for every run, so every seed must meet them: share_holds):
    "p >= 1 - (M-1) / (2 (M eta_Y t / N)^c) -> 1 for some c > 0": 1 - p of the lowest sequence falls as a power of t
    over the recorded steps after t0 = N ln M / eta_Y (decay exponent above 0) and still over their last third, and
    that sequence's p is above :data:`LEARNED` at the last step; "p <= 1/M": M times the highest probability of a
    held-out sequence over those steps is at most 1. Not run outside the theorems' assumptions that a config states,
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
        c, c_end = read_floats(s["decay_exponent_per_seed"]), read_floats(s["end_decay_exponent_per_seed"])
        p_last = read_floats(s["p_low_last_per_seed"])
        holds = (c > 0) & (c_end > 0) & (p_last > LEARNED)
        k, n = int(holds.sum()), len(holds)
        share, lo, hi = claims.rate(k, n)
        cm, clo, chi = claims.median_interval(c)
        setting = (f"M = {s['M']}, N = {s['N']} training sequences, eta_Y = {s['eta_Y']:g}, the {s['steps_after_t0']} "
                   f"recorded steps from t0 = N ln M / eta_Y = {s['t0']:.0f} to {s['last_step']:.0f}")
        control = (f"of {low_what}, the lowest: decay exponent of 1 - p {cm:.2f} [{clo:.2f}, {chi:.2f}] (median over "
                   f"seeds), over the last {s['end_steps']} steps {np.nanmedian(c_end):.2f} (smallest "
                   f"{np.nanmin(c_end):.2f}); 1 - p at the last step {np.nanmedian(1 - p_last):.2e} (largest "
                   f"{np.nanmax(1 - p_last):.2e}); {setting}; per seed {', '.join(f'{v:.2f}' for v in c)}")
        out[ids[0]] = claims.score(share, (lo, hi), n, control, claims.share_holds(k, n))
        high, ctrl = read_floats(s["p_high_times_M_per_seed"]), read_floats(s["control_times_M_per_seed"])
        holds = high <= 1.0
        k, n = int(holds.sum()), len(holds)
        share, lo, hi = claims.rate(k, n)
        control = (f"M x the highest p of {high_what} over those steps: median {np.nanmedian(high):.4f}, largest "
                   f"{np.nanmax(high):.4f}; the trained sequences of that kind (the other items') over the same steps: "
                   f"median {np.nanmedian(ctrl):.1f} (training raises them); {setting}; per seed "
                   f"{', '.join(f'{v:.4f}' for v in high)}")
        out[ids[1]] = claims.score(share, (lo, hi), n, control, claims.share_holds(k, n))
    return out
