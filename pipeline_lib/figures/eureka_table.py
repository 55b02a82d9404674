"""Eureka-moments paper, Table 1: Eureka-ratio, accuracy and mean Eureka epoch per attention variant,
from the analyses.eureka artifacts; drawn as a table and also written as CSV and Markdown."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr
from matplotlib.figure import Figure

from ..store import read_dataset
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

COLUMNS = ["experiment", "variant", "attention", "Eureka-ratio", "95% CI", "acc. (Eureka seeds)",
           "final acc. (all seeds)", "mean Eureka epoch"]


@dataclass(frozen=True)
class Params:
    experiments: tuple[str, ...]


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    stats_ds = {exp: read_dataset(paths.analysis("eureka", exp), rule="eureka") for exp in params.experiments}
    rows = table_rows(stats_ds)
    write_table(COLUMNS, rows, outputs)
    stats = {"rows": [dict(zip(COLUMNS, r)) for r in rows]}
    stats["summary"] = "; ".join(f"{r[0]} {r[1]}: Eureka {r[3]} {r[4]}, mean epoch {r[7]}" for r in rows)
    return table_figure(COLUMNS, rows), stats


def table_rows(stats: dict[str, xr.Dataset]) -> list[list[str]]:
    """One row per (experiment, arm) of the analyses.eureka artifacts, formatted as text."""
    fmt = lambda v, spec: "-" if not np.isfinite(v) else format(v, spec)  # noqa: E731
    rows = []
    for exp, ds in stats.items():
        for arm in ds.arm.values:
            a = ds.sel(arm=arm)
            rows.append([exp, str(arm), str(a.attention.values),
                         f"{int(a.n_eureka)}/{int(a.n_seeds)} = {float(a.eureka_ratio):.2f}",
                         f"[{float(a.ratio_ci_low):.2f}, {float(a.ratio_ci_high):.2f}]",
                         fmt(float(a.acc_after_eureka), ".3f"), fmt(float(a.mean_final_test_acc), ".3f"),
                         fmt(float(a.mean_eureka_epoch), ".0f")])
    return rows
