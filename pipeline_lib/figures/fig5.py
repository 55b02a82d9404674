"""Fig. 5 of 'Easing Optimization Paths': accuracy of p=4 from scratch vs the p=2 -> p=4 curriculum."""
from __future__ import annotations

import numpy as np
import xarray as xr

from . import style


def success_counts(final_test_acc: np.ndarray, threshold: float) -> tuple[int, int]:
    """(seeds with final test accuracy >= threshold, seeds); a diverged (NaN) seed is a failure."""
    acc = np.asarray(final_test_acc, dtype=float)
    return int(np.sum(np.nan_to_num(acc, nan=-1.0) >= threshold)), int(acc.size)


def plot_fig5_accuracy(arms: dict[str, xr.Dataset], switches: dict[str, list[int]], threshold: float = 0.9):
    """Train and test accuracy against epoch, one colour per arm: every seed thin, median bold.

    ``arms`` maps a label to a trajectory with ``train_acc``/``test_acc`` over (seed, epoch), phases
    already concatenated; ``switches`` gives the epochs where an arm changed task (dashed lines).
    Returns (figure, stats) where stats holds each arm's success count and Wilson 95% interval.
    """
    fig, axes = style.figure(ncols=2, width=3.6)
    stats = {}
    for (label, ds), color in zip(arms.items(), style.ARM_COLORS):
        for ax, var in zip(axes[0], ("train_acc", "test_acc")):
            da = ds[var]
            for s in da.seed.values:
                ax.plot(da.epoch, da.sel(seed=s), color=color, lw=style.SEED_LW, alpha=style.SEED_ALPHA)
            ax.plot(da.epoch, da.median("seed", skipna=True), color=color, lw=style.MEDIAN_LW, label=label)
            for e in switches.get(label, []):
                ax.axvline(e, color=color, ls="--", lw=1)
                ax.annotate("switch", (e, 0.0), xytext=(3, 0), textcoords="offset points", color=color,
                            fontsize=7, va="bottom")
        final = ds["test_acc"].isel(epoch=-1).values
        k, n = success_counts(final, threshold)
        lo, hi = style.wilson_interval(k, n)
        stats[label] = {"successes": k, "seeds": n, "ci95": [lo, hi], "threshold": threshold,
                        "final_test_acc": [None if np.isnan(a) else float(a) for a in final],
                        "switch_epochs": switches.get(label, [])}
    for ax, title in zip(axes[0], ("train accuracy", "test accuracy")):
        ax.set_xlabel("epoch")
        ax.set_title(title)
        ax.set_ylim(-0.02, 1.02)
    axes[0][0].set_ylabel("accuracy")
    fig.legend(*axes[0][0].get_legend_handles_labels(), loc="lower center", bbox_to_anchor=(0.5, 0.98),
               ncol=len(arms))
    text = "\n".join(style.success_label(lbl, s["successes"], s["seeds"]) for lbl, s in stats.items())
    fig.text(0.5, -0.08, f"seeds with final test accuracy >= {threshold} [95% Wilson interval]:  "
             + ";  ".join(text.splitlines()), ha="center", va="top", fontsize=8)
    return fig, stats
