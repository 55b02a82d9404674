"""Analysis ``interpolation``: loss along theta(t) = (1-t) theta_a + t theta_b between two runs'
final weights (Fig. 6 of 'Easing Optimization Paths'): seed i of run a with seed i of run b, or with
``pair: shifted`` with the next seed of run b (the same-arm controls: two seeds of one run)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import xarray as xr

from ..losses import per_seed_loss_acc
from ..models import build_run_model, run_inputs
from ..plumbing.store import read_dataset
from ..selection import dataset_split, snapshot_arrays

NAME = "interpolation"
CONFIG = """
description: "Named straight-line interpolations between the final weights of two runs."
required: [a, b]
properties:
  a: {description: "Run at t=0 (its final weights).", type: string, x-ref: run, x-reads: [weights]}
  b: {description: "Run at t=1 (its final weights); the same model as run a and every seed of run a (a run of more seeds meets a's seeds).", type: string, x-ref: run, x-reads: [weights, dataset]}
  dataset: {description: "Dataset to evaluate on (null: run b's dataset).", type: [string, "null"], default: null, x-ref: dataset}
  t_min: {description: "First t.", type: number, default: -0.25}
  t_max: {description: "Last t.", type: number, default: 1.25}
  n_points: {description: "Number of t values (0 and 1 are always included).", type: integer, minimum: 3, default: 61}
  pair:
    description: "Which seed of run b meets seed i of run a: 'same' (seed i), or 'shifted' (the next seed of a's list, the last with the first: two different initialisations, e.g. two seeds of one run)."
    type: string
    enum: [same, shifted]
    default: same
"""
CHECKS = [
    ["t_min", "t_min < t_max", "must be smaller than t_max"],
    ["b", "run(a)['model'] == run(b)['model'] and set(seeds(a)) <= set(seeds(b))",
     "runs '{a}' and '{b}' must share the model, and run b must train every seed of run a, to be interpolated"],
    ["pair", "pair == 'shifted' or a != b", "a run interpolated with itself seed by seed is a constant line: "
     "use pair: shifted to meet two different seeds of '{a}'"],
    ["pair", "pair == 'same' or len(seeds(a)) >= 2", "pair: shifted needs at least 2 seeds"],
]
USES = ["model"]  # builds the runs' model: its module is in this analysis's code hash
RESOURCES = {"runtime": 30, "mem_mb": 4000}


@dataclass(frozen=True)
class Params:
    a: str
    b: str
    dataset: str | None = None
    t_min: float = -0.25
    t_max: float = 1.25
    n_points: int = 61
    pair: str = "same"


def compute(cfg, name: str, params: Params, paths, threads: int = 1) -> tuple[xr.Dataset, dict]:
    torch.set_num_threads(max(1, threads))
    spec = cfg.run_spec(params.b)
    seeds = list(cfg.run_spec(params.a).seeds)
    seeds_b = paired_seeds(seeds, params.pair)
    dataset = params.dataset or spec.dataset
    wa = read_dataset(paths.weights(params.a), rule="train").sel(seed=seeds)
    wb = read_dataset(paths.weights(params.b), rule="train").sel(seed=seeds_b)
    data = read_dataset(paths.dataset(dataset), rule="dataset")
    splits = {s: (run_inputs(spec, x), torch.as_tensor(y, dtype=torch.long))
              for s, (x, y) in ((s, dataset_split(data, s)) for s in ("train", "test"))}
    ts = t_grid(params.t_min, params.t_max, params.n_points)
    res = interpolate(build_run_model(spec, len(seeds)), snapshot_arrays(wa, -1), snapshot_arrays(wb, -1), ts, splits)
    out = xr.Dataset({k: (("seed", "t"), v.astype(np.float32)) for k, v in res.items()},
                     coords={"seed": seeds, "t": ts})
    out = out.assign_coords(seed_b=("seed", seeds_b))
    out["seed_b"].attrs["description"] = f"the seed of run b interpolated with each seed of run a (pair: {params.pair})"
    for split in ("train", "test"):
        out[f"barrier_{split}"] = (("seed",), barrier_height(ts, res[f"{split}_loss"]).astype(np.float32))
        out[f"barrier_{split}"].attrs["description"] = (
            f"max {split} loss on t in [0, 1] minus the larger endpoint loss")
    return out, {"run_a": params.a, "run_b": params.b, "epoch_a": int(wa.snapshot[-1]),
                 "epoch_b": int(wb.snapshot[-1]), "dataset": dataset, "pair": params.pair}


def paired_seeds(seeds: list, pair: str = "same") -> list:
    """The seeds of run b met by ``seeds`` of run a: the same, or each the next one (the last the first)."""
    if pair == "same":
        return list(seeds)
    if pair == "shifted":
        return list(seeds[1:]) + list(seeds[:1])
    raise ValueError(f"pair {pair!r}: allowed same, shifted")


def t_grid(t_min: float = -0.25, t_max: float = 1.25, n_points: int = 61) -> np.ndarray:
    """Evenly spaced t that always contains the endpoints t=0 and t=1 exactly."""
    ts = np.linspace(t_min, t_max, n_points)
    ts = np.union1d(np.round(ts, 12), [0.0, 1.0] if t_min <= 0 and t_max >= 1 else [])
    return ts


@torch.no_grad()
def interpolate(model, theta_a: dict[str, np.ndarray], theta_b: dict[str, np.ndarray], ts: np.ndarray,
                splits: dict[str, tuple[torch.Tensor, torch.Tensor]]) -> dict[str, np.ndarray]:
    """Per-seed loss and accuracy of theta(t) = (1 - t) theta_a + t theta_b for every t.

    ``theta_*`` map parameter names to (S, ...) arrays; ``splits`` maps a split name to (x, y).
    Returns {f"{split}_loss": (S, len(ts)), f"{split}_acc": ...}.
    """
    out = {f"{s}_{m}": np.zeros((model.S, len(ts)), dtype=np.float64) for s in splits for m in ("loss", "acc")}
    for i, t in enumerate(ts):
        model.load_arrays({n: (1 - t) * theta_a[n] + t * theta_b[n] for n in theta_a})
        for split, (x, y) in splits.items():
            loss, acc = per_seed_loss_acc(model(x), y)
            out[f"{split}_loss"][:, i] = loss.cpu().numpy()
            out[f"{split}_acc"][:, i] = acc.cpu().numpy()
    return out


def barrier_height(ts: np.ndarray, loss: np.ndarray) -> np.ndarray:
    """Per seed: max loss on t in [0, 1] minus the larger of the two endpoint losses (>= 0)."""
    inside = (ts >= 0) & (ts <= 1)
    ends = np.maximum(loss[:, np.argmin(np.abs(ts))], loss[:, np.argmin(np.abs(ts - 1))])
    return loss[:, inside].max(axis=1) - ends
