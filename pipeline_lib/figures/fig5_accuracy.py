"""Fig. 5 of 'Easing Optimization Paths': train/test accuracy of p=4 from scratch vs the p=2 -> p=4
curriculum, every seed thin and the median bold, with success counts and Wilson intervals. An arm
labelled '<arm>, shared draw' is the control of '<arm>' for the data draw: the same runs with every seed
on one shared training set; the statistics give the difference of the two rates (Newcombe's interval)."""
from __future__ import annotations

from dataclasses import dataclass

import matplotlib.lines
import numpy as np
import xarray as xr
from matplotlib.figure import Figure

from ..stats import rate_difference, success_counts, success_label, wilson_interval
from . import style, views
from .reading import arm_trajectory

NAME = "fig5_accuracy"
PAPER = "Easing Optimization Paths: a Circuit Perspective"  # the report's category
CONFIG = """
description: Train/test accuracy per arm (every seed thin, median bold), switch marked.
required: [arms]
properties:
  arms:
    description: "Label -> run name. A run with init_from is drawn together with its ancestors."
    type: object
    minProperties: 1
    additionalProperties: {type: string, x-ref: run}
  success_threshold:
    description: "A seed succeeds when its final test accuracy is >= this."
    type: number
    minimum: 0
    maximum: 1
    default: 0.9
"""

METRICS = ["train_loss", "train_acc", "test_loss", "test_acc"]
EXTRA_OUTPUTS = [".html"]  # the interactive seed-band view (views.seed_bands)
SHARED = ", shared draw"  # the label suffix of an arm's shared-draw control


@dataclass(frozen=True)
class Params:
    arms: tuple[tuple[str, str], ...]
    success_threshold: float = 0.9


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    arms, switches = {}, {}
    for label, run in params.arms:
        arms[label], switches[label] = arm_trajectory(cfg, run, paths, METRICS)
    stats = fig5_stats(arms, switches, params.success_threshold)
    fig = plot_fig5_accuracy(arms, switches, params.success_threshold, stats)
    control = draw_control(stats)
    stats["summary"] = (f"seeds with final test accuracy >= {params.success_threshold}: "
                        + "; ".join(success_label(lbl, s["successes"], s["seeds"]) for lbl, s in stats.items())
                        + "".join(f"; {arm}: own draws minus shared draw {c['difference']:+.2f} "
                                  f"[{c['ci95'][0]:+.2f}, {c['ci95'][1]:+.2f}]" for arm, c in control.items()))
    if control:
        stats["draw_control"] = control
    if ".html" in outputs:
        write_view(arms, switches, stats, outputs[".html"])
    return fig, stats


def write_view(arms: dict[str, xr.Dataset], switches: dict[str, list[int]], stats: dict, path: str) -> int:
    """The seed-band view (:func:`.views.seed_bands`) of train and test accuracy per arm, each curriculum's
    switch dashed and each seed's transition (its first epoch at the success threshold after its last switch)
    marked on the test panel. Returns the file's size."""
    marks = []
    for label, ds in arms.items():
        s = stats[label]
        for seed, e in zip(ds.seed.values.tolist(), s["epochs_to_threshold"]):
            if e is not None:
                epoch = s["phase_start"] + e
                marks.append({"arm": label, "seed": seed, "set": "test", "epoch": epoch,
                              "value": round(float(ds.test_acc.sel(seed=seed, epoch=epoch)), 4)})
    rules = [{"arm": label, "epoch": e, "set": part} for label, es in switches.items() for e in es
             for part in ("train", "test")]
    threshold = next(iter(stats.values()))["threshold"]

    def chart(keep: int):
        rows = views.curve_rows(arms, {"train_acc": "train", "test_acc": "test"}, switches, keep=keep)
        return views.seed_bands(rows, "accuracy", marks, rules, sets=["train", "test"])

    return views.write_fitting(chart, path, "Fig. 5: train and test accuracy per arm over training", (
        "Per arm the median bold, the interquartile band shaded and every seed thin; a click on a seed picks it "
        "out (double click: all again), a click on an arm in the legend shows it alone. Dashed: a curriculum's "
        f"switch; diamonds: each seed's first epoch at test accuracy >= {threshold:g} after it."))


def draw_control(stats: dict) -> dict:
    """Per arm with a shared-draw control: its rate (each seed its own draw) minus the control's, with
    Newcombe's 95% interval of the difference of two independent proportions (the control's seeds share
    their initialisations with the arm's first seeds, which makes the two rates positively correlated and
    this interval conservative)."""
    out = {}
    for label, s in stats.items():
        c = stats.get(label + SHARED)
        if c is not None:
            d, lo, hi = rate_difference(s["successes"], s["seeds"], c["successes"], c["seeds"])
            out[label] = {"own_draws": [s["successes"], s["seeds"]], "shared_draw": [c["successes"], c["seeds"]],
                          "difference": d, "ci95": [lo, hi]}
    return out


def fig5_stats(arms: dict[str, xr.Dataset], switches: dict[str, list[int]], threshold: float) -> dict:
    """Per arm: seeds whose final test accuracy is >= threshold, with the Wilson 95% interval."""
    stats = {}
    for label, ds in arms.items():
        final = ds["test_acc"].isel(epoch=-1).values
        train = ds["train_acc"].isel(epoch=-1).values
        k, n = success_counts(final, threshold)
        lo, hi = wilson_interval(k, n)
        stats[label] = {"successes": k, "seeds": n, "ci95": [lo, hi], "threshold": threshold,
                        "final_test_acc": [None if np.isnan(a) else float(a) for a in final],
                        "final_train_acc": [None if np.isnan(a) else float(a) for a in train],
                        "switch_epochs": switches.get(label, []),
                        **epochs_to_threshold(ds["test_acc"], (switches.get(label) or [None])[-1], threshold)}
        if switches.get(label):
            stats[label]["switch_change"] = {var: switch_change(ds[var], switches[label][-1])
                                             for var in ("train_acc", "test_acc")}
    return stats


def switch_change(acc: xr.DataArray, switch: int) -> dict:
    """Per seed, the change of accuracy from the last epoch before the switch (on the old task) to the
    switch epoch (the new task's first record) and, as its control, the largest absolute one-epoch change
    anywhere else in the seed's curve."""
    epochs = acc.epoch.values
    at = int(np.flatnonzero(epochs == switch)[0])
    steps = np.diff(acc.values, axis=1)  # steps[:, i] is epoch i + 1 minus epoch i
    elsewhere = np.abs(np.delete(steps, at - 1, axis=1))
    with np.errstate(invalid="ignore"):
        largest = np.nanmax(np.where(np.isnan(elsewhere), -np.inf, elsewhere), axis=1)
    return {"at_switch": _floats(steps[:, at - 1]), "largest_elsewhere": _floats(largest)}


def _floats(values) -> list:
    """JSON-ready floats: None where a seed has no number (NaN or no finite change)."""
    return [float(v) if np.isfinite(v) else None for v in values]


def epochs_to_threshold(test_acc: xr.DataArray, switch: int | None, threshold: float) -> dict:
    """Per seed, the epochs from the arm's last switch (its start if none) to the first epoch whose test
    accuracy is >= threshold; None where no epoch of the phase reaches it. ``phase_epochs``: the phase's length."""
    epochs = test_acc.epoch.values
    start = int(epochs[0]) if switch is None else int(switch)
    phase = epochs >= start
    out = []
    for row in test_acc.values:
        hit = np.flatnonzero(phase & (row >= threshold))
        out.append(int(epochs[hit[0]]) - start if hit.size else None)
    return {"epochs_to_threshold": out, "phase_start": start, "phase_epochs": int(epochs[-1]) - start}


def settings(labels) -> dict[str, list[str]]:
    """Setting -> its arms' labels, in order: a label '<kind>, <setting>' (e.g. 'scratch, paper code') belongs to
    <setting>, a label without a comma to the main one ('')."""
    out: dict[str, list[str]] = {}
    for label in labels:
        out.setdefault(label.partition(", ")[2], []).append(label)
    return out


def plot_fig5_accuracy(arms: dict[str, xr.Dataset], switches: dict[str, list[int]], threshold: float,
                       stats: dict) -> Figure:
    """Train and test accuracy against epoch: one row per setting (:func:`settings`), its arms side by side in
    the row's two panels, one colour per kind of arm (scratch, curriculum) in every row. Per arm every seed thin,
    the interquartile band shaded and the median bold; the switch of a curriculum dashed; above each test panel
    the row's success counts (``stats``: :func:`fig5_stats`) and the success threshold dotted in it.

    ``arms`` maps a label to a trajectory with ``train_acc``/``test_acc`` over (seed, epoch), phases
    already concatenated; ``switches`` gives the epochs where an arm changed task.
    """
    rows = settings(arms)
    kinds = list(dict.fromkeys(label.partition(", ")[0] for label in arms))
    color = {kind: c for kind, c in zip(kinds, style.ARM_COLORS)}
    fig, axes = style.figure(ncols=2, nrows=len(rows), width=3.4, height=2.3)
    for row, (setting, labels) in zip(axes, rows.items()):
        for label in labels:
            ds, c = arms[label], color[label.partition(", ")[0]]
            for ax, var in zip(row, ("train_acc", "test_acc")):
                da = ds[var]
                for seed in da.seed.values:
                    ax.plot(da.epoch, da.sel(seed=seed), color=c, lw=style.SEED_LW, alpha=0.25)
                q1, q3 = quantiles(da.transpose("seed", "epoch").values)
                ax.fill_between(da.epoch, q1, q3, color=c, alpha=0.2, lw=0)
                ax.plot(da.epoch, da.median("seed", skipna=True), color=c, lw=style.MEDIAN_LW,
                        label=label.partition(", ")[0])
                for e in switches.get(label, []):
                    ax.axvline(e, color=c, ls="--", lw=1)
                    ax.annotate("switch", (e, 0.0), xytext=(3, 0), textcoords="offset points", color=c, fontsize=7,
                                va="bottom")
        for ax, title in zip(row, ("train accuracy", "test accuracy")):
            ax.set_title(f"{setting}: {title}" if setting else title, fontsize=9, loc="left")
            ax.set_ylim(-0.02, 1.02)
        row[0].set_ylabel("accuracy")
        row[1].axhline(threshold, color="0.4", ls=":", lw=0.8)
        counts = "\n".join(success_label(lbl.partition(", ")[0], stats[lbl]["successes"], stats[lbl]["seeds"])
                           for lbl in labels if lbl in stats)
        row[1].text(1.02, 0.5, f"final test acc.\n>= {threshold:g}:\n{counts}", transform=row[1].transAxes,
                    fontsize=7, va="center", ha="left")
    for ax in axes[-1]:
        ax.set_xlabel("epoch")
    handles = [matplotlib.lines.Line2D([], [], color=color[k], lw=style.MEDIAN_LW, label=k) for k in kinds]
    fig.legend(handles=handles, loc="outside upper center", ncol=len(kinds), frameon=False,
               title="median bold, interquartile band shaded, every seed thin")
    return fig


def quantiles(values: np.ndarray, qs=(0.25, 0.75), axis: int = 0) -> np.ndarray:
    """``np.nanquantile(values, qs, axis)`` (linear interpolation, NaN skipped, NaN where a column has no
    number) by one sort instead of one call per column: fast over many epochs."""
    a = np.moveaxis(np.asarray(values, dtype=float), axis, 0)
    ordered = np.sort(a, axis=0)  # NaN last
    n = np.sum(~np.isnan(a), axis=0)
    out = []
    for q in qs:
        pos = q * np.maximum(n - 1, 0)
        lo, hi = np.floor(pos).astype(int), np.ceil(pos).astype(int)
        below = np.take_along_axis(ordered, lo[None], 0)[0]
        above = np.take_along_axis(ordered, hi[None], 0)[0]
        out.append(np.where(n > 0, below + (above - below) * (pos - lo), np.nan))
    return np.stack(out)
