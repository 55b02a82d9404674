"""Eureka paper, Fig. 8: the distribution of attention weights at several epochs, per variant."""
from __future__ import annotations

import matplotlib as mpl
import numpy as np
import xarray as xr

from . import style


def pick_epochs(epochs: np.ndarray, n: int) -> list[int]:
    """``n`` recorded epochs, log-spaced from the first to the last (both included)."""
    idx = np.unique(np.round(np.geomspace(1, len(epochs), n)).astype(int) - 1)
    return [int(epochs[i]) for i in idx]


def plot_eureka_attention_distribution(rows: dict[str, dict[str, xr.Dataset]], n_epochs: int = 5):
    """``rows``: experiment -> arm -> trajectory with attention_hist (seed, epoch, layer, bin). One panel
    per arm; a curve per chosen epoch (mean over seeds and layers), dark = early, light = late.
    Returns (figure, stats) with the share of weights below 0.05 and above 0.5 at each epoch."""
    ncols = max(len(a) for a in rows.values())
    fig, axes = style.figure(ncols=ncols, nrows=len(rows), width=2.6, height=2.2)
    stats = {}
    for r, (exp, arms) in enumerate(rows.items()):
        stats[exp] = {}
        for c, (label, ds) in enumerate(arms.items()):
            ax = axes[r][c]
            h = ds.attention_hist.mean(("seed", "layer"))
            chosen = pick_epochs(h.epoch.values, n_epochs)
            colors = mpl.colormaps["viridis"](np.linspace(0, 0.9, len(chosen)))
            stats[exp][label] = {}
            for e, col in zip(chosen, colors):
                y = h.sel(epoch=e)
                ax.plot(h.bin, y, color=col, lw=1.2, label=f"epoch {e}")
                stats[exp][label][str(e)] = {"below_0.05": float(y.where(h.bin < 0.05).sum()),
                                             "above_0.5": float(y.where(h.bin > 0.5).sum())}
            ax.set_yscale("log")
            ax.set_title(f"{exp}: {label}", fontsize=8)
            ax.set_xlabel("attention weight")
            ax.legend(fontsize=6)
        for c in range(len(arms), ncols):
            axes[r][c].axis("off")
        axes[r][0].set_ylabel("fraction of weights")
    fig.tight_layout()
    return fig, stats
