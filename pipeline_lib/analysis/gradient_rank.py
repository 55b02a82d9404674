"""Analysis ``gradient_rank``: how low-rank a run's weight gradients are over training (the talk's
"the weight gradient can be even more low-rank", GaLore's premise).

At each weight snapshot (at most ``max_snapshots``, evenly spread, the last always) the gradient G
of the full training set's loss (the model's own loss: cross-entropy, or the quadratic MLP's
centred MSE) is recomputed per seed, and for every weight matrix (GaLore's ``is_matrix``: a stack of
per-layer or per-head matrices is averaged over the stack) its stable rank ||G||_F^2 / ||G||_2^2 is
recorded. For a full-batch run this is the gradient of the loss its optimizer saw after that epoch
(torch's Adam then adds a coupled weight decay wd * p, which is not part of G here); for a mini-batch
run it is the gradient of the whole training set. Models with an attention
temperature use tau (a Heat Treatment run's schedule is not replayed). The run's optimizer and its
measured state size (recorded by the training stage) are carried into the attrs.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import xarray as xr

from ..losses import loss_fn
from ..models import build_run_model, param_dims, run_inputs
from ..optimizers.galore_adam import is_matrix
from ..plumbing.store import read_dataset
from ..selection import dataset_split, snapshot_arrays

NAME = "gradient_rank"
PER_RUN = True
CONFIG = """
description: "Stable rank ||G||_F^2/||G||_2^2 of each weight matrix's full-batch gradient over training."
properties:
  runs:
    description: "Runs to measure (any model; epoch-engine runs)."
    type: array
    items: {type: string, x-ref: run, x-reads: [weights, dataset]}
    default: []
  max_snapshots: {description: "At most this many weight snapshots, evenly spread (the last always).", type: integer, minimum: 1, default: 40}
"""
USES = ["model"]
RESOURCES = {"runtime": 20, "mem_mb": 6000}


@dataclass(frozen=True)
class Params:
    runs: tuple[str, ...] = ()
    max_snapshots: int = 40


def stable_rank(G: torch.Tensor) -> torch.Tensor:
    """||G||_F^2 / ||G||_2^2 over the last two dims (NaN for a zero matrix)."""
    fro2 = G.pow(2).sum((-2, -1))
    spec = torch.linalg.matrix_norm(G, ord=2)
    return fro2 / spec.pow(2)


def picked(K: int, most: int) -> np.ndarray:
    """Indices of at most ``most`` of K snapshots, evenly spread, first and last included."""
    return np.unique(np.round(np.linspace(0, K - 1, min(K, most))).astype(int))


def compute(cfg, name: str, params: Params, paths, threads: int = 1) -> tuple[xr.Dataset, dict]:
    torch.set_num_threads(max(1, threads))
    spec = cfg.run_spec(name)
    w = read_dataset(paths.weights(name), rule="train")
    x_tr, y_tr = dataset_split(read_dataset(paths.dataset(spec.dataset), rule="dataset"), "train")
    x, y = run_inputs(spec, x_tr), torch.as_tensor(y_tr, dtype=torch.long)
    dims = param_dims(spec)
    model = build_run_model(spec)
    names = [n for n in model.param_names() if is_matrix(tuple(dims[n]))]
    idx = picked(w.sizes["snapshot"], params.max_snapshots)
    S = w.sizes["seed"]
    srank, gnorm = np.full((S, len(idx), len(names)), np.nan), np.full((S, len(idx), len(names)), np.nan)
    loss_acc = loss_fn(model)
    for t, i in enumerate(idx):
        model.load_arrays(snapshot_arrays(w, int(i)))
        model.zero_grad(set_to_none=True)
        loss, _ = loss_acc(model(x), y)
        torch.nan_to_num(loss).sum().backward()
        for p, n in enumerate(names):
            G = getattr(model, n).grad.double()
            sr = stable_rank(G).reshape(S, -1)
            srank[:, t, p] = sr.mean(1).numpy()
            gnorm[:, t, p] = G.pow(2).reshape(S, -1).sum(1).sqrt().numpy()
    out = xr.Dataset({"stable_rank": (("seed", "epoch", "param"), srank),
                      "grad_norm": (("seed", "epoch", "param"), gnorm)},
                     coords={"seed": w.seed.values, "epoch": w.snapshot.values[idx], "param": names,
                             "max_rank": ("param", [int(min(getattr(model, n).shape[-2:])) for n in names])})
    out["stable_rank"].attrs["description"] = ("||G||_F^2/||G||_2^2 of the full training set's loss gradient after "
                                               "`epoch` epochs (mean over a stack of per-layer/head matrices)")
    out["grad_norm"].attrs["description"] = "||G||_F (all of the parameter's matrices)"
    out["max_rank"].attrs["description"] = "min(m, n) of each matrix: the largest stable rank possible"
    attrs = {"run": name, "optimizer": spec.run.optimizer.name}
    for k in ("optimizer_state_elements", "optimizer_state_bytes"):
        attrs[k] = int(w.attrs.get(k, -1))
    return out, attrs
