"""Where the attention goes around a Eureka-moment ('Eureka-Moments in Transformers', Sec. 2 and Sec. 5.1 with
Fig. 4), on the reasoning task: the CLS query's attention (the last layer's, mean over heads, over the probe
sequences the runs record) on the targets of task 2 (c, d) as a share of its attention on the four tokens (a and b
are the indicators of task 1). Per arm, every seed thin: the share over training, each seed's Eureka epoch marked.
The statistics read each seed's share over the later half of the time before its Eureka-moment (or of the run,
where none comes) and over the later half of the time after it."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr
from matplotlib.figure import Figure

from ..analysis.eureka import eureka_epochs
from ..intervals import json_floats, mean_interval
from . import style
from .reading import entry_arms, recorded_attention

NAME = "eureka_attention_targets"
PAPER = "Eureka-Moments in Transformers"  # the report's category
CONFIG = """
description: The CLS attention on the targets against the indicators before and after Eureka-moments (reasoning task).
required: [experiment]
properties:
  experiment:
    description: "Name of an entry of analyses.eureka whose runs are on the reasoning task."
    type: string
    x-ref: analysis/eureka
    x-reads: [trajectory]
    x-requires: {properties: {records: {contains: {const: attention}}}}
    x-requires-message: "must record the probes' attention (attention: a transformer model)"
  arm: {description: "The arm whose seeds the claims on the time before Eureka-moments read.", type: string, default: Softmax}
"""
LAYOUT = "tokens (a, b, c, d)"  # the reasoning task's inputs: CLS first, then a, b (indicators), c, d (targets)
INDICATORS, TARGETS = (1, 2), (3, 4)  # positions in the recorded attention (position 0 is CLS)


@dataclass(frozen=True)
class Params:
    experiment: str
    arm: str = "Softmax"


def target_share(ds: xr.Dataset) -> xr.DataArray:
    """(seed, epoch) at the recorded epochs: attention on the targets over attention on the four tokens, mean
    over the probe sequences."""
    if ds.attrs.get("task_x_layout") != LAYOUT:
        raise ValueError(f"figure {NAME}: its experiment's runs must be on the reasoning task (inputs '{LAYOUT}'), "
                         f"not '{ds.attrs.get('task_x_layout')}'")
    att = recorded_attention(ds)
    tokens = att.isel(position=list(INDICATORS + TARGETS)).sum("position")
    return (att.isel(position=list(TARGETS)).sum("position") / tokens).mean("probe")


def window_mean(share: np.ndarray, epochs: np.ndarray, start: float, end: float) -> float:
    """A seed's share averaged over its recorded epochs in [start, end) (NaN where none is recorded)."""
    inside = (epochs >= start) & (epochs < end)
    return float(share[inside].mean()) if inside.any() else float("nan")


def seed_windows(share: xr.DataArray, eureka: np.ndarray) -> dict:
    """Per seed: the share over the later half of the time before its Eureka epoch E ([E/2, E)), or of the whole
    run where it has none ([N/2, N]); over the later half after it ([(E + N)/2, N]); and at the first record."""
    epochs, last = share.epoch.values.astype(float), float(share.epoch.values[-1])
    before, after = [], []
    for s, e in enumerate(eureka):
        row = share.values[s]
        if np.isfinite(e):
            before.append(window_mean(row, epochs, e / 2, e))
            after.append(window_mean(row, epochs, (e + last) / 2, last + 1))
        else:
            before.append(window_mean(row, epochs, last / 2, last + 1))
            after.append(float("nan"))
    return {"before": json_floats(before), "after": json_floats(after), "start": json_floats(share.values[:, 0])}


def pseudo_windows(share: xr.DataArray, eureka: np.ndarray, moment: float) -> dict:
    """The control of the rise at the Eureka-moment: the seeds without one, cut at ``moment`` (the median Eureka
    epoch of the seeds with one) into the same two windows."""
    fake = np.where(np.isfinite(eureka), np.nan, moment)
    w = seed_windows(share, fake)
    return {k: [v if np.isfinite(e) else None for v, e in zip(w[k], fake)] for k in ("before", "after")}


def arm_stats(ds: xr.Dataset, threshold: float) -> tuple[xr.DataArray, dict]:
    eureka = eureka_epochs(ds.test_acc.values, ds.epoch.values, threshold)
    share = target_share(ds)
    out = {"seeds": [int(s) for s in ds.seed.values], "eureka_epoch": json_floats(eureka), **seed_windows(share, eureka)}
    hit = np.isfinite(eureka)
    out["control"] = (pseudo_windows(share, eureka, float(np.median(eureka[hit]))) if hit.any() and (~hit).any()
                      else {"before": [], "after": []})
    return share, out


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    arms = entry_arms(cfg, "eureka", params.experiment, paths, ["attention", "attention_recorded", "test_acc"])
    if params.arm not in arms:
        raise ValueError(f"figures.{NAME}.arm: '{params.arm}' is not an arm of analyses.eureka.{params.experiment} "
                         f"({', '.join(arms)})")
    threshold = cfg.analyses["eureka"][params.experiment].threshold
    fig, axes = style.figure(ncols=len(arms), width=3.0, height=2.8)
    stats = {"experiment": params.experiment, "arm": params.arm, "threshold": threshold, "arms": {}}
    for i, (label, ds) in enumerate(arms.items()):
        share, stats["arms"][label] = arm_stats(ds, threshold)
        ax = axes[0, i]
        style.seeds_and_median(ax, share.epoch.values, share, style.ARM_COLORS[i % len(style.ARM_COLORS)])
        for e in stats["arms"][label]["eureka_epoch"]:
            if e is not None:
                ax.axvline(e, color="0.5", lw=0.6, ls=":")
        ax.axhline(0.5, color="0.3", lw=0.8, ls="--")
        ax.set_ylim(0, 1)
        ax.set_xlabel("epoch")
        ax.set_title(label, fontsize=9)
    axes[0, 0].set_ylabel("CLS attention on c, d / on a, b, c, d")
    a = stats["arms"][params.arm]
    stats["summary"] = (f"{params.experiment} {params.arm}: the targets' share of the attention before the Eureka-moment "
                        f"(or in the run's later half) {mean_interval(a['before'])[0]:.3f} over {len(a['seeds'])} seeds, "
                        f"{mean_interval(a['start'])[0]:.3f} at the first record")
    return fig, stats
