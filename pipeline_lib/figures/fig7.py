"""Fig. 7 of 'Easing Optimization Paths': 2-D embedding of the parameter trajectories of both arms."""
from __future__ import annotations

import xarray as xr

from . import style


def plot_fig7_param_tsne(ds: xr.Dataset, seeds: list[int], method: str = "tsne"):
    """One panel per seed; each arm a line through its snapshots in epoch order; start (circle),
    switch between phases (square) and end (star) marked."""
    fig, axes = style.figure(ncols=len(seeds), width=2.8, height=2.7)
    for ax, seed in zip(axes[0], seeds):
        pts = ds[method].sel(seed=seed)
        for arm, color in zip(dict.fromkeys(ds.arm.values), style.ARM_COLORS):
            sel = ds.arm.values == arm
            xy = pts.values[sel]
            phase = ds.phase.values[sel]
            ax.plot(xy[:, 0], xy[:, 1], "-", color=color, lw=0.8, alpha=0.8, label=arm)
            ax.plot(*xy[0], "o", color=color, ms=6, mec="k")
            ax.plot(*xy[-1], "*", color=color, ms=10, mec="k")
            for i in range(1, len(phase)):
                if phase[i] != phase[i - 1]:
                    ax.plot(*xy[i], "s", color=color, ms=6, mec="k")
        ax.set_title(f"seed {seed}", fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
    axes[0][0].legend(fontsize=7, loc="best")
    fig.text(0.5, -0.02, f"{method.upper()} of the parameter snapshots of both arms, embedded jointly per seed; "
             "o start, ■ switch, ★ end", ha="center", fontsize=7)
    return fig
