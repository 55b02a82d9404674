"""Shared figure style: sizes, colours, line widths, the binomial interval used in every legend."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # figures are files; never open a window
import matplotlib.pyplot as plt  # noqa: E402
from scipy.stats import binomtest  # noqa: E402

ARM_COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
SEED_LW, SEED_ALPHA = 0.6, 0.35  # every seed thin ...
MEDIAN_LW = 2.2  # ... the median bold (DESIGN section 9)
RC = {"font.size": 9, "axes.spines.top": False, "axes.spines.right": False, "figure.dpi": 120,
      "legend.frameon": False}  # save with bbox_inches="tight" (stages.figures.save_figure)


def figure(ncols: int = 1, nrows: int = 1, width: float = 3.4, height: float = 2.8):
    with plt.rc_context(RC):
        fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=False)
    for ax in axes.flat:
        for k, v in RC.items():
            if k.startswith("axes.spines."):
                ax.spines[k.split(".")[-1]].set_visible(v)
    return fig, axes


def wilson_interval(successes: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion (e.g. 4/10 -> (0.17, 0.69))."""
    ci = binomtest(successes, n).proportion_ci(confidence_level=level, method="wilson")
    return float(ci.low), float(ci.high)


def success_label(name: str, successes: int, n: int) -> str:
    lo, hi = wilson_interval(successes, n)
    return f"{name} {successes}/{n} [{lo:.2f}, {hi:.2f}]"
