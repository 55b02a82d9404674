"""Every run of the config at a glance: test accuracy and loss against epochs, one pair of panels per run
(every seed thin, the median bold; training curves dashed), a curriculum's earlier phases in front and each
switch marked by a dotted line. A run added to the config appears here without a figure of its own."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter

from . import style
from .reading import arm_trajectory

NAME = "run_curves"
PAPER = "Every run"
CONFIG = """
description: Accuracy and loss curves of every run (or of the listed ones), one pair of panels per run.
properties:
  runs:
    description: "all (every run of the config, default) or a list of runs."
    type: [string, array]
    pattern: "^all$"
    items: {type: string, x-ref: run}
    x-all-runs: true
    default: all
  per_row: {description: "Runs per row (two panels each).", type: integer, minimum: 1, default: 3}
"""
METRICS = ["train_loss", "test_loss", "train_acc", "test_acc"]


@dataclass(frozen=True)
class Params:
    runs: str | tuple[str, ...] = "all"
    per_row: int = 3


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    runs = list(cfg.runs) if params.runs == "all" else list(params.runs)
    ncols, nrows = 2 * params.per_row, math.ceil(len(runs) / params.per_row)
    fig, axes = style.figure(ncols=ncols, nrows=nrows, width=2.3, height=1.9)
    stats: dict = {"runs": {}}
    for i, run in enumerate(runs):
        traj, switches = arm_trajectory(cfg, run, paths, METRICS)
        epochs = traj.epoch.values
        acc_ax, loss_ax = axes[i // params.per_row, 2 * (i % params.per_row)], axes[i // params.per_row, 2 * (i % params.per_row) + 1]
        style.seeds_and_median(acc_ax, epochs, traj.test_acc, style.ARM_COLORS[0], label="test")
        acc_ax.plot(epochs, traj.train_acc.median("seed"), color=style.ARM_COLORS[0], ls="--", lw=1, label="train")
        style.seeds_and_median(loss_ax, epochs, traj.test_loss, style.ARM_COLORS[1], label="test")
        loss_ax.plot(epochs, traj.train_loss.median("seed"), color=style.ARM_COLORS[1], ls="--", lw=1, label="train")
        drawn = np.concatenate([traj.test_loss.values.ravel(), traj.train_loss.median("seed").values])
        positive = drawn[np.isfinite(drawn) & (drawn > 0)]  # a loss of exactly 0 (float underflow) is left off a log axis
        # log where the losses span more than a decade (with less, a log axis has no labelled tick at all)
        if positive.size and positive.max() / positive.min() > 10:
            loss_ax.set_yscale("log")
            loss_ax.yaxis.set_minor_formatter(NullFormatter())  # labels at the decades only
        else:  # the losses themselves on the ticks, not an offset above the panel (e.g. "1e-5+1.7917")
            loss_ax.ticklabel_format(axis="y", useOffset=False)
        for ax, what in ((acc_ax, "accuracy"), (loss_ax, "loss")):
            for e in switches:
                ax.axvline(e, color="k", ls=":", lw=0.8)
            ax.set_title(f"{run}: {what}", fontsize=7)
            ax.tick_params(labelsize=6)
        acc_ax.set_ylim(-0.02, 1.02)
        final = traj.isel(epoch=-1)
        stats["runs"][run] = {"seeds": int(traj.sizes["seed"]), "epochs": int(epochs[-1]), "switches": switches,
                              "final_test_acc_median": float(final.test_acc.median()),
                              "final_test_loss_median": float(final.test_loss.median())}
    for j in range(len(runs), nrows * params.per_row):  # empty cells of the last row
        for k in (0, 1):
            axes[j // params.per_row, 2 * (j % params.per_row) + k].set_visible(False)
    for j in range(max(0, len(runs) - params.per_row), len(runs)):  # the lowest panel of each column
        for k in (0, 1):
            axes[j // params.per_row, 2 * (j % params.per_row) + k].set_xlabel("epoch", fontsize=7)
    axes[0, 0].legend(fontsize=6)
    stats["summary"] = f"{len(runs)} runs; median final test accuracy per run: " + ", ".join(
        f"{r} {s['final_test_acc_median']:.3f}" for r, s in stats["runs"].items())
    return fig, stats
