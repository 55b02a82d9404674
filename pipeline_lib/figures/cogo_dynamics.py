"""Modular addition (Tian's CoGO analysis): how the algebraic structure forms over training. Per weight
snapshot of one run: training and test loss; the share of frequencies whose node count q_k is 4 or 6
(or 0: no node, as the table counts) and the mean order; the mean factorisation error of the order-4/6 frequencies (every solved seed
thin, median bold). The talk's solutions are read off the final weights; this shows when they
appear."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr
from matplotlib.figure import Figure

from ..plumbing.store import read_dataset
from . import style

NAME = "cogo_dynamics"
PAPER = "Tian: algebraic structure of solutions (CoGO, GaLore)"
CONFIG = """
description: Order-4/6 structure and factorisation error of a modular-addition run over its weight snapshots.
required: [run]
properties:
  run:
    description: "A run listed in analyses.fourier.runs."
    type: string
    x-ref: run
    x-reads: [analysis/fourier, trajectory]
"""
LOSS_FALLEN = 0.1  # the loss "has fallen" at the first logged epoch where it is at most this share of epoch 0's


@dataclass(frozen=True)
class Params:
    run: str


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    an = read_dataset(paths.analysis("fourier", params.run), rule="fourier")
    traj = read_dataset(paths.trajectory(params.run), rule="train")
    an = an.sel(seed=an.seed.values[an.solved.values.astype(bool)])
    if an.sizes["seed"] == 0:  # the accuracy gate left nothing to show
        fig, axes = style.figure()
        axes[0, 0].axis("off")
        axes[0, 0].text(0.5, 0.5, f"{params.run}: no seed reached train and test accuracy 1", ha="center", fontsize=8)
        return fig, {"run": params.run, "solved_seeds": 0,
                     "summary": f"{params.run}: no solved seed (train and test accuracy 1), nothing to analyse"}
    x = an.snapshot.values  # epochs as they are, 0 included: a symlog axis (linear below 1, log above) keeps 0 and 1 apart
    fig, axes = style.figure(ncols=3, width=3.4)
    ax = axes[0, 0]
    ep = traj.epoch.values
    style.seeds_and_median(ax, ep, traj.train_loss, style.ARM_COLORS[0], label="train")
    style.seeds_and_median(ax, ep, traj.test_loss, style.ARM_COLORS[1], label="test")
    ax.set_yscale("log")
    ax.set_ylabel("centred MSE loss")
    ax.legend(fontsize=7)
    # as the table counts: a frequency with no node (q_k = 0) is not a "not order-4/6" one
    share = xr.DataArray(np.isin(an.q_k.values, (0, 4, 6)).mean(-1), dims=("seed", "snapshot"),
                         coords={"seed": an.seed.values})
    ax = axes[0, 1]
    style.seeds_and_median(ax, x, share, style.ARM_COLORS[2], label="share with q_k in {0, 4, 6}")
    ax.set_ylim(-0.05, 1.05)
    ax2 = ax.twinx()
    mean_order = an.order.mean("freq")
    ax2.plot(x, mean_order.median("seed"), color=style.ARM_COLORS[3], lw=1.2, label="mean order (median)")
    ax2.set_ylabel("mean order", color=style.ARM_COLORS[3])
    ax2.tick_params(axis="y", colors=style.ARM_COLORS[3])
    ax.set_ylabel("share of frequencies")
    # one legend of both axes, above the panel: the twin axis is drawn over anything inside it
    (h1, l1), (h2, l2) = ax.get_legend_handles_labels(), ax2.get_legend_handles_labels()
    ax2.legend(h1 + h2, l1 + l2, fontsize=7, loc="lower center", bbox_to_anchor=(0.5, 1.0))
    err = an.fact_error.mean("freq", skipna=True)
    ax = axes[0, 2]
    style.seeds_and_median(ax, x, err, style.ARM_COLORS[4], label="order-4/6 frequencies")
    if (err.values > 0).any():  # none: no frequency of order 4 or 6 at any snapshot
        ax.set_yscale("log")
    ax.set_ylabel("mean factorisation error")
    ax.legend(fontsize=7)
    for a in axes[0]:
        a.set_xscale("symlog", linthresh=1)
        a.set_xlim(left=0)
        a.set_xlabel("epoch")
    med_share = share.median("seed").values
    reach = np.flatnonzero(med_share >= 1.0)
    stats = {"run": params.run, "solved_seeds": int(an.sizes["seed"]),
             "share_46": {int(e): float(v) for e, v in zip(an.snapshot.values, med_share)},
             "mean_error": {int(e): float(v) for e, v in zip(an.snapshot.values, err.median("seed").values)},
             "first_epoch_all_46": int(an.snapshot.values[reach[0]]) if len(reach) else None}
    stats["per_seed"] = seed_epochs(share, an.snapshot.values, traj.sel(seed=an.seed.values))
    final_err = float(err.isel(snapshot=-1).median())
    stats["summary"] = (f"{params.run}: {stats['solved_seeds']} solved seeds; median share of frequencies with q_k 0, 4 or 6 "
                        f"{med_share[0]:.2f} at epoch {int(an.snapshot.values[0])}, {med_share[-1]:.2f} at the end"
                        + (f" (all of them from epoch {stats['first_epoch_all_46']})" if len(reach) else "")
                        + f"; median mean factorisation error at the end {final_err:.2e}")
    return fig, stats


def seed_epochs(share: xr.DataArray, snaps: np.ndarray, traj: xr.Dataset) -> dict:
    """Per solved seed: the first snapshot epoch from which every frequency has q_k in {0, 4, 6} to the end
    (None: never) and the snapshot before it (None: never, or from the first snapshot on), the first logged epoch where the training loss is at most LOSS_FALLEN of its epoch-0
    value (None: never), and the epoch-0 share."""
    loss = traj.train_loss.values  # (seed, epoch)
    out: dict = {"seed": [int(s) for s in share.seed.values], "structure_epoch": [], "missing_epoch": [],
                 "loss_fall_epoch": [], "share_46_epoch0": [float(v) for v in share.isel(snapshot=0).values]}
    for s in range(share.sizes["seed"]):
        full = share.values[s] >= 1.0
        late = np.flatnonzero(~full)
        start = 0 if len(late) == 0 else int(late[-1]) + 1
        out["structure_epoch"].append(int(snaps[start]) if start < len(snaps) else None)
        out["missing_epoch"].append(int(snaps[start - 1]) if 0 < start < len(snaps) else None)
        fell = np.flatnonzero(loss[s] <= LOSS_FALLEN * loss[s, 0])
        out["loss_fall_epoch"].append(int(traj.epoch.values[fell[0]]) if len(fell) else None)
    return out


