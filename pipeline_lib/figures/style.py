"""Shared figure style: sizes, colours, line widths and the "every seed thin, median bold" drawing.

Figures are built as ``matplotlib.figure.Figure`` objects, which save to PDF/PNG without a backend:
nothing here selects a backend or imports pyplot, so importing a figure module stays cheap.
"""
from __future__ import annotations

import matplotlib
import numpy as np
import xarray as xr
from matplotlib.figure import Figure

ARM_COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
SEED_LW, SEED_ALPHA = 0.6, 0.35  # every seed thin ...
MEDIAN_LW = 2.2  # ... the median bold (DESIGN section 9)
RC = {"font.size": 9, "axes.spines.top": False, "axes.spines.right": False, "figure.dpi": 120,
      "legend.frameon": False}  # the figure stage saves with bbox_inches="tight"


def figure(ncols: int = 1, nrows: int = 1, width: float = 3.4, height: float = 2.8) -> tuple[Figure, np.ndarray]:
    """A figure of nrows x ncols panels of ``width`` x ``height`` inches each; axes always 2-D."""
    with matplotlib.rc_context(RC):
        # constrained layout: each panel's labels, ticks and colour bars get the room they need, so no text
        # of one panel runs into another (tests/test_figure_layout.py checks every figure of the test config)
        fig = Figure(figsize=(width * ncols, height * nrows), layout="constrained")
        axes = fig.subplots(nrows, ncols, squeeze=False)  # spines and dpi are read from RC here
    return fig, axes


def seeds_and_median(ax, x, da: xr.DataArray, color, label: str | None = None, lw: float = MEDIAN_LW,
                     seed_color=None) -> xr.DataArray:
    """Draw each seed of ``da`` (dims seed and the x dim) thin and the median over seeds (NaN
    skipped) bold, labelled ``label``; seeds in ``seed_color`` if given. Returns the median."""
    for s in da.seed.values:
        ax.plot(x, da.sel(seed=s), color=color if seed_color is None else seed_color, lw=SEED_LW,
                alpha=SEED_ALPHA)
    median = da.median("seed", skipna=True)
    ax.plot(x, median, color=color, lw=lw, label=label)
    return median


def plain_log(ax, which: str = "y") -> None:
    """Label a log axis in plain numbers (0.05, 1, 200; never 5x10^-2): the decades, and where the axis spans
    under two decades (so that one or no decade shows) also 2 and 5 of each. Call it once the data are drawn."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axis = ax.yaxis if which == "y" else ax.xaxis
    low, high = ax.get_ylim() if which == "y" else ax.get_xlim()
    plain = FuncFormatter(lambda v, _: f"{v:g}")
    axis.set_major_locator(LogLocator(base=10))
    axis.set_major_formatter(plain)
    if low > 0 and high / low < 100:
        axis.set_minor_locator(LogLocator(base=10, subs=(2.0, 5.0)))
        axis.set_minor_formatter(plain)
    else:
        axis.set_minor_formatter(NullFormatter())
