"""Analysis ``param_embed``: joint 2-D t-SNE and PCA of the weight snapshots of several runs, per
seed (Fig. 7 of 'Easing Optimization Paths')."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr
from sklearn.decomposition import PCA
from sklearn.manifold import TSNE

from ..plumbing.store import read_dataset

NAME = "param_embed"
CONFIG = """
description: "Named joint t-SNE/PCA embeddings of the weight snapshots of several runs."
required: [runs]
properties:
  runs: {description: "Runs embedded together (a run with init_from brings its ancestors' snapshots).", type: array, items: {type: string, x-ref: run, x-reads: [weights]}, minItems: 1}
  perplexity: {description: "t-SNE perplexity (capped at (n-1)/3 for n snapshots).", type: number, exclusiveMinimum: 0, default: 30}
"""
RESOURCES = {"runtime": 30, "mem_mb": 4000}


@dataclass(frozen=True)
class Params:
    runs: tuple[str, ...]
    perplexity: float = 30.0


def arm_snapshots(cfg, run: str, paths, seeds: list[int]) -> tuple[np.ndarray, list, list]:
    """Flattened snapshots (seed, K, P) of a run preceded by its ancestors', each epoch once."""
    vecs, epochs, phases = [], [], []
    for r in cfg.lineage(run):
        w = read_dataset(paths.weights(r), rule="train").sel(seed=seeds)
        keep = [i for i, e in enumerate(w.snapshot.values) if not epochs or e > epochs[-1]]
        flat = np.concatenate([w[n].values.reshape(w.sizes["snapshot"], len(seeds), -1)
                               for n in sorted(w.data_vars) if "snapshot" in w[n].dims], axis=2)
        vecs.append(flat[keep].transpose(1, 0, 2))
        epochs += [int(e) for e in w.snapshot.values[keep]]
        phases += [r] * len(keep)
    return np.concatenate(vecs, axis=1), epochs, phases


def compute(cfg, name: str, params: Params, paths, threads: int = 1) -> tuple[xr.Dataset, dict]:
    seeds = sorted(set.intersection(*(set(cfg.runs[r].seeds) for r in params.runs)))
    parts = [arm_snapshots(cfg, run, paths, seeds) for run in params.runs]
    vectors = np.concatenate([v for v, _, _ in parts], axis=1)  # (seed, n, P)
    arm = sum(([run] * len(e) for run, (_, e, _) in zip(params.runs, parts)), [])
    epoch = sum((e for _, e, _ in parts), [])
    phase = sum((ph for _, _, ph in parts), [])
    tsne = np.zeros((len(seeds), len(arm), 2), np.float32)
    pca = np.zeros_like(tsne)
    for i, seed in enumerate(seeds):
        tsne[i], pca[i] = embed_points(vectors[i], params.perplexity, seed=int(seed))
    out = xr.Dataset(
        {"tsne": (("seed", "snapshot", "component"), tsne), "pca": (("seed", "snapshot", "component"), pca)},
        coords={"seed": seeds, "snapshot": np.arange(len(arm)), "component": [0, 1],
                "arm": ("snapshot", np.array(arm, dtype=object)), "epoch": ("snapshot", epoch),
                "phase": ("snapshot", np.array(phase, dtype=object))},
    )
    return out, {}


def embed_points(vectors: np.ndarray, perplexity: float = 30.0, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(t-SNE, PCA) coordinates, each (n, 2), of n parameter vectors embedded together.

    t-SNE runs on the top principal components (at most 50) as is customary; its perplexity is capped
    at (n - 1) / 3 so that few snapshots still embed.
    """
    n = len(vectors)
    X = vectors - vectors.mean(0)
    pca2 = PCA(n_components=2, random_state=seed).fit_transform(X)
    reduced = PCA(n_components=min(50, n, X.shape[1]), random_state=seed).fit_transform(X)
    perp = float(min(perplexity, max(1.0, (n - 1) / 3)))
    tsne = TSNE(n_components=2, perplexity=perp, init="pca", random_state=seed).fit_transform(reduced)
    return tsne, pca2
