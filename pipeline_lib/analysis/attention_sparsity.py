"""Analysis ``attention_sparsity``: normalised entropy of every softmax attention over training.

Tian's "attention becomes sparse over training", measured on any run: at each of the run's weight
snapshots the run's model is rebuilt and applied to ``n_inputs`` fixed test inputs; every attention
distribution its ``internals`` return (per layer, head and query; a model with one query per input,
such as the circuit model, has one of each) gets its entropy divided by the log of the number of
keys: 1 for uniform attention, 0 for one-hot. The mean over inputs is stored per
(seed, snapshot, layer, head, query), and its mean over layers, heads and queries as ``mean_entropy``.
Under Heat Treatment the temperature of the snapshot's epoch is used (the trajectory records it).
Nothing is retrained: it reads what runs already record.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import xarray as xr

from ..models import build_run_model, run_inputs
from ..plumbing.store import read_dataset
from ..selection import dataset_split, seed_coords, snapshot_arrays

NAME = "attention_sparsity"
PER_RUN = True
CONFIG = """
description: "Normalised entropy of every attention of the listed runs at their weight snapshots."
properties:
  runs: {description: "Runs to measure (any model whose internals return attention).", type: array, items: {type: string, x-ref: run, x-reads: [weights, dataset, trajectory], x-requires: {properties: {records: {contains: {const: attention}}}}, x-requires-message: "is a run of a model without attention (its RECORDS lack 'attention')"}, default: []}
  n_inputs: {description: "Fixed test inputs the attention is averaged over.", type: integer, minimum: 1, default: 256}
"""
USES = ["model"]
RESOURCES = {"runtime": 20, "mem_mb": 4000}


@dataclass(frozen=True)
class Params:
    runs: tuple[str, ...] = ()
    n_inputs: int = 256


def normalised_entropy(att: torch.Tensor) -> torch.Tensor:
    """Entropy over the last axis divided by log(number of keys): 1 uniform, 0 one-hot."""
    n = att.shape[-1]
    ent = -torch.where(att > 0, att * torch.log(att), torch.zeros_like(att)).sum(-1)
    return ent / np.log(n) if n > 1 else torch.zeros_like(ent)


def attention_layers(attention) -> list[torch.Tensor]:
    """A model's ``internals(x).attention`` as per-layer (S, B, heads, queries, keys) tensors: a list
    of those (transformer) or one (S, B, keys) tensor (one query, one head)."""
    if isinstance(attention, torch.Tensor):
        return [attention[:, :, None, None, :]]
    return list(attention)


def snapshot_layers(cfg, name: str, paths, n_inputs: int):
    """The run's spec, its weight snapshots ``w``, the inputs' count and an iterator over the snapshots yielding
    each one's :func:`attention_layers` on the first ``n_inputs`` test inputs: the run's model rebuilt at the
    snapshot, under Heat Treatment at the temperature the trajectory records for its epoch."""
    spec = cfg.run_spec(name)
    w = read_dataset(paths.weights(name), rule="train")
    temperature = read_dataset(paths.trajectory(name), rule="train").temperature
    data = read_dataset(paths.dataset(spec.dataset), rule="dataset")
    x = run_inputs(spec, dataset_split(data, "test")[0][:n_inputs])
    model = build_run_model(spec, w.sizes["seed"])
    heat = spec.attention.schedule == "heat_treatment"

    def layers():
        for k, epoch in enumerate(w.snapshot.values):
            model.load_arrays(snapshot_arrays(w, k))
            model.beta = 1.0 / float(temperature.sel(epoch=epoch)) if heat else None
            yield attention_layers(model.internals(x).attention)

    return spec, w, len(x), layers()


@torch.no_grad()
def compute(cfg, name: str, params: Params, paths, threads: int = 1) -> tuple[xr.Dataset, dict]:
    torch.set_num_threads(max(1, threads))
    spec, w, n_x, snapshots = snapshot_layers(cfg, name, paths, params.n_inputs)
    per_snap = []
    for layers in snapshots:
        per_snap.append(torch.stack([normalised_entropy(a).mean(1) for a in layers], 1).numpy())  # (S, L, H, Q)
    ent = np.stack(per_snap, 1)  # (S, K, L, H, Q)
    out = xr.Dataset(
        {"entropy": (("seed", "snapshot", "layer", "head", "query"), ent.astype(np.float32)),
         "mean_entropy": (("seed", "snapshot"), ent.mean((2, 3, 4)).astype(np.float32))},
        coords={"seed": w.seed.values, "snapshot": w.snapshot.values, "layer": np.arange(ent.shape[2]),
                "head": np.arange(ent.shape[3]), "query": np.arange(ent.shape[4]), **seed_coords(w)},
    )
    out["entropy"].attrs["description"] = ("entropy of the attention distribution / log(number of keys), mean over "
                                           f"{n_x} test inputs: 1 uniform, 0 one-hot")
    out["mean_entropy"].attrs["description"] = "entropy averaged over layers, heads and queries"
    return out, {"run": name, "model_kind": spec.model_kind, "n_inputs": int(n_x)}
