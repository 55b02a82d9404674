"""Scan&Snap learning-rate sweep (Tian's talk, "Larger learning rate eta_Z leads to faster phase
transition"): entropy of the attention over each class's distinct tokens after the last step, mean
over classes, against lr_Z, one line per eta_Y/eta_Z, one panel per number of last tokens; mean and
standard deviation over seeds, the released values (luckmatters scan_snap/figure_6_data.pkl) as open markers."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure

from ..plumbing.store import read_dataset
from . import style

NAME = "scan_snap_lr_sweep"
PAPER = "Tian: training dynamics of attention (Scan&Snap, JoMA)"
CONFIG = """
description: Final distinct-token entropy of swept Scan&Snap runs against lr_Z per eta_Y/eta_Z.
required: [runs]
properties:
  runs:
    description: "Swept runs (sweep over lr and lr_ratio.Y), each listed in analyses.scan_snap.runs; one panel each."
    type: array
    minItems: 1
    items: {type: string, x-ref: run, x-reads: [analysis/scan_snap], x-requires: {properties: {run: {required: [sweep]}}}, x-requires-message: "has no sweep"}
"""
# the released sweep after 100 steps (10 seeds per cell): num_last -> lr_Z -> entropy for eta_Y/eta_Z = 1, 2, 5, 10,
# mean and the "±" value (read as the standard deviation over seeds) of the "entropy" column of
# facebookresearch/luckmatters ssl/real-dataset/scan_snap/figure_6_data.pkl (Scan and Snap's Fig. 6; the talk shows
# the num_last = 1 and 10 rows). Read as data: the file was disassembled, not imported.
REFERENCE_RATIOS = (1, 2, 5, 10)
REFERENCE = {1: {0.5: (1.971, 2.007, 2.066, 2.092), 1: (1.871, 1.937, 2.022, 2.053), 2: (1.699, 1.810, 1.934, 1.900),
                 3: (1.551, 1.708, 1.786, 1.825)},
             3: {0.5: (2.019, 1.988, 2.031, 2.063), 1: (1.963, 1.920, 1.982, 2.024), 2: (1.842, 1.809, 1.899, 1.955),
                 3: (1.737, 1.715, 1.821, 1.839)},
             5: {0.5: (2.026, 1.994, 2.020, 2.055), 1: (1.995, 1.931, 1.971, 2.014), 2: (1.906, 1.816, 1.884, 1.926),
                 3: (1.817, 1.718, 1.802, 1.831)},
             10: {0.5: (2.033, 2.012, 2.018, 2.051), 1: (2.027, 1.975, 1.976, 2.015), 2: (1.990, 1.888, 1.899, 1.947),
                  3: (1.940, 1.805, 1.829, 1.875)}}
REFERENCE_STD = {1: {0.5: (0.028, 0.032, 0.017, 0.016), 1: (0.052, 0.052, 0.036, 0.030), 2: (0.101, 0.099, 0.068, 0.200),
                     3: (0.155, 0.152, 0.170, 0.331)},
                 3: {0.5: (0.010, 0.012, 0.007, 0.005), 1: (0.015, 0.018, 0.009, 0.008), 2: (0.024, 0.027, 0.018, 0.020),
                     3: (0.032, 0.038, 0.030, 0.100)},
                 5: {0.5: (0.005, 0.007, 0.007, 0.006), 1: (0.007, 0.011, 0.010, 0.009), 2: (0.012, 0.022, 0.020, 0.025),
                     3: (0.021, 0.032, 0.033, 0.050)},
                 10: {0.5: (0.004, 0.004, 0.004, 0.003), 1: (0.003, 0.005, 0.006, 0.006), 2: (0.005, 0.009, 0.013, 0.015),
                      3: (0.006, 0.013, 0.019, 0.023)}}
REFERENCE_SEEDS = 10
RELEASE = "facebookresearch/luckmatters ssl/real-dataset/scan_snap/figure_6_data.pkl"


REFERENCE_DATA = {"num_next_per_last": 2, "num_common": 10, "num_distinct": 10, "common_weight": 1.0,
                  "distinct_min": 0.1, "distinct_max": 1.0, "T": 128}


@dataclass(frozen=True)
class Params:
    runs: tuple[str, ...]


def reference_values(cfg, run: str) -> dict:
    """The released values for this run's num_last, if the run is the released sweep's setting (else none)."""
    rc = cfg.runs[run]
    data = cfg.datasets[rc.dataset].params
    same = (all(data.get(k) == v for k, v in REFERENCE_DATA.items()) and rc.epochs == 100 and rc.batch_size == 128
            and rc.optimizer.momentum == 0.9 and cfg.models[rc.model].params.get("init") == "uniform")
    return REFERENCE.get(int(data["num_last"]), {}) if same else {}


def sweep_table(an) -> dict:
    """(lr, ratio) -> (mean, std, n) of the final distinct entropy over the slots of that cell."""
    final = an.distinct_entropy.isel(step=-1).values
    lr, ratio = an.lr.values, an.lr_ratio_Y.values
    return {(float(a), float(r)): (float(final[(lr == a) & (ratio == r)].mean()),
                                   float(final[(lr == a) & (ratio == r)].std(ddof=1)) if ((lr == a) & (ratio == r)).sum() > 1 else 0.0,
                                   int(((lr == a) & (ratio == r)).sum()))
            for a in np.unique(lr) for r in np.unique(ratio)}


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    fig, axes = style.figure(ncols=len(params.runs), width=3.0)
    stats: dict = {}
    lines = []
    for ax, run in zip(axes[0], params.runs):
        an = read_dataset(paths.analysis("scan_snap", run), rule="scan_snap")
        num_last = int(cfg.datasets[cfg.runs[run].dataset].params.get("num_last", 2))
        table = sweep_table(an)
        lrs, ratios = sorted({a for a, _ in table}), sorted({r for _, r in table})
        ref = reference_values(cfg, run)
        cells = []
        for i, r in enumerate(ratios):
            color = style.ARM_COLORS[i % len(style.ARM_COLORS)]
            mean = [table[(a, r)][0] for a in lrs]
            std = [table[(a, r)][1] for a in lrs]
            ax.errorbar(lrs, mean, yerr=std, color=color, lw=1.4, capsize=2, label=f"eta_Y/eta_Z = {r:g}")
            if r in REFERENCE_RATIOS:
                j = REFERENCE_RATIOS.index(r)
                pts = [(a, ref[a][j]) for a in lrs if a in ref]
                if pts:
                    ax.scatter(*zip(*pts), facecolors="none", edgecolors=color, marker="o", s=28)
        ref_std = REFERENCE_STD.get(num_last, {}) if ref else {}
        for (a, r), (m, s, n) in table.items():
            j = REFERENCE_RATIOS.index(r) if r in REFERENCE_RATIOS else None
            known = j is not None and a in ref
            cells.append({"lr_Z": a, "ratio": r, "mean": m, "std": s, "n": n, "reference": ref[a][j] if known else None,
                          "reference_std": ref_std[a][j] if known else None})
        init = float(an.distinct_entropy_init)
        ax.axhline(init, color="0.5", ls="--", lw=0.8, label="at initialisation")
        ax.set_title(f"num_last = {num_last}", fontsize=9)
        ax.set_xlabel("lr_Z")
        if ax is not axes[0, 0]:  # one entropy scale across the panels, so their heights compare
            ax.sharey(axes[0, 0])
            ax.tick_params(labelleft=False)
        stats[run] = {"num_last": num_last, "initial_entropy": init, "cells": cells, "reference_setting": bool(ref)}
        diffs = [c["mean"] - c["reference"] for c in cells if c["reference"] is not None]
        trend_lr = all(table[(lrs[-1], r)][0] < table[(lrs[0], r)][0] for r in ratios)
        trend_ratio = np.mean([table[(a, ratios[-1])][0] - table[(a, ratios[0])][0] for a in lrs])
        stats[run].update(larger_lr_sparser_every_ratio=bool(trend_lr), mean_entropy_gain_largest_vs_smallest_ratio=float(trend_ratio))
        lines.append(f"num_last={num_last}: entropy at lr_Z {lrs[0]:g}->{lrs[-1]:g} (ratio {ratios[0]:g}) "
                     f"{table[(lrs[0], ratios[0])][0]:.3f}->{table[(lrs[-1], ratios[0])][0]:.3f}"
                     + (f", mean |measured - reference| {np.mean(np.abs(diffs)):.3f} over {len(diffs)} cells" if diffs else "")
                     + f"; larger lr_Z sparser at every ratio: {trend_lr}; largest vs smallest ratio {trend_ratio:+.3f}"
                     + f" (initial entropy {init:.3f})")
    axes[0, 0].set_ylabel("distinct-token entropy after the last step")
    if any(stats[run]["reference_setting"] for run in params.runs):  # what the open markers are
        axes[0, 0].scatter([], [], facecolors="none", edgecolors="0.3", marker="o", s=28, label="released values")
    axes[0, 0].legend(fontsize=7)
    stats["summary"] = "; ".join(lines) + (" (open markers: the released values, luckmatters figure_6_data.pkl, where a "
                                           "run is its setting)")
    return fig, stats


