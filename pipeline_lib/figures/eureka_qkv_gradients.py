"""Eureka paper, Fig. 5: mean |gradient| of W_Q, W_K and W_V over training, per attention variant."""
from __future__ import annotations

import numpy as np
import xarray as xr

from . import style

MATRICES = ("W_Q", "W_K", "W_V")


def plot_eureka_qkv_gradients(rows: dict[str, dict[str, xr.Dataset]]):
    """``rows``: experiment -> arm -> trajectory with grad_W_Q/K/V (seed, epoch, layer, head). One row
    per experiment, one panel per matrix; per arm the median over seeds (of the mean over layers and
    heads) bold with the seeds' interquartile band. Returns (figure, stats)."""
    fig, axes = style.figure(ncols=3, nrows=len(rows), width=3.0, height=2.4)
    stats = {}
    for r, (exp, arms) in enumerate(rows.items()):
        stats[exp] = {}
        for c, name in enumerate(MATRICES):
            ax = axes[r][c]
            for (label, ds), color in zip(arms.items(), style.ARM_COLORS):
                g = ds[f"grad_{name}"].mean(("layer", "head")).isel(epoch=slice(0, -1))  # last epoch: no step
                q = np.nanpercentile(g.values, [25, 50, 75], axis=0)
                ax.fill_between(g.epoch, q[0], q[2], color=color, alpha=0.2, lw=0)
                ax.plot(g.epoch, q[1], color=color, lw=1.4, label=label)
                stats[exp].setdefault(label, {})[name] = {"median_first_epoch": float(q[1][0]),
                                                          "median_mean_over_training": float(np.nanmean(q[1]))}
            ax.set_yscale("log")
            ax.set_title(f"{exp}: mean |grad {name}|", fontsize=8)
            ax.set_xlabel("epoch")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    return fig, stats
