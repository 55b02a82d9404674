"""Scoring of figure fig2_attention_graph's claims from its statistics (its sidecar's ``stats``, or the copy kept in
``docs/stats``): the ledger job and ``publish`` call :func:`score_claims`; the figure job does not."""
from __future__ import annotations

import numpy as np

from .. import claims
from ..figures.fig2_attention_graph import Params
from ..intervals import read_floats

BOTH_WAYS = 0.1  # "some batches reinforce": each direction in at least one step in ten (a stated convention)
PRUNED = 0.5  # "pruned": the attention beyond k falls by more than half of its start (a stated convention)
RIGHT = 0.5  # "tend to push the right attention scores": fewer than half the steps raise the mass beyond k


def score_claims(stats: dict, params: Params) -> dict:
    out = {}
    for arm, ancestors in (("scratch", False), ("curriculum", True)):
        st = next((s for key, s in stats.items()
                   if key.endswith(" (per step)") and s.get("has_ancestors") == ancestors), None)
        if st is None:
            why = f"no step run {'with' if ancestors else 'without'} ancestors in step_runs"
            for what in ("steps_push_both_ways", "final_pruning_beyond_k", "updates_push_right_scores"):
                out[f"circuits.fig2.{what}_{arm}"] = claims.not_run(why)
            continue
        out[f"circuits.fig2.steps_push_both_ways_{arm}"] = _both_ways(st)
        out[f"circuits.fig2.final_pruning_beyond_k_{arm}"] = _pruning(st)
        out[f"circuits.fig2.updates_push_right_scores_{arm}"] = _right_scores(st)
    return out


def _both_ways(st: dict) -> dict:
    shares = st["share_raising_rest_per_seed"]
    m, lo, hi = claims.mean_interval(shares)
    verdict = claims.weakest(claims.above(m, lo, BOTH_WAYS), claims.below(m, hi, 1 - BOTH_WAYS))
    return claims.score(m, (lo, hi), len(shares), f"convention: each direction >= {BOTH_WAYS:g} of the "
                        f"{st['steps']} steps (share raising the first k {st['share_raising_first_k']:.3g})", verdict)


def _right_scores(st: dict) -> dict:
    """Most steps push the right scores: the share of steps raising the mass beyond k (the complement of those
    raising the first k, as the two masses sum to 1) under one half."""
    shares = st["share_raising_rest_per_seed"]
    m, lo, hi = claims.mean_interval(shares)
    return claims.score(m, (lo, hi), len(shares), f"steps raising the first k: under {RIGHT:g} of the "
                        f"{st['steps']} steps raising the mass beyond k", claims.below(m, hi, RIGHT))


def _pruning(st: dict) -> dict:
    """The spurious links pruned in every run: per seed, the attention mass beyond k falls from the run's first
    recorded epoch to its last by more than :data:`PRUNED` of its start; the share of seeds where it does."""
    start = read_floats(st["beyond_k_mass_start_per_seed"])
    end = read_floats(st["beyond_k_mass_end_per_seed"])
    fall = (start - end) / start
    seen = np.isfinite(fall)
    k, n = int((fall[seen] > PRUNED).sum()), int(seen.sum())
    p, lo, hi = claims.rate(k, n)
    e0, e1 = st["beyond_k_epochs"]
    return claims.score(p, (lo, hi), n,
                        claims.fmt_interval(f"mass beyond k at epoch {e0} (start)", *claims.mean_interval(start)) + "; "
                        + claims.fmt_interval(f"at epoch {e1}", *claims.mean_interval(end)) + "; "
                        + claims.fmt_rate(f"seeds pruned (a fall by more than {PRUNED:g} of the start)", k, n)
                        + f"; per seed {', '.join(f'{f:.2f}' for f in fall[seen])}", claims.share_holds(k, n))
