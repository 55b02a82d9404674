"""Eureka-moments paper, Table 1: Eureka-ratio, accuracy and mean Eureka epoch per attention variant,
from the analyses.eureka artifacts; drawn as a table and also written as CSV and Markdown."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr
from matplotlib.figure import Figure

from .. import claims
from ..plumbing.store import read_dataset
from .eureka_arms import BASE, EXPERIMENTS, HOTTER, INTERVENTIONS
from .tables import table_figure, write_table

NAME = "eureka_table"
PAPER = "Eureka-Moments in Transformers"  # the report's category
CONFIG = """
description: >-
  The Eureka paper's Table 1 (Eureka-ratio, accuracy, mean Eureka epoch per variant), one block
  per Eureka experiment (entries of analyses.eureka).
required: [experiments]
properties:
  experiments:
    description: "Names of entries of analyses.eureka."
    type: array
    minItems: 1
    items: {type: string, x-ref: analysis/eureka}
"""
EXTRA_OUTPUTS = [".csv", ".md"]


ARMS = INTERVENTIONS  # label of each intervention arm, by the claim ids' key

COLUMNS = ["experiment", "variant", "attention", "lr", "Eureka-ratio", "95% CI", "acc. (Eureka seeds)",
           "final acc. (all seeds)", "mean Eureka epoch", "no Eureka: plateau / memorise"]


@dataclass(frozen=True)
class Params:
    experiments: tuple[str, ...]


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    stats_ds = {exp: read_dataset(paths.analysis("eureka", exp), rule="eureka") for exp in params.experiments}
    rows = table_rows(stats_ds)
    write_table(COLUMNS, rows, outputs)
    stats = {"rows": [dict(zip(COLUMNS, r)) for r in rows], "arms": arm_stats(stats_ds)}
    stats["summary"] = "; ".join(f"{r[0]} {r[1]} (lr {r[3]}): Eureka {r[4]} {r[5]}, mean epoch {r[8]}" for r in rows)
    return table_figure(COLUMNS, rows), stats


def table_rows(stats: dict[str, xr.Dataset]) -> list[list[str]]:
    """One row per (experiment, arm) of the analyses.eureka artifacts, formatted as text."""
    fmt = lambda v, spec: "-" if not np.isfinite(v) else format(v, spec)  # noqa: E731
    rows = []
    for exp, ds in stats.items():
        for arm in ds.arm.values:
            a = ds.sel(arm=arm)
            rows.append([exp, str(arm), str(a.attention.values), fmt(float(a.lr), "g") if "lr" in a else "-",
                         f"{int(a.n_eureka)}/{int(a.n_seeds)} = {float(a.eureka_ratio):.2f}",
                         f"[{float(a.ratio_ci_low):.2f}, {float(a.ratio_ci_high):.2f}]",
                         fmt(float(a.acc_after_eureka), ".3f"), fmt(float(a.mean_final_test_acc), ".3f"),
                         fmt(float(a.mean_eureka_epoch), ".0f"),
                         f"{int(a.n_plateau)} / {int(a.n_memorise)}" if "n_plateau" in a else "-"])
    return rows


def arm_stats(stats: dict[str, xr.Dataset]) -> dict:
    """experiment -> arm -> seed count, Eureka count and the Eureka epoch of every seed (None: never, or a
    seed of another arm); the per-seed epochs only where the artifact holds them."""
    out = {}
    for exp, ds in stats.items():
        out[exp] = {}
        for arm in ds.arm.values:
            a = ds.sel(arm=arm)
            out[exp][str(arm)] = {"n_seeds": int(a.n_seeds), "n_eureka": int(a.n_eureka)}
            if "n_plateau" in a:
                out[exp][str(arm)].update(n_plateau=int(a.n_plateau), n_memorise=int(a.n_memorise), lr=float(a.lr))
            if "eureka_epoch" in a:
                out[exp][str(arm)]["eureka_epochs"] = [None if np.isnan(e) else float(e)
                                                       for e in a.eureka_epoch.values.astype(float)]
    return out


MIN_EUREKA_SEEDS = 2  # seeds with a Eureka-moment a mean Eureka epoch needs (one seed has no interval)

def score_claims(stats: dict, params: Params) -> dict:
    """Every intervention against Softmax, per experiment: the Eureka-ratio and the mean Eureka epoch."""
    out = {}
    for exp in EXPERIMENTS:
        arms = stats.get("arms", {}).get(exp, {})
        for key, arm in ARMS.items():
            if arm not in arms or BASE not in arms:
                why = claims.not_run(f"arms {arm!r} and {BASE!r} of experiment {exp!r} not both in the table")
                out[f"eureka.table.{exp}_{key}_raises_ratio"] = out[f"eureka.table.{exp}_{key}_earlier_eureka"] = why
                continue
            out[f"eureka.table.{exp}_{key}_raises_ratio"] = ratio_score(arms[arm], arms[BASE])
            out[f"eureka.table.{exp}_{key}_earlier_eureka"] = epoch_score(arms[arm], arms[BASE])
        for key, arm in HOTTER.items() if exp == "reasoning" else ():  # the rows run on the reasoning task only
            if arm not in arms or BASE not in arms:
                out[f"eureka.table.{exp}_{key}_lowers_ratio"] = claims.not_run(
                    f"arms {arm!r} and {BASE!r} of experiment {exp!r} not both in the table")
                continue
            out[f"eureka.table.{exp}_{key}_lowers_ratio"] = lower_ratio_score(arms[arm], arms[BASE])
        if exp == "reasoning":  # declared for the default config's task only
            out[f"eureka.table.{exp}_non_eureka_softmax_seeds_plateau"] = plateau_score(arms.get(BASE))
    return out


def plateau_score(base: dict | None) -> dict:
    """Of the Softmax seeds without a Eureka-moment, the share whose training accuracy stays below the threshold
    too (train and test on the plateau together, the paper's Sec. 2) rather than fitting the training set."""
    if base is None or "n_plateau" not in base:
        return claims.not_run(f"arm {BASE!r} is not in the table, or its artifact has no train-side counts")
    n = base["n_plateau"] + base["n_memorise"]
    if n == 0:
        return claims.not_run(f"saturated: every {BASE} seed has a Eureka-moment, no seed without one to classify")
    p, lo, hi = claims.rate(base["n_plateau"], n)
    return claims.score(p, (lo, hi), n, f"{base['n_memorise']} of {n} {BASE} seeds without a Eureka-moment fit "
                        "their training set (final train accuracy above the threshold)",
                        claims.share_holds(base["n_plateau"], n))


def lower_ratio_score(arm: dict, base: dict) -> dict:
    """The arm's Eureka-ratio below the control's (disjoint Wilson intervals); a control at zero is said."""
    p, lo, hi = claims.rate(arm["n_eureka"], arm["n_seeds"])
    if base["n_eureka"] == 0:  # no ratio can be lower: this regime cannot show the claim
        return claims.score(p, (lo, hi), arm["n_seeds"], claims.fmt_rate(BASE, 0, base["n_seeds"])
                            + " (no Softmax seed reaches the threshold: no ratio can be lower)",
                            claims.guard("not run", "the control's Eureka-ratio is 0: no ratio can be lower"))
    # the control's share above the arm's: the same Wilson rule as a rise, with the roles swapped
    return claims.score(p, (lo, hi), arm["n_seeds"], claims.fmt_rate(BASE, base["n_eureka"], base["n_seeds"]),
                        claims.rates_exceed(base["n_eureka"], base["n_seeds"], arm["n_eureka"], arm["n_seeds"]))


def ratio_score(arm: dict, base: dict) -> dict:
    """The arm's Eureka-ratio above the control's (disjoint Wilson intervals); a saturated control is said."""
    if base["n_eureka"] == base["n_seeds"]:  # no ratio can exceed it: this regime cannot show the claim
        p, lo, hi = claims.rate(arm["n_eureka"], arm["n_seeds"])
        return claims.score(p, (lo, hi), arm["n_seeds"], claims.fmt_rate(BASE, base["n_eureka"], base["n_seeds"])
                            + " (saturated: no ratio can exceed it)",
                            claims.guard("not run", "the control's Eureka-ratio is 1: no ratio can exceed it"))
    return claims.rate_exceeds(arm["n_eureka"], arm["n_seeds"], base["n_eureka"], base["n_seeds"], BASE)


def epoch_score(arm: dict, base: dict) -> dict:
    """The arm's mean Eureka epoch before the control's (t intervals, over the seeds that have one). A mean needs
    two seeds with a Eureka-moment for an interval: a control with fewer cannot be compared with (not run), an
    arm with fewer has not shown an earlier Eureka-moment (not reproduced)."""
    if "eureka_epochs" not in arm or "eureka_epochs" not in base:
        return claims.not_run("the eureka artifact holds no per-seed Eureka epochs")
    a = [e for e in arm["eureka_epochs"] if e is not None]
    b = [e for e in base["eureka_epochs"] if e is not None]
    if len(b) < MIN_EUREKA_SEEDS:
        return claims.not_run(f"{len(b)} {BASE} seed(s) reach the threshold: no mean Eureka epoch with an interval "
                              "to compare with")
    m0, lo0, hi0 = claims.mean_interval(b)
    control = claims.fmt_interval(f"{BASE} mean Eureka epoch", m0, lo0, hi0) + f" over {len(b)} seeds"
    m, lo, hi = claims.mean_interval(a)
    if len(a) < MIN_EUREKA_SEEDS:
        return claims.score(m, (lo, hi), len(a), control, claims.guard(
            "not reproduced", f"{len(a)} seed(s) of the arm have a Eureka-moment: no earlier mean with an interval"))
    return claims.score(m, (lo, hi), len(a), control, claims.exceeds(-m, -hi, -m0, -lo0))
