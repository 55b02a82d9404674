"""Figure stage fig7_param_tsne: joint 2-D embedding of both arms' parameter trajectories."""
from __future__ import annotations

import numpy as np

from ...config import Config
from ...figures.fig7 import plot_fig7_param_tsne
from ...store import read_dataset
from . import figure_provenance, save_figure


def build(cfg: Config, inputs: dict[str, str], pdf: str, png: str, sidecar: str) -> dict:
    fc = cfg.figures["fig7_param_tsne"]
    ds = read_dataset(inputs["param_embed"], rule="param_embed")
    seeds = [s for s in fc.seeds if s in ds.seed.values]
    fig = plot_fig7_param_tsne(ds, seeds, fc.method)
    pca = ds.pca
    ends = {}
    for arm in dict.fromkeys(ds.arm.values):
        sel = np.flatnonzero(ds.arm.values == arm)
        ends[arm] = pca.isel(snapshot=sel[-1]).values  # (seed, 2)
    arms = list(ends)
    dist = np.linalg.norm(ends[arms[0]] - ends[arms[-1]], axis=1) if len(arms) > 1 else np.zeros(1)
    stats = {"seeds_drawn": seeds, "n_snapshots": int(ds.sizes["snapshot"]),
             "pca_end_distance_median": float(np.median(dist))}
    stats["summary"] = (f"{ds.sizes['snapshot']} snapshots per seed embedded jointly ({fc.method}); seeds drawn "
                        f"{seeds}; median PCA distance between the arms' end points {np.median(dist):.3g}")
    save_figure(fig, stats, figure_provenance(cfg, "fig7_param_tsne", inputs, __name__), pdf, png, sidecar)
    return stats
