"""Analysis ``llc``: the local learning coefficient of a run over training (developmental interpretability:
Lau et al., "The Local Learning Coefficient"; Hoogland et al., "The developmental landscape of in-context
learning"), for any run of any model kind.

At each weight snapshot (at most ``max_snapshots``, evenly spread, first and last included) every seed's
weights w* are the centre of ``chains`` SGLD chains (seed-batched: the model is built with seeds x chains
slots), and ``lambda_hat = n beta (E[L_n(w)] - L_n(w*))`` with n the training set's size and beta = 1/log n
unless set (``pipeline_lib.llc``). L_n is the model's own training loss (cross-entropy, or its own) over the
training set; a run of an online task (fresh samples every step) has none, and its dataset's fixed samples
stand in (attrs ``loss_set``). A
seed whose chain diverges (non-finite loss or weights: the step size is too large) has NaN there and
``diverged`` set. The chains' loss traces are kept (``trace``) so that convergence can be judged.
Models with an attention temperature use tau (a Heat Treatment run's schedule is not replayed).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch
import xarray as xr

from ..llc import SGLD, per_seed, sample
from ..losses import loss_fn
from ..models import build_run_model, run_inputs
from ..plumbing.device import resolve_device
from ..plumbing.store import read_dataset
from ..selection import dataset_split, snapshot_arrays
from .gradient_rank import picked

NAME = "llc"
PER_RUN = True
CONFIG = """
description: "Local learning coefficient (SGLD around each weight snapshot) over training."
properties:
  runs:
    description: "Runs to measure (any model; epoch-engine runs)."
    type: array
    items: {type: string, x-ref: run, x-reads: [weights, dataset]}
    default: []
  max_snapshots: {description: "At most this many weight snapshots, evenly spread (first and last always).", type: integer, minimum: 1, default: 6}
  step_size: {description: "SGLD step size epsilon.", type: number, exclusiveMinimum: 0, default: 1.0e-4}
  localization: {description: "Strength gamma of the pull towards the snapshot's weights.", type: number, minimum: 0, default: 1.0}
  chains: {description: "SGLD chains per seed and snapshot.", type: integer, minimum: 1, default: 2}
  draws: {description: "Loss draws per chain after the burn-in.", type: integer, minimum: 1, default: 150}
  burn_in: {description: "Steps per chain before the first draw.", type: integer, minimum: 0, default: 50}
  batch_size: {description: "Examples per SGLD step; null: the whole training set.", type: [integer, "null"], minimum: 1, default: 256}
  beta: {description: "Inverse temperature; null: 1 / log n.", type: [number, "null"], exclusiveMinimum: 0, default: null}
"""
USES = ["model"]
RESOURCES = {"runtime": 30, "mem_mb": 4000}


@dataclass(frozen=True)
class Params:
    runs: tuple[str, ...] = ()
    max_snapshots: int = 6
    step_size: float = 1e-4
    localization: float = 1.0
    chains: int = 2
    draws: int = 150
    burn_in: int = 50
    batch_size: int | None = 256
    beta: float | None = None

    def sgld(self) -> SGLD:
        return SGLD(step_size=self.step_size, localization=self.localization, chains=self.chains, draws=self.draws,
                    burn_in=self.burn_in, batch_size=self.batch_size, beta=self.beta)


def chain_generator(seed: int, chain: int, epoch: int) -> torch.Generator:
    """The generator of one chain: its seed, chain and snapshot alone decide it."""
    key = np.random.SeedSequence([seed, chain, epoch, 0x11C])
    return torch.Generator().manual_seed(int(key.generate_state(1, dtype=np.uint64)[0] >> 1))


def compute(cfg, name: str, params: Params, paths, threads: int = 1) -> tuple[xr.Dataset, dict]:
    torch.set_num_threads(max(1, threads))
    spec = cfg.run_spec(name)
    device = resolve_device(spec.device)
    w = read_dataset(paths.weights(name), rule="train")
    data = read_dataset(paths.dataset(spec.dataset), rule="dataset")
    loss_set = "train" if (data.split.values == "train").any() else "test"  # an online task: its fixed samples
    x_tr, y_tr = dataset_split(data, loss_set)
    x, y = run_inputs(spec, x_tr).to(device), torch.as_tensor(y_tr, dtype=torch.long).to(device)
    n, S, C = len(y), w.sizes["seed"], params.chains
    model = build_run_model(spec, S * C).to(device)
    loss_acc = loss_fn(model)
    sgld = params.sgld()
    idx = picked(w.sizes["snapshot"], params.max_snapshots)
    epochs = w.snapshot.values[idx]
    seeds = [int(s) for s in w.seed.values]
    out = {k: np.full((S, len(idx)), np.nan) for k in ("llc", "llc_std", "center_loss")}
    diverged = np.zeros((S, len(idx)), dtype=bool)
    trace = np.full((S, len(idx), C, params.draws), np.nan)
    started = time.perf_counter()
    for t, i in enumerate(idx):
        model.load_arrays({k: np.repeat(v, C, axis=0) for k, v in snapshot_arrays(w, int(i)).items()})  # seed-major
        weights = [getattr(model, k) for k in model.param_names()]

        def batch_loss(rows):
            if rows is None:
                return loss_acc(model(x), y)[0]
            return loss_acc(model(x[rows]), y[rows])[0]

        with torch.no_grad():
            center = batch_loss(None)
        gens = [chain_generator(s, c, int(epochs[t])) for s in seeds for c in range(C)]
        chains = sample(weights, batch_loss, center, n, sgld, gens)
        out["llc"][:, t], out["llc_std"][:, t], diverged[:, t] = per_seed(chains, S)
        out["center_loss"][:, t] = chains.center_loss.reshape(S, C)[:, 0]
        trace[:, t] = chains.trace.reshape(S, C, params.draws)
    seconds = time.perf_counter() - started
    dims = ("seed", "snapshot")
    ds = xr.Dataset({"llc": (dims, out["llc"]), "llc_std": (dims, out["llc_std"]), "diverged": (dims, diverged),
                     "center_loss": (dims, out["center_loss"]),
                     "trace": (("seed", "snapshot", "chain", "draw"), trace)},
                    coords={"seed": w.seed.values, "epoch": ("snapshot", epochs)})
    ds["llc"].attrs["description"] = "n beta (mean of the chains' draws of L - L_n(w*)), mean over the seed's chains"
    ds["llc_std"].attrs["description"] = "standard deviation of the per-chain estimates (ddof 1)"
    ds["diverged"].attrs["description"] = "a chain of the seed had a non-finite loss or weights (llc is NaN)"
    ds["center_loss"].attrs["description"] = "L_n(w*): the training loss at the snapshot"
    ds["trace"].attrs["description"] = "the loss of each SGLD step's batch after the burn-in, before the step"
    attrs = {"run": name, "n": n, "loss_set": loss_set, "beta": sgld.inverse_temperature(n), "seconds": seconds,
             "seconds_per_snapshot": seconds / len(idx)}
    return ds, attrs
