"""Eureka-moments paper, Sec. 5.3: the Eureka-ratio under several learning-rate schedules, per task and attention
arm (Softmax at the default temperature, Softmax at a lower one), with Wilson 95% intervals; the hollow marker is
the control, the reference schedule on other seeds. Also written as CSV and Markdown (eureka_table's columns)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure

from .. import claims
from ..plumbing.store import read_dataset
from . import style
from .eureka_arms import BASE, INTERVENTIONS
from .eureka_table import COLUMNS, arm_stats, table_rows
from .tables import write_table

NAME = "eureka_schedules"
PAPER = "Eureka-Moments in Transformers"  # the report's category
CONFIG = """
description: >-
  The Eureka paper's schedule sensitivity (Sec. 5.3): per task, entries of analyses.eureka that differ in the
  learning-rate schedule alone, the first the reference schedule; a control entry repeats the reference schedule's
  Softmax arm on other seeds.
required: [tasks]
properties:
  tasks:
    description: "Task label (the claims read 'digits' and 'reasoning') -> its schedules and control."
    type: object
    minProperties: 1
    additionalProperties:
      type: object
      additionalProperties: false
      required: [schedules]
      properties:
        schedules:
          description: "Entries of analyses.eureka, one per schedule, the reference schedule first."
          type: array
          minItems: 1
          items: {type: string, x-ref: analysis/eureka}
        control:
          description: "Entry of analyses.eureka: the reference schedule's Softmax arm on other seeds."
          type: string
          x-ref: analysis/eureka
"""
EXTRA_OUTPUTS = [".csv", ".md"]

LOWTEMP = INTERVENTIONS["lowtemp"]  # the lower-temperature arm ("Softmax tau=1/3")
TASKS = ("digits", "reasoning")  # the tasks the declared claims read
N_DRAWS = 2000  # posterior draws of every cell's ratio (fixed seed: a reproducible ledger)


@dataclass(frozen=True)
class Params:
    tasks: tuple[tuple[str, dict], ...]


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    fig, axes = style.figure(ncols=len(params.tasks), width=3.6, height=2.8)
    rows, stats = [], {"tasks": {}}
    for ax, (task, spec) in zip(axes[0], params.tasks):
        names = list(spec["schedules"]) + ([spec["control"]] if spec.get("control") else [])
        ds = {exp: read_dataset(paths.analysis("eureka", exp), rule="eureka") for exp in names}
        rows += table_rows(ds)
        arms = arm_stats(ds)
        entry = {"schedules": list(spec["schedules"]), "arms": {}}
        ref = arms[spec["schedules"][0]].get(BASE, {})
        entry.update({k: ref[k] for k in ("epochs", "lr") if k in ref})  # the run's length and peak rate
        labels = list(dict.fromkeys(a for exp in spec["schedules"] for a in arms[exp]))
        for i, label in enumerate(labels):
            cells = [arms[exp].get(label) for exp in spec["schedules"]]
            entry["arms"][label] = {"n_eureka": [c["n_eureka"] if c else None for c in cells],
                                    "n_seeds": [c["n_seeds"] if c else None for c in cells]}
            _draw_arm(ax, cells, i, len(labels), style.ARM_COLORS[i % len(style.ARM_COLORS)], label)
        if spec.get("control"):
            ctrl = arms[spec["control"]].get(BASE)
            if ctrl:
                entry["control"] = {"n_eureka": ctrl["n_eureka"], "n_seeds": ctrl["n_seeds"]}
                i = labels.index(BASE) if BASE in labels else 0
                _draw_arm(ax, [ctrl], i, len(labels), style.ARM_COLORS[i % len(style.ARM_COLORS)],
                          f"{BASE}, other seeds", hollow=True, at=-0.35)
        ax.set_xticks(range(len(spec["schedules"])), [_short(e, task) for e in spec["schedules"]], fontsize=7)
        ax.set_ylim(-0.05, 1.3)  # the legend above the ratios
        ax.set_yticks([0, 0.25, 0.5, 0.75, 1])
        ax.set_title(task, fontsize=8)
        ax.set_ylabel("Eureka-ratio")
        ax.legend(fontsize=6, loc="upper center", ncols=3, handletextpad=0.2, columnspacing=0.8)
        stats["tasks"][task] = entry
    write_table(COLUMNS, rows, outputs)
    stats["summary"] = "; ".join(
        f"{task} {label}: " + ", ".join(f"{k}/{n}" if k is not None else "-" for k, n in zip(a["n_eureka"], a["n_seeds"]))
        + (f" (control {e['control']['n_eureka']}/{e['control']['n_seeds']})" if label == BASE and "control" in e else "")
        for task, e in stats["tasks"].items() for label, a in e["arms"].items())
    return fig, stats


def _short(exp: str, task: str) -> str:
    """An entry's tick label: its name without the task's prefix."""
    return exp[len(task) + 1:] if exp.startswith(task + "_") else exp


def _draw_arm(ax, cells: list, i: int, n_arms: int, color, label: str, hollow: bool = False, at: float = 0.0) -> None:
    """One arm's ratio per schedule with its Wilson interval, offset sideways by arm (``at``: the control's x)."""
    off = (i - (n_arms - 1) / 2) * 0.15
    xs, ys, err = [], [], [[], []]
    for x, c in enumerate(cells):
        if not c:
            continue
        p, lo, hi = claims.rate(c["n_eureka"], c["n_seeds"])
        xs.append(x + off + at)
        ys.append(p)
        err[0].append(p - lo)
        err[1].append(hi - p)
    ax.errorbar(xs, ys, yerr=err, fmt="o", color=color, mfc="none" if hollow else color, ms=4, capsize=2, lw=1,
                label=label)


# -- claims ---------------------------------------------------------------------------------------------------

def score_claims(stats: dict, params: Params) -> dict:
    """Per task the Softmax arm's sensitivity to the schedule and the lower temperature's smaller sensitivity."""
    out = {}
    for task in TASKS:
        entry = stats.get("tasks", {}).get(task)
        out[f"eureka.schedules.{task}_softmax_ratio_sensitive"] = sensitive_score(entry)
        out[f"eureka.schedules.{task}_lowtemp_less_sensitive"] = less_sensitive_score(entry)
    return out


def _counts(entry: dict, label: str) -> list[tuple[int, int]] | None:
    """The arm's (Eureka seeds, seeds) per schedule; None where the arm misses a schedule."""
    arm = entry["arms"].get(label)
    if arm is None or any(k is None for k in arm["n_eureka"]):
        return None
    return list(zip(arm["n_eureka"], arm["n_seeds"]))


def _pair_verdict(a: tuple[int, int], b: tuple[int, int]):
    """The Wilson rule on two counts, the higher share tested above the lower (``claims.rates_exceed``)."""
    (k, n), (k0, n0) = (a, b) if a[0] / a[1] >= b[0] / b[1] else (b, a)
    return claims.rates_exceed(k, n, k0, n0)


TIERS = ("not reproduced", "partial", "reproduced")


def sensitive_score(entry: dict | None) -> dict:
    """The Softmax arm's Eureka-ratio under some schedule differs from the reference schedule's: of the schedules,
    the one furthest from the reference, by the Wilson rule in its direction. The control: the reference schedule
    on other seeds against the same seeds, by the same rule; where seed noise alone reaches the same tier, the
    schedule's difference is not told from it."""
    if entry is None:
        return claims.not_run("the figure draws no such task")
    cells = _counts(entry, BASE)
    if cells is None or len(cells) < 2:
        return claims.not_run(f"fewer than two schedules with arm {BASE!r}")
    if "control" not in entry:
        return claims.not_run("no control entry (the reference schedule on other seeds)")
    ref = cells[0]
    j = 1 + int(np.argmax([abs(k / n - ref[0] / ref[1]) for k, n in cells[1:]]))
    k, n = cells[j]
    verdict = _pair_verdict(cells[j], ref)
    ctrl = (entry["control"]["n_eureka"], entry["control"]["n_seeds"])
    control_verdict = _pair_verdict(ctrl, ref)
    p, lo, hi = claims.rate(k, n)
    control = (claims.fmt_rate(f"reference schedule {entry['schedules'][0]}", *ref) + "; "
               + claims.fmt_rate("the reference schedule on other seeds (control)", *ctrl)
               + f" (seed control by the same rule: {control_verdict})")
    if TIERS.index(str(control_verdict)) >= TIERS.index(str(verdict)) and str(verdict) != "not reproduced":
        verdict = claims.guard("not reproduced", f"two seed sets of the reference schedule differ as much "
                               f"({ctrl[0]}/{ctrl[1]} against {ref[0]}/{ref[1]}: {control_verdict})")
    return claims.score(p, (lo, hi), n, f"furthest schedule {entry['schedules'][j]}; " + control, verdict)


def spread(cells: list[tuple[int, int]]) -> float:
    """The largest difference in Eureka-ratio between two schedules."""
    shares = [k / n for k, n in cells]
    return max(shares) - min(shares)


def spread_gap(a: list[tuple[int, int]], b: list[tuple[int, int]], n_draws: int = N_DRAWS,
               seed: int = 0) -> tuple[float, float, float]:
    """(spread(a) - spread(b), 95% interval): the interval from each cell's Jeffreys posterior of its ratio,
    Beta(k + 1/2, n - k + 1/2), so that a cell at 0/n or n/n still carries the uncertainty of n seeds (a
    resample of its seeds would not)."""
    rng = np.random.default_rng(seed)

    def draws(cells):
        return np.stack([rng.beta(k + 0.5, n - k + 0.5, size=n_draws) for k, n in cells])  # schedules x draws

    da, db = draws(a), draws(b)
    gaps = (da.max(0) - da.min(0)) - (db.max(0) - db.min(0))
    lo, hi = np.quantile(gaps, [0.025, 0.975])
    return spread(a) - spread(b), float(lo), float(hi)


def less_sensitive_score(entry: dict | None) -> dict:
    """The lower temperature's spread of Eureka-ratios over the schedules below Softmax's (the interval of the
    difference, :func:`spread_gap`, above 0: ``claims.above``); where Softmax's ratio is the same under every schedule there is no
    sensitivity to be lower than (not run)."""
    if entry is None:
        return claims.not_run("the figure draws no such task")
    base, cold = _counts(entry, BASE), _counts(entry, LOWTEMP)
    if base is None or cold is None or len(base) < 2:
        return claims.not_run(f"arms {BASE!r} and {LOWTEMP!r} not both under two schedules or more")
    gap, lo, hi = spread_gap(base, cold)
    n = min(n for _, n in base + cold)
    control = (f"spread of {BASE}'s ratio over {len(base)} schedules {spread(base):.2f} "
               f"({', '.join(f'{k}/{m}' for k, m in base)}); {LOWTEMP}'s {spread(cold):.2f} "
               f"({', '.join(f'{k}/{m}' for k, m in cold)})")
    if spread(base) == 0:
        return claims.score(gap, (lo, hi), n, control, claims.guard(
            "not run", f"{BASE}'s Eureka-ratio is the same under every schedule: no sensitivity to be lower than"))
    return claims.score(gap, (lo, hi), n, control, claims.above(gap, lo, 0.0))
