"""Fig. 7 of 'Easing Optimization Paths': the parameter trajectories of both arms embedded jointly in
2-D (an analyses.param_embed entry), one panel per seed; start, switch and end marked."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr
from matplotlib.figure import Figure

from ..store import read_dataset
from . import style

NAME = "fig7_param_tsne"
PAPER = "Easing Optimization Paths: a Circuit Perspective"  # the report's category
CONFIG = """
description: Joint 2-D embedding of parameter trajectories; start, switch and end marked.
required: [param_embed]
properties:
  param_embed: {description: "Name of an entry of analyses.param_embed.", type: string, x-ref: analysis/param_embed}
  seeds:
    description: "Seeds drawn, one panel each."
    type: array
    items: {type: integer, minimum: 0}
    minItems: 1
    default: [0, 1, 2, 3]
  method: {description: "Which embedding is drawn.", type: string, enum: [tsne, pca], default: tsne}
"""


@dataclass(frozen=True)
class Params:
    param_embed: str
    seeds: tuple[int, ...] = (0, 1, 2, 3)
    method: str = "tsne"


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    ds = read_dataset(paths.analysis("param_embed", params.param_embed), rule="param_embed")
    seeds = [s for s in params.seeds if s in ds.seed.values]  # seeds the runs do not have are left out
    return plot_fig7_param_tsne(ds, seeds, params.method), fig7_stats(ds, seeds, params.method)


def fig7_stats(ds: xr.Dataset, seeds: list[int], method: str) -> dict:
    """Seeds drawn, snapshots per seed, and the median PCA distance between the arms' end points."""
    pca = ds.pca
    ends = {}
    for arm in dict.fromkeys(ds.arm.values):
        sel = np.flatnonzero(ds.arm.values == arm)
        ends[arm] = pca.isel(snapshot=sel[-1]).values  # (seed, 2)
    arms = list(ends)
    dist = np.linalg.norm(ends[arms[0]] - ends[arms[-1]], axis=1) if len(arms) > 1 else np.zeros(1)
    stats = {"seeds_drawn": seeds, "n_snapshots": int(ds.sizes["snapshot"]),
             "pca_end_distance_median": float(np.median(dist))}
    stats["summary"] = (f"{ds.sizes['snapshot']} snapshots per seed embedded jointly ({method}); seeds drawn "
                        f"{seeds}; median PCA distance between the arms' end points {np.median(dist):.3g}")
    return stats


def plot_fig7_param_tsne(ds: xr.Dataset, seeds: list[int], method: str = "tsne") -> Figure:
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
