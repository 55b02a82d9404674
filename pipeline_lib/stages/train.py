"""Stage `train`: train all seeds of one run; write runs/<run>/trajectory.h5 and weights.h5.

A run with ``init_from`` (a finetune) starts seed i from the parent run's final weights of seed i
and continues the parent's epoch count, so its epoch coordinate is the global epoch.
"""
from __future__ import annotations

import contextlib
from pathlib import Path

import numpy as np
import torch

from ..artifacts import slot_axis, snapshot_site, trajectory_dataset, weights_dataset
from ..attention import describe
from ..checkpointing import Checkpointing
from ..models import build_run_model, param_dims, run_inputs
from ..plumbing import registry
from ..plumbing.config import Config, RunSpec, slice_hash
from ..plumbing.device import resolve_device, tune_allocator
from ..plumbing.logs import job_logger
from ..plumbing.store import file_hash, provenance, read_dataset, write_dataset
from ..recording import Recording
from ..selection import dataset_split, snapshot_arrays
from .progress import train_with_progress


def train_run(cfg: Config, run: str, dataset_path: str, trajectory_path: str, weights_path: str,
              init_path: str | None = None, threads: int = 1, log_path: str | None = None,
              code: str = "") -> Recording:
    """Train all seeds of ``run`` and write its trajectory and weights (the run is resolved once
    into a :class:`RunSpec` here and passed down). ``code``: the job's code param (the rule's, which
    Snakemake compares for reruns), kept in the provenance and the resume key."""
    spec = cfg.run_spec(run)
    tune_allocator()
    torch.set_num_threads(max(1, threads))
    device = resolve_device(spec.device)
    log = job_logger(log_path)
    ds = read_dataset(dataset_path, rule="dataset")
    model = _initial_model(spec, init_path).to(device)
    tensors, (x_te, y_te) = _tensors(spec, ds)
    inputs = [dataset_path] + ([init_path] if spec.run.init_from else [])
    ckpt = _checkpointing(cfg, spec, inputs, trajectory_path, log, code)
    log.info(f"run {run}: {spec.model_kind} model, {len(spec.seeds)} seeds"
             f"{f' x {len(spec.slots) // len(spec.seeds)} sweep cells' if spec.run.sweep else ''}, {spec.run.epochs} epochs from epoch "
             f"{spec.start_epoch}, device {device}, threads {torch.get_num_threads()}, batch {spec.run.batch_size}, "
             f"attention {describe(spec.attention)}")
    rec = train_with_progress(model, tensors, spec.plan, device, log, start_epoch=spec.start_epoch, checkpoint=ckpt,
                              param_dims=param_dims(spec))
    embed = None
    if spec.run.n_embed and model.embed_site is not None:  # e.g. z_A of fixed inputs at every snapshot (Fig. 4)
        embed_x, embed_y = _embed_inputs(spec, ds, x_te, y_te)
        embed = (snapshot_site(model, rec.weights, run_inputs(spec, embed_x), model.embed_site), embed_x, embed_y)
    attrs = provenance(cfg.run_slice(run), inputs, device=str(device), code=code)
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
    seeds = spec.slot_seeds
    model = build_run_model(spec, len(seeds))
    if spec.run.init_from:  # the parent's final weights, seed i from seed i
        model.load_arrays(snapshot_arrays(read_dataset(init_path, rule="train").sel(seed=list(spec.seeds)), -1))
    else:
        model.init_seeds(seeds)
    return model


def _embed_inputs(spec: RunSpec, ds, x_te: np.ndarray, y_te: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The first n_embed of the inputs the run's ``embed_inputs`` names: the test set's, or a set its task offers."""
    n, kind = spec.run.n_embed, spec.run.embed_inputs
    if kind == "test":
        return x_te[:n], y_te[:n]
    x, y = registry.load("task", spec.task).embed_inputs(ds, kind)
    return x[:n], y[:n]


def _tensors(spec: RunSpec, ds) -> tuple[dict, tuple[np.ndarray, np.ndarray]]:
    """The engine's input tensors (and the raw probe inputs under ``probe_x_raw``). From a dataset with
    training draws, each slot's training set is its seed's draw (:func:`train_draws`): x_train (S, N, ...), y_train (S, N)."""
    x_te, y_te = dataset_split(ds, "test")
    x_tr, y_tr = train_draws(ds, list(spec.seeds), spec.slot_seeds) if "draw" in ds.coords else dataset_split(ds, "train")
    rc = spec.run
    tensors = {k: run_inputs(spec, v) for k, v in
               dict(x_train=x_tr, x_test=x_te, probe_x=x_te[: rc.n_probe], stats_x=x_te[: rc.n_stats]).items()}
    tensors.update(y_train=torch.as_tensor(y_tr, dtype=torch.long), y_test=torch.as_tensor(y_te, dtype=torch.long),
                   probe_x_raw=x_te[: rc.n_probe])
    return tensors, (x_te, y_te)


def train_draws(ds, seeds: list[int], slot_seeds: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """(x (S, N, ...), y (S, N)): each slot's training draw from a dataset with draws, the i-th of the run's
    ``seeds`` training on draw i (so a replicate's shifted seeds take the draws of its shifted dataset seed);
    a run with more seeds than draws raises, naming the config key."""
    draw = ds.draw.values
    n = int(draw.max()) + 1
    if len(seeds) > n:
        raise ValueError(f"{len(seeds)} seeds but the dataset holds {n} training draws (config key 'draws: {n}'), "
                         f"one per seed; allowed: at most {n} seeds, or more draws")
    index = {s: i for i, s in enumerate(seeds)}
    x, y = ds.x.values, ds.y.values
    return (np.stack([x[draw == index[s]] for s in slot_seeds]), np.stack([y[draw == index[s]] for s in slot_seeds]))


def _checkpointing(cfg: Config, spec: RunSpec, inputs: list[str], trajectory_path: str, log,
                   code: str) -> Checkpointing | None:
    if not spec.run.checkpoint_every:
        return None
    # the code hash too: a checkpoint written by other training code must not be continued by this one
    key = slice_hash({"config": cfg.run_slice(spec.name), "inputs": [file_hash(p) for p in inputs],
                      "code": code})
    ckpt = Checkpointing(resume_path(trajectory_path), spec.run.checkpoint_every, key)
    if ckpt.path.exists():
        log.info(f"found resume checkpoint {ckpt.path}; resuming from it if it matches this config and inputs")
    return ckpt


def resume_path(trajectory_path: str) -> Path:
    """runs/<run>/resume/checkpoint.pt: beside the outputs, not one of them, so a killed job keeps it."""
    return Path(trajectory_path).parent / "resume" / "checkpoint.pt"
