"""Shortest-path transformer (Tian et al., "Spectral Journey": edge embeddings correlate with the line
graph's Laplacian eigenvectors, > 0.9): per test graph and seed, the largest |correlation| between
the k-th nontrivial eigenvector of L(G)'s normalised Laplacian and the principal components of the
layer-1 edge representations (read at each edge's <e> token, averaged over random edge orders), and
the cosines of the principal angles between the two K-dimensional subspaces; trained model against
the two nulls: the untrained model and Gaussian vectors of the same shape."""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure

from ..plumbing.store import read_dataset
from . import style

NAME = "edge_spectrum"
PAPER = "Tian: shortest-path transformer and the Spectral Line Navigator"
CONFIG = """
description: Histograms of edge-representation / line-graph-eigenvector correlations against the nulls.
required: [runs]
properties:
  runs:
    description: "Runs listed in analyses.edge_correlation.runs (pooled over seeds and graphs)."
    type: array
    minItems: 1
    items: {type: string, x-ref: run, x-reads: [analysis/edge_correlation]}
  threshold: {description: "Correlation the talk reports exceeding (the share above it is stated).", type: number, default: 0.9}
"""
COLORS = {"trained": "#d62728", "untrained": "#7f7f7f", "gaussian": "#1f77b4", "endpoint_sum": "#2ca02c"}
LABELS = {"trained": "trained", "untrained": "untrained (same architecture)", "gaussian": "null: Gaussian vectors",
          "endpoint_sum": "null: sums of Gaussian endpoint vectors"}  # the legend's words for each source
TALK_CORR = 0.9  # the talk's correlation (the claims use it whatever the figure's threshold)


@dataclass(frozen=True)
class Params:
    runs: tuple[str, ...]
    threshold: float = 0.9


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    ans = [read_dataset(paths.analysis("edge_correlation", run), rule="edge_correlation") for run in params.runs]
    K = ans[0].sizes["component"]
    fig, axes = style.figure(ncols=K + 1, width=3.0, height=2.6)
    bins = np.linspace(0, 1, 21)
    stats: dict = {"runs": list(params.runs), "threshold": params.threshold, "sources": {}}
    for source, color in COLORS.items():
        st: dict = {}
        for k in range(K):
            v = np.concatenate([a.max_corr.sel(source=source).isel(component=k).values.ravel() for a in ans])
            v = v[np.isfinite(v)]
            axes[0, k].hist(v, bins=bins, histtype="step", color=color, lw=1.5, density=True, label=LABELS[source])
            st[f"u{k + 1}"] = {"n": int(len(v)), "median": float(np.median(v)) if len(v) else float("nan"),
                               "frac_above": float((v > params.threshold).mean()) if len(v) else float("nan")}
        c = np.concatenate([a.principal_cos.sel(source=source).values.ravel() for a in ans])
        c = c[np.isfinite(c)]
        axes[0, K].hist(c, bins=bins, histtype="step", color=color, lw=1.5, density=True, label=LABELS[source])
        st["principal_cos"] = {"n": int(len(c)), "median": float(np.median(c)) if len(c) else float("nan")}
        st["per_graph"] = per_graph(ans, source)
        stats["sources"][source] = st
    for k in range(K):
        axes[0, k].axvline(params.threshold, color="k", ls="--", lw=0.8,
                           label=f"threshold {params.threshold:g}" if k == 0 else None)
        axes[0, k].set_xlabel(f"max |corr(u_{k + 1}, PC)|", fontsize=8)
    axes[0, 0].set_ylabel("density (graphs x seeds)")
    axes[0, K].set_xlabel("cos principal angles", fontsize=8)
    axes[0, 0].legend(fontsize=7)
    axes[0, 0].set_title(", ".join(params.runs), fontsize=7, loc="left")
    s = stats["sources"]
    stats["summary"] = (f"median max|corr| with u_1: trained {s['trained']['u1']['median']:.3f}, untrained "
                        f"{s['untrained']['u1']['median']:.3f}, Gaussian {s['gaussian']['u1']['median']:.3f}"
                        f", endpoint sums {s['endpoint_sum']['u1']['median']:.3f}; share "
                        f"> {params.threshold}: {s['trained']['u1']['frac_above']:.2f} / "
                        f"{s['untrained']['u1']['frac_above']:.2f} / {s['gaussian']['u1']['frac_above']:.2f}; "
                        f"median principal cosine {s['trained']['principal_cos']['median']:.3f} / "
                        f"{s['untrained']['principal_cos']['median']:.3f} / {s['gaussian']['principal_cos']['median']:.3f} "
                        f"({s['trained']['u1']['n']} graph-seed pairs)")
    return fig, stats


def per_graph(ans, source: str) -> dict:
    """Per test graph (every run's graphs in turn): max |corr| with u_1 and the principal cosines (mean over
    angles), each averaged over the seeds (NaN-skipping; None where nothing is finite)."""
    out: dict = {"u1": [], "principal_cos": []}
    for a in ans:
        u1 = a.max_corr.sel(source=source).isel(component=0).values  # (seed, graph)
        pc = a.principal_cos.sel(source=source).values  # (seed, graph, component)
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN graphs
            out["u1"] += [_r(v) for v in np.nanmean(u1, axis=0)]
            out["principal_cos"] += [_r(v) for v in np.nanmean(pc, axis=(0, 2))]
    return out


def _r(v: float) -> float | None:
    return None if not np.isfinite(v) else round(float(v), 5)


