"""Eureka paper, Fig. 2: linear-probe accuracy of the hidden first step over training, per variant."""
from __future__ import annotations

import numpy as np
import xarray as xr

from . import style


def plot_eureka_probes(rows: dict[str, dict[str, xr.Dataset]], target: str = "step1"):
    """``rows``: experiment -> arm -> probe artifact (accuracy over seed, snapshot, site, target). One
    row per experiment, one panel per site; per arm the median over seeds bold, seeds thin; the
    majority-class chance level dashed. Returns (figure, stats)."""
    sites = {exp: list(next(iter(arms.values())).site.values) for exp, arms in rows.items()}
    ncols = max(len(s) for s in sites.values())
    fig, axes = style.figure(ncols=ncols, nrows=len(rows), width=2.8, height=2.3)
    stats = {}
    for r, (exp, arms) in enumerate(rows.items()):
        stats[exp] = {}
        for c, site in enumerate(sites[exp]):
            ax = axes[r][c]
            for (label, ds), color in zip(arms.items(), style.ARM_COLORS):
                acc = ds.accuracy.sel(site=site, target=target)
                x = acc.snapshot.values + 1  # log axis: epoch 0 at 1
                for s in acc.seed.values:
                    ax.plot(x, acc.sel(seed=s), color=color, lw=style.SEED_LW, alpha=style.SEED_ALPHA)
                med = acc.median("seed", skipna=True)
                ax.plot(x, med, color=color, lw=1.6, label=label)
                stats[exp].setdefault(label, {})[site] = {"median_first": float(med[0]), "median_last": float(med[-1])}
            chance = float(next(iter(arms.values())).chance.sel(target=target))
            ax.axhline(chance, color="k", ls="--", lw=0.8)
            stats[exp]["chance"] = chance
            ax.set_xscale("log")
            ax.set_ylim(0.4, 1.02)
            ax.set_title(f"{exp}: probe of {target} at {site}", fontsize=8)
            ax.set_xlabel("epoch + 1")
        for c in range(len(sites[exp]), ncols):
            axes[r][c].axis("off")
        axes[r][0].set_ylabel("probe accuracy")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    return fig, stats
