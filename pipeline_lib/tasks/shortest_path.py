"""Shortest paths on small graphs as next-token prediction (Tian et al., "Spectral Journey: how
transformers predict the shortest path", arXiv 2502.08794; no public code).

Each example is one sequence over node tokens 0..node_tokens-1 and five special tokens:

    <bos> u v <e> u v <e> ... <q> s t <p> s n1 n2 ... t <pad> ...

the graph's edges in a random order and orientation, the query (s, t), then a shortest path from s
to t (each next node drawn uniformly among the neighbours one step closer). Node labels are a random
injection of the graph's nodes into the node tokens, drawn per graph. Graphs are connected G(n, p)
graphs, n uniform in [n_min, n_max]. The split (``split_by``) is by graph, as the paper's 80/20: the
last test_fraction of the drawn graphs are test graphs (an isomorphic copy of a training graph, with
other labels and sequences, may be among them: small sizes have few classes, e.g. 2 on 3 nodes, 6 on
4); or by graph *class*: a graph's Weisfeiler-Lehman key (``graphs.class_key``, equal for
isomorphic graphs) decides by a hash of (seed, key) whether its class is a test class (with
probability test_fraction), so no test graph is isomorphic to a training graph; graphs are drawn
until each split has its count (the test graphs are then a few classes of the small sizes).

``x`` (sample, position) is the padded sequence; ``y`` (sample, position) the next-token target at
the positions whose next token is a path token (``<p>`` -> s, s -> n1, ..., the node before t -> t),
-1 elsewhere (no loss there). The token ``<pad>`` is the last id (tokens - 1), the decoder's
convention. Also stored: per sample its graph, source, target, distance and prompt length (the
position of the first path token); per graph its adjacency, node count, node tokens, class key and
split.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import xarray as xr

from .. import graphs

NAME = "shortest_path"
MODELS = ["decoder"]
CONFIG = """
required: [n_graphs]
properties:
  n_min: {description: "Fewest nodes of a graph.", type: integer, minimum: 2, default: 3}
  n_max: {description: "Most nodes of a graph (the paper: 10).", type: integer, minimum: 2, default: 6}
  edge_prob: {description: "Edge probability p of G(n, p); graphs are redrawn until connected.", type: number, exclusiveMinimum: 0, maximum: 1, default: 0.5}
  n_graphs: {description: "Graphs in all (train and test).", type: integer, minimum: 2}
  test_fraction: {description: "Fraction of the graphs (and of the graph classes, by a hash) that are test graphs.", type: number, exclusiveMinimum: 0, exclusiveMaximum: 1, default: 0.2}
  queries: {description: "Sequences per graph: each a random query (s, t), s != t, and a fresh random edge order and orientation.", type: integer, minimum: 1, default: 20}
  split_by:
    description: "graph: the last test_fraction of the graphs are test graphs (the paper's split); class: by Weisfeiler-Lehman class, so no test graph is isomorphic to a training graph."
    enum: [graph, class]
    default: graph
  node_tokens: {description: "Size of the node-token set node labels are drawn from (>= n_max).", type: integer, minimum: 2, default: 16}
"""
SHAPE = {"n_train": "(n_graphs - int(round(test_fraction * n_graphs))) * queries",
         "n_test": "int(round(test_fraction * n_graphs)) * queries",
         "tokens": "node_tokens + 5", "T": "1 + 3 * (n_max * (n_max - 1) // 2) + 4 + n_max",
         "classes": "node_tokens + 5"}
CHECKS = [["n_max", "n_min <= n_max", "n_min={n_min} exceeds n_max={n_max}"],
          ["node_tokens", "node_tokens >= n_max", "node_tokens={node_tokens} < n_max={n_max}: a graph's nodes need "
           "distinct labels; allowed: node_tokens >= n_max"],
          ["test_fraction", "0 < int(round(test_fraction * n_graphs)) < n_graphs",
           "test_fraction={test_fraction} of n_graphs={n_graphs} leaves no training or no test graph"]]

SPECIALS = ("bos", "e", "q", "p", "pad")


@dataclass(frozen=True)
class Params:
    n_graphs: int
    n_min: int = 3
    n_max: int = 6
    edge_prob: float = 0.5
    test_fraction: float = 0.2
    queries: int = 20
    node_tokens: int = 16
    split_by: str = "graph"
    seed: int = 0


def special(node_tokens: int) -> dict[str, int]:
    """Token ids of <bos>, <e>, <q>, <p>, <pad> (after the node tokens; <pad> last)."""
    return {name: node_tokens + i for i, name in enumerate(SPECIALS)}


def seq_len(n_max: int) -> int:
    return 1 + 3 * (n_max * (n_max - 1) // 2) + 4 + n_max


def is_test_class(key: str, seed: int, test_fraction: float) -> bool:
    """Whether a graph class is a test class: a uniform number from a hash of (seed, key)."""
    h = int.from_bytes(hashlib.sha256(f"{seed}:{key}".encode()).digest()[:8], "little")
    return h / 2**64 < test_fraction


def draw_graphs(params: Params, rng: np.random.Generator) -> list[tuple[np.ndarray, str, bool]]:
    """(adjacency, class key, is_test) of n_graphs graphs: the train ones first, then the test ones."""
    n_test = int(round(params.test_fraction * params.n_graphs))
    want = {False: params.n_graphs - n_test, True: n_test}
    got: dict[bool, list] = {False: [], True: []}
    if params.split_by == "graph":
        for i in range(params.n_graphs):
            adj = graphs.sample_connected(rng, int(rng.integers(params.n_min, params.n_max + 1)), params.edge_prob)
            test = i >= want[False]
            got[test].append((adj, graphs.class_key(adj), test))
        return got[False] + got[True]
    for _ in range(200 * params.n_graphs):
        if all(len(got[k]) == want[k] for k in want):
            break
        adj = graphs.sample_connected(rng, int(rng.integers(params.n_min, params.n_max + 1)), params.edge_prob)
        key = graphs.class_key(adj)
        test = is_test_class(key, params.seed, params.test_fraction)
        if len(got[test]) < want[test]:
            got[test].append((adj, key, test))
    if not all(len(got[k]) == want[k] for k in want):
        have = {"train": len(got[False]), "test": len(got[True])}
        raise ValueError(f"shortest_path: could not fill the split by class (got {have} graphs of "
                         f"{ {'train': want[False], 'test': want[True]} }) from the graph classes of n_min={params.n_min}.."
                         f"n_max={params.n_max}: too few classes for test_fraction={params.test_fraction}; widen the "
                         f"node range, change the seed or use split_by: graph")
    return got[False] + got[True]


def encode(adj: np.ndarray, labels: np.ndarray, order: np.ndarray, flip: np.ndarray, s: int, t: int,
           path: list[int] | None, node_tokens: int, length: int) -> np.ndarray:
    """One padded sequence: edges in ``order`` (indices into ``graphs.edge_list``), endpoints swapped
    where ``flip``, the query (s, t), and the path (None: stop after <p>)."""
    sp = special(node_tokens)
    tok, edges = [sp["bos"]], graphs.edge_list(adj)
    for i, f in zip(order, flip):
        u, v = edges[i]
        tok += [labels[v], labels[u]] if f else [labels[u], labels[v]]
        tok.append(sp["e"])
    tok += [sp["q"], labels[s], labels[t], sp["p"]]
    tok += [labels[v] for v in path or []]
    out = np.full(length, sp["pad"], dtype=np.int64)
    out[: len(tok)] = tok
    return out


def generate(params: Params) -> xr.Dataset:
    rng = np.random.default_rng(params.seed)
    drawn = draw_graphs(params, rng)
    L, n_max, V = seq_len(params.n_max), params.n_max, params.node_tokens
    xs, ys, rows = [], [], []
    adjacency = np.zeros((len(drawn), n_max, n_max), dtype=bool)
    node_labels = np.full((len(drawn), n_max), -1, dtype=np.int64)
    for g, (adj, _, _) in enumerate(drawn):
        n = len(adj)
        adjacency[g, :n, :n] = adj
        labels = rng.choice(V, size=n, replace=False)
        node_labels[g, :n] = labels
        dist = graphs.distances(adj)
        m = int(adj.sum()) // 2
        for _ in range(params.queries):
            s, t = rng.choice(n, size=2, replace=False)
            path = graphs.random_shortest_path(rng, adj, dist, int(s), int(t))
            x = encode(adj, labels, rng.permutation(m), rng.random(m) < 0.5, int(s), int(t), path, V, L)
            start = 1 + 3 * m + 4  # position of the first path token
            y = np.full(L, -1, dtype=np.int64)
            y[start - 1:start - 1 + len(path)] = x[start:start + len(path)]
            xs.append(x)
            ys.append(y)
            rows.append((g, int(s), int(t), int(dist[s, t]), n, start))
    rows = np.array(rows)
    split = np.array(["test" if drawn[g][2] else "train" for g in rows[:, 0]], dtype=object)
    ds = xr.Dataset(
        {"x": (("sample", "position"), np.stack(xs)), "y": (("sample", "position"), np.stack(ys)),
         "graph": ("sample", rows[:, 0]), "source": ("sample", rows[:, 1]), "target": ("sample", rows[:, 2]),
         "distance": ("sample", rows[:, 3]), "n_nodes": ("sample", rows[:, 4]),
         "prompt_length": ("sample", rows[:, 5]),
         "adjacency": (("graph_id", "node", "node_j"), adjacency),
         "graph_n_nodes": ("graph_id", np.array([len(a) for a, _, _ in drawn])),
         "node_label": (("graph_id", "node"), node_labels),
         "graph_class": ("graph_id", np.array([k for _, k, _ in drawn], dtype=object)),
         "graph_split": ("graph_id", np.array(["test" if t else "train" for _, _, t in drawn], dtype=object))},
        coords={"sample": np.arange(len(xs)), "position": np.arange(L), "split": ("sample", split),
                "graph_id": np.arange(len(drawn))},
        attrs={"task_task": NAME, "task_n_min": params.n_min, "task_n_max": n_max, "task_edge_prob": params.edge_prob,
               "task_node_tokens": V, "task_seed": params.seed, "task_split_by": params.split_by, "task_n_classes": V + 5, "task_T": L,
               "task_specials": ", ".join(f"{k}={v}" for k, v in special(V).items())},
    )
    ds["x"].attrs["description"] = "<bos> u v <e> ... <q> s t <p> s ... t, then <pad> (the last token id)"
    ds["y"].attrs["description"] = "next-token target where the next token is a path token; -1 elsewhere (no loss)"
    ds["prompt_length"].attrs["description"] = "position of the first path token (the prompt is x[:prompt_length])"
    ds["graph_class"].attrs["description"] = "Weisfeiler-Lehman key: equal for isomorphic graphs; the split is by it"
    ds["adjacency"].attrs["description"] = "adjacency of each graph (nodes beyond graph_n_nodes are padding)"
    return ds


def probe_targets(ds: xr.Dataset, split: str, n: int) -> dict[str, np.ndarray]:
    """No probe targets (the analyses read the edge representations and decoded paths instead)."""
    return {}


def graph(ds: xr.Dataset, g: int) -> tuple[np.ndarray, np.ndarray]:
    """(adjacency (n, n), node tokens (n,)) of graph g of a dataset artifact."""
    n = int(ds.graph_n_nodes.values[g])
    return ds.adjacency.values[g, :n, :n], ds.node_label.values[g, :n]


def decoded_valid(tokens, adj: np.ndarray, labels: np.ndarray, s: int, t: int, dist: int) -> bool:
    """Whether decoded path tokens (starting with the source's token) are a shortest s-t walk: the
    tokens up to the first one of t, read as the graph's nodes (an unknown token: invalid), must be
    a walk of G from s to t with d_G(s, t) edges. Any shortest path counts."""
    tokens = [int(v) for v in tokens]
    t_tok = int(labels[t])
    if t_tok not in tokens:
        return False
    node_of = {int(tok): v for v, tok in enumerate(labels)}
    walk = tokens[: tokens.index(t_tok) + 1]
    if any(tok not in node_of for tok in walk):
        return False
    return graphs.is_shortest_walk(adj, [node_of[tok] for tok in walk], s, t, dist)
