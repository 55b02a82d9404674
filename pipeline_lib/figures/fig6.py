"""Fig. 6 of 'Easing Optimization Paths': loss along the interpolation between two solutions."""
from __future__ import annotations

import numpy as np
import xarray as xr

from . import style


def plot_fig6_interpolation(ds: xr.Dataset, label_a: str, label_b: str):
    """Train and test loss against t for every seed (thin) and the median (bold)."""
    fig, axes = style.figure(ncols=2, width=3.4)
    for ax, split in zip(axes[0], ("train", "test")):
        loss = ds[f"{split}_loss"]
        for s in loss.seed.values:
            ax.plot(ds.t, loss.sel(seed=s), color="0.4", lw=style.SEED_LW, alpha=style.SEED_ALPHA)
        ax.plot(ds.t, loss.median("seed"), color="k", lw=style.MEDIAN_LW, label="median")
        for t, lbl in ((0, label_a), (1, label_b)):
            ax.axvline(t, color="0.6", ls="--", lw=0.8)
            ax.text(t, 1.0, f" {lbl}", transform=ax.get_xaxis_transform(), fontsize=7, va="top")
        b = ds[f"barrier_{split}"].values
        ax.set_title(f"{split} loss; barrier median {np.median(b):.3g}", fontsize=9)
        ax.set_xlabel("t")
        values = loss.values[np.isfinite(loss.values)]
        if values.size and values.min() > 0 and values.max() / values.min() > 10:
            ax.set_yscale("log")  # only when the loss spans more than a decade
    axes[0][0].set_ylabel("loss")
    return fig
