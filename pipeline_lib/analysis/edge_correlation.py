"""Analysis ``edge_correlation``: do a shortest-path decoder's edge representations follow the line
graph's spectrum? (Tian et al., "Spectral Journey": correlation > 0.9 with eigenvectors of the
normalised Laplacian of the line graph L(G)). The issue's ``edge_spectrum`` analysis; named so
because the figure ``edge_spectrum`` holds that rule name.

Per graph (the held-out test graphs of the run's dataset, the first ``max_graphs`` with at least 3
edges) and seed: the edges are written in ``n_orders`` random orders and orientations
(``<bos> u v <e> ...``); each edge's representation is the residual stream after layer ``layer``
(1 = the first) at its ``<e>`` token, the first position after both endpoints, averaged over the
orders: R (m edges x d). With X = R minus its mean over edges and its principal components (the
left singular vectors of X, m-1 at most) and u_1, u_2, ... the nontrivial eigenvectors of L(G)'s
normalised Laplacian I - D^{-1/2} A D^{-1/2} (ascending eigenvalues):

* ``max_corr[k]``: max over the top K principal components of |Pearson correlation| with u_k,
  k = 1..K (with a repeated eigenvalue, the largest over u_k's eigenspace);
* ``principal_cos[k]``: cosines of the principal angles between span(u_1..u_K') and the span of the
  top K' principal components (subspaces: robust to degenerate eigenvalues, whose eigenvectors are
  defined only up to a rotation), K' = min(components, m - 2), lowered to an eigengap: both live in
  the (m-1)-dimensional space of centred edge vectors, where two (m-1)-dimensional subspaces
  coincide whatever R is.

Both for the trained weights (the final snapshot), the untrained ones (the first snapshot: the
initialisation, or for a finetune the parent's final weights), Gaussian vectors of R's shape and
endpoint sums (``source`` dim): the nulls. The endpoint-sum null gives each node a Gaussian vector and
each edge the sum of its two endpoints' (R = B^T X for the unsigned incidence B): since
B^T B = A(L(G)) + 2I, such representations follow the line graph's spectrum by construction, so a
trained model that only adds its two endpoint tokens' embeddings would match it. Graphs of m <= K + 1
edges are the floor of the statistic (the top K components span all m - 1 centred directions, so any R
reaches 1/sqrt(m-1)): ``min_edges`` leaves them out.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import xarray as xr

from .. import graphs
from ..models import build_run_model
from ..plumbing.store import read_dataset
from ..selection import snapshot_arrays
from ..tasks.shortest_path import encode, graph, seq_len

NAME = "edge_correlation"
PER_RUN = True
USES = ["model"]
CONFIG = """
description: "Correlation of a decoder's edge representations with the line graph's Laplacian eigenvectors, against nulls."
properties:
  runs:
    description: "Runs of a decoder model on a shortest_path dataset."
    type: array
    items: {type: string, x-ref: run, x-reads: [weights, dataset], x-requires: {properties: {model: {properties: {kind: {const: decoder}}}}}, x-requires-message: "is not a run of a decoder model"}
    default: []
  n_orders: {description: "Random edge orders (and orientations) the representations are averaged over.", type: integer, minimum: 1, default: 16}
  max_graphs: {description: "Test graphs analysed (the first ones with at least min_edges edges).", type: integer, minimum: 1, default: 200}
  components: {description: "K: eigenvectors u_1..u_K compared (and subspace dimension).", type: integer, minimum: 1, default: 3}
  layer: {description: "Residual stream read after this layer (1 = the first).", type: integer, minimum: 1, default: 1}
  seed: {description: "Seed of the edge orders and of the Gaussian and endpoint-sum nulls.", type: integer, minimum: 0, default: 0}
  min_edges:
    description: "Test graphs with at least this many edges are analysed; components + 2 or more removes the statistic's floor (with m <= components + 1 edges the top components span every centred direction)."
    type: integer
    minimum: 3
    default: 3
"""
RESOURCES = {"runtime": 20, "mem_mb": 4000}
SOURCES = ("trained", "untrained", "gaussian", "endpoint_sum")


@dataclass(frozen=True)
class Params:
    runs: tuple[str, ...] = ()
    n_orders: int = 16
    max_graphs: int = 200
    components: int = 3
    layer: int = 1
    seed: int = 0
    min_edges: int = 3


def spectrum_match(R: np.ndarray, a_line: np.ndarray, K: int, tol: float = 1e-8,
                   eigen: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(max |corr| per eigenvector u_1..u_K, principal-angle cosines) of representations R (m, d) of
    the vertices of a graph with adjacency a_line (here the line graph); NaN where undefined.
    ``eigen``: ``graphs.laplacian_eigen(a_line)`` when already computed.

    An eigenvector of a repeated eigenvalue is any vector of its eigenspace, so the correlation of
    u_k with a principal component is the largest over that eigenspace: the norm of the component's
    projection onto the centred eigenspace (|Pearson correlation| when the eigenvalue is simple).
    Only the top K principal components compete (the rest are R's low-variance directions, among
    which some always correlate). The subspace dimension stops at an eigengap."""
    m = len(R)
    K_eff = min(K, m - 1)
    out_c, out_p = np.full(K, np.nan), np.full(K, np.nan)
    lam, U = eigen if eigen is not None else graphs.laplacian_eigen(a_line)
    X = R - R.mean(0)
    left, sv, _ = np.linalg.svd(X, full_matrices=False)
    r = int((sv > sv[0] * 1e-9).sum()) if sv[0] > 0 else 0
    if r == 0:
        return out_c, out_p
    pcs = left[:, :min(r, m - 1, K)]  # the top principal components: centred, unit norm
    for k in range(1, K_eff + 1):
        space = U[:, np.abs(lam - lam[k]) < tol]
        q = np.linalg.qr(space - space.mean(0))[0]
        out_c[k - 1] = float(np.linalg.norm(q.T @ pcs, axis=0).max())
    # subspaces of the (m-1)-dimensional centred space: two of dimension m - 1 are the whole space
    # (cosines 1 whatever R is), so the angles are taken in dimension min(K, m - 2, rank), lowered
    # to an eigengap (a cut inside an eigenspace would keep an arbitrary part of it)
    k_sub = min(K_eff, m - 2, pcs.shape[1])
    while k_sub >= 1 and abs(lam[k_sub] - lam[k_sub + 1]) < tol:
        k_sub -= 1
    if k_sub >= 1:
        uc = U[:, 1:k_sub + 1] - U[:, 1:k_sub + 1].mean(0)
        q_u = np.linalg.qr(uc)[0]
        out_p[:k_sub] = np.clip(np.linalg.svd(q_u.T @ pcs[:, :k_sub], compute_uv=False), 0, 1)
    return out_c, out_p


def endpoint_sums(edges: np.ndarray, d: int, rng: np.random.Generator) -> np.ndarray:
    """(m, d): each edge (u, v) represented by x_u + x_v, the nodes' vectors x ~ N(0, I_d) (R = B^T X)."""
    x = rng.standard_normal((int(edges.max()) + 1, d))
    return x[edges[:, 0]] + x[edges[:, 1]]


def edge_representations(model, ds: xr.Dataset, gids: list[int], n_orders: int, layer: int,
                         rng: np.random.Generator, chunk: int = 256) -> list[np.ndarray]:
    """Per graph, (S, m, d): the residual stream after ``layer`` at each edge's <e> token, averaged
    over ``n_orders`` random edge orders and orientations."""
    V, L = int(ds.attrs["task_node_tokens"]), seq_len(int(ds.attrs["task_n_max"]))
    seqs, owners = [], []
    for gi, g in enumerate(gids):
        adj, labels = graph(ds, g)
        m = int(adj.sum()) // 2
        for _ in range(n_orders):
            order = rng.permutation(m)
            seqs.append(encode(adj, labels, order, rng.random(m) < 0.5, 0, 1, None, V, L))
            owners.append((gi, order))
    x = torch.as_tensor(np.stack(seqs))
    reps = []
    with torch.no_grad():
        for i in range(0, len(x), chunk):
            reps.append(model.internals(x[i:i + chunk]).resid[layer - 1].cpu().numpy())
    T = max(r.shape[2] for r in reps)
    rep = np.concatenate([np.pad(r, ((0, 0), (0, 0), (0, T - r.shape[2]), (0, 0))) for r in reps], 1)  # (S, N, T, d)
    sums = [np.zeros((rep.shape[0], len(order), rep.shape[-1])) for _, order in owners[::n_orders]]
    for b, (gi, order) in enumerate(owners):
        pos = 3 + 3 * np.arange(len(order))  # the <e> after the j-th written edge
        sums[gi][:, order] += rep[:, b, pos]
    return [s / n_orders for s in sums]


def compute(cfg, name: str, params: Params, paths, threads: int = 1) -> tuple[xr.Dataset, dict]:
    torch.set_num_threads(max(1, threads))
    spec = cfg.run_spec(name)
    w = read_dataset(paths.weights(name), rule="train")
    ds = read_dataset(paths.dataset(spec.dataset), rule="dataset")
    test_graphs = np.flatnonzero(ds.graph_split.values == "test")
    gids = [int(g) for g in test_graphs if int(graph(ds, g)[0].sum()) // 2 >= params.min_edges][: params.max_graphs]
    if not gids:
        raise ValueError(f"analysis edge_correlation, run {name!r}: no test graph of dataset {spec.dataset!r} has "
                         f"{params.min_edges} edges or more (analyses.edge_correlation.min_edges)")
    S, K = w.sizes["seed"], params.components
    model = build_run_model(spec, S)
    if params.layer > model.L:
        raise ValueError(f"analyses.edge_correlation.layer={params.layer}, but run {name!r}'s model has {model.L} "
                         f"layers; allowed 1..{model.L}")
    corr = np.full((len(SOURCES), S, len(gids), K), np.nan)
    pcos = np.full_like(corr, np.nan)
    edge_lists, lines = zip(*(graphs.line_graph(graph(ds, g)[0]) for g in gids))
    eigens = [graphs.laplacian_eigen(a) for a in lines]  # once per graph, for every seed and source
    gauss, ends = np.random.default_rng([params.seed, 1]), np.random.default_rng([params.seed, 2])
    for si, (source, snap) in enumerate((("trained", -1), ("untrained", 0))):
        model.load_arrays(snapshot_arrays(w, snap))
        reps = edge_representations(model, ds, gids, params.n_orders, params.layer,
                                    np.random.default_rng([params.seed, 0]))
        for gi, (R, a, eig) in enumerate(zip(reps, lines, eigens)):
            for s in range(S):
                corr[si, s, gi], pcos[si, s, gi] = spectrum_match(R[s], a, K, eigen=eig)
                if source == "trained":  # the Gaussian null: vectors of the same shape
                    corr[2, s, gi], pcos[2, s, gi] = spectrum_match(gauss.standard_normal(R[s].shape), a, K, eigen=eig)
                    corr[3, s, gi], pcos[3, s, gi] = spectrum_match(
                        endpoint_sums(edge_lists[gi], R[s].shape[-1], ends), a, K, eigen=eig)
    n_nodes = np.array([int(ds.graph_n_nodes.values[g]) for g in gids])
    n_edges = np.array([len(a) for a in lines])
    out = xr.Dataset(
        {"max_corr": (("source", "seed", "graph", "component"), corr),
         "principal_cos": (("source", "seed", "graph", "component"), pcos),
         "n_nodes": ("graph", n_nodes), "n_edges": ("graph", n_edges)},
        coords={"source": list(SOURCES), "seed": w.seed.values, "graph": gids, "component": np.arange(1, K + 1)},
    )
    out["max_corr"].attrs["description"] = ("max over the representation's principal components of |corr| with the "
                                            "k-th nontrivial eigenvector of L(G)'s normalised Laplacian")
    out["principal_cos"].attrs["description"] = "cosines of the principal angles between span(u_1..u_K) and the top K PCs"
    snap0, snap1 = int(w.snapshot.values[0]), int(w.snapshot.values[-1])
    med = {s: float(np.nanmedian(corr[i, :, :, 0])) for i, s in enumerate(SOURCES)}
    return out, {"run": name, "layer": params.layer, "position": "<e> token after each edge",
                 "n_orders": params.n_orders, "trained_epoch": snap1, "untrained_epoch": snap0,
                 **{f"median_corr_u1_{s}": v for s, v in med.items()}}
