"""Figure stage fig6_interpolation: loss along the straight line between two solutions."""
from __future__ import annotations

import numpy as np

from ...config import Config
from ...figures.fig6 import plot_fig6_interpolation
from ...store import read_dataset
from . import figure_provenance, save_figure


def build(cfg: Config, inputs: dict[str, str], pdf: str, png: str, sidecar: str) -> dict:
    fc = cfg.figures["fig6_interpolation"]
    ic = cfg.interpolation[fc.interpolation]
    ds = read_dataset(inputs["interpolation"], rule="interpolate")
    fig = plot_fig6_interpolation(ds, ic.a, ic.b)
    stats = {}
    for split in ("train", "test"):
        b = ds[f"barrier_{split}"].values
        stats[f"barrier_{split}"] = {"median": float(np.median(b)), "min": float(b.min()), "max": float(b.max()),
                                     "per_seed": [float(v) for v in b]}
    stats["summary"] = "; ".join(f"{s} loss barrier median {v['median']:.3g} (range {v['min']:.3g} to {v['max']:.3g})"
                                 for s, v in stats.items()) + f" over {ds.sizes['seed']} seeds"
    save_figure(fig, stats, figure_provenance(cfg, "fig6_interpolation", inputs, __name__), pdf, png, sidecar)
    return stats
