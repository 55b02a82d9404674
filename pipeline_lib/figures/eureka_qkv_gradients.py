"""Eureka-moments paper, Fig. 5: mean |gradient| of W_Q, W_K and W_V over training per attention
variant, one panel per matrix, one row per experiment."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr
from matplotlib.figure import Figure

from . import style
from .reading import entry_arms, per_arm_summary

NAME = "eureka_qkv_gradients"
PAPER = "Eureka-Moments in Transformers"  # the report's category
CONFIG = """
description: >-
  Mean |gradient| of W_Q, W_K and W_V over training per attention variant, one row per Eureka
  experiment (entries of analyses.eureka).
required: [experiments]
properties:
  experiments:
    description: "Names of entries of analyses.eureka."
    type: array
    minItems: 1
    items:
      type: string
      x-ref: analysis/eureka
      x-reads: [trajectory]
      x-requires: {properties: {records: {contains: {const: qkv_gradients}}}}
      x-requires-message: "must record the gradients of W_Q, W_K and W_V (qkv_gradients: a transformer or vit model)"
"""

MATRICES = ("W_Q", "W_K", "W_V")


@dataclass(frozen=True)
class Params:
    experiments: tuple[str, ...]


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    rows = {exp: entry_arms(cfg, "eureka", exp, paths, [f"grad_{m}" for m in MATRICES]) for exp in params.experiments}
    stats = gradient_stats(rows)
    stats["summary"] = per_arm_summary(stats, lambda s: "mean over training of the median |grad| " + ", ".join(
        f"{m} {s[m]['median_mean_over_training']:.2e}" for m in MATRICES))
    return plot_eureka_qkv_gradients(rows), stats


def gradient_quartiles(ds: xr.Dataset, matrix: str) -> tuple[np.ndarray, np.ndarray]:
    """(epochs, quartiles over seeds (3, epoch)) of the mean |grad| over layers and heads of one matrix."""
    g = ds[f"grad_{matrix}"].mean(("layer", "head")).isel(epoch=slice(0, -1))  # last epoch: no step
    return g.epoch.values, np.nanpercentile(g.values, [25, 50, 75], axis=0)


def gradient_stats(rows: dict[str, dict[str, xr.Dataset]]) -> dict:
    """experiment -> arm -> matrix -> the seeds' median at the first epoch and its mean over training."""
    stats = {}
    for exp, arms in rows.items():
        stats[exp] = {}
        for name in MATRICES:
            for label, ds in arms.items():
                q = gradient_quartiles(ds, name)[1]
                stats[exp].setdefault(label, {})[name] = {"median_first_epoch": float(q[1][0]),
                                                          "median_mean_over_training": float(np.nanmean(q[1]))}
    return stats


def plot_eureka_qkv_gradients(rows: dict[str, dict[str, xr.Dataset]]) -> Figure:
    """``rows``: experiment -> arm -> trajectory with grad_W_Q/K/V (seed, epoch, layer, head). One row
    per experiment, one panel per matrix; per arm the median over seeds (of the mean over layers and
    heads) bold with the seeds' interquartile band."""
    fig, axes = style.figure(ncols=3, nrows=len(rows), width=3.0, height=2.4)
    for r, (exp, arms) in enumerate(rows.items()):
        for c, name in enumerate(MATRICES):
            ax = axes[r][c]
            for (label, ds), color in zip(arms.items(), style.ARM_COLORS):
                epochs, q = gradient_quartiles(ds, name)
                ax.fill_between(epochs, q[0], q[2], color=color, alpha=0.2, lw=0)
                ax.plot(epochs, q[1], color=color, lw=1.4, label=label)
            ax.set_yscale("log")
            ax.set_title(f"{exp}: mean |grad {name}|", fontsize=8)
            ax.set_xlabel("epoch")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    return fig
