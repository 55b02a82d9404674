"""Fig. 3 of 'Easing Optimization Paths': attention per position over training, k boundary marked."""
from __future__ import annotations

import numpy as np
import xarray as xr

from . import style


def plot_fig3_attention_heatmap(arms: dict[str, xr.DataArray], k: int, switches: dict[str, list[int]]):
    """``arms[label]``: attention (position, epoch) at the recorded epochs (already averaged)."""
    fig, axes = style.figure(ncols=len(arms), width=3.6, height=2.6)
    mesh = None
    for ax, (label, att) in zip(axes[0], arms.items()):
        epochs = att.epoch.values
        edges = np.concatenate([[epochs[0] - 0.5], (epochs[1:] + epochs[:-1]) / 2, [epochs[-1] + 0.5]])
        T = att.sizes["position"]
        mesh = ax.pcolormesh(edges, np.arange(T + 1) - 0.5, att.transpose("position", "epoch").values,
                             cmap="viridis", vmin=0, vmax=max(float(att.max()), 1e-6), shading="flat")
        ax.axhline(k - 0.5, color="w", ls="--", lw=1.2)
        ax.text(edges[-1], k - 0.5, f" k={k}", color="k", va="center", fontsize=7)
        for e in switches.get(label, []):
            ax.axvline(e, color="w", ls=":", lw=1.2)
        ax.set_xscale("symlog", linthresh=10)
        ax.set_xlabel("epoch")
        ax.set_title(label)
        ax.invert_yaxis()
    axes[0][0].set_ylabel("position")
    fig.colorbar(mesh, ax=axes[0].tolist(), label="attention", shrink=0.9)
    return fig
