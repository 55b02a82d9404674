"""Scan&Snap (Tian's talk), Theorem 3: the relative gain of a class's dominant distinct token over each other one.

With c~_l = P(l|m, n) exp(z_ml), the talk defines the relative gain r_{l/l'|n}(t) = c~_l^2(t) / c~_l'^2(t) - 1 and
states the closed form r_{l/l'|n}(t) = r_{l/l'|n}(0) chi_l(t): for the dominant token l0 (r_{l0/l'}(0) > 0 for
every other l'), the multiple r_{l0/l'}(t) / r_{l0/l'}(0) is one number, chi_l0(t), whichever l' it is read
against, and its bounds e^{2 f^2(0) B(t)} <= chi_l0(t) <= e^{2 B(t)} with B(t) >= 0 make it at least 1. The ratio
c~_l / c~_l' equals c_l / c_l' for the attention c of analysis ``scan_snap`` (the normalisation cancels), so each
other distinct token l' gives its own estimate log(r_{l0/l'}(t) / r_{l0/l'}(0)) of log chi_l0(t). Their spread (the
standard deviation over l' over the absolute mean; 0 when the closed form holds) is the statistic, at every
recorded step and read at the last; the same spread for the first power (c~_l / c~_l' - 1, a form the theorem does
not state) is its control. The left panel draws one class's estimates over steps (one line per other token, the
median over seeds): under the closed form they coincide.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import matplotlib
import numpy as np
from matplotlib.figure import Figure

from ..intervals import json_floats
from ..plumbing.store import read_dataset
from . import style

NAME = "scan_snap_gain"
PAPER = "Tian: training dynamics of attention (Scan&Snap, JoMA)"
CONFIG = """
description: Theorem 3 of Scan&Snap, the relative gain of the dominant distinct token against each other one.
required: [run]
properties:
  run: {description: "A run listed in analyses.scan_snap.runs whose weights start at step 0.", type: string, x-ref: run, x-reads: [analysis/scan_snap]}
  class_index: {description: "The class whose estimates the left panel draws.", type: integer, minimum: 0, default: 0}
"""

# The theorem's assumptions a run can be checked against (the talk's "Major Assumptions" and "Initial condition:
# z_ml(0) = 0"): Z starts at zero, plain gradient steps, and eta_Y >> eta_Z, read as a ratio of at least 10.
MIN_RATIO = 10.0


@dataclass(frozen=True)
class Params:
    run: str
    class_index: int = 0


def theorem_setting(cfg, run: str) -> list[str]:
    """What of the theorem's assumptions the run breaks (empty: none of those a config can state)."""
    rc = cfg.runs[run]
    opt = rc.optimizer
    init = cfg.models[rc.model].params.get("init", "zero")
    ratio = dict(opt.lr_ratio)
    ratio = ratio.get("Y", 1.0) / ratio.get("Z", 1.0)
    broken = [f"Z does not start at zero (init: {init})"] if init != "zero" else []
    broken += [f"the run starts from run {rc.init_from!r}'s weights"] if getattr(rc, "init_from", None) else []
    if opt.name != "sgd" or (opt.momentum or 0.0) != 0.0 or opt.weight_decay or opt.schedule != "constant":
        broken.append(f"optimizer {opt.name}, momentum {opt.momentum or 0.0:g}, weight decay {opt.weight_decay:g}, "
                      f"schedule {opt.schedule} (the theorem is about plain gradient steps: sgd, no momentum, no "
                      "weight decay, a constant rate)")
    if ratio < MIN_RATIO:
        broken.append(f"eta_Y / eta_Z = {ratio:g} (the theorem assumes eta_Y >> eta_Z, read as >= {MIN_RATIO:g})")
    if rc.sweep:
        broken.append("a swept run (several learning rates per seed)")
    return broken


def multiples(distinct_c: np.ndarray, power: int = 2) -> np.ndarray:
    """(seed, step, class, rank) attention over each class's distinct tokens -> (seed, step, class, other) the
    multiples r(t) / r(0), one per other token l', with r = (c_l0 / c_l')^power - 1 and l0 the token of the largest
    c at the first step (the most frequent one when Z starts at zero); NaN where r(0) = 0 (a tie at the start gives
    no estimate). A multiple at or below 0 means l' has caught up with or overtaken l0, which no factor chi > 0
    allows."""
    d = np.asarray(distinct_c, dtype=np.float64)
    top = d[:, 0].argmax(-1)  # (seed, class)
    order = np.argsort(np.arange(d.shape[-1]) == top[..., None], axis=-1, kind="stable")  # the others, then l0
    d = np.take_along_axis(d, order[:, None], axis=-1)  # (seed, step, class, rank), l0 last
    r = (d[..., -1:] / d[..., :-1]) ** power - 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(r[:, :1] > 0, r / r[:, :1], np.nan)


def spread(multiple: np.ndarray) -> np.ndarray:
    """The spread of the estimates log(multiple) of log chi over the other tokens (last axis): their standard
    deviation over the absolute value of their mean; NaN where the mean is 0 (as at the first step), infinite where
    a multiple is at or below 0 (an overtaken l0: no common factor)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.log(np.where(multiple > 0, multiple, np.nan))
        mean = np.nanmean(logs, axis=-1)
        out = np.where(mean != 0, np.nanstd(logs, axis=-1) / np.abs(mean), np.nan)
        return np.where((multiple <= 0).any(-1), np.inf, out)


def trend(multiple: np.ndarray) -> np.ndarray:
    """Spearman's rho between the other tokens' order (least frequent first when Z starts at zero) and their
    estimates of log chi, per leading index: 0 for estimates that differ by noise alone, near -1 or 1 where the
    factor depends on l' systematically."""
    from scipy.stats import spearmanr

    flat = multiple.reshape(-1, multiple.shape[-1])
    rho = [spearmanr(np.arange(len(m)), np.log(m)).statistic if (m > 0).all() and np.ptp(m) > 0 else np.nan
           for m in flat]
    return np.asarray(rho).reshape(multiple.shape[:-1])


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    an = read_dataset(paths.analysis("scan_snap", params.run), rule="scan_snap")
    steps = an.step.values
    if steps[0] != 0:
        raise ValueError(f"figures.scan_snap_gain.run: run {params.run!r} records its weights from step {steps[0]}, "
                         "not from step 0: the relative gain is a multiple of its start (record_weights)")
    two, one = multiples(an.distinct_c.values, 2), multiples(an.distinct_c.values, 1)
    return plot(two, one, steps, params), stats(cfg, two, one, steps, params)


def stats(cfg, two: np.ndarray, one: np.ndarray, steps: np.ndarray, params: Params) -> dict:
    """Per seed at the last step: the spread over the other tokens (mean over classes; None where a class's dominant
    token was overtaken, counted apart) for the squared gain and the first power, the mean estimate of log chi_l0
    (how much the dominant token gained), the trend of the estimates with the other token's frequency (mean over
    classes), the smallest multiple r(t) / r(0) over every later step, class and other token (at least 1 by the
    theorem's lower bound) and the count of overtaken (class, token) pairs at the last step."""
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices where nothing moved: NaN is the answer
        last2, last1 = spread(two[:, -1]).mean(-1), spread(one[:, -1]).mean(-1)
        gain = np.nanmean(np.log(np.where(two[:, -1] > 0, two[:, -1], np.nan)), axis=(-2, -1))
        lowest = np.nanmin(two[:, 1:], axis=(1, 2, 3)) if len(steps) > 1 else np.full(len(two), np.nan)
        rho = np.nanmean(trend(two[:, -1]), axis=-1)
        summary = (np.nanmedian(last2), np.nanmedian(last1), np.nanmedian(gain), np.nanmin(lowest), np.nanmedian(rho))
    broken = theorem_setting(cfg, params.run)
    out = {"seeds": int(two.shape[0]), "classes": int(two.shape[2]), "others": int(two.shape[3]),
           "last_step": int(steps[-1]), "steps_recorded": int(len(steps)),
           "spread_per_seed": json_floats(last2), "spread_first_power_per_seed": json_floats(last1),
           "log_chi_per_seed": [float(v) for v in gain], "lowest_multiple_per_seed": [float(v) for v in lowest],
           "trend_per_seed": [float(v) for v in rho],
           "overtaken_per_seed": [int(v) for v in (two[:, -1] <= 0).sum((-2, -1))],
           "multiple_last_per_seed_class_other": np.round(two[:, -1], 6).tolist(),
           "theorem_setting": not broken, "outside_theorem": broken}
    out["summary"] = (
        f"run {params.run}, step {out['last_step']}: spread of the {out['others']} estimates of log chi_l0 (sd over "
        f"|mean|, median over {out['seeds']} seeds) {summary[0]:.3f} for the squared gain, {summary[1]:.3f} for the "
        f"first power; log chi_l0 {summary[2]:.3f}; Spearman's rho of the estimates with the other token's frequency "
        f"{summary[4]:.2f}; smallest r(t)/r(0) {summary[3]:.4f}"
        + ("" if not broken else "; outside the theorem's assumptions: " + "; ".join(broken)))
    return out


def plot(two: np.ndarray, one: np.ndarray, steps: np.ndarray, params: Params) -> Figure:
    fig, axes = style.figure(ncols=2, width=3.6)
    ax = axes[0, 0]
    n = min(params.class_index, two.shape[2] - 1)
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        est = np.log(np.nanmedian(two[:, :, n], axis=0))  # (step, other)
    colors = matplotlib.colormaps["viridis"](np.linspace(0, 0.9, est.shape[-1]))
    for k in range(est.shape[-1]):
        ax.plot(steps, est[:, k], color=colors[k], lw=1.0, label="least frequent" if k == 0 else
                ("next to the dominant" if k == est.shape[-1] - 1 else None))
    ax.set_xlabel("step")
    ax.set_ylabel("log r(t) / r(0), per other token (median)")
    ax.set_title(f"class {n}: one line per other distinct token", fontsize=9)
    ax.legend(fontsize=7)
    ax = axes[0, 1]
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for arr, color, label in ((two, style.ARM_COLORS[0], "squared (the theorem's r)"),
                                  (one, style.ARM_COLORS[1], "first power (control)")):
            ax.plot(steps[1:], np.nanmedian(spread(arr[:, 1:]).mean(-1), axis=0), color=color, lw=1.2, label=label)
    ax.set_yscale("log")
    ax.set_xlabel("step")
    ax.set_ylabel("spread of the estimates of log chi (sd / |mean|)")
    ax.legend(fontsize=7)
    return fig
