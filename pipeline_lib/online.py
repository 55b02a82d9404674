"""Online training: fresh samples every step, per-parameter and per-slot learning rates.

The epoch engine (``pipeline_lib.engine``) trains on a fixed training set. Tasks that declare
``ONLINE`` (a distribution, e.g. Scan&Snap's) are trained here instead: "epoch" e means "after e
steps", each slot (seed) draws its own fresh batch every step from its own generator, and the
training metrics at step e are those of step e's batch before its update (what the reference logs
print). Recording (test metrics, attention of the probes, weight snapshots) is the epoch engine's
:class:`~pipeline_lib.engine.Recorder`, so the artifacts have the same layout.

Learning rates: parameter ``n`` of slot ``s`` moves at ``lr[s] * lr_ratio[s][n]`` (a sweep gives each
slot its own, as it may its weight decay and momentum): the optimizer is
:class:`~pipeline_lib.slot_optim.SlotSGD`, torch's SGD with a value per slot.
"""
from __future__ import annotations

from typing import Callable, Optional

import torch

from .freezer import Freezer
from .losses import per_seed_loss_acc
from .recording import Recorder, Recording
from .slot_optim import SlotSGD


def train_online(model, sample: Callable[[int], tuple[torch.Tensor, torch.Tensor]], data: dict, run_cfg,
                 slots: list[dict], device: torch.device,
                 callback: Optional[Callable[[int, Optional[dict]], None]] = None) -> Recording:
    """Train ``model`` (initialised, on ``device``) for ``run_cfg.epochs`` steps of fresh batches.

    ``sample(n)`` returns a batch (x (S, n, ...), y (S, n)) with each slot's own samples; ``data``
    holds x_test, y_test and probe_x (the fixed test set of the artifact). The optimizer is SGD
    (``SlotSGD``) with the run's momentum and weight decay and each slot's learning rates.
    """
    if run_cfg.optimizer.name != "sgd":
        raise ValueError(f"config key 'runs.{run_cfg.name}.optimizer.name': the online trainer takes sgd, "
                         f"got {run_cfg.optimizer.name!r}")
    E, B = run_cfg.epochs, int(run_cfg.batch_size)
    x_te, y_te = data["x_test"].to(device), data["y_test"].to(device)
    params = {n: getattr(model, n) for n in model.param_names()}
    opt = SlotSGD(params, slots)
    freezer = Freezer(list(params.values()), model.S, device)
    rec = Recorder(model, data, run_cfg, 0, device)
    for e in range(E + 1):
        rec.evaluate(model, e, x_te, y_te, freezer)
        x, y = sample(B)
        loss_s, acc_s = per_seed_loss_acc(model(x.to(device)), y.to(device))
        total = freezer.observe(loss_s, e)
        rec.train_metrics(e, loss_s, acc_s, freezer)
        if callback is not None:
            callback(e, rec.log_line(e) if e % run_cfg.log_every == 0 or e == E else None)
        if e == E:
            break
        opt.zero_grad()
        total.backward()
        freezer.before_step()
        opt.step()
        freezer.after_step()
    return rec.result([s["run_seed"] for s in slots], E, freezer)
