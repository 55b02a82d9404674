"""Eureka paper, accuracy over training per attention variant: every seed thin, median bold."""
from __future__ import annotations

import numpy as np
import xarray as xr

from . import style


def plot_eureka_accuracy(rows: dict[str, dict[str, xr.Dataset]], chance: dict[str, float], threshold: float | dict):
    """``rows``: experiment -> arm label -> trajectory (train_acc, test_acc over seed, epoch). One row
    of panels per experiment, one panel per arm; test accuracy in colour, train accuracy grey, the
    no-step-1 chance level dashed, the Eureka threshold dotted. Returns (figure, stats)."""
    ncols = max(len(a) for a in rows.values())
    fig, axes = style.figure(ncols=ncols, nrows=len(rows), width=2.6, height=2.2)
    stats = {}
    for r, (exp, arms) in enumerate(rows.items()):
        thr = threshold[exp] if isinstance(threshold, dict) else threshold
        stats[exp] = {}
        for c, ((label, ds), color) in enumerate(zip(arms.items(), style.ARM_COLORS)):
            ax = axes[r][c]
            for var, col in (("train_acc", "0.55"), ("test_acc", color)):
                da = ds[var]
                for s in da.seed.values:
                    ax.plot(da.epoch, da.sel(seed=s), color=col, lw=style.SEED_LW, alpha=style.SEED_ALPHA)
                ax.plot(da.epoch, da.median("seed", skipna=True), color=col, lw=style.MEDIAN_LW,
                        label=var.replace("_acc", ""))
            ax.axhline(chance[exp], color="k", ls="--", lw=0.8)
            ax.axhline(thr, color="k", ls=":", lw=0.8)
            final = ds.test_acc.isel(epoch=-1).values
            stats[exp][label] = {"median_final_test_acc": float(np.nanmedian(final)),
                                 "final_test_acc": [None if np.isnan(a) else float(a) for a in final]}
            ax.set_title(f"{exp}: {label}", fontsize=8)
            ax.set_ylim(-0.02, 1.02)
            ax.set_xlabel("epoch")
        for c in range(len(arms), ncols):
            axes[r][c].axis("off")
        axes[r][0].set_ylabel("accuracy")
        stats[exp]["chance_without_step1"] = chance[exp]
    axes[0][0].legend(loc="lower right", fontsize=7)
    fig.text(0.5, -0.02, "dashed: chance without the first step (from the data); dotted: Eureka threshold",
             ha="center", va="top", fontsize=8)
    fig.tight_layout()
    return fig, stats
