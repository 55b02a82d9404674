"""Scoring of figure circuits_duplicates's claims from its statistics (its sidecar's ``stats``, or the copy kept in
``docs/stats``)."""
from __future__ import annotations

import numpy as np

from .. import claims
from ..figures.circuits_duplicates import DUPLICATED, LEARNED, Params

BOTH = 0.9  # "will reinforce both circuits": at least nine in ten of the updates that raise either twin raise both


def _values(values: list) -> list[float]:
    return [float(v) for v in values if v is not None and not np.isnan(v)]


def score_updates(stats: dict) -> dict:
    """Sec. II.a: a gradient step on one input that raises its own attention on a label-deciding position of one
    copy raises it on the other copy's twin too: the per-seed share of such steps (mean over seeds, t interval)
    above :data:`BOTH`."""
    one = stats["single_step"]
    shares = _values(one["twins_both_rise_per_seed"])
    if not shares:
        return claims.not_run(f"{stats['run']}: no single-input step raised the attention on a first-k position")
    m, lo, hi = claims.mean_interval(shares)
    def mean(key: str) -> float:
        return float(np.mean(_values(one[key])))

    run_steps = stats["training_steps"]
    return claims.score(m, (lo, hi), len(shares),
                        f"{stats['run']}: of the gradient steps on one of {one['n_inputs']} training inputs alone (at "
                        f"{len(one['snapshots'])} weight snapshots, epochs {one['snapshots'][0]}-{one['snapshots'][-1]}) "
                        f"that raise its attention on a first-k position or its twin, a mean {m:.3f} [{lo:.3f}, "
                        f"{hi:.3f}] raise both ({mean('twins_both_rise_at_start_per_seed'):.3f} at the start); pairs "
                        f"that are not twins {mean('other_pairs_both_rise_per_seed'):.3f}, the twins beyond k "
                        f"{mean('twins_beyond_k_both_rise_per_seed'):.3f}, independent moves "
                        f"{stats['independent']:.3f}; the training's mini-batch updates read on held-out probes "
                        f"(its first {run_steps['steps']} steps): {np.mean(_values(run_steps['twins_both_rise_per_seed'])):.3f}",
                        claims.above(m, lo, BOTH))


def score_duplicates(stats: dict) -> dict:
    """Sec. II.a: 'likely creating duplicates': more than half of the seeds that learned the task end with both
    copies holding attention (the weaker at least :data:`DUPLICATED` of the two copies' first-k attention); not run
    where no seed learned it."""
    end = stats["end"]
    learned = [s for s, a in zip(end["weaker_copy_share_per_seed"], end["train_acc_end_per_seed"])
               if a is not None and a >= LEARNED and s is not None]
    n_seeds = len(end["train_acc_end_per_seed"])
    if not learned:
        return claims.not_run(f"{stats['run']}: no seed learned the task (final train accuracy >= {LEARNED:g}), so "
                              "no circuit to duplicate")
    k = sum(s >= DUPLICATED for s in learned)
    rate, lo, hi = claims.rate(k, len(learned))
    return claims.score(rate, (lo, hi), len(learned),
                        f"{claims.fmt_rate('seeds with both copies attended', k, len(learned))} at epoch "
                        f"{end['epoch']} (of the {len(learned)} of {n_seeds} seeds that learned the task); the weaker "
                        f"copy's share per learned seed: {', '.join(f'{s:.2f}' for s in learned)}",
                        claims.above(rate, lo, 0.5))


def score_claims(stats: dict, params: Params) -> dict:
    return {"circuits.thought.update_reinforces_both_copies": score_updates(stats),
            "circuits.thought.duplicates_at_end": score_duplicates(stats)}
