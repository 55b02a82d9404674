"""Scan&Snap transition time across the learning-rate sweep (Tian's talk, "Overall Picture of the Training
Dynamics", slides 7-8: the snap at t0 = O(2K ln M / eta_Y), and "Larger learning rate eta_Z leads to faster
phase transition"). Per slot, the step at which the common tokens' attention mass (mean over classes) has
covered half of its change from the first to the last step; median over seeds per (lr_Z, eta_Y/eta_Z) cell,
against eta_Y = lr_Z * eta_Y/eta_Z on log axes, one line per lr_Z, one panel per number of last tokens. The
dashed line has the slope -1 that t0 proportional to 1/eta_Y predicts."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure

from ..intervals import json_floats
from ..plumbing.store import read_dataset
from . import style
from .scan_snap_attention import settle_step

NAME = "scan_snap_transition"
PAPER = "Tian: training dynamics of attention (Scan&Snap, JoMA)"
CONFIG = """
description: Transition step of swept Scan&Snap runs (half the common-token mass change) against eta_Y, per lr_Z.
required: [runs]
properties:
  runs:
    description: "Swept runs (sweep over lr and lr_ratio.Y) whose weights are recorded at many steps, each listed in analyses.scan_snap.runs; one panel each."
    type: array
    minItems: 1
    items: {type: string, x-ref: run, x-reads: [analysis/scan_snap], x-requires: {properties: {run: {required: [sweep]}}}, x-requires-message: "has no sweep"}
"""
SETTLED_BEFORE = 0.8  # a cell counts where the median seed's mass settles before this share of the run's steps
SLOPE_TOLERANCE = 0.25  # on the exponent of eta_Y: tells -1 (t0 ~ 1/eta_Y) from -0.5 and from 0 (no dependence)
N_BOOT = 1000


@dataclass(frozen=True)
class Params:
    runs: tuple[str, ...]


def half_step(mass: np.ndarray, steps: np.ndarray) -> float:
    """First step at which a curve has covered half of its change from its first to its last value (NaN where it
    does not move)."""
    total = mass[-1] - mass[0]
    if total == 0 or not np.isfinite(total):
        return float("nan")
    return float(steps[np.argmax((mass - mass[0]) / total >= 0.5)])


def cells_of(an) -> list[dict]:
    """Per (lr_Z, ratio) cell: its slots' half steps (in slot order), seed halves and whether it settled."""
    mass = an.common_mass.mean("class").values  # (slot, step)
    steps = an.step.values
    lr, ratio, seed = an.lr.values, an.lr_ratio_Y.values, an.run_seed.values
    half = np.array([half_step(m, steps) for m in mass])
    settle = np.array([settle_step(m, steps) for m in mass])
    out = []
    for a in np.unique(lr):
        for r in np.unique(ratio):
            sel = (lr == a) & (ratio == r)
            if not sel.any():  # a sweep need not fill its grid
                continue
            first = seed[sel] < np.median(np.unique(seed))
            t = half[sel]
            split = first.any() and not first.all()
            out.append({"lr_Z": float(a), "ratio": float(r), "eta_Y": float(a * r), "half_steps": json_floats(t),
                        "median": float(np.nanmedian(t)), "n": int(sel.sum()),
                        "halves": [float(np.nanmedian(t[first])), float(np.nanmedian(t[~first]))] if split else
                        [float("nan")] * 2,
                        "settled": bool(np.nanmedian(settle[sel]) <= SETTLED_BEFORE * steps[-1])})
    return out


def equal_eta_y_pairs(cells: list[dict]) -> list[dict]:
    """Cells of one panel with the same eta_Y and different lr_Z, as (larger lr_Z, smaller lr_Z) pairs; a pair
    holds where the larger lr_Z's median is earlier by more than either cell's seed-half difference (the
    control: the same statistic between two halves of one cell's seeds)."""
    out = []
    for big in cells:
        for small in cells:
            if small["lr_Z"] < big["lr_Z"] and np.isclose(small["eta_Y"], big["eta_Y"]):
                gap = small["median"] - big["median"]
                control = max(abs(big["halves"][0] - big["halves"][1]), abs(small["halves"][0] - small["halves"][1]))
                out.append({"eta_Y": big["eta_Y"], "lr_Z": [big["lr_Z"], small["lr_Z"]],
                            "medians": [big["median"], small["median"]], "earlier_by": float(gap),
                            "seed_half_difference": float(control), "holds": bool(gap > control)})
    return out


def pooled_slope(series: list[list[dict]], rng: np.random.Generator | None = None) -> tuple[float, float, float]:
    """Slope of log(median half step) on log(eta_Y), one intercept per series (each a lr_Z of a panel, its settled
    cells), and its bootstrap 95% interval (slots resampled within each cell)."""
    series = [s for s in series if len(s) >= 2]
    if not series:
        return float("nan"), float("nan"), float("nan")

    def fit(medians):
        xs, ys = [], []
        for s, m in zip(series, medians):
            x, y = np.log([c["eta_Y"] for c in s]), np.log(m)
            xs.append(x - x.mean())
            ys.append(y - y.mean())
        x, y = np.concatenate(xs), np.concatenate(ys)
        return float((x * y).sum() / (x * x).sum())

    slope = fit([np.array([c["median"] for c in s]) for s in series])
    rng = rng or np.random.default_rng(0)
    boot = [fit([np.array([np.nanmedian(rng.choice(np.asarray(c["half_steps"], float), len(c["half_steps"])))
                           for c in s]) for s in series]) for _ in range(N_BOOT)]
    lo, hi = np.nanpercentile(boot, [2.5, 97.5])
    return slope, float(lo), float(hi)


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    fig, axes = style.figure(ncols=len(params.runs), width=3.0)
    stats: dict = {}
    series, pairs, lines = [], [], []
    for ax, run in zip(axes[0], params.runs):
        an = read_dataset(paths.analysis("scan_snap", run), rule="scan_snap")
        num_last = int(cfg.datasets[cfg.runs[run].dataset].params.get("num_last", 2))
        cells = cells_of(an)
        for i, a in enumerate(sorted({c["lr_Z"] for c in cells})):
            row = sorted((c for c in cells if c["lr_Z"] == a), key=lambda c: c["eta_Y"])
            ax.plot([c["eta_Y"] for c in row], [c["median"] for c in row], "o-",
                    color=style.ARM_COLORS[i % len(style.ARM_COLORS)], lw=1.2, ms=3, label=f"lr_Z = {a:g}")
            series.append([c for c in row if c["settled"]])
        eta = np.array(sorted({c["eta_Y"] for c in cells}))
        mid = np.exp(np.nanmean(np.log([c["median"] for c in cells])))
        ax.plot(eta, mid * np.sqrt(eta.min() * eta.max()) / eta, "k--", lw=0.8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"num_last = {num_last}", fontsize=9)
        ax.set_xlabel("eta_Y")
        ax.set_ylabel("step of half the common-mass change")
        pairs += [dict(p, run=run) for p in equal_eta_y_pairs(cells)]
        stats[run] = {"num_last": num_last, "steps": int(an.step.values[-1]), "cells": cells,
                      "unsettled_cells": sum(not c["settled"] for c in cells)}
        lines.append(f"num_last={num_last}: {stats[run]['unsettled_cells']} of {len(cells)} cells unsettled")
    axes[0, 0].legend(fontsize=7)
    slope, lo, hi = pooled_slope(series)
    stats["slope"] = {"value": slope, "ci": [lo, hi], "series": len([s for s in series if len(s) >= 2])}
    stats["pairs"] = pairs
    held = sum(p["holds"] for p in pairs)
    stats["summary"] = ("; ".join(lines) + f"; log-log slope of the transition step on eta_Y {slope:.2f} "
                        f"[{lo:.2f}, {hi:.2f}] (t0 ~ 1/eta_Y: -1); at equal eta_Y the larger lr_Z is earlier beyond "
                        f"the seed-half difference in {held} of {len(pairs)} pairs")
    return fig, stats


