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

from ..config import Config, slice_hash
from ..engine import Checkpointing, Recording, resolve_device, train_seeds, tune_allocator
from ..models import PARAM_DIMS, build_model
from ..store import (code_hash, dataset_split, file_hash, provenance, read_dataset, snapshot_arrays,
                     write_dataset)

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
def snapshot_z_A(model, weights: dict[str, np.ndarray], x: np.ndarray) -> np.ndarray:
    """z_A (S, K, n, d) of inputs ``x`` under each of the K weight snapshots (model is overwritten)."""
    device = next(model.parameters()).device
    xt = torch.as_tensor(x, dtype=torch.long, device=device)
    K = next(iter(weights.values())).shape[0]
    out = []
    for k in range(K):
        model.load_arrays({n: w[k] for n, w in weights.items()})
        out.append(model.internals(xt).z_A.cpu().numpy())
    return np.stack(out, axis=1).astype(np.float32)


def trajectory_dataset(rec: Recording, seeds, probe_x: np.ndarray, attrs: dict,
                       embed: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> xr.Dataset:
    """Per-epoch metrics (seed, epoch); attention (seed, epoch, probe, position), NaN where the
    schedule did not record it (``attention_recorded`` marks the recorded epochs)."""
    S, n_probe, T = len(seeds), probe_x.shape[0], probe_x.shape[1]
    recorded = np.isin(rec.epochs, rec.attention_epochs)
    attention = np.full((S, len(rec.epochs), n_probe, T), np.nan, dtype=np.float32)
    attention[:, recorded] = rec.attention
    data = {m: (("seed", "epoch"), getattr(rec, m).astype(np.float32)) for m in METRICS}
    data.update({
        "attention": (("seed", "epoch", "probe", "position"), attention),
        "probe_x": (("probe", "position"), probe_x),
        "diverged": (("seed",), rec.diverged_epoch >= 0),
        "diverged_epoch": (("seed",), rec.diverged_epoch),
    })
    coords = {"seed": list(seeds), "epoch": rec.epochs, "probe": np.arange(n_probe),
              "position": np.arange(T), "attention_recorded": ("epoch", recorded)}
    if embed is not None:  # z_A of fixed inputs at every weight snapshot (Fig. 4 reads it)
        z_A, embed_x, embed_y = embed
        data.update({"z_A": (("seed", "snapshot", "sample", "d_model"), z_A),
                     "embed_x": (("sample", "position"), embed_x), "embed_y": (("sample",), embed_y)})
        coords.update(snapshot=rec.snapshot_epochs, sample=np.arange(len(embed_x)))
    ds = xr.Dataset(data, coords=coords)
    ds.attrs.update(attrs)
    ds["attention"].attrs["description"] = "softmax attention weights of the probe sequences over positions"
    ds["diverged_epoch"].attrs["description"] = "first epoch with a non-finite loss (-1: never); the seed is frozen from then on"
    return ds


def weights_dataset(rec: Recording, seeds, attrs: dict) -> xr.Dataset:
    data = {n: (("snapshot", "seed", *PARAM_DIMS[n]), w) for n, w in rec.weights.items()}
    ds = xr.Dataset(data, coords={"snapshot": rec.snapshot_epochs, "seed": list(seeds)})
    ds["snapshot"].attrs["description"] = "global epoch of the snapshot; the last is the final weights"
    ds.attrs.update(attrs)
    return ds


def train_run(cfg: Config, run: str, dataset_path: str, trajectory_path: str, weights_path: str,
              init_path: str | None = None, threads: int = 1, log_path: str | None = None) -> Recording:
    rc = cfg.runs[run]
    tune_allocator()
    torch.set_num_threads(max(1, threads))
    device = resolve_device(cfg.device)
    log = _logger(log_path)
    ds = read_dataset(dataset_path, rule="dataset")
    (x_tr, y_tr), (x_te, y_te) = dataset_split(ds, "train"), dataset_split(ds, "test")
    p, T = int(ds.attrs["task_p"]), int(ds.attrs["task_T"])
    seeds = list(rc.seeds)

    model = build_model(cfg.models[rc.model], len(seeds), p, T)
    if rc.init_from:
        # the parent's final weights, seed i from seed i
        model.load_arrays(snapshot_arrays(read_dataset(init_path, rule="train").sel(seed=seeds), -1))
    else:
        model.init_seeds(seeds)
    model.to(device)

    probe_x = x_te[: rc.n_probe]
    tensors = {k: torch.as_tensor(v, dtype=torch.long) for k, v in
               dict(x_train=x_tr, y_train=y_tr, x_test=x_te, y_test=y_te, probe_x=probe_x).items()}
    start = cfg.start_epoch(run)
    inputs = [dataset_path] + ([init_path] if rc.init_from else [])
    ckpt = None
    if rc.checkpoint_every:
        key = slice_hash({"config": cfg.run_slice(run), "inputs": [file_hash(p) for p in inputs]})
        ckpt = Checkpointing(resume_path(trajectory_path), rc.checkpoint_every, key)
        if ckpt.path.exists():
            log.info(f"found resume checkpoint {ckpt.path}; resuming from it if it matches this config and inputs")
    log.info(f"run {run}: {len(seeds)} seeds, {rc.epochs} epochs from epoch {start}, device {device}, "
             f"threads {torch.get_num_threads()}, batch {rc.batch_size}")
    bar = tqdm(total=rc.epochs + 1, desc=run, unit="epoch", disable=None, mininterval=1.0)
    t0 = time.perf_counter()

    def callback(epoch: int, metrics: dict | None) -> None:
        bar.update(1)
        if metrics is not None:
            bar.set_postfix(loss=f"{metrics['train_loss']:.3f}", test_acc=f"{metrics['test_acc']:.3f}")
            log.info(f"epoch {epoch}: " + " ".join(f"{k}={v:.4f}" for k, v in metrics.items())
                     + f" ({time.perf_counter() - t0:.1f} s)")

    try:
        rec = train_seeds(model, tensors, rc, seeds, device, start_epoch=start, callback=callback,
                          checkpoint=ckpt)
    except BaseException:
        log.exception("training failed")
        raise
    finally:
        bar.close()
    n_div = int((rec.diverged_epoch >= 0).sum())
    log.info(f"done in {time.perf_counter() - t0:.1f} s; diverged seeds: {n_div}/{len(seeds)}")

    embed = None
    if rc.n_embed:
        embed_x = x_te[: rc.n_embed]
        embed = (snapshot_z_A(model, rec.weights, embed_x), embed_x, y_te[: rc.n_embed])
    attrs = provenance(cfg.run_slice(run), inputs, device=str(device), code=code_hash(__name__))
    attrs.update(run=run, start_epoch=start, init_from=rc.init_from or "", p=p, T=T,
                 k=int(ds.attrs["task_k"]), dataset=rc.dataset, threads=torch.get_num_threads())
    write_dataset(weights_dataset(rec, seeds, attrs), weights_path, {})
    write_dataset(trajectory_dataset(rec, seeds, probe_x, attrs, embed), trajectory_path, {})
    if ckpt is not None:  # the artifacts are complete: the resume state is no longer needed
        ckpt.path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            ckpt.path.parent.rmdir()
    return rec


def resume_path(trajectory_path: str) -> Path:
    """runs/<run>/resume/checkpoint.pt: beside the outputs, not one of them, so a killed job keeps it."""
    return Path(trajectory_path).parent / "resume" / "checkpoint.pt"
