"""Eureka-moments paper, Sec. 5.3: the Eureka-ratio under several learning-rate schedules, per task and arm, with
Wilson 95% intervals (the claims read Softmax at the default temperature and at a lower one; other arms are drawn
alongside); the hollow marker is the control, the reference schedule on other seeds. Also written as CSV and
Markdown (eureka_table's columns)."""
from __future__ import annotations

from dataclasses import dataclass

from matplotlib.figure import Figure

from ..intervals import rate
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
N_PERM = 2000  # shuffles of the seeds across the schedules (the permutation null; fixed seed: a reproducible ledger)
N_DRAWS = 1000  # draws of each cell from its posterior predictive (the interval of the spread gap; fixed seed)


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
        p, lo, hi = rate(c["n_eureka"], c["n_seeds"])
        xs.append(x + off + at)
        ys.append(p)
        err[0].append(p - lo)
        err[1].append(hi - p)
    ax.errorbar(xs, ys, yerr=err, fmt="o", color=color, mfc="none" if hollow else color, ms=4, capsize=2, lw=1,
                label=label)


# -- claims ---------------------------------------------------------------------------------------------------
# Both claims compare spreads of Eureka-ratios over the schedules (largest minus smallest share), which seed noise
# alone makes positive, and the more so the nearer an arm's ratio is to 1/2. So each spread is read against what
# the same seeds give without a schedule effect: the sensitivity claim against the permutation null of the arm's
# own seeds, the comparison of two arms on each arm's spread in excess of its binomial expectation. Both rules'
# rates on planted effects and nulls are measured in tests/test_claims_eureka_schedules.py.


