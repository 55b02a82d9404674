"""Fig. 7 of 'Easing Optimization Paths': the parameter trajectories of both arms embedded jointly in
2-D (an analyses.param_embed entry), one panel per seed; start, switch and end marked. Its claim
measures the distances in parameter space itself (the runs' weights), not in the embedding."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr
from matplotlib.figure import Figure

from ..plumbing.store import read_dataset
from . import style

NAME = "fig7_param_tsne"
PAPER = "Easing Optimization Paths: a Circuit Perspective"  # the report's category
CONFIG = """
description: Joint 2-D embedding of parameter trajectories; start, switch and end marked.
required: [param_embed]
properties:
  param_embed:
    description: "Name of an entry of analyses.param_embed (its first and last runs are the two arms of the claim)."
    type: string
    x-ref: analysis/param_embed
    x-reads: [artifact, weights]
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
    stats = fig7_stats(ds, seeds, params.method)
    runs = list(cfg.analyses["param_embed"][params.param_embed].runs)
    if len(runs) > 1:
        all_seeds = [int(s) for s in ds.seed.values]
        stats["distances"] = endpoint_distances({r: run_endpoints(cfg, r, paths, all_seeds) for r in (runs[0], runs[-1])})
    return plot_fig7_param_tsne(ds, seeds, params.method), stats


def flat_weights(w: xr.Dataset, snapshot: int) -> np.ndarray:
    """(seed, P): every snapshotted parameter of one snapshot, flattened in name order."""
    names = sorted(n for n in w.data_vars if "snapshot" in w[n].dims)
    return np.concatenate([w[n].isel(snapshot=snapshot).values.reshape(w.sizes["seed"], -1) for n in names], axis=1)


def run_endpoints(cfg, run: str, paths, seeds: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """(start, end), each (seed, P): the first snapshot of the run's first phase (its ancestors' first)
    and the run's final weights."""
    chain = cfg.lineage(run)
    first = read_dataset(paths.weights(chain[0]), rule="train").sel(seed=seeds)
    last = read_dataset(paths.weights(run), rule="train").sel(seed=seeds)
    return flat_weights(first, 0), flat_weights(last, -1)


def endpoint_distances(ends: dict[str, tuple[np.ndarray, np.ndarray]]) -> dict:
    """Per seed: the distance between two arms' start points and between their end points, and per
    arm the distance between seed i's end point and the next seed's (the last with the first)."""
    (a, (sa, ea)), (b, (sb, eb)) = list(ends.items())[0], list(ends.items())[-1]
    rows = lambda x: [float(v) for v in np.linalg.norm(x, axis=1)]  # noqa: E731
    return {"arms": [a, b], "start_cross_arm_per_seed": rows(sa - sb), "end_cross_arm_per_seed": rows(ea - eb),
            "end_same_arm_per_seed": {a: rows(ea - np.roll(ea, -1, axis=0)), b: rows(eb - np.roll(eb, -1, axis=0))}}


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
