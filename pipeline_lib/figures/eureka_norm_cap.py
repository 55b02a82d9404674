"""Eureka-moments paper, Eq. 2: on what share of attention rows NormSoftmax's cap min(sigma, tau) binds
over training, per arm of each Eureka experiment (analysis norm_cap of the arms' runs). Where the cap
never binds, NormSoftmax at sqrt(d_head), at 1/3 and under Heat Treatment are one function of the
scores, so those arms can differ only by chance; a Softmax arm shows where NormSoftmax at its tau
would coincide with it."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure

from . import style
from .eureka_arms import arm_colors
from .reading import entry_arms, per_arm_summary

NAME = "eureka_norm_cap"
PAPER = "Eureka-Moments in Transformers"  # the report's category
CONFIG = """
description: >-
  Share of attention rows on which NormSoftmax's cap min(sigma, tau) binds (a Softmax arm: would bind)
  over training, one panel per Eureka experiment, one colour per arm.
required: [experiments]
properties:
  experiments:
    description: "Names of entries of analyses.eureka whose every arm's run is in analyses.norm_cap.runs."
    type: array
    minItems: 1
    items: {type: string, x-ref: analysis/eureka, x-reads: [analysis/norm_cap]}
"""


@dataclass(frozen=True)
class Params:
    experiments: tuple[str, ...]


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    rows = {exp: entry_arms(cfg, "eureka", exp, paths, ["binds_mean"], artifact="norm_cap")
            for exp in params.experiments}
    variants = {exp: {label: cfg.runs[run].attention.variant for label, run in cfg.analyses["eureka"][exp].arms}
                for exp in params.experiments}
    stats = cap_stats(rows, variants)
    stats["summary"] = per_arm_summary(stats, lambda s: (
        f"cap binds on {s['final_median']:.2f} of rows at the last snapshot, {s['mean_median']:.2f} over training "
        f"(median over seeds; {s['variant']})"))
    return plot(rows), stats


def cap_stats(rows: dict, variants: dict) -> dict:
    """experiment -> arm -> the share of rows where the cap binds per seed at the last snapshot and averaged
    over the snapshots, their medians over seeds, and the arm's attention variant."""
    out = {}
    for exp, arms in rows.items():
        out[exp] = {}
        for label, ds in arms.items():
            share = ds.binds_mean
            final = share.isel(snapshot=-1).values.astype(float)
            mean = share.mean("snapshot").values.astype(float)
            out[exp][label] = {"variant": variants[exp][label],
                               "final_per_seed": [float(v) for v in final], "final_median": float(np.median(final)),
                               "mean_per_seed": [float(v) for v in mean], "mean_median": float(np.median(mean)),
                               "epochs": [int(e) for e in share.snapshot.values]}
    return out


def plot(rows: dict) -> Figure:
    labels, colors = arm_colors(rows)  # one colour per arm, the same in every row
    fig, axes = style.figure(ncols=len(rows), width=3.6, height=2.8)
    handles = {}
    for ax, (exp, arms) in zip(axes[0], rows.items()):
        for label, ds in arms.items():
            x = ds.snapshot.values
            x_plot = np.where(x > 0, x, 0.5)  # log axis: epoch 0 drawn at 0.5
            style.seeds_and_median(ax, x_plot, ds.binds_mean, colors[label], label=label)
            handles[label] = ax.get_lines()[-1]
        ax.set_xscale("log")
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(exp, fontsize=8)
        ax.set_xlabel("epoch")
    axes[0, 0].set_ylabel("share of rows where\nmin(sigma, tau) = tau")
    axes[0, -1].legend([handles[lbl] for lbl in labels], labels, fontsize=6, loc="center left",
                       bbox_to_anchor=(1.0, 0.5))
    return fig
