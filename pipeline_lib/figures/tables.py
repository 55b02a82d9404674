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
    """The rows as a matplotlib table, each column as wide as its text. The saved figure keeps the whole axes, so
    the table is drawn once to measure it and then again in a figure of its size: no blank band around it."""
    fig, table = _drawn_table(columns, rows, width, 0.35 * (len(rows) + 2), fontsize)
    fig.draw_without_rendering()
    extent = table.get_window_extent()  # display units (pixels at the figure's dpi)
    fig, _ = _drawn_table(columns, rows, extent.width / fig.dpi + 0.02, extent.height / fig.dpi + 0.02, fontsize)
    return fig


def _drawn_table(columns, rows, width: float, height: float, fontsize: int):
    fig, axes = style.figure(width=width, height=height)
    fig.set_layout_engine("none")  # the axes fills the figure: no layout's padding around the table
    ax = axes[0][0]
    ax.set_position((0, 0, 1, 1))
    ax.axis("off")
    table = ax.table(cellText=rows, colLabels=columns, loc="center", cellLoc="left")
    table.auto_set_font_size(False)
    table.set_fontsize(fontsize)
    table.auto_set_column_width(list(range(len(columns))))
    return fig, table
