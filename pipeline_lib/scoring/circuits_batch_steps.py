"""Scoring of figure circuits_batch_steps's claims from its statistics (its sidecar's ``stats``, or the copy kept in
``docs/stats``)."""
from __future__ import annotations

import numpy as np

from .. import claims
from ..figures.circuits_batch_steps import Params


def score_memorization(stats: dict) -> dict:
    """Sec. II.a: the batch steps that raise their batch's attention beyond k fit unseen data less than those that
    lower it: the per-seed gap in cosine with the held-out gradient (lowering minus raising), mean over the seeds
    that have both kinds of step, above 0 (t interval); not run where fewer than two seeds have both."""
    gaps = [g for g in stats["gap_per_seed"] if g is not None]
    if len(gaps) < 2:
        return claims.not_run(f"{stats['run']}: {len(gaps)} seed(s) with both steps that raise and steps that lower "
                              "the attention beyond k at the measured snapshots")
    m, lo, hi = claims.mean_interval(gaps)
    shuffled = [g for g in stats["gap_shuffled_per_seed"] if g is not None]

    def mean(key: str) -> float:
        return float(np.mean([v for v in stats[key] if v is not None]))

    return claims.score(m, (lo, hi), len(gaps),
                        f"{stats['run']}: {stats['n_batches']} batches of {stats['batch_size']} at epochs {stats['snapshots'][0]}-"
                        f"{stats['snapshots'][-1]}; a mean {mean('share_raising_per_seed'):.3f} of the steps raise "
                        f"their batch's attention beyond k = {stats['k']}; their cosine with the held-out gradient "
                        f"{mean('cos_raising_per_seed'):.3f} against {mean('cos_lowering_per_seed'):.3f} for the "
                        f"steps lowering it (all steps {mean('cos_all_per_seed'):.3f}); the gap with the labels "
                        f"shuffled within each seed (control) {np.mean(shuffled) if shuffled else float('nan'):.3f}; "
                        f"the held-out step's own change of the mass beyond k {mean('held_out_beyond_k_change_per_seed'):.2g} "
                        "per unit step (negative: the mean step lowers it)",
                        claims.above(m, lo, 0.0))


def score_claims(stats: dict, params: Params) -> dict:
    return {"circuits.fig2.spurious_steps_memorize_batches": score_memorization(stats)}
