"""Eureka-moments paper: the calibration of the regime its comparisons are scored in. Per task, the Softmax
arm's Eureka-ratio at each value of one knob (exploration seeds), against the ratio the paper prints for
Softmax, and the value the stated rule picks: the ratio closest to the paper's, a tie to the value nearest
the default's (by ratio of values), a remaining tie to the smaller value. The picked value is then the
setting every arm trains at on the report seeds; Softmax's rate there is a calibration, not a claim."""
from __future__ import annotations

import math
from dataclasses import dataclass

from matplotlib.figure import Figure

from ..intervals import rate
from ..plumbing.store import read_dataset
from . import style
from .eureka_arms import BASE

NAME = "eureka_calibration"
PAPER = "Eureka-Moments in Transformers"  # the report's category
CONFIG = """
description: >-
  Per task, the Softmax arm's Eureka-ratio at each value of one knob (entries of analyses.eureka, each with a
  'Softmax' arm), the paper's Softmax ratio as the target, and the value the rule picks (closest ratio; a tie:
  nearest the default value, then the smaller).
required: [tasks]
properties:
  tasks:
    description: "Task label -> its knob, target and candidate entries."
    type: object
    minProperties: 1
    additionalProperties:
      type: object
      additionalProperties: false
      required: [knob, target, source, default, values]
      properties:
        knob: {description: "What the values set (e.g. n_train, d).", type: string}
        target: {description: "The Softmax Eureka-ratio the source prints.", type: number, minimum: 0, maximum: 1}
        source: {description: "Where the source prints the target, with its words.", type: string, minLength: 1}
        default: {description: "The knob's value in the default config (the tie-break's anchor).", type: number, exclusiveMinimum: 0}
        values:
          description: "One candidate per knob value: the value and the entry of analyses.eureka trained at it."
          type: array
          minItems: 1
          items:
            type: object
            additionalProperties: false
            required: [value, experiment]
            properties:
              value: {type: number, exclusiveMinimum: 0}
              experiment: {type: string, x-ref: analysis/eureka}
"""


@dataclass(frozen=True)
class Params:
    tasks: tuple[tuple[str, dict], ...]


def pick(rows: list[dict], target: float, default: float) -> dict:
    """The row whose ``ratio`` is closest to ``target``; ties (within 1e-12) to the ``value`` nearest
    ``default`` by |log(value / default)|, then to the smaller value."""
    return min(rows, key=lambda r: (round(abs(r["ratio"] - target), 12), round(abs(math.log(r["value"] / default)), 12),
                                    r["value"]))


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    stats = {}
    for task, block in params.tasks:
        rows = []
        for cand in block["values"]:
            ds = read_dataset(paths.analysis("eureka", cand["experiment"]), rule="eureka").sel(arm=BASE)
            k, n = int(ds.n_eureka), int(ds.n_seeds)
            share, lo, hi = rate(k, n)
            rows.append({"value": float(cand["value"]), "experiment": cand["experiment"], "n_eureka": k, "n_seeds": n,
                         "ratio": share, "ci_low": lo, "ci_high": hi, "epochs": int(ds.last_epoch),
                         "seeds": [int(s) for s in ds.seed.values]})
        chosen = pick(rows, block["target"], block["default"])
        stats[task] = {"knob": block["knob"], "target": float(block["target"]), "source": block["source"],
                       "default": float(block["default"]), "rows": rows, "picked": chosen["value"],
                       "picked_experiment": chosen["experiment"], "picked_ratio": chosen["ratio"]}
    stats["summary"] = "; ".join(
        f"{task}: Softmax Eureka-ratio " + ", ".join(f"{s['knob']}={r['value']:g} {r['n_eureka']}/{r['n_seeds']}"
                                                    for r in s["rows"])
        + f" against the paper's {s['target']:.2f}; picked {s['knob']}={s['picked']:g}"
        for task, s in stats.items() if task != "summary")
    return plot(stats), stats


def plot(stats: dict) -> Figure:
    tasks = [t for t in stats if t != "summary"]
    fig, axes = style.figure(ncols=len(tasks), width=3.2, height=2.8)
    for ax, task in zip(axes[0], tasks):
        s = stats[task]
        xs = [r["value"] for r in s["rows"]]
        ys = [r["ratio"] for r in s["rows"]]
        err = [[y - r["ci_low"] for y, r in zip(ys, s["rows"])], [r["ci_high"] - y for y, r in zip(ys, s["rows"])]]
        ax.errorbar(xs, ys, yerr=err, fmt="o", color=style.ARM_COLORS[0], capsize=3, label="Softmax (Wilson 95%)")
        ax.axhline(s["target"], color="k", ls="--", lw=0.8, label=f"the paper's {s['target']:.2f}")
        ax.plot([s["picked"]], [s["picked_ratio"]], marker="*", ms=14, color=style.ARM_COLORS[1], ls="none",
                label="picked")
        for r in s["rows"]:
            ax.annotate(f"{r['n_eureka']}/{r['n_seeds']}", (r["value"], r["ratio"]), textcoords="offset points",
                        xytext=(6, -10), fontsize=7)
        ax.set_xscale("log", base=2)
        ax.set_xticks(xs, [f"{x:g}" for x in xs])
        ax.minorticks_off()
        ax.set_ylim(-0.05, 1.05)
        ax.set_xlabel(f"{s['knob']} ({s['rows'][0]['epochs']} epochs)")
        ax.set_title(task, fontsize=8)
    axes[0, 0].set_ylabel("Softmax Eureka-ratio")
    axes[0, -1].legend(fontsize=6, loc="center left", bbox_to_anchor=(1.0, 0.5))
    return fig
