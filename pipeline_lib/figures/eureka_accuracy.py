"""Eureka-moments paper, accuracy over training per attention variant (its Fig. 1 and 4): every seed
thin, median bold, the chance level without the first step and the Eureka threshold marked."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr
from matplotlib.figure import Figure

from . import style
from .reading import entry_arms

NAME = "eureka_accuracy"
PAPER = "Eureka-Moments in Transformers"  # the report's category
CONFIG = """
description: >-
  Train/test accuracy over training per attention variant, one row per Eureka experiment
  (entries of analyses.eureka).
required: [experiments]
properties:
  experiments:
    description: "Names of entries of analyses.eureka."
    type: array
    minItems: 1
    items: {type: string, x-ref: analysis/eureka, x-reads: [trajectory]}
"""


@dataclass(frozen=True)
class Params:
    experiments: tuple[str, ...]


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    rows = {exp: entry_arms(cfg, "eureka", exp, paths, ["train_acc", "test_acc"]) for exp in params.experiments}
    # the chance level comes from the dataset the first arm read (the train stage copies it into attrs)
    chance = {exp: float(next(iter(arms.values())).attrs.get("task_chance_without_step1", float("nan")))
              for exp, arms in rows.items()}
    threshold = {e: cfg.analyses["eureka"][e].threshold for e in params.experiments}
    stats = eureka_accuracy_stats(rows, chance)
    stats["summary"] = "; ".join(
        f"{exp}: median final test accuracy " + ", ".join(f"{lbl} {s['median_final_test_acc']:.2f}"
                                                          for lbl, s in st.items() if lbl != "chance_without_step1")
        + f" (chance without step 1: {chance[exp]:.3f})" for exp, st in stats.items())
    return plot_eureka_accuracy(rows, chance, threshold), stats


def eureka_accuracy_stats(rows: dict[str, dict[str, xr.Dataset]], chance: dict[str, float]) -> dict:
    """experiment -> arm -> final test accuracy of every seed and their median; plus the chance level."""
    stats = {}
    for exp, arms in rows.items():
        stats[exp] = {}
        for label, ds in arms.items():
            final = ds.test_acc.isel(epoch=-1).values
            stats[exp][label] = {"median_final_test_acc": float(np.nanmedian(final)),
                                 "final_test_acc": [None if np.isnan(a) else float(a) for a in final]}
        stats[exp]["chance_without_step1"] = chance[exp]
    return stats


def plot_eureka_accuracy(rows: dict[str, dict[str, xr.Dataset]], chance: dict[str, float],
                         threshold: float | dict[str, float]) -> Figure:
    """``rows``: experiment -> arm label -> trajectory (train_acc, test_acc over seed, epoch). One row
    of panels per experiment, one panel per arm; test accuracy in colour, train accuracy grey, the
    no-step-1 chance level dashed, the Eureka threshold (per experiment if a dict) dotted."""
    ncols = max(len(a) for a in rows.values())
    fig, axes = style.figure(ncols=ncols, nrows=len(rows), width=2.6, height=2.2)
    for r, (exp, arms) in enumerate(rows.items()):
        thr = threshold[exp] if isinstance(threshold, dict) else threshold
        for c, ((label, ds), color) in enumerate(zip(arms.items(), style.ARM_COLORS)):
            ax = axes[r][c]
            for var, col in (("train_acc", "0.55"), ("test_acc", color)):
                style.seeds_and_median(ax, ds[var].epoch, ds[var], col, label=var.replace("_acc", ""))
            ax.axhline(chance[exp], color="k", ls="--", lw=0.8)
            ax.axhline(thr, color="k", ls=":", lw=0.8)
            ax.set_title(f"{exp}: {label}", fontsize=8)
            ax.set_ylim(-0.02, 1.02)
            ax.set_xlabel("epoch")
        for c in range(len(arms), ncols):
            axes[r][c].axis("off")
        axes[r][0].set_ylabel("accuracy")
    axes[0][0].legend(loc="lower right", fontsize=7)
    fig.text(0.5, -0.02, "dashed: chance without the first step (from the data); dotted: Eureka threshold",
             ha="center", va="top", fontsize=8)
    fig.tight_layout()
    return fig
