"""Eureka-moments paper, Fig. 5: mean |gradient| of W_Q, W_K and W_V over training per attention
variant, one panel per matrix, one row per experiment."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr
from matplotlib.figure import Figure

from . import style
from .eureka_arms import INTERVENTIONS, arm_colors
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
ARMS = {k: INTERVENTIONS[k] for k in ("lowtemp", "ht")}  # the arms the paper's gradient story is about


@dataclass(frozen=True)
class Params:
    experiments: tuple[str, ...]


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    variables = [f"grad_{m}" for m in MATRICES] + ["test_acc"]
    rows = {exp: entry_arms(cfg, "eureka", exp, paths, variables) for exp in params.experiments}
    stats = gradient_stats(rows, {e: cfg.analyses["eureka"][e].threshold for e in params.experiments})
    stats["summary"] = per_arm_summary(stats, lambda s: "mean over training of the median |grad| " + ", ".join(
        f"{m} {s[m]['median_mean_over_training']:.2e}" for m in MATRICES))
    return plot_eureka_qkv_gradients(rows), stats


def gradient_quartiles(ds: xr.Dataset, matrix: str) -> tuple[np.ndarray, np.ndarray]:
    """(epochs, quartiles over seeds (3, epoch)) of the mean |grad| over layers and heads of one matrix."""
    g = ds[f"grad_{matrix}"].mean(("layer", "head")).isel(epoch=slice(0, -1))  # last epoch: no step
    return g.epoch.values, np.nanpercentile(g.values, [25, 50, 75], axis=0)


def gradient_stats(rows: dict[str, dict[str, xr.Dataset]], threshold: dict[str, float] | None = None) -> dict:
    """experiment -> arm -> matrix -> the seeds' median at the first epoch and its mean over training; with
    ``threshold`` (and ``test_acc``) also each seed's mean before its Eureka epoch (:func:`pre_eureka_means`)."""
    stats = {}
    for exp, arms in rows.items():
        stats[exp] = {}
        for name in MATRICES:
            for label, ds in arms.items():
                q = gradient_quartiles(ds, name)[1]
                stats[exp].setdefault(label, {})[name] = {"median_first_epoch": float(q[1][0]),
                                                          "median_mean_over_training": float(np.nanmean(q[1]))}
        if threshold is not None:
            for label, ds in arms.items():
                if "test_acc" in ds:
                    for name, means in pre_eureka_means(ds, threshold[exp]).items():
                        stats[exp][label][name]["mean_before_eureka"] = means
    return stats


def pre_eureka_means(ds: xr.Dataset, threshold: float) -> dict[str, list]:
    """matrix -> per seed the mean |grad| (over layers and heads) over the epochs before the seed's first
    epoch with test accuracy > ``threshold`` (all epochs with a step if none; None if it starts above)."""
    acc = np.nan_to_num(ds.test_acc.values.astype(float), nan=-np.inf)
    grads = {m: ds[f"grad_{m}"].mean(("layer", "head")).values[:, :-1] for m in MATRICES}  # last epoch: no step
    out = {m: [] for m in MATRICES}
    for s in range(acc.shape[0]):
        above = np.flatnonzero(acc[s] > threshold)
        stop = int(above[0]) if above.size else acc.shape[1] - 1
        for m, g in grads.items():
            window = g[s, :stop]
            out[m].append(float(np.nanmean(window)) if np.isfinite(window).any() else None)
    return out


def plot_eureka_qkv_gradients(rows: dict[str, dict[str, xr.Dataset]]) -> Figure:
    """``rows``: experiment -> arm -> trajectory with grad_W_Q/K/V (seed, epoch, layer, head). One row
    per experiment, one panel per matrix; per arm the median over seeds (of the mean over layers and
    heads) bold with the seeds' interquartile band."""
    labels, colors = arm_colors(rows)  # one colour per arm, the same in every row
    fig, axes = style.figure(ncols=3, nrows=len(rows), width=3.0, height=2.4)
    for r, (exp, arms) in enumerate(rows.items()):
        for c, name in enumerate(MATRICES):
            ax = axes[r][c]
            for label, ds in arms.items():
                epochs, q = gradient_quartiles(ds, name)
                ax.fill_between(epochs, q[0], q[2], color=colors[label], alpha=0.2, lw=0)
                ax.plot(epochs, q[1], color=colors[label], lw=1.4, label=label)
            ax.set_yscale("log")
            ax.set_title(f"{exp}: mean |grad {name}|", fontsize=8)
            ax.set_xlabel("epoch")
            if c:  # one gradient scale per row: the claims compare W_Q's and W_K's gradients with W_V's
                ax.sharey(axes[r][0])
        axes[r][0].autoscale_view()  # the shared scale over the row's three panels' data
        axes[r][0].set_ylabel("mean |gradient|\n(median over seeds, IQR band)", fontsize=8)
        # the legend beside each row's last panel, never over the curves
        axes[r][-1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return fig
