"""The artifacts of a training run: its trajectory (metrics, probe attention, embeddings along the
seed axis) and its weight snapshots, as xarray datasets, with the seed axis of a sweep's slots."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch
import xarray as xr

from .recording import Recording

if TYPE_CHECKING:  # the resolved run, handed down by the stage
    from .plumbing.config import RunSpec

METRICS = ("train_loss", "train_acc", "test_loss", "test_acc")


@torch.no_grad()
def snapshot_site(model, weights: dict[str, np.ndarray], xt: torch.Tensor, site: str) -> np.ndarray:
    """One site (S, K, n, d) of inputs ``xt`` under each of the K weight snapshots (model is overwritten)."""
    xt = xt.to(next(model.parameters()).device)
    K = next(iter(weights.values())).shape[0]
    out = []
    for k in range(K):
        model.load_arrays({n: w[k] for n, w in weights.items()})
        out.append(model.site(model.internals(xt), site).cpu().numpy())
    return np.stack(out, axis=1).astype(np.float32)


def trajectory_dataset(rec: Recording, seeds, probe_x: np.ndarray, attrs: dict,
                       embed: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> xr.Dataset:
    """Per-epoch metrics (seed, epoch); attention (seed, epoch, probe, position), NaN where the
    schedule did not record it (``attention_recorded`` marks the recorded epochs); for transformer
    models also the Q/K/V gradient summaries (seed, epoch, layer, head) and the attention-weight
    histograms (seed, epoch, layer, bin)."""
    S, n_probe = len(seeds), probe_x.shape[0]
    T = rec.attention.shape[-1] if rec.attention is not None else None
    data = {m: (("seed", "epoch"), getattr(rec, m).astype(np.float32)) for m in METRICS}
    data.update({
        "probe_x": (("probe", "position" if probe_x.shape[1] == T else "input"), probe_x),
        "diverged": (("seed",), rec.diverged_epoch >= 0),
        "diverged_epoch": (("seed",), rec.diverged_epoch),
        "temperature": (("epoch",), rec.temperature.astype(np.float32)),
    })
    coords = {"seed": list(seeds), "epoch": rec.epochs, "probe": np.arange(n_probe)}
    if rec.attention is not None:  # a model without attention (e.g. quadratic_mlp) records none
        recorded = np.isin(rec.epochs, rec.attention_epochs)
        attention = np.full((S, len(rec.epochs), n_probe, T), np.nan, dtype=np.float32)
        attention[:, recorded] = rec.attention
        data["attention"] = (("seed", "epoch", "probe", "position"), attention)
        coords.update(position=np.arange(T), attention_recorded=("epoch", recorded))
    for name, g in (rec.grads or {}).items():
        data[f"grad_{name}"] = (("seed", "epoch", "layer", "head"), g.astype(np.float32))
    if rec.attention_hist is not None:
        bins = rec.attention_hist.shape[-1]
        data["attention_hist"] = (("seed", "epoch", "layer", "bin"), rec.attention_hist.astype(np.float32))
        coords["bin"] = (np.arange(bins) + 0.5) / bins
    if rec.grads or rec.attention_hist is not None:
        coords["layer"] = np.arange(rec.attention_hist.shape[2] if rec.attention_hist is not None
                                    else next(iter(rec.grads.values())).shape[2])
    if rec.step_attention is not None:  # after every optimizer step of the first epochs (step_attention_epochs)
        n_steps = rec.step_attention.shape[1]
        data["step_attention"] = (("seed", "step", "probe", "position"), rec.step_attention.astype(np.float32))
        coords.update(step=np.arange(n_steps), step_epoch=("step", rec.epochs[0] + np.arange(n_steps) / rec.steps_per_epoch))
    if embed is not None:  # z_A of fixed inputs at every weight snapshot (Fig. 4 reads it)
        z_A, embed_x, embed_y = embed
        data.update({"z_A": (("seed", "snapshot", "sample", "d_model"), z_A),
                     "embed_x": (("sample", "position"), embed_x), "embed_y": (("sample",), embed_y)})
        coords.update(snapshot=rec.snapshot_epochs, sample=np.arange(len(embed_x)))
    ds = xr.Dataset(data, coords=coords)
    ds.attrs.update(attrs)
    if "attention" in ds:
        ds["attention"].attrs["description"] = "softmax attention weights of the probe sequences over positions"
    ds["diverged_epoch"].attrs["description"] = "first epoch with a non-finite loss (-1: never); the seed is frozen from then on"
    ds["temperature"].attrs["description"] = "attention temperature during epoch e (1/beta under Heat Treatment)"
    for name in rec.grads or {}:
        ds[f"grad_{name}"].attrs["description"] = (f"mean |gradient| of {name} per layer and head, averaged over the "
                                                   "steps of epoch e (during training from epoch e to e+1)")
    if "step_attention" in ds:
        ds["step_attention"].attrs["description"] = ("attention of the probe sequences after each optimizer step "
                                                     f"({rec.steps_per_epoch} per epoch); step 0 = the run's start")
    if "attention_hist" in ds:
        ds["attention_hist"].attrs["description"] = ("fraction of attention weights (all queries, keys, heads of the "
                                                     "stats examples) per equal bin over [0, 1]; bin = its centre")
    return ds


def weights_dataset(rec: Recording, seeds, attrs: dict, param_dims: dict) -> xr.Dataset:
    data = {n: (("snapshot", "seed", *param_dims[n]), w) for n, w in rec.weights.items()}
    ds = xr.Dataset(data, coords={"snapshot": rec.snapshot_epochs, "seed": list(seeds)})
    ds["snapshot"].attrs["description"] = "global epoch of the snapshot; the last is the final weights"
    ds.attrs.update(attrs)
    return ds


def slot_axis(spec: RunSpec) -> tuple[list[int], dict]:
    """The artifacts' ``seed`` axis: the run's seeds, or with a sweep its slots numbered 0..n-1 with
    the coordinates of :func:`slot_coords`."""
    if not spec.run.sweep:
        return list(spec.seeds), {}
    return list(range(len(spec.slots))), slot_coords(list(spec.slots))


def slot_coords(slots: list[dict]) -> dict:
    """Coordinates along ``seed`` that say which seed and optimizer values each slot has."""
    coords = {"run_seed": ("seed", np.array([s["run_seed"] for s in slots]))}
    coords.update({k: ("seed", np.array([s[k] for s in slots], dtype=np.float64))
                   for k in ("lr", "weight_decay", "momentum")})
    for name in sorted({n for s in slots for n in s["lr_ratio"]}):
        coords[f"lr_ratio_{name}"] = ("seed", np.array([s["lr_ratio"].get(name, 1.0) for s in slots]))
    return {k: xr.Variable(*v) for k, v in coords.items()}
