"""Scoring of figure circuits_duplicates's claims from its statistics (its sidecar's ``stats``, or the copy kept in
``docs/stats``)."""
from __future__ import annotations

import numpy as np

from .. import claims
from ..figures.circuits_duplicates import DUPLICATED, LEARNED, Params

BOTH = 0.9  # "will reinforce both circuits": at least nine in ten of the steps that raise either copy's raise both


def _values(values: list) -> list[float]:
    return [float(v) for v in values if v is not None and not np.isnan(v)]


def score_updates(stats: dict) -> dict:
    """Sec. II.a: a gradient step on one input that raises its own attention on one copy's label-deciding positions
    (the copy's first-k mass: its circuit's first link) raises it on the other copy's too: the per-seed share of
    such steps (mean over seeds, t interval) above :data:`BOTH`; not run with fewer than two seeds."""
    one = stats["single_step"]
    shares = _values(one["copies_both_rise_per_seed"])
    if len(shares) < 2:
        return claims.not_run(f"{stats['run']}: {len(shares)} seed(s) with a single-input step that raised a copy's "
                              "first-k attention")
    m, lo, hi = claims.mean_interval(shares)

    def mean(part: dict, key: str) -> str:
        values = _values(part[key])
        return f"{np.mean(values):.3f}" if values else "-"

    run_steps = stats["training_steps"]
    return claims.score(m, (lo, hi), len(shares),
                        f"{stats['run']}: of the gradient steps on one of {one['n_inputs']} training inputs alone (at "
                        f"{len(one['snapshots'])} weight snapshots, epochs {one['snapshots'][0]}-{one['snapshots'][-1]}) "
                        f"that raise one copy's first-k attention, a mean {m:.3f} [{lo:.3f}, {hi:.3f}] raise both "
                        f"({mean(one, 'copies_both_rise_first_snapshot_per_seed')} at epoch {one['snapshots'][0]}); "
                        f"independent moves {stats['independent']:.3f}. Per position: twins "
                        f"{mean(one, 'twins_both_rise_per_seed')}, equal tokens at other positions "
                        f"{mean(one, 'same_token_pairs_both_rise_per_seed')}, unequal tokens "
                        f"{mean(one, 'other_token_pairs_both_rise_per_seed')}, twins beyond k "
                        f"{mean(one, 'twins_beyond_k_both_rise_per_seed')}; the training's mini-batch updates read on "
                        f"held-out probes (its first {run_steps['steps']} steps): "
                        f"{mean(run_steps, 'copies_both_rise_per_seed')}", claims.above(m, lo, BOTH))


def score_duplicates(stats: dict) -> dict:
    """Sec. II.a: 'likely creating duplicates': more than half of the seeds that learned the task end with the
    circuit built in both copies: each copy's first-k attention above its own at the first recorded epoch, the
    weaker holding at least :data:`DUPLICATED` of the two; not run where no seed learned it."""
    end = stats["end"]
    rows = [(s, g, s0) for s, g, s0, a in zip(end["weaker_copy_share_per_seed"], end["both_grew_per_seed"],
                                              end["weaker_copy_share_first_per_seed"], end["train_acc_end_per_seed"])
            if a is not None and a >= LEARNED and s is not None]
    n_seeds = len(end["train_acc_end_per_seed"])
    if not rows:
        return claims.not_run(f"{stats['run']}: no seed learned the task (final train accuracy >= {LEARNED:g}), so "
                              "no circuit to duplicate")
    k = sum(g and s >= DUPLICATED for s, g, _ in rows)
    rate, lo, hi = claims.rate(k, len(rows))
    return claims.score(rate, (lo, hi), len(rows),
                        f"{claims.fmt_rate('seeds with the circuit in both copies', k, len(rows))} at epoch "
                        f"{end['epoch']} (of the {len(rows)} of {n_seeds} seeds whose train accuracy reached "
                        f"{LEARNED:g}); per such seed, the weaker copy's share at epoch {end['first_epoch']} -> "
                        f"{end['epoch']} and whether both copies' first-k attention grew: "
                        + ", ".join(f"{s0:.2f} -> {s:.2f} {'grew' if g else 'did not'}" for s, g, s0 in rows),
                        claims.above(rate, lo, 0.5))


def score_claims(stats: dict, params: Params) -> dict:
    return {"circuits.thought.update_reinforces_both_copies": score_updates(stats),
            "circuits.thought.duplicates_at_end": score_duplicates(stats)}
