"""Eureka-moments paper, Table 1: Eureka-ratio, accuracy and mean Eureka epoch per attention variant,
from the analyses.eureka artifacts; drawn as a table and also written as CSV and Markdown."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import xarray as xr
from matplotlib.figure import Figure

from ..plumbing.store import read_dataset
from .eureka_arms import INTERVENTIONS
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
    for exp in params.experiments if cfg is not None else ():  # the width per head a fixed tau is read against
        for label, run in cfg.analyses["eureka"][exp].arms:
            model = cfg.run_spec(run).model_params  # the model kind's Params: a default n_heads counts too
            if hasattr(model, "n_heads") and label in stats["arms"][exp]:
                d_head = int(model.d) // int(model.n_heads)
                stats["arms"][exp][label].update(n_heads=int(model.n_heads), d_head=d_head,
                                                 sqrt_d_head=round(math.sqrt(d_head), 4))
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
    """experiment -> arm -> seed count, Eureka count, the Eureka epoch and final test accuracy of every seed
    (None: never, or a seed of another arm) and the run's length (``epochs``); each only where the artifact
    holds it."""
    out = {}
    for exp, ds in stats.items():
        out[exp] = {}
        for arm in ds.arm.values:
            a = ds.sel(arm=arm)
            out[exp][str(arm)] = {"n_seeds": int(a.n_seeds), "n_eureka": int(a.n_eureka)}
            if "n_plateau" in a:
                out[exp][str(arm)].update(n_plateau=int(a.n_plateau), n_memorise=int(a.n_memorise), lr=float(a.lr))
            for key, var in (("eureka_epochs", "eureka_epoch"), ("final_accs", "final_test_acc")):
                if var in a:
                    out[exp][str(arm)][key] = [None if np.isnan(e) else float(e) for e in a[var].values.astype(float)]
            if "last_epoch" in a:
                out[exp][str(arm)]["epochs"] = int(a.last_epoch)
    return out


MIN_EUREKA_SEEDS = 2  # seeds with a Eureka-moment a mean Eureka epoch needs (one seed has no interval)


IMMEDIATE = 0.2  # "immediately": the Eureka epoch within this share of the run (the warm-up and less than
# eureka_accuracy's 'long' plateau after it)


