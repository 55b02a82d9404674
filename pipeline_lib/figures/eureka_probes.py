"""Eureka-moments paper, Fig. 2: linear-probe accuracy of the hidden first step over training, one
panel per probed site, one line per attention variant."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr
from matplotlib.figure import Figure

from ..plumbing.store import read_dataset
from . import style
from .eureka_arms import BASE, INTERVENTIONS, arm_colors
from .reading import entry_arms, per_arm_summary

NAME = "eureka_probes"
PAPER = "Eureka-Moments in Transformers"  # the report's category
CONFIG = """
description: >-
  Linear-probe accuracy of the first step over training per attention variant, one row per
  Eureka experiment (entries of analyses.eureka).
required: [experiments]
properties:
  experiments:
    description: "Names of entries of analyses.eureka."
    type: array
    minItems: 1
    items: {type: string, x-ref: analysis/eureka, x-reads: [analysis/probes, artifact]}
"""


ARMS = {"softmax": BASE, **INTERVENTIONS}
SITE = "cls"  # the final CLS representation


@dataclass(frozen=True)
class Params:
    experiments: tuple[str, ...]


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    rows = {exp: entry_arms(cfg, "eureka", exp, paths, ["accuracy", "chance"], artifact="probes")
            for exp in params.experiments}
    stats = probe_stats(rows)
    for exp in params.experiments:  # each probed seed's Eureka epoch (Fig. 2 contrasts runs with and without one)
        epochs = read_dataset(paths.analysis("eureka", exp), rule="eureka").eureka_epoch
        stats[exp]["eureka_epoch_per_seed"] = {label: eureka_epoch_per_seed(epochs, label, ds.seed.values)
                                               for label, ds in rows[exp].items()}
    stats["summary"] = per_arm_summary(stats, lambda s: "step-1 probe at the last snapshot " + ", ".join(
        f"{site} {v['median_last']:.2f}" for site, v in s.items()), skip=("chance", "eureka_epoch_per_seed"))
    return plot_eureka_probes(rows), stats


def eureka_epoch_per_seed(epochs: xr.DataArray, label: str, seeds) -> list:
    """The Eureka epoch of each of ``seeds`` of arm ``label``, in their order, from the ``eureka`` analysis's
    ``eureka_epoch`` (arm, seed; NaN: never); None for a seed without one."""
    return [None if np.isnan(e) else float(e) for e in epochs.sel(arm=label, seed=list(seeds)).values]


def _sites(arms: dict[str, xr.Dataset]) -> list:
    return list(next(iter(arms.values())).site.values)


def _chance(arms: dict[str, xr.Dataset], target: str) -> float:
    """The majority-class accuracy, read from the experiment's first arm (all arms share the data)."""
    return float(next(iter(arms.values())).chance.sel(target=target))


def probe_stats(rows: dict[str, dict[str, xr.Dataset]], target: str = "step1") -> dict:
    """experiment -> arm -> site -> median probe accuracy over seeds at the first and the last
    snapshot, and every seed's at the last; plus the experiment's chance level (after the arms)."""
    stats = {}
    for exp, arms in rows.items():
        stats[exp] = {}
        for site in _sites(arms):
            for label, ds in arms.items():
                med = ds.accuracy.sel(site=site, target=target).median("seed", skipna=True)
                last = ds.accuracy.sel(site=site, target=target).isel(snapshot=-1).values
                stats[exp].setdefault(label, {})[site] = {"median_first": float(med[0]), "median_last": float(med[-1]),
                                                          "last_per_seed": [None if np.isnan(a) else float(a)
                                                                            for a in last]}
            stats[exp]["chance"] = _chance(arms, target)
    return stats


def plot_eureka_probes(rows: dict[str, dict[str, xr.Dataset]], target: str = "step1") -> Figure:
    """``rows``: experiment -> arm -> probe artifact (accuracy over seed, snapshot, site, target). One
    row per experiment, one panel per site; per arm the median over seeds bold, seeds thin; the
    majority-class chance level dashed."""
    sites = {exp: _sites(arms) for exp, arms in rows.items()}
    ncols = max(len(s) for s in sites.values())
    labels, colors = arm_colors(rows)  # one colour per arm, the same in every row
    fig, axes = style.figure(ncols=ncols, nrows=len(rows), width=2.8, height=2.3)
    for r, (exp, arms) in enumerate(rows.items()):
        for c, site in enumerate(sites[exp]):
            ax = axes[r][c]
            for label, ds in arms.items():
                acc = ds.accuracy.sel(site=site, target=target)
                # log axis: epoch 0 at 1
                median = style.seeds_and_median(ax, acc.snapshot.values + 1, acc, colors[label], label=label, lw=1.6)
                ax.plot(acc.snapshot.values + 1, median, "o", color=colors[label], ms=3)  # the probed snapshots
            ax.axhline(_chance(arms, target), color="k", ls="--", lw=0.8,
                       label="chance (majority class)" if (r, c) == (0, 0) else None)
            ax.set_xscale("log")
            ax.set_ylim(0.4, 1.02)
            ax.set_title(f"{exp}\nprobe of {target} at {site}", fontsize=8)
            ax.set_xlabel("epoch + 1")
        for c in range(len(sites[exp]), ncols):
            axes[r][c].axis("off")
        axes[r][0].set_ylabel("probe accuracy")
    axes[0][-1].legend(*axes[0][0].get_legend_handles_labels(), fontsize=7, loc="upper left",
                       bbox_to_anchor=(1.0, 1.0))  # beside the panels, never over the seeds' curves
    return fig
