"""The local learning coefficient (LLC) over training, one panel per run (analysis ``llc``): every seed thin,
the median bold. A listed run's listed ancestors are drawn in front of it in its panel (a curriculum's
phases; the hand-over snapshot is the later phase's, measured on its own task) and each switch is a dotted
line; for the runs in ``eureka_runs`` each seed's Eureka epoch (first epoch with test accuracy above
``eureka_threshold``) is a short tick at the top.

Does the LLC move at those events? Per seed, the statistic is |change of LLC| over the interval between
the two snapshots that bracket the event; its control is the same statistic over ``random_epochs``
intervals drawn at random (a fixed generator) among the seed's others, never the first (from the
initialisation) nor one across a switch. The claims compare the two over seeds (mean of the per-seed
differences, Student's t interval). The LLC estimator assumes a local minimum: at a snapshot far from one
(initialisation, early epochs of a new task) SGLD descends and the estimate can be negative; across a
switch the interval runs from the parent's last snapshot on its own task to the first trained snapshot on
the new one (the hand-over snapshot, the parent's weights measured on the new task, is left out).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure

from ..analysis.eureka import eureka_epochs
from ..intervals import json_floats, mean_interval
from ..plumbing.store import read_dataset
from . import style

NAME = "llc_trajectories"
PAPER = "Local learning coefficient"
CONFIG = """
description: "LLC against epoch per run (analysis llc), Eureka-moments and curriculum switches marked."
properties:
  runs:
    description: "Runs drawn, one panel each (a listed ancestor joins its descendant's panel instead)."
    type: array
    items: {type: string, x-ref: run, x-reads: [analysis/llc, trajectory]}
    default: []
  eureka_runs:
    description: "Runs (among runs) whose seeds' Eureka epochs are marked and tested."
    type: array
    items: {type: string, x-ref: run, x-reads: [trajectory]}
    default: []
  eureka_threshold: {description: "Test accuracy whose first crossing is a seed's Eureka epoch.", type: number, default: 0.5}
  random_epochs: {description: "Control epochs drawn per seed.", type: integer, minimum: 1, default: 20}
"""
CHECKS = [["eureka_runs", "len([r for r in eureka_runs if r not in runs]) == 0",
           "every run of eureka_runs must be among runs ({runs})"]]


@dataclass(frozen=True)
class Params:
    runs: tuple[str, ...] = ()
    eureka_runs: tuple[str, ...] = ()
    eureka_threshold: float = 0.5
    random_epochs: int = 20


def joined(cfg, run: str, listed, paths) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """(epochs (K,), llc (S, K), switches) of a run with its listed ancestors in front. At a switch the
    ancestor's last snapshot (on its own task) is kept and the later phase's hand-over snapshot (the same
    weights on the new task, far from a minimum of that loss) left out, so both ends of the interval across
    the switch are trained weights on their own task."""
    chain = [r for r in cfg.lineage(run) if r in listed or r == run]
    seeds = list(cfg.runs[run].seeds)
    epochs, values, switches = [], [], []
    for i, r in enumerate(chain):
        ds = read_dataset(paths.analysis("llc", r), rule="llc").sel(seed=seeds)
        e, v = ds.epoch.values, ds.llc.values
        if i > 0:  # the hand-over snapshot: the parent's weights on this task, not a minimum of its loss
            keep = e > cfg.start_epoch(r)
            e, v = e[keep], v[:, keep]
        if i + 1 < len(chain):
            switches.append(cfg.start_epoch(chain[i + 1]))
        epochs.append(e)
        values.append(v)
    return np.concatenate(epochs), np.concatenate(values, axis=1), switches


def bracket_change(epochs: np.ndarray, llc: np.ndarray, event: float) -> float:
    """|LLC change| over the snapshot interval (t_a, t_b] that contains ``event``; NaN outside the snapshots."""
    j = int(np.searchsorted(epochs, event, side="left"))
    if j == 0 or j >= len(epochs):
        return math.nan
    return float(abs(llc[j] - llc[j - 1]))


def event_vs_random(epochs: np.ndarray, llc: np.ndarray, event: float, draws: int, rng,
                    avoid: tuple[float, ...] = ()) -> tuple[float, float]:
    """(|change| across the event, mean |change| over ``draws`` intervals drawn at random among the others).
    Never a control: the event's interval, the first one (from the initialisation, not a minimum) and those
    containing an ``avoid`` epoch (e.g. a curriculum's switch)."""
    at = bracket_change(epochs, llc, event)
    taken = {int(np.searchsorted(epochs, e, side="left")) for e in (event, *avoid)} | {1}
    pool = [k for k in range(1, len(epochs)) if k not in taken]
    if not pool:
        return at, math.nan
    picks = rng.choice(pool, size=draws)
    return at, float(np.mean([abs(llc[k] - llc[k - 1]) for k in picks]))


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    listed = set(params.runs)
    panels = [r for r in params.runs if not any(r in cfg.lineage(o)[:-1] for o in params.runs if o != r)]
    ncols = min(3, max(1, len(panels)))
    nrows = max(1, math.ceil(len(panels) / ncols))
    fig, axes = style.figure(ncols=ncols, nrows=nrows, width=2.8, height=2.1)
    rng = np.random.default_rng(0)
    stats: dict = {"runs": {}, "eureka": {"at": [], "random": []}, "switch": {"at": [], "random": []}}
    for i, run in enumerate(panels):
        ax = axes[i // ncols, i % ncols]
        epochs, llc, switches = joined(cfg, run, listed, paths)
        for s in range(llc.shape[0]):
            ax.plot(epochs, llc[s], color=style.ARM_COLORS[0], lw=style.SEED_LW, alpha=style.SEED_ALPHA)
        ax.plot(epochs, np.nanmedian(llc, 0) if np.isfinite(llc).any() else llc[0], color=style.ARM_COLORS[0],
                lw=style.MEDIAN_LW)
        for e in switches:
            ax.axvline(e, color="k", ls=":", lw=0.8)
        after = tuple(e + 0.5 for e in switches)  # a switch's interval: from its epoch (the parent's last) to the next
        row = {"epochs": [int(e) for e in epochs], "llc_median": json_floats(np.nanmedian(llc, 0)),
               "switches": switches, "eureka_epochs": []}
        if run in params.eureka_runs:
            traj = read_dataset(paths.trajectory(run), rule="train").sel(seed=list(cfg.runs[run].seeds))
            eur = eureka_epochs(traj.test_acc.values, traj.epoch.values, params.eureka_threshold)
            row["eureka_epochs"] = json_floats(eur)
            for s, e in enumerate(eur):
                if not math.isnan(e) and e > epochs[0]:
                    ax.axvline(e, ymin=0.92, ymax=1.0, color=style.ARM_COLORS[1], lw=1)
                    at, ctrl = event_vs_random(epochs, llc[s], e, params.random_epochs, rng, after)
                    stats["eureka"]["at"].append(at)
                    stats["eureka"]["random"].append(ctrl)
        for e in switches:
            for s in range(llc.shape[0]):
                at, ctrl = event_vs_random(epochs, llc[s], e + 0.5, params.random_epochs, rng, after)
                stats["switch"]["at"].append(at)
                stats["switch"]["random"].append(ctrl)
        ax.set_title(run, fontsize=7)
        ax.set_xlabel("epoch", fontsize=7)
        ax.tick_params(labelsize=6)
        stats["runs"][run] = row
    for j in range(len(panels), nrows * ncols):
        axes[j // ncols, j % ncols].set_visible(False)
    axes[0, 0].set_ylabel("LLC", fontsize=7)
    _key(axes, len(panels), ncols, any(r["switches"] for r in stats["runs"].values()),
         any(r["eureka_epochs"] for r in stats["runs"].values()), params.eureka_threshold)
    for key in ("eureka", "switch"):
        at, rnd = np.array(stats[key]["at"], dtype=float), np.array(stats[key]["random"], dtype=float)
        diff = at - rnd
        m, lo, hi = mean_interval(diff)
        stats[key] = {"n": int(np.isfinite(diff).sum()), "mean_change_at_event": _mean(at),
                      "mean_change_at_random": _mean(rnd), "mean_difference": m, "ci95": [lo, hi],
                      "at": json_floats(at), "random": json_floats(rnd)}
    stats["summary"] = "; ".join(
        f"{what}: |LLC change| across it {_fmt(stats[k]['mean_change_at_event'])} vs at random epochs "
        f"{_fmt(stats[k]['mean_change_at_random'])}, difference {_fmt(stats[k]['mean_difference'])} "
        f"[95% CI {_fmt(stats[k]['ci95'][0])}, {_fmt(stats[k]['ci95'][1])}] over {stats[k]['n']} seed-events"
        for k, what in (("eureka", "Eureka-moments"), ("switch", "curriculum switches")))
    if stats["switch"]["n"]:
        stats["summary"] += (" (across a switch: from the parent's last snapshot on its task to the first trained "
                             "snapshot on the new one, early in training where the estimate can be negative)")
    return fig, stats


def _mean(v: np.ndarray) -> float:
    v = v[np.isfinite(v)]
    return float(v.mean()) if v.size else math.nan


def _fmt(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x:.3g}"


def _key(axes, n_panels: int, ncols: int, switches: bool, eureka: bool, threshold: float) -> None:
    """What each mark means, in the first empty cell (beside the first row's last panel when none is empty)."""
    from matplotlib.lines import Line2D

    color = style.ARM_COLORS[0]
    items = [(Line2D([], [], color=color, lw=style.SEED_LW, alpha=style.SEED_ALPHA), "one seed"),
             (Line2D([], [], color=color, lw=style.MEDIAN_LW), "median over seeds")]
    if switches:
        items.append((Line2D([], [], color="k", ls=":", lw=0.8), "curriculum switch"))
    if eureka:
        items.append((Line2D([], [], color=style.ARM_COLORS[1], lw=1), f"a seed's Eureka epoch (test acc > {threshold:g})"))
    handles, labels = zip(*items)
    if n_panels < axes.size:
        ax = axes[n_panels // ncols, n_panels % ncols]
        ax.set_visible(True)
        ax.axis("off")
        ax.legend(handles, labels, fontsize=7, loc="center")
    else:
        axes[0, -1].legend(handles, labels, fontsize=6, loc="upper left", bbox_to_anchor=(1.0, 1.0))

