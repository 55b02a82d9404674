"""Analysis ``path_accuracy``: greedy decoding of shortest paths by a ``decoder`` run (Tian et al.,
"Spectral Journey").

For each selected weight snapshot and seed, every evaluated sequence's prompt (``x[:prompt_length]``:
edges, query, ``<p>``) is decoded greedily for n_max tokens. The decoded path is the tokens up to the
first occurrence of the target's token; it is *valid* when it is a walk of the graph from s to t
with exactly d_G(s, t) edges (:func:`tasks.shortest_path.decoded_valid`): any shortest path counts,
not only the dataset's (shortest paths are not unique), and a longer walk, a missing edge or an
unknown token does not. Also recorded: exact match with the dataset's path, and accuracy per path
length and per graph size. Test sequences are those of the held-out graphs (held-out graph classes
under ``split_by: class``); a sample of training sequences is decoded at the final snapshot for the
generalisation gap. Runs on the run's device (``device: auto``: CUDA when present).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import xarray as xr

from ..models import build_run_model
from ..plumbing.device import resolve_device
from ..plumbing.store import read_dataset
from ..selection import snapshot_arrays
from ..stats import log_spaced_indices
from ..tasks.shortest_path import decoded_valid, graph

NAME = "path_accuracy"
PER_RUN = True
USES = ["model"]
CONFIG = """
description: "Path accuracy of greedy decoding (valid shortest walk from s to t), per snapshot, length and graph size."
properties:
  runs:
    description: "Runs of a decoder model on a shortest_path dataset."
    type: array
    items: {type: string, x-ref: run, x-reads: [weights, dataset], x-requires: {properties: {model: {properties: {kind: {const: decoder}}}}}, x-requires-message: "is not a run of a decoder model"}
    default: []
  max_test: {description: "Test sequences decoded (the first ones of the split).", type: integer, minimum: 1, default: 1000}
  max_train: {description: "Training sequences decoded at the final snapshot.", type: integer, minimum: 1, default: 500}
  max_snapshots: {description: "Weight snapshots decoded (log-spaced, the first and last always).", type: integer, minimum: 1, default: 12}
"""
RESOURCES = {"runtime": 60, "mem_mb": 4000}


@dataclass(frozen=True)
class Params:
    runs: tuple[str, ...] = ()
    max_test: int = 1000
    max_train: int = 500
    max_snapshots: int = 12


def decode_valid(model, ds: xr.Dataset, rows: np.ndarray, n_max: int, device) -> tuple[np.ndarray, np.ndarray]:
    """(valid, exact) (S, len(rows)) for the dataset's sequences ``rows`` under the model's weights."""
    x = ds.x.values[rows]
    start = ds.prompt_length.values[rows]
    prompts = x.copy()
    pad = int(model.pad)
    prompts[np.arange(x.shape[1])[None] >= start[:, None]] = pad
    tokens = model.greedy(torch.as_tensor(prompts, device=device), torch.as_tensor(start, device=device),
                          n_max).cpu().numpy()
    valid = np.zeros(tokens.shape[:2], dtype=bool)
    exact = np.zeros(tokens.shape[:2], dtype=bool)
    for b, r in enumerate(rows):
        adj, labels = graph(ds, int(ds.graph.values[r]))
        s, t, dist = (int(ds[k].values[r]) for k in ("source", "target", "distance"))
        truth = x[b, start[b]:start[b] + dist + 1]
        for i in range(tokens.shape[0]):
            valid[i, b] = decoded_valid(tokens[i, b], adj, labels, s, t, dist)
            exact[i, b] = np.array_equal(tokens[i, b, :dist + 1], truth)
    return valid, exact


def compute(cfg, name: str, params: Params, paths, threads: int = 1) -> tuple[xr.Dataset, dict]:
    torch.set_num_threads(max(1, threads))
    spec = cfg.run_spec(name)
    w = read_dataset(paths.weights(name), rule="train")
    ds = read_dataset(paths.dataset(spec.dataset), rule="dataset")
    n_max = int(ds.attrs["task_n_max"])
    test = np.flatnonzero(ds.split.values == "test")[: params.max_test]
    train = np.flatnonzero(ds.split.values == "train")[: params.max_train]
    S, K = w.sizes["seed"], w.sizes["snapshot"]
    snaps = log_spaced_indices(K, params.max_snapshots)
    device = resolve_device(spec.device)
    model = build_run_model(spec, S).to(device)
    acc = np.full((S, len(snaps)), np.nan)
    for j, k in enumerate(snaps):
        model.load_arrays(snapshot_arrays(w, k))
        valid, exact = decode_valid(model, ds, test, n_max, device)
        acc[:, j] = valid.mean(1)
    train_valid, _ = decode_valid(model, ds, train, n_max, device)  # the final snapshot's weights
    dist, size = ds.distance.values[test], ds.n_nodes.values[test]
    lengths, sizes = np.unique(dist), np.unique(size)
    by_len = np.stack([valid[:, dist == v].mean(1) for v in lengths], 1)
    by_size = np.stack([valid[:, size == v].mean(1) for v in sizes], 1)
    out = xr.Dataset(
        {"path_acc": (("seed", "snapshot"), acc),
         "valid": (("seed", "sample"), valid), "exact": (("seed", "sample"), exact),
         "acc_by_length": (("seed", "length"), by_len), "acc_by_size": (("seed", "n_nodes"), by_size),
         "n_by_length": ("length", np.array([(dist == v).sum() for v in lengths])),
         "n_by_size": ("n_nodes", np.array([(size == v).sum() for v in sizes])),
         "train_path_acc": ("seed", train_valid.mean(1)),
         "distance": ("sample", dist), "sample_n_nodes": ("sample", size)},
        coords={"seed": w.seed.values, "snapshot": w.snapshot.values[snaps], "sample": test, "length": lengths,
                "n_nodes": sizes},
    )
    out["path_acc"].attrs["description"] = "fraction of test sequences whose greedy decoding is a shortest s-t walk"
    out["exact"].attrs["description"] = "decoded path equals the dataset's (one of possibly several shortest paths)"
    out["train_path_acc"].attrs["description"] = f"path accuracy on the first {len(train)} training sequences, final weights"
    out["snapshot"].attrs["description"] = "global epoch of the weight snapshot"
    return out, {"run": name, "n_test": len(test), "n_train_decoded": len(train), "n_max": n_max,
                 "final_path_acc_median": float(np.median(acc[:, -1]))}
