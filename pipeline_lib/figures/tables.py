"""What the table figures share (not a plug-in: no NAME): a table of text rows written as CSV and
Markdown beside the figure, and drawn as a matplotlib table."""
from __future__ import annotations

import csv
from pathlib import Path

from matplotlib.figure import Figure

from ..plumbing.store import atomic_path
from . import style


def write_table(columns: list[str], rows: list[list[str]], outputs: dict[str, str]) -> None:
    """The rows as ``outputs['.csv']`` and ``outputs['.md']`` (each written atomically)."""
    with atomic_path(outputs[".csv"]) as tmp, open(tmp, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(columns)
        writer.writerows(rows)
    with atomic_path(outputs[".md"]) as tmp:
        Path(tmp).write_text(to_markdown(columns, rows))


def to_markdown(columns: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows]) + "\n"


def table_figure(columns: list[str], rows: list[list[str]], width: float = 9.5, fontsize: int = 7) -> Figure:
    fig, axes = style.figure(width=width, height=0.35 * (len(rows) + 2))
    ax = axes[0][0]
    ax.axis("off")
    table = ax.table(cellText=rows, colLabels=columns, loc="center", cellLoc="left")
    table.auto_set_font_size(False)
    table.set_fontsize(fontsize)
    table.auto_set_column_width(list(range(len(columns))))
    return fig
