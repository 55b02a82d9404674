"""Eureka-moments paper, accuracy over training per attention variant (its Fig. 1 and 4): every seed
thin, median bold, the chance level without the first step and the Eureka threshold marked."""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np
import xarray as xr
from matplotlib.figure import Figure

from . import style, views
from .eureka_arms import BASE, INTERVENTIONS, arm_colors
from .reading import entry_arms

NAME = "eureka_accuracy"
PAPER = "Eureka-Moments in Transformers"  # the report's category
CONFIG = """
description: >-
  Train/test accuracy over training per attention variant, one row per Eureka experiment
  (entries of analyses.eureka).
required: [experiments]
properties:
  experiments:
    description: "Names of entries of analyses.eureka."
    type: array
    minItems: 1
    items: {type: string, x-ref: analysis/eureka, x-reads: [trajectory]}
"""


ARMS = INTERVENTIONS  # label of each intervention arm, by the claim ids' key
PLATEAU_BAND = 0.05  # on the plateau: test accuracy within this of the no-first-step level
FAST_JUMP = 0.2  # a fast jump: at most this share of the plateau's epochs
EXTRA_OUTPUTS = [".html"]  # the interactive seed-band view (views.seed_bands)
LOSS_BAND = 0.05  # saturated: train and test loss each vary by at most this share of their lowest value
LEAP_SHARE = 0.5  # a loss's leap: the first epoch after the jump's start at which it is below this share of its value there
TARGET_SHARE = 0.95  # the abstract's "95% of the baseline's accuracy"
STEP_SHARE = 0.2  # ... "in 20% of the steps"


@dataclass(frozen=True)
class Params:
    experiments: tuple[str, ...]


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    rows = {exp: entry_arms(cfg, "eureka", exp, paths, ["train_acc", "test_acc", "train_loss", "test_loss"])
            for exp in params.experiments}
    # the chance level comes from the dataset the first arm read (the train stage copies it into attrs)
    chance = {exp: float(next(iter(arms.values())).attrs.get("task_chance_without_step1", float("nan")))
              for exp, arms in rows.items()}
    threshold = {e: cfg.analyses["eureka"][e].threshold for e in params.experiments}
    stats = eureka_accuracy_stats(rows, chance, threshold)
    stats["summary"] = "; ".join(
        f"{exp}: median final test accuracy " + ", ".join(f"{lbl} {s['median_final_test_acc']:.2f}"
                                                          for lbl, s in st.items() if lbl != "chance_without_step1")
        + f" (chance without step 1: {chance[exp]:.3f})" for exp, st in stats.items())
    if ".html" in outputs:
        write_view(rows, stats, threshold, outputs[".html"])
    return plot_eureka_accuracy(rows, chance, threshold), stats


def write_view(rows: dict[str, dict[str, xr.Dataset]], stats: dict, threshold: dict[str, float], path: str) -> int:
    """The seed-band view (:func:`.views.seed_bands`) of train and test accuracy per arm, one pair of panels per
    experiment, each seed's Eureka epoch marked on its test panel. Returns the file's size."""
    sets = [f"{exp}: {part}" for exp in rows for part in ("train", "test")]
    marks = [{"arm": label, "seed": seed, "set": f"{exp}: test", "epoch": e,
              "value": round(float(ds.test_acc.sel(seed=seed, epoch=e)), 3)}
             for exp, arms in rows.items() for label, ds in arms.items()
             for seed, e in zip(ds.seed.values.tolist(), stats[exp][label].get("eureka_epoch", [])) if e is not None]

    def chart(keep: int):
        curves = [r for exp, arms in rows.items()
                  for r in views.curve_rows(arms, {"train_acc": f"{exp}: train", "test_acc": f"{exp}: test"}, {},
                                            keep=keep)]
        return views.seed_bands(curves, "accuracy", marks, sets=sets, columns=2)

    return views.write_fitting(chart, path, "Eureka-moments: train and test accuracy per arm over training", (
        "Per arm the median bold, the interquartile band shaded and every seed thin, one row per experiment; a "
        "click on a seed picks it out (double click: all again), a click on an arm in the legend shows it alone. "
        "Diamonds: each seed's Eureka epoch (test accuracy above "
        + ", ".join(f"{t:g} in {e}" for e, t in threshold.items()) + ")."))


def eureka_accuracy_stats(rows: dict[str, dict[str, xr.Dataset]], chance: dict[str, float],
                          threshold: dict[str, float] | None = None) -> dict:
    """experiment -> arm -> final test accuracy of every seed and their median, per seed the epochs to 95% of
    the baseline's median final accuracy and (with ``threshold``) the Eureka epoch, plateau and jump
    (:func:`plateau_and_jump`); plus the chance level."""
    stats = {}
    for exp, arms in rows.items():
        stats[exp] = {}
        base = arms.get(BASE)
        target = TARGET_SHARE * float(np.nanmedian(base.test_acc.isel(epoch=-1).values)) if base is not None else None
        for label, ds in arms.items():
            final = ds.test_acc.isel(epoch=-1).values
            s = {"median_final_test_acc": float(np.nanmedian(final)),
                 "final_test_acc": [None if np.isnan(a) else float(a) for a in final],
                 "last_epoch": int(ds.epoch.values[-1])}
            acc, epochs = ds.test_acc.values, ds.epoch.values
            if target is not None:
                s["baseline_target_acc"] = target
                s["epochs_to_baseline_target"] = [first_epoch(a >= target, epochs) for a in acc]
            if threshold is not None:
                per_seed = [plateau_and_jump(a, epochs, chance[exp], threshold[exp]) for a in acc]
                for i, key in enumerate(("eureka_epoch", "plateau_epochs", "jump_epochs")):
                    s[key] = [p[i] for p in per_seed]
                if "train_loss" in ds and "test_loss" in ds:  # "after both training and validation loss saturated"
                    flat = [loss_flat_stretch(tr, te, epochs, e)
                            for tr, te, (e, _, _) in zip(ds.train_loss.values, ds.test_loss.values, per_seed)]
                    s["loss_flat_epochs"], s["loss_flat_jump_epochs"] = [f[0] for f in flat], [f[1] for f in flat]
                    for key, loss in (("train_loss_leap_epoch", ds.train_loss.values),
                                      ("test_loss_leap_epoch", ds.test_loss.values)):
                        s[key] = [loss_leap(values, epochs, None if e is None or j is None else e - j)
                                  for values, (e, _, j) in zip(loss, per_seed)]
            stats[exp][label] = s
        stats[exp]["chance_without_step1"] = chance[exp]
    return stats


def first_epoch(hit: np.ndarray, epochs: np.ndarray) -> float | None:
    """The first epoch where ``hit`` holds (None: never)."""
    i = np.flatnonzero(hit)
    return float(epochs[i[0]]) if i.size else None


def plateau_and_jump(acc: np.ndarray, epochs: np.ndarray, level: float, threshold: float,
                     band: float = PLATEAU_BAND) -> tuple:
    """One seed's (Eureka epoch: first epoch with accuracy > ``threshold``; plateau: the epochs before it
    within ``band`` of ``level``; jump: epochs from the last one at or below ``level + band`` to it).
    None where undefined (no Eureka epoch; no epoch at the plateau level before it)."""
    acc = np.nan_to_num(np.asarray(acc, dtype=float), nan=-np.inf)
    eureka = first_epoch(acc > threshold, epochs)
    if eureka is None:
        return None, None, None
    before = acc[:int(np.flatnonzero(acc > threshold)[0])]
    plateau = int(np.sum(np.abs(before - level) <= band))
    low = np.flatnonzero(before <= level + band)
    return eureka, plateau, (eureka - float(epochs[low[-1]]) if low.size else None)


def loss_flat_stretch(train_loss: np.ndarray, test_loss: np.ndarray, epochs: np.ndarray, eureka: float | None,
                      band: float = LOSS_BAND, fast: float = FAST_JUMP) -> tuple[int | None, float | None]:
    """One seed's (stretch, jump): the longest unbroken stretch of epochs before the Eureka epoch over which both
    losses had saturated (each varies by at most ``band`` of its lowest value over the stretch) and after which
    the accuracy's jump is rapid (the Eureka epoch at most ``fast`` x the stretch after its end); where no stretch
    is followed by a rapid jump, the longest stretch and its distance to the Eureka epoch (so the ledger shows
    what failed). Anchored on each stretch's own range, not on the losses where the accuracy's jump starts,
    which can already lie in the losses' leap. (None, None) without a Eureka epoch or a finite loss before it."""
    if eureka is None:
        return None, None
    end = int(np.searchsorted(epochs, eureka))
    loss = np.stack([np.asarray(train_loss, dtype=float)[:end], np.asarray(test_loss, dtype=float)[:end]])
    best = longest = None
    start, highs, lows = 0, [deque(), deque()], [deque(), deque()]  # per loss: indices of its running max and min
    for b in range(end):
        if not np.isfinite(loss[:, b]).all():  # a non-finite loss breaks the stretch
            start, highs, lows = b + 1, [deque(), deque()], [deque(), deque()]
            continue
        for k in (0, 1):
            _push(highs[k], loss[k], b, higher=True)
            _push(lows[k], loss[k], b, higher=False)
        while any(loss[k, highs[k][0]] - loss[k, lows[k][0]] > band * loss[k, lows[k][0]] for k in (0, 1)):
            start += 1
            for q in (*highs, *lows):
                while q[0] < start:
                    q.popleft()
        stretch, jump = int(epochs[b] - epochs[start]), float(eureka - epochs[b])
        if longest is None or stretch >= longest[0]:
            longest = (stretch, jump)
        if jump <= fast * stretch and (best is None or stretch >= best[0]):
            best = (stretch, jump)
    return best or longest or (None, None)


def _push(q: deque, values: np.ndarray, i: int, higher: bool) -> None:
    """Append index ``i`` to a monotonic queue whose front is the running max (``higher``) or min of ``values``."""
    while q and (values[q[-1]] <= values[i] if higher else values[q[-1]] >= values[i]):
        q.pop()
    q.append(i)


def loss_leap(loss: np.ndarray, epochs: np.ndarray, start: float | None, share: float = LEAP_SHARE) -> float | None:
    """The epoch of one loss's leap: the first epoch from ``start`` (the epoch the accuracy's jump starts from)
    at which the loss is below ``share`` of its value at ``start``. None without a start, where the loss there is
    not finite, or where it never falls that far."""
    if start is None:
        return None
    i = int(np.searchsorted(epochs, start))
    loss = np.asarray(loss, dtype=float)
    if i >= len(epochs) or not np.isfinite(loss[i]):
        return None
    hit = np.flatnonzero(loss[i:] < share * loss[i])
    return float(epochs[i + hit[0]]) if hit.size else None


def plot_eureka_accuracy(rows: dict[str, dict[str, xr.Dataset]], chance: dict[str, float],
                         threshold: float | dict[str, float]) -> Figure:
    """``rows``: experiment -> arm label -> trajectory (train_acc, test_acc over seed, epoch). One row
    of panels per experiment, one panel per arm; test accuracy in the arm's colour (one per arm label in every
    row), train accuracy grey, the
    no-step-1 chance level dashed, the Eureka threshold (per experiment if a dict) dotted."""
    ncols = max(len(a) for a in rows.values())
    labels, colors = arm_colors(rows)  # one colour per arm, the same in every row
    fig, axes = style.figure(ncols=ncols, nrows=len(rows), width=2.6, height=2.2)
    for r, (exp, arms) in enumerate(rows.items()):
        thr = threshold[exp] if isinstance(threshold, dict) else threshold
        for c, (label, ds) in enumerate(arms.items()):
            ax, color = axes[r][c], colors[label]
            for var, col in (("train_acc", "0.55"), ("test_acc", color)):
                style.seeds_and_median(ax, ds[var].epoch, ds[var], col, label=var.replace("_acc", ""))
            ax.axhline(chance[exp], color="k", ls="--", lw=0.8)
            ax.axhline(thr, color="k", ls=":", lw=0.8)
            ax.set_title(f"{exp}: {label}", fontsize=8)
            ax.set_ylim(-0.02, 1.02)
            ax.set_xlabel("epoch")
        for c in range(len(arms), ncols):
            axes[r][c].axis("off")
        axes[r][0].set_ylabel("accuracy")
    fig.text(0.5, -0.02, "test accuracy in the arm's colour (the same in every row), train accuracy grey; dashed: "
             "chance without the first step (from the data); dotted: Eureka threshold", ha="center", va="top", fontsize=8)
    return fig
