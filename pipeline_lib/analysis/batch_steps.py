"""Analysis ``batch_steps``: what one mini-batch's gradient step does early in training ('Easing Optimization
Paths', Sec. II.a: "some reinforce the 3 tokens among the 8 ones ... This is because some specific memorization
circuits could be taken to memorize different batches").

At each of the run's weight snapshots up to epoch ``until_epoch`` the run's model is rebuilt in float64 and the
training set is cut into consecutive batches of ``batch_size`` (by default the run's own: its batches are a shuffle
of the same size).
For each batch, the gradient g_b of its mean loss is taken (every seed at once), and stored:

* the first-order change of the batch's own attention (mean over its inputs) per position along minus g_b / |g_b|
  (:func:`.single_step.gradient_step_change`): whether the step raises the attention on a position;
* the cosine between g_b and the gradient of the mean loss over the first ``n_test`` held-out inputs: how far the
  step that fits its batch also fits unseen data (about 0: a step specific to its batch);
* per snapshot, the held-out inputs' own attention change along their gradient step (where the mean step goes).

Models with one attention distribution per input (the circuit model's single query); under Heat Treatment the
temperature of the snapshot's epoch is used. Nothing is retrained.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import xarray as xr

from ..models import run_inputs
from ..selection import dataset_split, seed_coords
from .single_step import gradient_step_change, snapshot_loader

NAME = "batch_steps"
PER_RUN = True
CONFIG = """
description: "Per mini-batch of the training set, early in training: its gradient step's change of the batch's own attention and its gradient's cosine with the held-out loss's."
properties:
  runs: {description: "Runs to measure (circuit models: one attention distribution per input; a single training set).", type: array, items: {type: string, x-ref: run, x-reads: [weights, dataset, trajectory], x-requires: {properties: {model: {properties: {kind: {const: circuit}}}}}, x-requires-message: "is not a run of a circuit model (one attention distribution per input)"}, default: []}
  batch_size: {description: "Training inputs per batch (consecutive rows of the training set; the remainder is left out); null: the run's own batch size (the whole set for a full-batch run).", type: [integer, "null"], minimum: 1, default: null}
  until_epoch: {description: "The weight snapshots at or before this epoch are measured.", type: integer, minimum: 0, default: 4}
  n_test: {description: "Held-out inputs (the first of the test split) whose mean loss's gradient each batch's is compared with.", type: integer, minimum: 1, default: 1024}
  step: {description: "Length of the step along minus the unit gradient (small: the change is then the first-order one).", type: number, exclusiveMinimum: 0, default: 1.0e-6}
"""
USES = ["model"]
RESOURCES = {"runtime": 20, "mem_mb": 2000}


@dataclass(frozen=True)
class Params:
    runs: tuple[str, ...] = ()
    batch_size: int | None = None
    until_epoch: int = 4
    n_test: int = 1024
    step: float = 1e-6


def compute(cfg, name: str, params: Params, paths, threads: int = 1) -> tuple[xr.Dataset, dict]:
    torch.set_num_threads(max(1, threads))
    spec, w, data, model, load = snapshot_loader(cfg, name, paths)
    keep = np.flatnonzero(w.snapshot.values <= params.until_epoch)
    if not keep.size:
        raise ValueError(f"analyses.batch_steps.until_epoch: run '{name}' recorded no weights at or before epoch "
                         f"{params.until_epoch} (its first snapshot is epoch {int(w.snapshot[0])})")
    x_tr, y_tr = dataset_split(data, "train")
    x_te, y_te = dataset_split(data, "test")
    size = params.batch_size or (len(x_tr) if spec.run.batch_size == "full" else int(spec.run.batch_size))
    n_batches = len(x_tr) // size
    if not n_batches:
        raise ValueError(f"analyses.batch_steps.batch_size: {size} exceeds the {len(x_tr)} training inputs of run "
                         f"'{name}'")
    x_train, y_train = run_inputs(spec, x_tr), torch.as_tensor(y_tr)
    x_test, y_test = run_inputs(spec, x_te[:params.n_test]), torch.as_tensor(y_te[:params.n_test])
    change = np.zeros((w.sizes["seed"], len(keep), n_batches, x_train.shape[1]))
    cosine = np.zeros(change.shape[:3])
    held_out = np.zeros((change.shape[0], len(keep), change.shape[3]))
    for j, k in enumerate(keep):
        load(int(k))
        d_test, test_norm, test_grad = gradient_step_change(model, x_test, y_test, params.step)
        held_out[:, j] = d_test.mean(1).numpy()
        for b in range(n_batches):
            rows = slice(b * size, (b + 1) * size)
            d, norm, grad = gradient_step_change(model, x_train[rows], y_train[rows], params.step)
            change[:, j, b] = d.mean(1).numpy()
            cosine[:, j, b] = ((grad * test_grad).sum(1) / (norm * test_norm).clamp_min(1e-300)).numpy()
    out = xr.Dataset(
        {"attention_change": (("seed", "snapshot", "batch", "position"), change),
         "test_cosine": (("seed", "snapshot", "batch"), cosine),
         "test_attention_change": (("seed", "snapshot", "position"), held_out)},
        coords={"seed": w.seed.values, "snapshot": w.snapshot.values[keep], "batch": np.arange(n_batches),
                "position": np.arange(x_train.shape[1]), **seed_coords(w)})
    out["attention_change"].attrs["description"] = (
        "derivative of the batch's own attention (mean over its inputs), per position, along the unit direction of "
        f"minus the gradient of its mean loss (a step of {params.step:g} in float64, divided by it)")
    out["test_cosine"].attrs["description"] = (
        f"cosine between the batch's loss gradient and that of the mean loss over {len(x_test)} held-out inputs")
    out.attrs["batch_size"] = size
    out["test_attention_change"].attrs["description"] = (
        "the same derivative as attention_change for the held-out inputs along their own mean loss's gradient step")
    return out, {"run": name, "model_kind": spec.model_kind, "batch_size": size,
                 "n_batches": int(n_batches), "n_test": int(len(x_test)), "step": params.step}
