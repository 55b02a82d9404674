"""Stage `train`: train all seeds of one run; write runs/<run>/trajectory.h5 and weights.h5.

A run with ``init_from`` (a finetune) starts seed i from the parent run's final weights of seed i
and continues the parent's epoch count, so its epoch coordinate is the global epoch.
"""
from __future__ import annotations

import contextlib
import logging
import time
from pathlib import Path

import numpy as np
import torch
import xarray as xr
from tqdm import tqdm

from ..attention import describe
from ..engine import Checkpointing, Recording, resolve_device, train_seeds, tune_allocator
from ..models import build_run_model, param_dims, run_inputs
from ..plumbing.config import Config, RunSpec, slice_hash
from ..plumbing.jobs import train_code
from ..plumbing.store import dataset_split, file_hash, provenance, read_dataset, snapshot_arrays, write_dataset

METRICS = ("train_loss", "train_acc", "test_loss", "test_acc")


def _logger(log_path: str | None) -> logging.Logger:
    log = logging.getLogger(f"pipeline_lib.train.{log_path}")
    log.setLevel(logging.INFO)
    log.propagate = False
    if log_path and not log.handlers:
        Path(log_path).parent.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(log_path, mode="w")
        handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
        log.addHandler(handler)
    return log


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


def train_run(cfg: Config, run: str, dataset_path: str, trajectory_path: str, weights_path: str,
              init_path: str | None = None, threads: int = 1, log_path: str | None = None) -> Recording:
    """Train all seeds of ``run`` and write its trajectory and weights (the run is resolved once
    into a :class:`RunSpec` here and passed down)."""
    spec = cfg.run_spec(run)
    tune_allocator()
    torch.set_num_threads(max(1, threads))
    device = resolve_device(spec.device)
    log = _logger(log_path)
    ds = read_dataset(dataset_path, rule="dataset")
    model = _initial_model(spec, init_path).to(device)
    tensors, (x_te, y_te) = _tensors(spec, ds)
    inputs = [dataset_path] + ([init_path] if spec.run.init_from else [])
    ckpt = _checkpointing(cfg, spec, inputs, trajectory_path, log)
    log.info(f"run {run}: {spec.model_kind} model, {len(spec.seeds)} seeds"
             f"{f' x {len(run_seeds(spec)) // len(spec.seeds)} sweep cells' if spec.run.sweep else ''}, {spec.run.epochs} epochs from epoch "
             f"{spec.start_epoch}, device {device}, threads {torch.get_num_threads()}, batch {spec.run.batch_size}, "
             f"attention {describe(spec.attention)}")
    rec = _train_with_progress(model, tensors, spec, device, ckpt, log, param_dims(spec))
    embed = None
    if spec.run.n_embed and model.embed_site is not None:  # e.g. z_A of fixed inputs at every snapshot (Fig. 4)
        embed_x = x_te[: spec.run.n_embed]
        embed = (snapshot_site(model, rec.weights, run_inputs(spec, embed_x), model.embed_site), embed_x,
                 y_te[: spec.run.n_embed])
    attrs = provenance(cfg.run_slice(run), inputs, device=str(device), code=train_code(cfg, run))
    attrs.update(run=run, start_epoch=spec.start_epoch, init_from=spec.run.init_from or "", dataset=spec.dataset,
                 threads=torch.get_num_threads(), model_kind=spec.model_kind, attention=describe(spec.attention),
                 optimizer_state_elements=rec.optimizer_state["elements"],
                 optimizer_state_bytes=rec.optimizer_state["bytes"],
                 **{k: v for k, v in ds.attrs.items() if k.startswith("task_")})
    ids, coords = slot_axis(spec)
    if spec.run.sweep:
        attrs.update(swept=", ".join(k for k, _ in spec.run.sweep))
    write_dataset(weights_dataset(rec, ids, attrs, param_dims(spec)).assign_coords(coords), weights_path, {})
    write_dataset(trajectory_dataset(rec, ids, tensors["probe_x_raw"], attrs, embed).assign_coords(coords),
                  trajectory_path, {})
    if ckpt is not None:  # the artifacts are complete: the resume state is no longer needed
        ckpt.path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            ckpt.path.parent.rmdir()
    return rec


def _initial_model(spec: RunSpec, init_path: str | None):
    seeds = run_seeds(spec)
    model = build_run_model(spec, len(seeds))
    if spec.run.init_from:  # the parent's final weights, seed i from seed i
        model.load_arrays(snapshot_arrays(read_dataset(init_path, rule="train").sel(seed=list(spec.seeds)), -1))
    else:
        model.init_seeds(seeds)
    return model


def run_seeds(spec: RunSpec) -> list[int]:
    """The seed of every slot (initialisation and data order): the run's seeds, once per sweep cell."""
    return [s["run_seed"] for s in spec.run.slots()]


def slot_axis(spec: RunSpec) -> tuple[list[int], dict]:
    """The artifacts' ``seed`` axis: the run's seeds, or with a sweep its slots numbered 0..n-1 with
    the coordinates of :func:`slot_coords`."""
    if not spec.run.sweep:
        return list(spec.seeds), {}
    slots = spec.run.slots()
    return list(range(len(slots))), slot_coords(slots)


def slot_coords(slots: list[dict]) -> dict:
    """Coordinates along ``seed`` that say which seed and optimizer values each slot has."""
    coords = {"run_seed": ("seed", np.array([s["run_seed"] for s in slots]))}
    coords.update({k: ("seed", np.array([s[k] for s in slots], dtype=np.float64))
                   for k in ("lr", "weight_decay", "momentum")})
    for name in sorted({n for s in slots for n in s["lr_ratio"]}):
        coords[f"lr_ratio_{name}"] = ("seed", np.array([s["lr_ratio"].get(name, 1.0) for s in slots]))
    return {k: xr.Variable(*v) for k, v in coords.items()}


def _tensors(spec: RunSpec, ds) -> tuple[dict, tuple[np.ndarray, np.ndarray]]:
    """The engine's input tensors (and the raw probe inputs under ``probe_x_raw``)."""
    (x_tr, y_tr), (x_te, y_te) = dataset_split(ds, "train"), dataset_split(ds, "test")
    rc = spec.run
    tensors = {k: run_inputs(spec, v) for k, v in
               dict(x_train=x_tr, x_test=x_te, probe_x=x_te[: rc.n_probe], stats_x=x_te[: rc.n_stats]).items()}
    tensors.update(y_train=torch.as_tensor(y_tr, dtype=torch.long), y_test=torch.as_tensor(y_te, dtype=torch.long),
                   probe_x_raw=x_te[: rc.n_probe])
    return tensors, (x_te, y_te)


def _checkpointing(cfg: Config, spec: RunSpec, inputs: list[str], trajectory_path: str, log) -> Checkpointing | None:
    if not spec.run.checkpoint_every:
        return None
    # the code hash too: a checkpoint written by other training code must not be continued by this one
    key = slice_hash({"config": cfg.run_slice(spec.name), "inputs": [file_hash(p) for p in inputs],
                      "code": train_code(cfg, spec.name)})
    ckpt = Checkpointing(resume_path(trajectory_path), spec.run.checkpoint_every, key)
    if ckpt.path.exists():
        log.info(f"found resume checkpoint {ckpt.path}; resuming from it if it matches this config and inputs")
    return ckpt


def _train_with_progress(model, tensors: dict, spec: RunSpec, device, ckpt, log, dims: dict | None = None) -> Recording:
    """The engine's loop with a progress bar on a terminal and a plain line every log_every epochs."""
    bar = tqdm(total=spec.run.epochs + 1, desc=spec.name, unit="epoch", disable=None, mininterval=1.0)
    t0 = time.perf_counter()

    def callback(epoch: int, metrics: dict | None) -> None:
        bar.update(1)
        if metrics is not None:
            bar.set_postfix(loss=f"{metrics['train_loss']:.3f}", test_acc=f"{metrics['test_acc']:.3f}")
            log.info(f"epoch {epoch}: " + " ".join(f"{k}={v:.4f}" for k, v in metrics.items())
                     + f" ({time.perf_counter() - t0:.1f} s)")

    try:
        rec = train_seeds(model, tensors, spec.run, run_seeds(spec), device, start_epoch=spec.start_epoch,
                          callback=callback, checkpoint=ckpt, param_dims=dims)
    except BaseException:
        log.exception("training failed")
        raise
    finally:
        bar.close()
    n_div = int((rec.diverged_epoch >= 0).sum())
    log.info(f"done in {time.perf_counter() - t0:.1f} s; diverged slots: {n_div}/{len(rec.diverged_epoch)}")
    return rec


def resume_path(trajectory_path: str) -> Path:
    """runs/<run>/resume/checkpoint.pt: beside the outputs, not one of them, so a killed job keeps it."""
    return Path(trajectory_path).parent / "resume" / "checkpoint.pt"
