"""JoMA (Tian et al.): normalised correlation of the estimated attention logits zhat (from the readout
W alone) with the real ones z over training, and of each of its two terms alone, for each frequency
case (every seed thin, median bold); middle: zhat against z at the last step, every seed; right: the
stable rank of V = U_c^T W and of its per-step change V-dot over training ("V gradually becomes low rank
... V-dot can be even more low-rank"); the statistics also give how widely the growth of V's rows varies."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure

from ..plumbing.store import read_dataset
from . import style

NAME = "joma_logits"
PAPER = "Tian: training dynamics of attention (Scan&Snap, JoMA)"
CONFIG = """
description: NC(zhat, z) of JoMA runs over steps, per frequency case, and zhat against z at the end.
required: [cases]
properties:
  cases:
    description: "Label (e.g. gaussian, uniform) -> a run listed in analyses.joma.runs."
    type: object
    minProperties: 1
    additionalProperties: {type: string, x-ref: run, x-reads: [analysis/joma]}
"""
NC_HIGH = 0.99  # "NC close to 1": at least 0.99 at every step (the brief's criterion, set before the run)
NEGLIGIBLE = 0.1  # "~0" for a correlation: |r| <= 0.1, the conventional bound of a negligible correlation (Cohen)


@dataclass(frozen=True)
class Params:
    cases: tuple[tuple[str, str], ...]


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    fig, axes = style.figure(ncols=3, nrows=len(params.cases), width=3.4)
    stats: dict = {}
    for row, (label, run) in enumerate(params.cases):
        an = read_dataset(paths.analysis("joma", run), rule="joma")
        ax = axes[row, 0]
        for i, (var, name) in enumerate((("nc", "NC(zhat, z)"), ("nc_term1", "first term"), ("nc_term2", "second term"))):
            style.seeds_and_median(ax, an.step, an[var], style.ARM_COLORS[i], label=name)
        ax.axhline(1.0, color="0.5", ls="--", lw=0.6, label="NC = 1")
        ax.set_xlabel("step")
        ax.set_ylabel("normalised correlation")
        ax.set_title(f"X {label}", fontsize=9)
        ax.legend(fontsize=7)
        ax = axes[row, 1]
        last = an.isel(step=-1)
        for s in an.seed.values:
            ax.scatter(last.z.sel(seed=s), last.zhat.sel(seed=s), s=8, alpha=0.6)
        # each axis on its own range: the claim is a normalised correlation, blind to zhat's scale (a line
        # zhat = z over both ranges squeezed the points into a strip)
        ax.set_xlabel("z (last step)")
        ax.set_ylabel("zhat (last step)")
        ax.set_title("one point per token, colour: seed", fontsize=8)
        stats_rank = _rank_panel(axes[row, 2], an)
        nc = an.nc.isel(step=slice(1, None))  # step 0: zhat = z by the choice of C
        stats[label] = {"run": run, "min_nc_after_step0": {"median": float(nc.min("step").median()),
                                                           "per_seed": [float(v) for v in nc.min("step").values]},
                        "final_nc": [float(v) for v in an.nc.isel(step=-1).values],
                        "final_nc_term1": [float(v) for v in an.nc_term1.isel(step=-1).values],
                        "final_nc_term2": [float(v) for v in an.nc_term2.isel(step=-1).values],
                        "final_nc_frozen": [float(v) for v in _nc(an.z.isel(step=0).values, an.z.isel(step=-1).values)],
                        **stats_rank}
    stats["summary"] = "; ".join(
        f"X {label}: final NC {min(s['final_nc']):.4f}-{max(s['final_nc']):.4f} over seeds, lowest after step 0 "
        f"{min(s['min_nc_after_step0']['per_seed']):.4f}; first term alone {np.median(s['final_nc_term1']):.3f}, second "
        f"{np.median(s['final_nc_term2']):.3f} (the talk prints no number)" for label, s in stats.items())
    return fig, stats


def _rank_panel(ax, an) -> dict:
    """Draw the stable ranks of V and V-dot over steps; return their per-seed statistics (V's at the first and the
    last step; over steps 1..end the medians of V's and of V-dot's) and the largest rank min(M_c, K)."""
    for i, (var, name) in enumerate((("v_stable_rank", "V"), ("vdot_stable_rank", "V-dot"))):
        style.seeds_and_median(ax, an.step, an[var], style.ARM_COLORS[i], label=name)
    max_rank = int(an.v_max_rank)
    ax.axhline(max_rank / 4, color="0.5", ls="--", lw=0.6, label="min(M_c, K) / 4")
    ax.set_xlabel("step")
    ax.set_ylabel("stable rank")
    ax.legend(fontsize=7)
    later = an.isel(step=slice(1, None))
    rows = an.v_row_norm.values if "v_row_norm" in an else None  # (seed, step, token)
    return {**({} if rows is None else {
                "v_row_growth_ratio_per_seed": row_growth_ratio(rows[:, 0], rows[:, -1]),
                "v_row_growth_ratio_first_step_per_seed": row_growth_ratio(rows[:, 0], rows[:, 1])}),
            "max_rank": max_rank,
            "v_rank_initial_per_seed": [float(v) for v in an.v_stable_rank.isel(step=0).values],
            "v_rank_final_per_seed": [float(v) for v in an.v_stable_rank.isel(step=-1).values],
            "v_rank_median_per_seed": [float(v) for v in later.v_stable_rank.median("step").values],
            "vdot_rank_median_per_seed": [float(v) for v in later.vdot_stable_rank.median("step").values]}


def row_growth_ratio(start: np.ndarray, end: np.ndarray) -> list[float]:
    """Per seed (rows: seed, token) the growth of V's fastest row from ``start`` to ``end`` (|V_l|_2 at end minus
    at start: the largest signed growth) over the median of the rows' absolute growths: how widely the rows'
    growth rates vary."""
    g = end - start
    return [float(v) for v in g.max(-1) / np.maximum(np.median(np.abs(g), -1), 1e-300)]


def _nc(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Normalised correlation along the last axis (cosine of the centred vectors), as the joma analysis computes."""
    a, b = a - a.mean(-1, keepdims=True), b - b.mean(-1, keepdims=True)
    return (a * b).sum(-1) / np.maximum(np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1), 1e-300)


