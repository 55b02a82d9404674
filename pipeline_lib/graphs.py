"""Small undirected graphs for the shortest-path experiments (Tian et al., "Spectral Journey",
arXiv 2502.08794): sampling connected G(n, p) graphs, distances, a Weisfeiler-Lehman class key
(to split datasets by graph), the line graph, its normalised Laplacian's spectral embeddings and
the Spectral Line Navigator (SLN). Adjacency matrices are (n, n) boolean numpy arrays; numpy only.
"""
from __future__ import annotations

import hashlib

import numpy as np

# the SLN's edge embeddings (see :func:`spectral_embedding`); "first_<k>" keeps k nontrivial eigenvectors
VARIANTS = ("unscaled", "first_2", "first_3", "first_4", "scaled", "commute")


def sample_connected(rng: np.random.Generator, n: int, p: float, max_tries: int = 10_000) -> np.ndarray:
    """A connected G(n, p) graph: every pair an edge with probability p, redrawn until connected."""
    iu = np.triu_indices(n, 1)
    for _ in range(max_tries):
        adj = np.zeros((n, n), dtype=bool)
        adj[iu] = rng.random(len(iu[0])) < p
        adj |= adj.T
        if is_connected(adj):
            return adj
    raise ValueError(f"no connected G(n={n}, p={p}) graph in {max_tries} draws; raise the edge probability")


def is_connected(adj: np.ndarray) -> bool:
    return bool((_bfs(adj, 0) >= 0).all())


def distances(adj: np.ndarray) -> np.ndarray:
    """All-pairs shortest-path lengths by breadth-first search; -1 between components."""
    return np.stack([_bfs(adj, s) for s in range(len(adj))])


def _bfs(adj: np.ndarray, s: int) -> np.ndarray:
    """Lengths of the shortest paths from s (-1: unreachable)."""
    dist = np.full(len(adj), -1, dtype=np.int64)
    dist[s] = 0
    frontier, d = [s], 0
    while frontier:
        d += 1
        nxt = list(dict.fromkeys(v for u in frontier for v in np.flatnonzero(adj[u]) if dist[v] < 0))
        dist[nxt] = d
        frontier = nxt
    return dist


def class_key(adj: np.ndarray) -> str:
    """Weisfeiler-Lehman colour-refinement key: isomorphic graphs get the same key (some
    non-isomorphic ones do too, e.g. two 3-regular graphs on 6 nodes, so splitting by this key keeps
    every isomorphism class on one side, and a little more)."""
    n = len(adj)
    colours = [str(int(adj[v].sum())) for v in range(n)]
    for _ in range(n):
        new = [colours[v] + "(" + ",".join(sorted(colours[u] for u in np.flatnonzero(adj[v]))) + ")" for v in range(n)]
        table = {c: str(i) for i, c in enumerate(sorted(set(new)))}
        refined = [table[c] for c in new]
        done = len(set(refined)) == len(set(colours))
        colours = [hashlib.sha1(c.encode()).hexdigest()[:12] for c in new]
        if done:
            break
    return f"n{n}m{int(adj.sum()) // 2}:" + hashlib.sha1("|".join(sorted(colours)).encode()).hexdigest()[:16]


def edge_list(adj: np.ndarray) -> np.ndarray:
    """The edges (u, v), u < v, in lexicographic order: (m, 2)."""
    u, v = np.nonzero(np.triu(adj, 1))
    return np.stack([u, v], 1).astype(np.int64)


def line_graph(adj: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(edges (m, 2), adjacency of the line graph L(G) (m, m)): two edges adjacent when they share a node."""
    e = edge_list(adj)
    shared = (e[:, None, :, None] == e[None, :, None, :]).any((2, 3))
    np.fill_diagonal(shared, False)
    return e, shared


def normalized_laplacian(a: np.ndarray) -> np.ndarray:
    """I - D^{-1/2} A D^{-1/2} (an isolated vertex gets 0 on the diagonal)."""
    deg = a.sum(1).astype(np.float64)
    inv = np.where(deg > 0, 1.0 / np.sqrt(np.maximum(deg, 1e-300)), 0.0)
    return np.diag((deg > 0).astype(np.float64)) - inv[:, None] * a * inv[None, :]


def laplacian_eigen(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues (ascending) and eigenvectors (columns) of the normalised Laplacian of adjacency a."""
    lam, U = np.linalg.eigh(normalized_laplacian(a.astype(np.float64)))
    return np.clip(lam, 0.0, None), U


def spectral_embedding(a: np.ndarray, variant: str) -> np.ndarray:
    """Embedding of each vertex of a connected graph (adjacency a, here a line graph) from the
    nontrivial eigenvectors u_1..u_{m-1} of its normalised Laplacian (eigenvalues lambda):

    * ``unscaled``  the rows of [u_1 .. u_{m-1}]
    * ``first_k``   the rows of [u_1 .. u_k] (as numpy's eigh orders them inside a degenerate eigenvalue)
    * ``scaled``    u_i lambda_i^{-1/2}
    * ``commute``   D^{-1/2} u_i lambda_i^{-1/2}: squared distances are commute times / vol(G)
    """
    lam, U = laplacian_eigen(a)
    lam, U = lam[1:], U[:, 1:]
    if variant == "unscaled":
        return U
    if variant.startswith("first_"):
        return U[:, : int(variant.split("_")[1])]
    if variant == "scaled":
        return U / np.sqrt(lam)
    if variant == "commute":
        deg = a.sum(1).astype(np.float64)
        return U / np.sqrt(lam) / np.sqrt(deg)[:, None]
    raise ValueError(f"unknown SLN embedding {variant!r}; allowed: {', '.join(VARIANTS)}")


def sln_path(adj: np.ndarray, s: int, t: int, variant: str, embedding: tuple | None = None) -> list[int]:
    """The Spectral Line Navigator's walk from s towards t: from node i, take the edge (i, j) whose
    embedding is nearest to that of an edge (k, t) at the target; stop at t or after n steps (a
    failure). Ties go to the lowest j. ``embedding`` (edges, vectors) may be passed to reuse it."""
    if embedding is None:
        edges, a_line = line_graph(adj)
        embedding = edges, spectral_embedding(a_line, variant)
    edges, vec = embedding
    index = {(int(u), int(v)): i for i, (u, v) in enumerate(edges)}
    eid = lambda u, v: index[(min(u, v), max(u, v))]  # noqa: E731
    at_t = vec[[eid(k, t) for k in np.flatnonzero(adj[t])]]
    path = [s]
    while path[-1] != t and len(path) <= len(adj):
        i = path[-1]
        nbrs = np.flatnonzero(adj[i])
        d = [np.min(np.linalg.norm(at_t - vec[eid(i, j)], axis=1)) for j in nbrs]
        path.append(int(nbrs[int(np.argmin(d))]))
    return path


def is_shortest_walk(adj: np.ndarray, path, s: int, t: int, dist: int) -> bool:
    """Whether ``path`` (node indices) is a walk of G from s to t with exactly ``dist`` edges (one of
    possibly several shortest paths)."""
    path = [int(v) for v in path]
    if len(path) != dist + 1 or path[0] != s or path[-1] != t:
        return False
    n = len(adj)
    return all(0 <= u < n and 0 <= v < n and adj[u, v] for u, v in zip(path, path[1:]))


def random_shortest_path(rng: np.random.Generator, adj: np.ndarray, dist: np.ndarray, s: int, t: int) -> list[int]:
    """A shortest path from s to t, each next node drawn uniformly among the neighbours one step closer."""
    path = [s]
    while path[-1] != t:
        i = path[-1]
        closer = [j for j in np.flatnonzero(adj[i]) if dist[j, t] == dist[i, t] - 1]
        path.append(int(closer[rng.integers(len(closer))]))
    return path
