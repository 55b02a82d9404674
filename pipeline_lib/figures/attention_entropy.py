"""Attention entropy over training on the workflow's runs (Tian's "attention becomes sparse over
training"): the normalised entropy of every attention (1 uniform, 0 one-hot), averaged over layers,
heads, queries and fixed test inputs, at each weight snapshot; one panel per run, every seed thin,
the median bold (a run with a learning-rate grid: each cell of the grid thin, as the median over its seeds,
and the median over all its slots bold; its title gives the cells). Each panel's y axis spans its own values (read the ticks when comparing panels); the x axis
is logarithmic where the snapshots span more than a decade."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure

from ..plumbing.store import read_dataset
from . import style

NAME = "attention_entropy"
PAPER = "Tian: training dynamics of attention (Scan&Snap, JoMA)"
CONFIG = """
description: Normalised attention entropy against epochs, one panel per run (runs of analyses.attention_sparsity).
required: [runs]
properties:
  runs:
    description: "Runs listed in analyses.attention_sparsity.runs."
    type: array
    minItems: 1
    items: {type: string, x-ref: run, x-reads: [analysis/attention_sparsity]}
  ncols: {description: "Panels per row.", type: integer, minimum: 1, default: 6}
"""


@dataclass(frozen=True)
class Params:
    runs: tuple[str, ...]
    ncols: int = 6


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    ncols = min(params.ncols, len(params.runs))
    nrows = math.ceil(len(params.runs) / ncols)
    fig, axes = style.figure(ncols=ncols, nrows=nrows, width=2.6, height=2.2)
    stats: dict = {}
    for ax, run in zip(axes.flat, params.runs):
        an = read_dataset(paths.analysis("attention_sparsity", run), rule="attention_sparsity")
        ent = an.mean_entropy
        x = an.snapshot.values
        log = x.max() > 100 and x.max() / max(x[x > 0].min(initial=x.max()), 0.5) > 20  # more than a decade
        x_plot = np.where(x > 0, x, 0.5) if log else x  # log axis: epoch 0 drawn at 0.5
        cells = _cells(ent)
        if cells is None:
            style.seeds_and_median(ax, x_plot, ent, "k")
        else:  # the cells thin, the median over every slot bold (the statistic below)
            for row in cells:
                ax.plot(x_plot, row, color="k", lw=style.SEED_LW, alpha=style.SEED_ALPHA)
            ax.plot(x_plot, ent.median("seed", skipna=True), color="k", lw=style.MEDIAN_LW)
        if log:
            ax.set_xscale("log")
        low, high = float(np.nanmin(ent.values)), float(np.nanmax(ent.values))
        pad = max(0.05, 0.1 * (high - low))  # each panel spans its own values, so a drop of a few percent shows
        ax.set_ylim(max(0.0, low - pad), min(1.02, high + pad))
        ax.set_title(run if cells is None else f"{run}\n({len(cells)} grid cells, each its seeds' median)",
                     fontsize=7)
        med = ent.median("seed").values
        stats[run] = {"initial_median": float(med[0]), "final_median": float(med[-1]),
                      "min_median": float(np.nanmin(med)), "epoch_of_min": int(x[int(np.nanargmin(med))]),
                      "final_per_seed": [float(v) for v in ent.isel(snapshot=-1).values],
                      "initial_per_seed": [float(v) for v in ent.isel(snapshot=0).values],
                      "decreased": bool(med[-1] < med[0])}
    for ax in axes.flat[len(params.runs):]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel("normalised entropy")
    for ax in axes[-1]:
        ax.set_xlabel("epoch / step")
    n_dec = sum(s["decreased"] for s in stats.values())
    stats["summary"] = (f"entropy lower at the end than at the start in {n_dec}/{len(params.runs)} runs; "
                        + "; ".join(f"{r} {s['initial_median']:.2f}->{s['final_median']:.2f}" for r, s in stats.items()
                                    if isinstance(s, dict)))
    return fig, stats


def _cells(ent):
    """A swept run's entropy as one row per cell of its grid (the median over the cell's seeds); None for a run
    without a grid (its slots are its seeds)."""
    keys = [k for k, c in ent.coords.items() if c.dims == ("seed",) and k not in ("seed", "run_seed")]
    if not keys:
        return None
    cell = [tuple(ent[k].values[i].item() for k in keys) for i in range(ent.sizes["seed"])]
    order = list(dict.fromkeys(cell))
    rows = [ent.isel(seed=[i for i, c in enumerate(cell) if c == key]).median("seed", skipna=True).values for key in order]
    return np.stack(rows)
