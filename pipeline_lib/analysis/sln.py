"""Analysis ``sln``: the Spectral Line Navigator (Tian's talk: a shortest-path algorithm read off the
line graph's spectrum) on connected G(n, p) graphs, optimality rate per graph size and per edge
embedding (``graphs.VARIANTS``: unscaled eigenvectors, the first k nontrivial ones, scaled by
lambda^{-1/2}, commute-time scaling D^{-1/2} u lambda^{-1/2}). From node i it steps along the edge
(i, j) whose embedding is nearest to an edge (k, t) at the target; a query (s, t) is solved
optimally when the walk reaches t in d_G(s, t) steps. Every ordered pair s != t of every graph is a
query. No model is involved: the talk reports > 99% optimal on graphs under 10 nodes. The talk does not
say which eigenvectors or what scaling, so each variant is a reading; a second graph set (``explore_seed``)
lets the figure choose one without reporting on the graphs that chose it.
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
  seed: {description: "Seed of the graphs the rates are reported on.", type: integer, minimum: 0, default: 0}
  explore_seed:
    description: "Seed of a second set of graphs (the same sizes and counts) on which a reading of the talk's underspecified embedding is chosen, so that the reported rate is not measured on the graphs that chose it."
    type: integer
    minimum: 0
    default: 1
"""
CHECKS = [["n_max", "n_min <= n_max", "n_min={n_min} exceeds n_max={n_max}"],
          ["explore_seed", "explore_seed != seed", "explore_seed={explore_seed} equals seed: the reading would be "
                                                   "chosen on the graphs it is reported on"]]
RESOURCES = {"runtime": 10, "mem_mb": 1000}


@dataclass(frozen=True)
class Params:
    n_min: int = 3
    n_max: int = 10
    edge_prob: float = 0.5
    graphs_per_size: int = 100
    variants: tuple[str, ...] = ("unscaled", "first_2", "first_3", "first_4", "scaled", "commute")
    seed: int = 0
    explore_seed: int = 1


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
    sizes = np.arange(params.n_min, params.n_max + 1)
    opt, reach, queries, per_graph = _rates(params, params.seed, sizes)
    opt_x, _, queries_x, _ = _rates(params, params.explore_seed, sizes)
    graph_opt, graph_queries, graph_nodes = per_graph
    out = xr.Dataset(
        {"optimal": (("variant", "n_nodes"), opt / queries), "reached": (("variant", "n_nodes"), reach / queries),
         "n_optimal": (("variant", "n_nodes"), opt), "n_queries": ("n_nodes", queries),
         "n_optimal_explore": (("variant", "n_nodes"), opt_x), "n_queries_explore": ("n_nodes", queries_x),
         "graph_optimal": (("variant", "graph"), graph_opt), "graph_queries": ("graph", graph_queries),
         "graph_n_nodes": ("graph", graph_nodes)},
        coords={"variant": list(params.variants), "n_nodes": sizes},
    )
    out["optimal"].attrs["description"] = "fraction of queries (s, t) whose SLN walk is a shortest path"
    out["reached"].attrs["description"] = "fraction of queries whose SLN walk reaches t within n steps"
    out["n_optimal_explore"].attrs["description"] = "optimal queries on the exploration graphs (explore_seed)"
    out["graph_optimal"].attrs["description"] = "optimal queries of each report graph (the queries of one graph are " \
                                                "not independent draws: intervals resample graphs)"
    total = opt.sum(1) / queries.sum()
    return out, {"entry": name, "edge_prob": params.edge_prob, "graphs_per_size": params.graphs_per_size,
                 **{f"optimal_{v}": float(t) for v, t in zip(params.variants, total)}}


def _rates(params: Params, seed: int, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple]:
    """(optimal (variant, size), reached (variant, size), queries (size), per graph: (optimal (variant, graph),
    queries (graph), nodes (graph))) over graphs_per_size G(n, p) graphs per size drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    per = [(int(n), *graph_optimality(graphs.sample_connected(rng, int(n), params.edge_prob), params.variants))
           for n in sizes for _ in range(params.graphs_per_size)]
    nodes = np.array([p[0] for p in per], dtype=np.int64)
    g_opt = np.stack([p[1] for p in per], axis=1).astype(np.int64)  # (variant, graph)
    g_reach = np.stack([p[2] for p in per], axis=1).astype(np.int64)
    g_queries = np.array([p[3] for p in per], dtype=np.int64)
    at = [nodes == n for n in sizes]
    opt = np.stack([g_opt[:, m].sum(1) for m in at], axis=1)
    reach = np.stack([g_reach[:, m].sum(1) for m in at], axis=1)
    queries = np.array([g_queries[m].sum() for m in at], dtype=np.int64)
    return opt, reach, queries, (g_opt, g_queries, nodes)
