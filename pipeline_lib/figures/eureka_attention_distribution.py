"""Eureka-moments paper, Fig. 8: the distribution of attention weights at several epochs, one panel
per attention variant, one row per experiment."""
from __future__ import annotations

from dataclasses import dataclass

import matplotlib as mpl
import numpy as np
import xarray as xr
from matplotlib.figure import Figure

from ..intervals import json_floats
from ..stats import log_spaced_indices
from . import style
from .eureka_arms import INTERVENTIONS
from .reading import entry_arms, per_arm_summary

NAME = "eureka_attention_distribution"
PAPER = "Eureka-Moments in Transformers"  # the report's category
CONFIG = """
description: Histogram of attention weights at several epochs, one panel per arm (Fig. 8 of the Eureka paper).
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
      x-requires: {properties: {records: {contains: {const: attention_hist}}}}
      x-requires-message: "must record attention histograms (attention_hist: a transformer or vit model)"
  n_epochs: {description: "Number of epochs drawn per panel, log-spaced.", type: integer, minimum: 1, default: 5}
"""


ARMS = INTERVENTIONS  # label of each intervention arm, by the claim ids' key


@dataclass(frozen=True)
class Params:
    experiments: tuple[str, ...]
    n_epochs: int = 5


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    rows = {exp: entry_arms(cfg, "eureka", exp, paths, ["attention_hist"]) for exp in params.experiments}
    stats = distribution_stats(rows, params.n_epochs)
    stats["summary"] = per_arm_summary(stats, lambda s: (
        f"share of attention weights > 0.5 from epoch {min(s, key=int)} to {max(s, key=int)}: "
        f"{s[min(s, key=int)]['above_0.5']:.3f} -> {s[max(s, key=int)]['above_0.5']:.3f}"))
    return plot_eureka_attention_distribution(rows, params.n_epochs), stats


def pick_epochs(epochs: np.ndarray, n: int) -> list[int]:
    """About ``n`` recorded epochs, log-spaced from the first to the last (both included)."""
    return [int(epochs[i]) for i in log_spaced_indices(len(epochs), n)]


def mean_histogram(ds: xr.Dataset) -> xr.DataArray:
    """attention_hist (seed, epoch, layer, bin) averaged over seeds and layers: (epoch, bin)."""
    return ds.attention_hist.mean(("seed", "layer"))


def distribution_stats(rows: dict[str, dict[str, xr.Dataset]], n_epochs: int) -> dict:
    """experiment -> arm -> chosen epoch -> share of attention weights below 0.05 and above 0.5 (mean over
    seeds and layers), and the same per seed (mean over layers)."""
    stats = {}
    for exp, arms in rows.items():
        stats[exp] = {}
        for label, ds in arms.items():
            h = mean_histogram(ds)
            per_seed = ds.attention_hist.mean("layer")
            stats[exp][label] = {}
            for e in pick_epochs(h.epoch.values, n_epochs):
                y, ys = h.sel(epoch=e), per_seed.sel(epoch=e)
                stats[exp][label][str(e)] = {
                    "below_0.05": float(y.where(h.bin < 0.05).sum()), "above_0.5": float(y.where(h.bin > 0.5).sum()),
                    "below_0.05_per_seed": json_floats(ys.where(ys.bin < 0.05).sum("bin", min_count=1)),
                    "above_0.5_per_seed": json_floats(ys.where(ys.bin > 0.5).sum("bin", min_count=1))}
    return stats


def plot_eureka_attention_distribution(rows: dict[str, dict[str, xr.Dataset]], n_epochs: int = 5) -> Figure:
    """``rows``: experiment -> arm -> trajectory with attention_hist (seed, epoch, layer, bin). One panel
    per arm; a curve per chosen epoch (mean over seeds and layers), dark = early, light = late."""
    ncols = max(len(a) for a in rows.values())
    fig, axes = style.figure(ncols=ncols, nrows=len(rows), width=2.6, height=2.2)
    for r, (exp, arms) in enumerate(rows.items()):
        picked, lowest = [], 1.0
        for c, (label, ds) in enumerate(arms.items()):
            ax = axes[r][c]
            h = mean_histogram(ds)
            chosen = pick_epochs(h.epoch.values, n_epochs)
            picked.append(chosen)
            colors = mpl.colormaps["viridis"](np.linspace(0, 0.9, len(chosen)))
            for e, col in zip(chosen, colors):
                ax.plot(h.bin, h.sel(epoch=e), color=col, lw=1.2, label=f"epoch {e}")
                drawn = h.sel(epoch=e).values
                lowest = min(lowest, float(drawn[drawn > 0].min(initial=1.0)))
            ax.set_yscale("log")
            ax.set_title(f"{exp}\n{label}", fontsize=8)  # two lines: long names do not run into the next title
            ax.set_xlabel("attention weight")
        for c in range(len(arms)):  # one scale per task, up to the whole (a fraction is at most 1): arms compare
            axes[r][c].set_ylim(lowest / 2, 1.5)
        if not all(p == picked[0] for p in picked):  # arms drew different epochs: a legend in each panel
            for c in range(len(arms)):
                axes[r][c].legend(fontsize=6)
        elif len(arms) < ncols:  # one legend per row, in the row's first empty panel
            axes[r][len(arms)].legend(*axes[r][0].get_legend_handles_labels(), fontsize=7, loc="center left")
        else:  # a full row: beside its last panel
            axes[r][-1].legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        for c in range(len(arms), ncols):
            axes[r][c].axis("off")
        axes[r][0].set_ylabel("fraction of weights")
    return fig
