"""Eureka paper, Table 1: Eureka-ratio, accuracy and mean Eureka epoch per attention variant."""
from __future__ import annotations

import numpy as np
import xarray as xr

from . import style

COLUMNS = ["experiment", "variant", "attention", "Eureka-ratio", "95% CI", "acc. (Eureka seeds)",
           "final acc. (all seeds)", "mean Eureka epoch"]


def table_rows(stats: dict[str, xr.Dataset]) -> list[list[str]]:
    """One row per (experiment, arm) of the eureka_stats artifacts, formatted as text."""
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


def to_markdown(rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows]) + "\n"


def plot_eureka_table(rows: list[list[str]]):
    fig, axes = style.figure(width=9.5, height=0.35 * (len(rows) + 2))
    ax = axes[0][0]
    ax.axis("off")
    table = ax.table(cellText=rows, colLabels=COLUMNS, loc="center", cellLoc="left")
    table.auto_set_font_size(False)
    table.set_fontsize(7)
    table.auto_set_column_width(list(range(len(COLUMNS))))
    return fig
