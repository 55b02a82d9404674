"""Stage `param_embed`: joint 2-D t-SNE and PCA of the weight snapshots of several runs, per seed."""
from __future__ import annotations

import numpy as np
import xarray as xr

from ..analysis.param_embed import embed_points
from ..config import Config
from ..store import code_hash, provenance, read_dataset, write_dataset


def arm_snapshots(cfg: Config, run: str, weights: dict[str, str], seeds: list[int]) -> tuple[np.ndarray, list, list]:
    """Flattened snapshots (seed, K, P) of a run preceded by its ancestors', each epoch once."""
    vecs, epochs, phases = [], [], []
    for r in cfg.lineage(run):
        w = read_dataset(weights[r], rule="train").sel(seed=seeds)
        keep = [i for i, e in enumerate(w.snapshot.values) if not epochs or e > epochs[-1]]
        flat = np.concatenate([w[n].values.reshape(w.sizes["snapshot"], len(seeds), -1)
                               for n in sorted(w.data_vars) if "snapshot" in w[n].dims], axis=2)
        vecs.append(flat[keep].transpose(1, 0, 2))
        epochs += [int(e) for e in w.snapshot.values[keep]]
        phases += [r] * len(keep)
    return np.concatenate(vecs, axis=1), epochs, phases


def param_embed_stage(cfg: Config, name: str, weights: dict[str, str], out_path: str) -> xr.Dataset:
    pe = cfg.param_embed[name]
    seeds = sorted(set.intersection(*(set(cfg.runs[r].seeds) for r in pe.runs)))
    parts = [arm_snapshots(cfg, run, weights, seeds) for run in pe.runs]
    vectors = np.concatenate([v for v, _, _ in parts], axis=1)  # (seed, n, P)
    arm = sum(([run] * len(e) for run, (_, e, _) in zip(pe.runs, parts)), [])
    epoch = sum((e for _, e, _ in parts), [])
    phase = sum((ph for _, _, ph in parts), [])
    tsne = np.zeros((len(seeds), len(arm), 2), np.float32)
    pca = np.zeros_like(tsne)
    for i, seed in enumerate(seeds):
        tsne[i], pca[i] = embed_points(vectors[i], pe.perplexity, seed=int(seed))
    out = xr.Dataset(
        {"tsne": (("seed", "snapshot", "component"), tsne), "pca": (("seed", "snapshot", "component"), pca)},
        coords={"seed": seeds, "snapshot": np.arange(len(arm)), "component": [0, 1],
                "arm": ("snapshot", np.array(arm, dtype=object)), "epoch": ("snapshot", epoch),
                "phase": ("snapshot", np.array(phase, dtype=object))},
    )
    used = sorted({r for run in pe.runs for r in cfg.lineage(run)})
    attrs = provenance(cfg.analysis_slice("param_embed", name), [weights[r] for r in used], device="cpu",
                       code=code_hash(__name__))
    write_dataset(out, out_path, attrs)
    return out
