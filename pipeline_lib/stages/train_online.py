"""Stage `train_online`: train a run of an online task (fresh samples every step: the engine's loop
with the batch source :class:`~pipeline_lib.batches.FreshSamples`); writes runs/<run>/trajectory.h5 and weights.h5 in the layout of stage
`train` ("epoch" = step).

Without a sweep the ``seed`` axis holds the run's seeds. With one, it holds the slots (cell x seed,
cell-major) numbered 0..n-1, with coordinates ``run_seed`` (the seed a slot's initialisation and data
come from: the same in every cell), ``lr``, ``weight_decay``, ``momentum`` and ``lr_ratio_<param>``
(``stages.train.slot_axis``, shared with the epoch engine's sweeps). Runs take seconds to minutes, so
no resume checkpoint is kept (an interrupted job simply reruns).
"""
from __future__ import annotations

import dataclasses

import torch

from ..artifacts import slot_axis, trajectory_dataset, weights_dataset
from ..attention import describe
from ..batches import FreshSamples
from ..models import build_run_model, param_dims, run_inputs, seed_generator
from ..plumbing import registry
from ..plumbing.config import Config
from ..plumbing.device import resolve_device
from ..plumbing.logs import job_logger
from ..plumbing.store import provenance, read_dataset, write_dataset
from ..selection import dataset_split
from .progress import train_with_progress


def train_online_run(cfg: Config, run: str, dataset_path: str, trajectory_path: str, weights_path: str,
                     threads: int = 1, log_path: str | None = None, code: str = ""):
    """Train all slots of online run ``run``; ``code``: the job's code param, kept in the provenance."""
    spec = cfg.run_spec(run)
    torch.set_num_threads(max(1, threads))
    device = resolve_device(spec.device)
    log = job_logger(log_path)
    ds = read_dataset(dataset_path, rule="dataset")
    slots, seeds = spec.slots, spec.slot_seeds
    model = build_run_model(spec, len(slots))
    model.init_seeds(seeds)
    model.to(device)
    x_te, y_te = dataset_split(ds, "test")
    data = {"x_test": run_inputs(spec, x_te), "y_test": torch.as_tensor(y_te, dtype=torch.long),
            "probe_x": run_inputs(spec, x_te[: spec.run.n_probe])}
    generators = [seed_generator(s, "data") for s in seeds]
    source = FreshSamples(registry.load("task", spec.task).sampler(ds, generators), spec.run.batch_size, generators,
                          device)
    log.info(f"run {run}: {spec.model_kind} model, {len(slots)} slots ({len(spec.seeds)} seeds x "
             f"{len(slots) // len(spec.seeds)} sweep cells), {spec.run.epochs} steps of {spec.run.batch_size} fresh "
             f"samples, device {device}, threads {torch.get_num_threads()}")
    # an online task's runs are SGD with each slot's learning rates (the slot optimizer, sweep or not)
    plan = dataclasses.replace(spec.plan, per_slot=True)
    rec = train_with_progress(model, data, plan, device, log, unit="step", source=source)
    ids, coords = slot_axis(spec)
    attrs = provenance(cfg.run_slice(run), [dataset_path], device=str(device), code=code)
    attrs.update(run=run, start_epoch=0, init_from="", dataset=spec.dataset, threads=torch.get_num_threads(),
                 model_kind=spec.model_kind, attention=describe(spec.attention), online=1,
                 swept=", ".join(k for k, _ in spec.run.sweep),
                 **{k: v for k, v in ds.attrs.items() if k.startswith("task_")})
    write_dataset(weights_dataset(rec, ids, attrs, param_dims(spec)).assign_coords(coords), weights_path, {})
    traj = trajectory_dataset(rec, ids, x_te[: spec.run.n_probe], attrs).assign_coords(coords)
    traj["epoch"].attrs["description"] = "training step (online task: a fresh batch every step)"
    write_dataset(traj, trajectory_path, {})
    return rec

