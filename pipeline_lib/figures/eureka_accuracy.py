"""Eureka-moments paper, accuracy over training per attention variant (its Fig. 1 and 4): every seed
thin, median bold, the chance level without the first step and the Eureka threshold marked."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr
from matplotlib.figure import Figure

from .. import claims
from . import style
from .eureka_arms import BASE, EXPERIMENTS, INTERVENTIONS
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
LONG_PLATEAU = 0.1  # a long plateau: at least this share of the run's epochs
FAST_JUMP = 0.2  # a fast jump: at most this share of the plateau's epochs
TARGET_SHARE = 0.95  # the abstract's "95% of the baseline's accuracy"
STEP_SHARE = 0.2  # ... "in 20% of the steps"


@dataclass(frozen=True)
class Params:
    experiments: tuple[str, ...]


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    rows = {exp: entry_arms(cfg, "eureka", exp, paths, ["train_acc", "test_acc"]) for exp in params.experiments}
    # the chance level comes from the dataset the first arm read (the train stage copies it into attrs)
    chance = {exp: float(next(iter(arms.values())).attrs.get("task_chance_without_step1", float("nan")))
              for exp, arms in rows.items()}
    threshold = {e: cfg.analyses["eureka"][e].threshold for e in params.experiments}
    stats = eureka_accuracy_stats(rows, chance, threshold)
    stats["summary"] = "; ".join(
        f"{exp}: median final test accuracy " + ", ".join(f"{lbl} {s['median_final_test_acc']:.2f}"
                                                          for lbl, s in st.items() if lbl != "chance_without_step1")
        + f" (chance without step 1: {chance[exp]:.3f})" for exp, st in stats.items())
    return plot_eureka_accuracy(rows, chance, threshold), stats


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


def score_claims(stats: dict, params: Params) -> dict:
    """The plateau-then-jump shape of the Softmax seeds, and each intervention's epochs to 95% of Softmax's
    accuracy as a share of Softmax's, per experiment."""
    out = {}
    for exp in EXPERIMENTS:
        arms = stats.get(exp, {})
        out[f"eureka.accuracy.{exp}_plateau_then_jump"] = plateau_score(arms)
        for key, arm in ARMS.items():
            out[f"eureka.accuracy.{exp}_{key}_95pct_in_20pct_of_steps"] = speed_score(arms, arm)
    return out


def eureka_shaped(plateau, jump, last_epoch: int) -> bool:
    """A long plateau (>= LONG_PLATEAU of the run) ended by a fast jump (<= FAST_JUMP of the plateau)."""
    return (plateau is not None and jump is not None and plateau >= LONG_PLATEAU * last_epoch
            and jump <= FAST_JUMP * plateau)


def plateau_score(arms: dict) -> dict:
    """Share of the Softmax seeds whose curve is Eureka-shaped (:func:`eureka_shaped`), against one half."""
    base = arms.get(BASE)
    if base is None or "plateau_epochs" not in base:
        return claims.not_run(f"arm {BASE!r} not drawn (or drawn without a Eureka threshold)")
    level = arms.get("chance_without_step1", float("nan"))
    if level is None or np.isnan(level):
        return claims.not_run("the no-first-step accuracy is not recorded in the trajectory")
    n = len(base["plateau_epochs"])
    k = sum(eureka_shaped(p, j, base["last_epoch"]) for p, j in zip(base["plateau_epochs"], base["jump_epochs"]))
    p, lo, hi = claims.rate(k, n)
    control = (f"plateau level (no-first-step accuracy from the data) {level:.3f}; long >= "
               f"{LONG_PLATEAU * base['last_epoch']:g} epochs, fast <= {FAST_JUMP:g} x the plateau")
    return claims.score(p, (lo, hi), n, control, claims.above(p, lo, 0.5))


def _censored(arm: dict) -> list[float]:
    """Per seed the epochs to the baseline's target; a seed that never reaches it: the run's length + 1."""
    return [arm["last_epoch"] + 1 if e is None else e for e in arm["epochs_to_baseline_target"]]


def speed_score(arms: dict, arm: str) -> dict:
    """Median epochs of ``arm`` to 95% of Softmax's final accuracy over Softmax's own, against 0.2."""
    if arm not in arms or BASE not in arms or "epochs_to_baseline_target" not in arms[arm]:
        return claims.not_run(f"arms {arm!r} and {BASE!r} not both drawn")
    a, b = _censored(arms[arm]), _censored(arms[BASE])
    ratio, lo, hi = ratio_of_medians(a, b)
    base = arms[BASE]
    control = (f"{BASE} median {np.median(b):g} epochs to {base['baseline_target_acc']:.3f} "
               f"({TARGET_SHARE:g} x its median final test accuracy {base['median_final_test_acc']:.3f})")
    level = arms.get("chance_without_step1")
    if level is not None and not np.isnan(level) and base["baseline_target_acc"] <= level:
        # the baseline's median seed never solved the first step: reaching its target needs only the second
        return claims.score(ratio, (lo, hi), len(a), control + f" <= the no-first-step accuracy {level:.3f}",
                            claims.guard("not run", "the baseline's target is below the accuracy reached without the "
                                                    "first step: reaching it does not measure the task"))
    return claims.score(ratio, (lo, hi), len(a), control, claims.below(ratio, hi, STEP_SHARE))


def ratio_of_medians(a: list, b: list, level: float = 0.95, n_boot: int = 2000) -> tuple[float, float, float]:
    """(median(a) / median(b), low, high): percentile bootstrap, seeds resampled within each sample (fixed
    seed, as :func:`claims.median_interval`); NaN where median(b) is 0."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if np.median(b) == 0:
        return float("nan"), float("nan"), float("nan")
    rng = np.random.default_rng(0)
    ra = np.median(rng.choice(a, size=(n_boot, a.size)), axis=1)
    rb = np.median(rng.choice(b, size=(n_boot, b.size)), axis=1)
    with np.errstate(divide="ignore"):
        r = ra / rb
    lo, hi = np.quantile(r, [0.5 - level / 2, 0.5 + level / 2])
    return float(np.median(a) / np.median(b)), float(lo), float(hi)


def plot_eureka_accuracy(rows: dict[str, dict[str, xr.Dataset]], chance: dict[str, float],
                         threshold: float | dict[str, float]) -> Figure:
    """``rows``: experiment -> arm label -> trajectory (train_acc, test_acc over seed, epoch). One row
    of panels per experiment, one panel per arm; test accuracy in colour, train accuracy grey, the
    no-step-1 chance level dashed, the Eureka threshold (per experiment if a dict) dotted."""
    ncols = max(len(a) for a in rows.values())
    fig, axes = style.figure(ncols=ncols, nrows=len(rows), width=2.6, height=2.2)
    for r, (exp, arms) in enumerate(rows.items()):
        thr = threshold[exp] if isinstance(threshold, dict) else threshold
        for c, ((label, ds), color) in enumerate(zip(arms.items(), style.ARM_COLORS)):
            ax = axes[r][c]
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
    axes[0][0].legend(loc="lower right", fontsize=7)
    fig.text(0.5, -0.02, "dashed: chance without the first step (from the data); dotted: Eureka threshold",
             ha="center", va="top", fontsize=8)
    return fig
