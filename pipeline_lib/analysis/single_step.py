"""Analysis ``single_step``: how one gradient step on a single input moves that input's own attention ('Easing
Optimization Paths', Sec. II.a's thought experiment: "A gradient update will reinforce both circuits to go from x_1
to y and from x_2 to y").

At each of the run's weight snapshots the run's model is rebuilt in float64 and, for each of ``n_inputs`` fixed
training inputs alone, the gradient of that input's loss is taken; the attention of the same input is read before
and after a step of length ``step`` along minus that gradient (its own direction, not the optimizer's), and the
change divided by ``step`` is stored per position: the derivative along the gradient step, whose sign is that of a
plain gradient update's first-order change, whatever its size (a unit direction keeps the change far above
float64 rounding when the gradient is tiny, late in training). Models with
one attention distribution per input (the circuit model's single query); under Heat Treatment the temperature of
the snapshot's epoch is used (the trajectory records it). Nothing is retrained.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import xarray as xr

from ..losses import loss_fn
from ..models import build_run_model, run_inputs
from ..plumbing.store import read_dataset
from ..selection import dataset_split, seed_coords, snapshot_arrays

NAME = "single_step"
PER_RUN = True
CONFIG = """
description: "Change of each input's own attention under one gradient step on that input alone, at every weight snapshot."
properties:
  runs: {description: "Runs to measure (circuit models: one attention distribution per input).", type: array, items: {type: string, x-ref: run, x-reads: [weights, dataset, trajectory], x-requires: {properties: {model: {properties: {kind: {const: circuit}}}}}, x-requires-message: "is not a run of a circuit model (one attention distribution per input)"}, default: []}
  n_inputs: {description: "Fixed training inputs (the first of the training split), each stepped on alone.", type: integer, minimum: 1, default: 64}
  step: {description: "Length of the step along minus the unit gradient (small: the change is then the first-order one).", type: number, exclusiveMinimum: 0, default: 1.0e-6}
"""
USES = ["model"]
RESOURCES = {"runtime": 20, "mem_mb": 2000}


@dataclass(frozen=True)
class Params:
    runs: tuple[str, ...] = ()
    n_inputs: int = 64
    step: float = 1e-6


def gradient_step_change(model, x: torch.Tensor, y: torch.Tensor,
                         step: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The derivative of the attention of inputs ``x`` (B, T) along the unit direction of minus the gradient of their
    mean loss (labels ``y``, (B,)), by a step of ``step`` along it (S, B, positions); the gradient's norm (S,); and
    the gradient, one flat row per seed (S, parameters). Every seed at once (a seed's loss depends on its own
    parameters alone); the parameters are restored exactly after."""
    model.zero_grad(set_to_none=True)
    loss, _ = loss_fn(model)(model(x), y)
    loss.sum().backward()
    params = [p for p in model.parameters() if p.grad is not None]
    grad = torch.cat([p.grad.reshape(len(p), -1) for p in params], 1)
    norm = torch.sqrt((grad ** 2).sum(1))
    scale = step / norm.clamp_min(1e-300)
    with torch.no_grad():
        saved = [p.detach().clone() for p in params]
        before = model.attention(x)
        for p in params:
            p.sub_(p.grad * scale.view(-1, *[1] * (p.dim() - 1)))
        after = model.attention(x)
        for p, v in zip(params, saved):
            p.copy_(v)
    return (after - before) / step, norm, grad


def attention_change(model, x: torch.Tensor, y: torch.Tensor, step: float) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`gradient_step_change` of one input ``x`` (1, T): its attention's derivative (S, positions) and the
    gradient's norm (S,)."""
    change, norm, _ = gradient_step_change(model, x, y, step)
    return change[:, 0], norm


def snapshot_loader(cfg, name: str, paths):
    """The run's spec, its weight snapshots ``w``, its dataset, its model rebuilt in float64 and a function that
    loads snapshot ``k`` (by position) into it: the weights and, under Heat Treatment, the temperature the trajectory
    records for the snapshot's epoch."""
    spec = cfg.run_spec(name)
    w = read_dataset(paths.weights(name), rule="train")
    data = read_dataset(paths.dataset(spec.dataset), rule="dataset")
    model = build_run_model(spec, w.sizes["seed"]).double()
    temperature = read_dataset(paths.trajectory(name), rule="train").temperature
    heat = spec.attention.schedule == "heat_treatment"

    def load(k: int) -> None:
        model.load_arrays(snapshot_arrays(w, k))
        model.beta = 1.0 / float(temperature.sel(epoch=w.snapshot.values[k])) if heat else None

    return spec, w, data, model, load


def compute(cfg, name: str, params: Params, paths, threads: int = 1) -> tuple[xr.Dataset, dict]:
    torch.set_num_threads(max(1, threads))
    spec, w, data, model, load = snapshot_loader(cfg, name, paths)
    x_np, y_np = dataset_split(data, "train")
    x_all, y_all = run_inputs(spec, x_np[:params.n_inputs]), torch.as_tensor(y_np[:params.n_inputs])
    delta = np.zeros((w.sizes["seed"], w.sizes["snapshot"], len(x_all), x_all.shape[1]))
    grad_norm = np.zeros(delta.shape[:3])
    for k in range(w.sizes["snapshot"]):
        load(k)
        for i in range(len(x_all)):
            d, g = attention_change(model, x_all[i:i + 1], y_all[i:i + 1], params.step)
            delta[:, k, i], grad_norm[:, k, i] = d.numpy(), g.numpy()
    out = xr.Dataset(
        {"attention_change": (("seed", "snapshot", "input", "position"), delta),
         "grad_norm": (("seed", "snapshot", "input"), grad_norm),
         "x": (("input", "position"), x_np[:params.n_inputs])},
        coords={"seed": w.seed.values, "snapshot": w.snapshot.values, "input": np.arange(len(x_all)),
                "position": np.arange(x_all.shape[1]), **seed_coords(w)})
    out["attention_change"].attrs["description"] = (
        "derivative of the input's own attention, per position, along the unit direction of minus the gradient of "
        f"that input's loss alone (a step of {params.step:g} in float64, divided by it)")
    out["grad_norm"].attrs["description"] = "norm of the gradient of the input's loss alone (all parameters)"
    return out, {"run": name, "model_kind": spec.model_kind, "n_inputs": int(len(x_all)), "step": params.step}
