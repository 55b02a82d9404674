"""Sec. II.a of the circuits paper ("some reinforce the 3 tokens among the 8 ones ... This is because some specific
memorization circuits could be taken to memorize different batches"): early in a mini-batch run (analysis
batch_steps), do the batch steps that raise their own batch's attention on the positions beyond k, the tokens that
do not decide the label, fit unseen data less than the steps that lower it? Left: every batch step of every seed at
the measured snapshots, the cosine between its gradient and the held-out loss's gradient against the change of its
batch's attention mass beyond k (first order, along the step). Right: per seed, the mean cosine of the steps that
raise that mass and of those that lower it, joined."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr
from matplotlib.figure import Figure

from ..intervals import json_floats
from ..plumbing.store import read_dataset
from . import style

NAME = "circuits_batch_steps"
PAPER = "Easing Optimization Paths: a Circuit Perspective"
CONFIG = """
description: Early batch steps of a mini-batch run; do those raising the attention beyond k fit unseen data less than those lowering it?
required: [run]
properties:
  run:
    description: "A sparse_modular_addition run measured by analyses.batch_steps (the default: Fig. 2's run from scratch)."
    type: string
    x-ref: run
    x-reads: [analysis/batch_steps, trajectory]
    x-requires: {properties: {dataset: {properties: {task: {const: sparse_modular_addition}}}}}
    x-requires-message: "must be a sparse_modular_addition run (positions beyond k do not decide its label)"
  shuffle_seed: {description: "Seed of the control's shuffle of the raising and lowering labels within each seed.", type: integer, default: 0}
"""


@dataclass(frozen=True)
class Params:
    run: str
    shuffle_seed: int = 0


def gap(cosine: np.ndarray, raising: np.ndarray, lowering: np.ndarray) -> float | None:
    """Mean cosine of the ``lowering`` steps minus that of the ``raising`` ones; None where either group is
    empty."""
    if not raising.any() or not lowering.any():
        return None
    return float(cosine[lowering].mean() - cosine[raising].mean())


def step_stats(ds: xr.Dataset, k: int, shuffle_seed: int) -> dict:
    """Per seed, over every (snapshot, batch): the share of the steps that raise their batch's attention mass on the
    positions >= k, the mean test cosine of those that raise it and of those that lower it (a step that leaves it
    exactly unchanged is neither), their gap (lowering minus raising) and, as the control, the same gap with the
    labels shuffled within the seed; and the held-out inputs' own step's change of their mass beyond k, mean over
    the snapshots (negative: the mean step lowers it)."""
    beyond = ds.attention_change.isel(position=slice(k, None)).sum("position").values  # (seed, snapshot, batch)
    cosine = ds.test_cosine.values
    rng = np.random.default_rng(shuffle_seed)
    out = {"share_raising_per_seed": [], "cos_raising_per_seed": [], "cos_lowering_per_seed": [],
           "gap_per_seed": [], "gap_shuffled_per_seed": []}
    for b, c in zip(beyond.reshape(len(beyond), -1), cosine.reshape(len(cosine), -1)):
        up, down = b > 0, b < 0
        out["share_raising_per_seed"].append(float(up.mean()))
        out["cos_raising_per_seed"].append(float(c[up].mean()) if up.any() else None)
        out["cos_lowering_per_seed"].append(float(c[down].mean()) if down.any() else None)
        out["gap_per_seed"].append(gap(c, up, down))
        moved = np.flatnonzero(up | down)
        label = rng.permutation(up[moved])
        out["gap_shuffled_per_seed"].append(gap(c[moved], label, ~label))
    held_out = ds.test_attention_change.isel(position=slice(k, None)).sum("position").mean("snapshot")
    return {**out, "snapshots": [int(e) for e in ds.snapshot.values], "n_batches": int(ds.sizes["batch"]),
            "batch_size": int(ds.attrs["batch_size"]),
            "cos_all_per_seed": json_floats(cosine.reshape(len(cosine), -1).mean(1)),
            "held_out_beyond_k_change_per_seed": json_floats(held_out)}


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    traj = read_dataset(paths.trajectory(params.run), rule="train")
    k = int(traj.attrs["task_k"])
    ds = read_dataset(paths.analysis("batch_steps", params.run), rule="batch_steps")
    stats = {"run": params.run, "k": k, "T": int(traj.attrs["task_T"]), **step_stats(ds, k, params.shuffle_seed)}
    gaps = [g for g in stats["gap_per_seed"] if g is not None]
    stats["summary"] = (
        f"{params.run}, {stats['n_batches']} batches at epochs {stats['snapshots']}: a median "
        f"{np.median(stats['share_raising_per_seed']):.3f} of the batch steps raise their batch's attention beyond "
        f"k = {k}; the steps lowering it minus those raising it, in cosine with the held-out gradient, a mean "
        f"{np.mean(gaps) if gaps else float('nan'):.3f} over {len(gaps)} seeds")
    beyond = ds.attention_change.isel(position=slice(k, None)).sum("position")
    return plot_circuits_batch_steps(beyond.values, ds.test_cosine.values, stats), stats


def plot_circuits_batch_steps(beyond: np.ndarray, cosine: np.ndarray, stats: dict) -> Figure:
    """``beyond``, ``cosine``: (seed, snapshot, batch); ``stats``: :func:`step_stats`."""
    fig, axes = style.figure(ncols=2, width=3.8, height=3.0)
    ax = axes[0][0]
    up = beyond > 0
    ax.scatter(beyond[up], cosine[up], s=4, color="C3", alpha=0.5, label="raises the mass beyond k")
    ax.scatter(beyond[~up], cosine[~up], s=4, color="C0", alpha=0.5, label="lowers it")
    ax.axvline(0, color="k", lw=0.8)
    ax.set(xlabel="change of the batch's attention beyond k\n(first order, per unit step)",
           ylabel="cosine with the held-out gradient", title=f"batch steps, epochs {stats['snapshots'][0]}-"
                                                              f"{stats['snapshots'][-1]}")
    ax.legend(fontsize=7, frameon=False)
    ax = axes[0][1]
    for s, (r, lo) in enumerate(zip(stats["cos_raising_per_seed"], stats["cos_lowering_per_seed"])):
        if r is not None and lo is not None:
            ax.plot([0, 1], [r, lo], color="0.6", lw=0.8)
            ax.scatter([0, 1], [r, lo], color=["C3", "C0"], s=12, zorder=3)
    ax.set_xticks([0, 1], ["raise beyond k", "lower beyond k"])
    ax.set(xlim=(-0.4, 1.4), ylabel="mean cosine with the held-out gradient", title="per seed")
    return fig
