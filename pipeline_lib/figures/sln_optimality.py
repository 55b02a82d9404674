"""Spectral Line Navigator (Tian's talk: > 99% optimal paths on graphs under 10 nodes): fraction of
queries (s, t) of connected G(n, p) graphs whose SLN walk is a shortest path, per graph size, for
each edge embedding: the unscaled nontrivial eigenvectors of the line graph's normalised Laplacian,
the first k of them, scaled by lambda^{-1/2}, and commute-time scaling D^{-1/2} u lambda^{-1/2}."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure

from ..plumbing.store import read_dataset
from . import style

NAME = "sln_optimality"
PAPER = "Tian: shortest-path transformer and the Spectral Line Navigator"
CONFIG = """
description: SLN optimality rate per graph size and edge embedding, beside the talk's 99%.
required: [sln]
properties:
  sln: {description: "An entry of analyses.sln.", type: string, x-ref: analysis/sln}
  reference: {description: "The talk's optimality rate (dashed line).", type: number, default: 0.99}
"""
TALK_RATE, TALK_MAX_NODES = 0.99, 9  # the talk: > 99% optimal on graphs under 10 nodes


@dataclass(frozen=True)
class Params:
    sln: str
    reference: float = 0.99


# each edge embedding's name in the legend (the analysis's variant keys: analysis/sln.py)
READABLE = {"unscaled": "all nontrivial eigenvectors u", "scaled": "u λ^-1/2", "commute": "commute time: D^-1/2 u λ^-1/2"}


def readable(variant: str) -> str:
    return READABLE.get(variant) or (f"first {variant.split('_')[1]} eigenvectors" if variant.startswith("first_")
                                     else variant)


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    an = read_dataset(paths.analysis("sln", params.sln), rule="sln")
    fig, axes = style.figure(width=4.6, height=3.2)
    ax = axes[0, 0]
    n = an.n_nodes.values
    stats: dict = {"entry": params.sln, "reference": params.reference, "variants": {}}
    markers = "osD^vP"  # lines that coincide stay told apart by their markers
    for i, v in enumerate(an.variant.values):
        rate = an.optimal.sel(variant=v).values
        ax.plot(n, rate, "-", marker=markers[i % len(markers)], ms=4 + (len(an.variant) - i), mfc="none",
                color=style.ARM_COLORS[i % len(style.ARM_COLORS)], label=readable(str(v)))
        total = float(an.n_optimal.sel(variant=v).sum() / an.n_queries.sum())
        under = n <= TALK_MAX_NODES
        stats["variants"][str(v)] = {"per_size": {int(k): float(r) for k, r in zip(n, rate)}, "overall": total,
                                     "min_over_sizes": float(np.min(rate)),
                                     "n_optimal_under_10": int(an.n_optimal.sel(variant=v).values[under].sum()),
                                     "n_queries_under_10": int(an.n_queries.values[under].sum())}
    if "graph_optimal" in an:  # per graph under 10 nodes: the queries of one graph are not independent draws
        small = an.graph_n_nodes.values <= TALK_MAX_NODES
        stats["graph_queries_under_10"] = an.graph_queries.values[small].tolist()
        for v in an.variant.values:
            stats["variants"][str(v)]["graph_optimal_under_10"] = an.graph_optimal.sel(variant=v).values[small].tolist()
    if "n_optimal_explore" in an:
        stats.update(choose_reading(an))
    ax.axhline(params.reference, color="k", ls="--", lw=0.8, label=f"talk: > {params.reference:.0%}")
    ax.set_xlabel(f"graph size n (G(n, {an.attrs.get('edge_prob')}), {an.attrs.get('graphs_per_size')} graphs each)")
    ax.set_ylabel("optimal paths (fraction of queries)")
    ax.set_xticks(n)  # graph sizes are whole numbers
    ax.legend(fontsize=7)
    stats["summary"] = "; ".join(f"{v}: {100 * s['overall']:.2f}% optimal (lowest per size {100 * s['min_over_sizes']:.2f}%)"
                                 for v, s in stats["variants"].items()) + f" (talk: > {100 * params.reference:.0f}%)"
    return fig, stats


def choose_reading(an) -> dict:
    """The reading (variant) with the most optimal queries under 10 nodes on the exploration graphs (the first in
    the analysis's order among equals), and every reading's exploration rate."""
    under = an.n_nodes.values <= TALK_MAX_NODES
    q = int(an.n_queries_explore.values[under].sum())
    if q == 0:  # no exploration graph under 10 nodes: nothing to choose on (the claim is not run)
        return {}
    rates = {str(v): int(an.n_optimal_explore.sel(variant=v).values[under].sum()) / q for v in an.variant.values}
    return {"chosen_reading": max(rates, key=rates.get), "explore_rate_under_10": rates}


