"""Modular addition (Tian's CoGO analysis): Fourier magnitudes |A[k, j]|, |B[k, j]|, |C[k, j]| of the
final weights per frequency k and hidden node j for one seed (nodes ordered by the frequency they
belong to; most of the q nodes carry almost nothing), and the histogram of the order of each
frequency (#nodes with |A[k, j]| > 0.05) over every solved seed of each run: the talk's solutions
are of order 4 or 6 (dashed lines)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure

from ..store import read_dataset
from . import style

NAME = "cogo_fourier"
PAPER = "Tian: algebraic structure of solutions (CoGO, GaLore)"
CONFIG = """
description: Per-frequency Fourier magnitudes of one seed, and the order histogram over seeds.
required: [runs]
properties:
  runs:
    description: "Runs listed in analyses.fourier.runs; the heat maps show the first."
    type: array
    minItems: 1
    items: {type: string, x-ref: run, x-reads: [analysis/fourier]}
  seed: {description: "Seed of the heat maps (null: the first solved seed).", type: [integer, "null"], minimum: 0, default: null}
"""


@dataclass(frozen=True)
class Params:
    runs: tuple[str, ...]
    seed: int | None = None


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    fig, axes = style.figure(ncols=4, width=3.6, height=2.9)
    fig.subplots_adjust(wspace=0.45)
    first = read_dataset(paths.analysis("fourier", params.runs[0]), rule="fourier")
    solved = first.seed.values[first.solved.values.astype(bool)]
    seed = params.seed if params.seed is not None else int(solved[0]) if len(solved) else int(first.seed.values[0])
    one = first.sel(seed=seed)
    owner = one.node_freq.values
    active = np.flatnonzero(owner >= 0)
    order = active[np.argsort(owner[active], kind="stable")]
    for ax, m in zip(axes[0, :3], ("A", "B", "C")):
        mag = one[f"{m}_mag"].values[:, order] if len(order) else one[f"{m}_mag"].values
        im = ax.imshow(mag, aspect="auto", cmap="magma", interpolation="nearest")
        ax.set_xlabel(f"node ({len(order)} of {one.sizes['node']} above threshold)" if len(order) else
                      "node (seed not solved: not analysed)" if not bool(one.solved) else
                      f"node (none of {one.sizes['node']} above threshold)", fontsize=8)
        if m == "A":
            ax.set_ylabel("frequency k")
        ax.set_title(f"|{m}[k, j]|, {params.runs[0]} seed {seed}", fontsize=8)
        fig.colorbar(im, ax=ax, fraction=0.046, pad=0.02)
    ax = axes[0, 3]
    stats: dict = {"heatmap": {"run": params.runs[0], "seed": seed, "active_nodes": int(len(order)),
                               "solved": bool(one.solved)}, "runs": {}}
    for i, run in enumerate(params.runs):
        an = first if i == 0 else read_dataset(paths.analysis("fourier", run), rule="fourier")
        ok = an.solved.values.astype(bool)
        orders = an.order.isel(snapshot=-1).values[ok].ravel()
        orders = orders[np.isfinite(orders)].astype(int)
        bins = np.arange(-0.5, max(10, orders.max(initial=0)) + 1.5, 1.0)
        ax.hist(orders, bins=bins, alpha=0.6, color=style.ARM_COLORS[i % len(style.ARM_COLORS)],
                label=f"d={an.attrs['d']} ({int(ok.sum())} seeds)")
        counts = np.bincount(orders, minlength=11)
        stats["runs"][run] = {"d": int(an.attrs["d"]), "solved_seeds": int(ok.sum()), "seeds": int(an.sizes["seed"]),
                              "order_counts": {int(k): int(c) for k, c in enumerate(counts) if c},
                              "frac_order_4_or_6": float(np.isin(orders, (4, 6)).mean()) if len(orders) else float("nan")}
    for v in (4, 6):
        ax.axvline(v, color="r", ls="--", lw=0.8)
    ax.set_xlabel("order (#nodes with |A[k, j]| > threshold)", fontsize=8)
    ax.set_ylabel("frequencies (solved seeds)")
    ax.legend(fontsize=7)
    stats["summary"] = "; ".join(
        f"d={s['d']}: {s['solved_seeds']}/{s['seeds']} seeds solved, {100 * s['frac_order_4_or_6']:.1f}% of their "
        f"frequencies of order 4 or 6 (order counts {s['order_counts']})" for s in stats["runs"].values())
    return fig, stats
