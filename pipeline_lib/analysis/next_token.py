"""Analysis ``next_token``: the probability a run's model gives each sequence's own label, at every weight snapshot.

For every sample of the run's dataset (train and test) and every seed: p(y | x) = softmax(logits)[y], the model's
next-token probability of the label, at each snapshot of the run's weights (``record_weights``). Every
coordinate the dataset gives its samples (``split`` and, for task ``relations``, ``statement``, ``item`` and
``held_out``) is kept, so a figure can read any group of sequences at any step: the talk's Theorems 3 and 4
bound these probabilities over time.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import xarray as xr

from ..models import build_run_model, run_inputs
from ..plumbing.store import read_dataset
from ..selection import seed_coords, snapshot_arrays

NAME = "next_token"
PER_RUN = True
CONFIG = """
description: "The model's probability of each sequence's label, per seed, weight snapshot and sample (train and test)."
properties:
  runs:
    description: "Runs whose weights are recorded at the steps to read (record_weights), on a dataset with one training set."
    type: array
    items: {type: string, x-ref: run, x-reads: [weights, dataset]}
    default: []
"""
USES = ["model"]
RESOURCES = {"runtime": 10, "mem_mb": 4000}


@dataclass(frozen=True)
class Params:
    runs: tuple[str, ...] = ()


@torch.no_grad()
def label_probability(model, snapshots: xr.Dataset, x: torch.Tensor, y: np.ndarray) -> np.ndarray:
    """(seed, snapshot, sample) p(y | x) of ``model`` loaded with each snapshot of ``snapshots`` in turn."""
    out = np.zeros((model.S, snapshots.sizes["snapshot"], len(y)))
    label = torch.as_tensor(y, dtype=torch.long)
    for i in range(snapshots.sizes["snapshot"]):
        model.load_arrays(snapshot_arrays(snapshots, i))
        log_p = torch.log_softmax(model(x).double(), dim=-1)  # (S, B, V)
        out[:, i] = log_p.gather(-1, label.expand(model.S, -1)[..., None])[..., 0].exp().cpu().numpy()
    return out


def compute(cfg, name: str, params: Params, paths, threads: int = 1) -> tuple[xr.Dataset, dict]:
    torch.set_num_threads(max(1, threads))
    spec = cfg.run_spec(name)
    if "draw" in (data := read_dataset(paths.dataset(spec.dataset), rule="dataset")).coords:
        raise ValueError(f"analyses.next_token.runs: run {name!r} trains on one draw of its dataset per seed "
                         "(config key 'draws'); this analysis reads datasets with one training set")
    w = read_dataset(paths.weights(name), rule="train")
    model = build_run_model(spec, w.sizes["seed"])
    if hasattr(model, "loss_acc") or data.y.ndim != 1:  # its own loss: a sequence of labels (decoder) or an MSE
        raise ValueError(f"analyses.next_token.runs: run {name!r}'s model ({type(model).__name__}) trains on its own "
                         "loss, not on one label per sequence under the cross-entropy, so its outputs are no "
                         "next-token probabilities; allowed: runs of models with a softmax output (e.g. scan_snap, "
                         "circuit, transformer)")
    p = label_probability(model, w, run_inputs(spec, data.x.values), data.y.values)
    sample = {k: v for k, v in data.coords.items() if v.dims == ("sample",)}
    out = xr.Dataset({"p_label": (("seed", "step", "sample"), p)},
                     coords={"seed": w.seed.values, "step": w.snapshot.values, **sample, **seed_coords(w)})
    out["p_label"].attrs["description"] = "the model's next-token probability of the sample's label, p(y | x)"
    return out, {"run": name, "snapshots": int(w.sizes["snapshot"]), "samples": int(data.sizes["sample"])}
