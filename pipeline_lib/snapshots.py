"""Models rebuilt from a run's weight snapshots (its ``weights.h5``), with no config file: the run's resolved spec
from the slice of the config the artifact recorded, its model with every seed's weights at one snapshot, and what
the recording left out, recomputed from them (a transformer's attention per layer and head)."""
from __future__ import annotations

import json

import numpy as np
import torch
import xarray as xr


def run_spec(weights: xr.Dataset, name: str):
    """The resolved ``RunSpec`` of run ``name`` from the config slice its weights artifact recorded (its run,
    model and dataset entries; ``init_from`` dropped: the snapshot holds the weights)."""
    from .plumbing.config import load_config

    sliced = json.loads(weights.attrs["config_json"])
    run = dict(sliced["run"], init_from=None)
    raw = {"datasets": {run["dataset"]: sliced["dataset"]}, "models": {run["model"]: sliced["model"]},
           "runs": {name: run}, "device": "cpu"}
    return load_config(raw).run_spec(name)


def model_at(weights: xr.Dataset, spec, epoch: int, seeds: list[int]):
    """The run's model for ``seeds`` (in that order) with their weights at snapshot ``epoch``."""
    from .models import build_run_model

    missing = sorted(set(seeds) - set(weights.seed.values.tolist()))
    if missing:
        raise KeyError(f"run {spec.name!r} has no seed {missing}; it has {weights.seed.values.tolist()}")
    model = build_run_model(spec, len(seeds))
    load_snapshot(model, weights, spec, epoch, seeds)
    return model


def load_snapshot(model, weights: xr.Dataset, spec, epoch: int, seeds: list[int]) -> None:
    """Set ``model``'s parameters (one slot per seed of ``seeds``) to their weights at snapshot ``epoch``."""
    epochs = weights.snapshot.values.tolist()
    if epoch not in epochs:
        raise KeyError(f"run {spec.name!r} recorded no weights at epoch {epoch}; recorded: {epochs}")
    at = weights.sel(snapshot=epoch, seed=list(seeds))
    model.load_arrays({n: at[n].values for n in model.param_names()})


HEAD_KINDS = ("transformer", "vit")  # the CLS-query transformers, whose artifacts' ``model_kind`` says so


def has_heads(weights: xr.Dataset) -> bool:
    """Whether the run's model is a CLS-query transformer (:data:`HEAD_KINDS`): attention per layer and head that
    :func:`head_attention` recomputes."""
    return weights.attrs.get("model_kind") in HEAD_KINDS and "head" in weights.dims


@torch.no_grad()
def head_attention(weights: xr.Dataset, traj: xr.Dataset, name: str) -> xr.DataArray:
    """The CLS query's attention over the key positions of the run's probe sequences, per layer and head, at every
    weight snapshot: (seed, epoch, layer, head, probe, position). Under Heat Treatment each snapshot takes the
    temperature its epoch ran at (the trajectory's ``temperature``), as the recording did; so the last layer's
    mean over heads equals the trajectory's recorded ``attention`` at the same epoch."""
    from .models import run_inputs

    if not has_heads(weights):
        raise ValueError(f"run {name!r}: a {weights.attrs.get('model_kind')!r} model has no attention heads to "
                         "recompute (the transformer and vit kinds do)")
    spec = run_spec(weights, name)
    seeds = [int(s) for s in traj.seed.values]
    probe_x = run_inputs(spec, traj.probe_x.values)
    heat = spec.attention.schedule == "heat_treatment"
    epochs = weights.snapshot.values.tolist()
    model, out = model_at(weights, spec, epochs[0], seeds), []  # built once, its weights set per snapshot
    for epoch in epochs:
        load_snapshot(model, weights, spec, epoch, seeds)
        if heat:
            model.beta = 1.0 / float(traj.temperature.sel(epoch=epoch))
        per_layer = model.internals(probe_x).attention  # per layer: (S, B, H, T, T)
        out.append(torch.stack([w[:, :, :, 0] for w in per_layer], 2).numpy())  # (S, B, L, H, T)
    att = np.stack(out, 1)  # (S, epoch, B, L, H, T)
    return xr.DataArray(att.transpose(0, 1, 3, 4, 2, 5), dims=("seed", "epoch", "layer", "head", "probe", "position"),
                        coords={"seed": seeds, "epoch": weights.snapshot.values})
