"""Fig. 6 of 'Easing Optimization Paths': train and test loss along the straight line between two
solutions (an analyses.interpolation entry), every seed thin and the median bold. Its claims also
read the barriers of same-arm control entries (``controls``) and of a cross-arm entry pairing
different seeds (``cross_arm_shifted``)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr
from matplotlib.figure import Figure

from ..plumbing.store import read_dataset
from . import style

NAME = "fig6_interpolation"
PAPER = "Easing Optimization Paths: a Circuit Perspective"  # the report's category
CONFIG = """
description: Loss along the interpolation between two solutions, every seed thin and the median bold.
required: [interpolation]
properties:
  interpolation:
    description: "Name of an entry of analyses.interpolation."
    type: string
    x-ref: analysis/interpolation
  controls:
    description: "Label -> entry of analyses.interpolation between two solutions of one arm: two seeds (pair: shifted), e.g. two curriculum seeds and two scratch seeds, or one initialisation trained on two data draws: the barriers the cross-arm one must exceed. Not drawn."
    type: object
    default: {}
    additionalProperties: {type: string, x-ref: analysis/interpolation}
  cross_arm_shifted:
    description: "Entry of analyses.interpolation between the two arms with pair: shifted (different seeds, as in the controls), or null. Not drawn."
    type: [string, "null"]
    default: null
    x-ref: analysis/interpolation
"""


@dataclass(frozen=True)
class Params:
    interpolation: str
    controls: tuple[tuple[str, str], ...] = ()
    cross_arm_shifted: str | None = None


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    ic = cfg.analyses["interpolation"][params.interpolation]
    ds = read_dataset(paths.analysis("interpolation", params.interpolation), rule="interpolation")
    stats = fig6_stats(ds)
    if params.controls:
        stats["controls"] = {label: entry_stats(paths, name) for label, name in params.controls}
    if params.cross_arm_shifted:
        stats["cross_arm_shifted"] = entry_stats(paths, params.cross_arm_shifted)
    others = {**stats.get("controls", {}), **({"cross-arm, shifted": stats["cross_arm_shifted"]}
                                              if params.cross_arm_shifted else {})}
    if others:
        stats["summary"] += "; train barrier median of " + ", ".join(
            f"{label} {st['barrier_train']['median']:.3g}" for label, st in others.items())
    return plot_fig6_interpolation(ds, ic.a, ic.b), stats


def entry_stats(paths, name: str) -> dict:
    """:func:`fig6_stats` of another interpolation entry (no summary), with its [seed of a, seed of b] pairs."""
    ds = read_dataset(paths.analysis("interpolation", name), rule="interpolation")
    st = fig6_stats(ds)
    del st["summary"]
    return {**st, "entry": name, "pairs": _pairs(ds)}


def _pairs(ds: xr.Dataset) -> list[list[int]]:
    """[seed of a, seed of b] per row of an interpolation artifact (same seed without a seed_b coordinate)."""
    b = ds.seed_b.values if "seed_b" in ds.coords else ds.seed.values
    return [[int(x), int(y)] for x, y in zip(ds.seed.values, b)]


def fig6_stats(ds: xr.Dataset) -> dict:
    """The loss barrier of each split: median, range and every seed's, plus the summary line."""
    stats = {}
    for split in ("train", "test"):
        b = ds[f"barrier_{split}"].values
        stats[f"barrier_{split}"] = {"median": float(np.median(b)), "min": float(b.min()), "max": float(b.max()),
                                     "per_seed": [float(v) for v in b]}
    stats["summary"] = "; ".join(f"{s} loss barrier median {v['median']:.3g} (range {v['min']:.3g} to {v['max']:.3g})"
                                 for s, v in stats.items()) + f" over {ds.sizes['seed']} seeds"
    return stats


# -- claims ---------------------------------------------------------------------------------------------------


def plot_fig6_interpolation(ds: xr.Dataset, label_a: str, label_b: str) -> Figure:
    """Train and test loss against t for every seed (thin) and the median (bold)."""
    fig, axes = style.figure(ncols=2, width=3.4)
    for ax, split in zip(axes[0], ("train", "test")):
        loss = ds[f"{split}_loss"]
        style.seeds_and_median(ax, ds.t, loss, "k", label="median", seed_color="0.4")
        for t, lbl in ((0, label_a), (1, label_b)):
            ax.axvline(t, color="0.6", ls="--", lw=0.8)
            ax.text(t, 1.0, f" {lbl}", transform=ax.get_xaxis_transform(), fontsize=7, va="top")
        b = ds[f"barrier_{split}"].values
        ax.set_title(f"{split} loss; barrier median {np.median(b):.3g}", fontsize=9)
        ax.set_xlabel(f"t (0: {label_a}, 1: {label_b})")
        ax.set_ylabel(f"{split} loss")
        values = loss.values[np.isfinite(loss.values)]
        if values.size and values.min() > 0 and values.max() / values.min() > 10:
            ax.set_yscale("log")  # only when the loss spans more than a decade
    return fig
