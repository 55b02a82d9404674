"""JoMA (Tian et al.): normalised correlation of the estimated attention logits zhat (from the readout
W alone) with the real ones z over training, and of each of its two terms alone, for each frequency
case (every seed thin, median bold); right: zhat against z at the last step, every seed."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure

from ..store import read_dataset
from . import style

NAME = "joma_logits"
PAPER = "Tian: training dynamics of attention (Scan&Snap, JoMA)"
CONFIG = """
description: NC(zhat, z) of JoMA runs over steps, per frequency case, and zhat against z at the end.
required: [cases]
properties:
  cases:
    description: "Label (e.g. gaussian, uniform) -> a run listed in analyses.joma.runs."
    type: object
    minProperties: 1
    additionalProperties: {type: string, x-ref: run, x-reads: [analysis/joma]}
"""
REFERENCE = {"gaussian": "NC >= 0.993 throughout (final 0.994-0.995), first term alone ~0.99, second ~0",
             "uniform": "final 0.947-0.961"}


@dataclass(frozen=True)
class Params:
    cases: tuple[tuple[str, str], ...]


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    fig, axes = style.figure(ncols=2, nrows=len(params.cases), width=3.4)
    stats: dict = {}
    for row, (label, run) in enumerate(params.cases):
        an = read_dataset(paths.analysis("joma", run), rule="joma")
        ax = axes[row, 0]
        for i, (var, name) in enumerate((("nc", "NC(zhat, z)"), ("nc_term1", "first term"), ("nc_term2", "second term"))):
            style.seeds_and_median(ax, an.step, an[var], style.ARM_COLORS[i], label=name)
        ax.axhline(1.0, color="0.5", ls="--", lw=0.6)
        ax.set_xlabel("step")
        ax.set_ylabel("normalised correlation")
        ax.set_title(f"X {label}", fontsize=9)
        ax.legend(fontsize=7)
        ax = axes[row, 1]
        last = an.isel(step=-1)
        for s in an.seed.values:
            ax.scatter(last.z.sel(seed=s), last.zhat.sel(seed=s), s=8, alpha=0.6)
        lo, hi = float(min(last.z.min(), last.zhat.min())), float(max(last.z.max(), last.zhat.max()))
        ax.plot([lo, hi], [lo, hi], color="0.5", lw=0.6)
        ax.set_xlabel("z (last step)")
        ax.set_ylabel("zhat")
        nc = an.nc.isel(step=slice(1, None))  # step 0: zhat = z by the choice of C
        stats[label] = {"run": run, "min_nc_after_step0": {"median": float(nc.min("step").median()),
                                                           "per_seed": [float(v) for v in nc.min("step").values]},
                        "final_nc": [float(v) for v in an.nc.isel(step=-1).values],
                        "final_nc_term1": [float(v) for v in an.nc_term1.isel(step=-1).values],
                        "final_nc_term2": [float(v) for v in an.nc_term2.isel(step=-1).values],
                        "reference": REFERENCE.get(label, "")}
    stats["summary"] = "; ".join(
        f"X {label}: final NC {min(s['final_nc']):.4f}-{max(s['final_nc']):.4f} over seeds, lowest after step 0 "
        f"{min(s['min_nc_after_step0']['per_seed']):.4f}; first term alone {np.median(s['final_nc_term1']):.3f}, second "
        f"{np.median(s['final_nc_term2']):.3f} (reference: {s['reference']})" for label, s in stats.items())
    return fig, stats
