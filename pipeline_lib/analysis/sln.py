"""Analysis ``sln``: the Spectral Line Navigator (Tian's talk: a shortest-path algorithm read off the
line graph's spectrum) on connected G(n, p) graphs, optimality rate per graph size and per edge
embedding (``graphs.VARIANTS``: unscaled eigenvectors, the first k nontrivial ones, scaled by
lambda^{-1/2}, commute-time scaling D^{-1/2} u lambda^{-1/2}). From node i it steps along the edge
(i, j) whose embedding is nearest to an edge (k, t) at the target; a query (s, t) is solved
optimally when the walk reaches t in d_G(s, t) steps. Every ordered pair s != t of every graph is a
query. No model is involved: the talk reports > 99% optimal on graphs under 10 nodes.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr

from .. import graphs

NAME = "sln"
CONFIG = """
description: "Spectral Line Navigator optimality per graph size and edge embedding (G(n, p) graphs)."
properties:
  n_min: {description: "Smallest graph size.", type: integer, minimum: 2, default: 3}
  n_max: {description: "Largest graph size.", type: integer, minimum: 2, default: 10}
  edge_prob: {description: "Edge probability of G(n, p) (redrawn until connected).", type: number, exclusiveMinimum: 0, maximum: 1, default: 0.5}
  graphs_per_size: {description: "Graphs drawn per size n.", type: integer, minimum: 1, default: 100}
  variants:
    description: "Edge embeddings compared (see pipeline_lib/graphs.py)."
    type: array
    items: {enum: [unscaled, first_2, first_3, first_4, scaled, commute]}
    default: [unscaled, first_2, first_3, first_4, scaled, commute]
  seed: {description: "Seed of the graphs.", type: integer, minimum: 0, default: 0}
"""
CHECKS = [["n_max", "n_min <= n_max", "n_min={n_min} exceeds n_max={n_max}"]]
RESOURCES = {"runtime": 10, "mem_mb": 1000}


@dataclass(frozen=True)
class Params:
    n_min: int = 3
    n_max: int = 10
    edge_prob: float = 0.5
    graphs_per_size: int = 100
    variants: tuple[str, ...] = ("unscaled", "first_2", "first_3", "first_4", "scaled", "commute")
    seed: int = 0


def graph_optimality(adj: np.ndarray, variants) -> tuple[np.ndarray, np.ndarray, int]:
    """(optimal queries per variant, queries reaching t per variant, number of queries) of one graph."""
    dist = graphs.distances(adj)
    edges, a_line = graphs.line_graph(adj)
    n = len(adj)
    opt, reach = np.zeros(len(variants), dtype=int), np.zeros(len(variants), dtype=int)
    for v, variant in enumerate(variants):
        emb = (edges, graphs.spectral_embedding(a_line, variant))
        for s in range(n):
            for t in range(n):
                if s != t:
                    path = graphs.sln_path(adj, s, t, variant, emb)
                    reach[v] += path[-1] == t
                    opt[v] += graphs.is_shortest_walk(adj, path, s, t, int(dist[s, t]))
    return opt, reach, n * (n - 1)


def compute(cfg, name: str, params: Params, paths, threads: int = 1) -> tuple[xr.Dataset, dict]:
    rng = np.random.default_rng(params.seed)
    sizes = np.arange(params.n_min, params.n_max + 1)
    V = len(params.variants)
    opt = np.zeros((V, len(sizes)), dtype=np.int64)
    reach = np.zeros_like(opt)
    queries = np.zeros(len(sizes), dtype=np.int64)
    for i, n in enumerate(sizes):
        for _ in range(params.graphs_per_size):
            o, r, q = graph_optimality(graphs.sample_connected(rng, int(n), params.edge_prob), params.variants)
            opt[:, i] += o
            reach[:, i] += r
            queries[i] += q
    out = xr.Dataset(
        {"optimal": (("variant", "n_nodes"), opt / queries), "reached": (("variant", "n_nodes"), reach / queries),
         "n_optimal": (("variant", "n_nodes"), opt), "n_queries": ("n_nodes", queries)},
        coords={"variant": list(params.variants), "n_nodes": sizes},
    )
    out["optimal"].attrs["description"] = "fraction of queries (s, t) whose SLN walk is a shortest path"
    out["reached"].attrs["description"] = "fraction of queries whose SLN walk reaches t within n steps"
    total = opt.sum(1) / queries.sum()
    return out, {"entry": name, "edge_prob": params.edge_prob, "graphs_per_size": params.graphs_per_size,
                 **{f"optimal_{v}": float(t) for v, t in zip(params.variants, total)}}
