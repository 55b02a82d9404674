"""Batched-seed training engine (DESIGN section 5).

All seeds of a run train together: every parameter carries a leading seed axis, each seed has its
own initialisation and data order, and the loss is the sum over seeds of each seed's mean loss.
Adam, AdamW and SGD are elementwise, so this is exactly S independent trainings (tested against
training the seeds one by one). A seed whose loss turns non-finite is frozen (its parameters no
longer change) and flagged; the others go on.

Epoch e of the recording means "after e epochs of training" (e = 0 is the initialisation). The
batches come from a batch source (``pipeline_lib.batches``): a fixed training set, or an online
task's fresh samples (one step per "epoch"). Where the source's metrics pass is also the step's (full
batch, fresh samples), the forward pass of step e is the evaluation of the training metrics at epoch
e, so no extra pass is spent on them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np
import torch

from .attention import heat_treatment_beta
from .batches import FreshSamples, TrainingSet
from .checkpointing import Checkpointing, load_checkpoint, save_checkpoint
from .freezer import Freezer
from .losses import evaluate_set, loss_fn, objective_fn
from .lr_schedule import lr_factor
from .recording import Recorder, Recording
from .slot_optim import build_optimizer, build_slot_optimizer, optimizer_state_size


@dataclass
class _Training:
    """The optimizer side of a run: optimizer, learning-rate schedule, batch source (its data order),
    freezer, the model's drop-path sampler (None: it drops nothing), the per-seed loss and accuracy the
    metrics read (``loss_acc``), what the steps descend (``objective``: label-smoothed where the plan asks,
    ``smoothed``) and, under Heat Treatment, each epoch's attention temperature (``heat``; None otherwise)."""

    opt: torch.optim.Optimizer
    sched: Optional[torch.optim.lr_scheduler.LambdaLR]
    source: "TrainingSet | FreshSamples"
    freezer: "Freezer"
    loss_acc: Callable
    objective: Callable
    smoothed: bool
    heat: Optional[np.ndarray]
    drop: Optional[object] = None

    def state_dict(self) -> dict:
        st = {"optimizer": self.opt.state_dict(), "scheduler": self.sched.state_dict() if self.sched else None,
              "data_gens": [g.get_state() for g in self.source.generators], "alive": self.freezer.alive,
              "diverged_epoch": self.freezer.diverged_epoch}
        if self.drop is not None:
            st["drop_gens"] = [g.get_state() for g in self.drop.generators]
        return st

    def load_state_dict(self, st: dict) -> None:
        self.opt.load_state_dict(st["optimizer"])
        if self.sched is not None:
            self.sched.load_state_dict(st["scheduler"])
        for g, gs in zip(self.source.generators, st["data_gens"]):
            g.set_state(gs)
        if self.drop is not None:
            for g, gs in zip(self.drop.generators, st["drop_gens"]):
                g.set_state(gs)
        self.freezer.alive, self.freezer.diverged_epoch = st["alive"], st["diverged_epoch"]


def _training(model, plan, device, source, param_dims: Optional[dict] = None) -> _Training:
    params = [getattr(model, n) for n in model.param_names()]
    if plan.per_slot or plan.sweep or plan.optimizer.lr_ratio:  # values per slot
        if len(plan.slots) != model.S:
            raise ValueError(f"run {plan.name!r}: {len(plan.slots)} slots (sweep cells x seeds) but a model of "
                             f"{model.S}; build the model for the plan's slots")
        opt = build_slot_optimizer(dict(zip(model.param_names(), params)), plan.optimizer, list(plan.slots))
    else:
        opt = build_optimizer(params, plan.optimizer,
                              None if param_dims is None else [tuple(param_dims[n]) for n in model.param_names()],
                              model.param_names(), plan.optimizer_module)
    factor = lr_factor(plan.optimizer, plan.epochs, source.steps_per_epoch)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, factor) if factor is not None else None
    sampler = getattr(model, "drop_path_sampler", None)
    drop = sampler(plan.seeds) if sampler is not None else None
    if drop is not None and source.step_is_metrics_pass:
        raise ValueError(f"run {plan.name!r}: the model's drop_path needs mini-batch steps (its training metrics "
                         "pass is also its step here); allowed: drop_path 0, or an integer batch_size")
    heat = plan.attention.schedule == "heat_treatment"
    return _Training(opt, sched, source, Freezer(params, len(plan.slots), device), loss_fn(model),
                     objective_fn(model, plan.label_smoothing), bool(plan.label_smoothing),
                     temperatures(model, plan.epochs) if heat else None, drop)


def temperatures(model, epochs: int) -> np.ndarray:
    """Heat Treatment's attention temperature in each epoch 0..epochs (1/beta, :func:`heat_treatment_beta`)."""
    return np.array([1.0 / heat_treatment_beta(e, epochs, model.d_head) for e in range(epochs + 1)])


def train_seeds(
    model,
    data: dict,
    plan,
    device: torch.device,
    start_epoch: int = 0,
    callback: Optional[Callable[[int, Optional[dict]], None]] = None,
    checkpoint: Optional[Checkpointing] = None,
    param_dims: Optional[dict] = None,
    source: "TrainingSet | FreshSamples | None" = None,
) -> Recording:
    """Train ``model`` (already initialised, on ``device``, a seed axis of the ``plan``'s slots) as the
    :class:`~pipeline_lib.plumbing.config.TrainingPlan` says, for ``plan.epochs`` epochs.

    ``data`` holds input tensors x_test, probe_x (token ids or image patches), int64 labels y_test,
    and, unless a batch ``source`` is given, the training set x_train (N, ...), y_train (N,), or one per
    slot (x_train (S, N, ...), y_train (S, N)) (a :class:`TrainingSet` of the run's batch size); optionally stats_x: inputs whose attention-weight
    histogram is recorded every epoch by models that declare ``records_attention_histogram``. Models
    that declare ``records_gradients`` have ``grad_summary`` recorded after every backward pass (mean
    over the epoch's steps). Under the run's Heat Treatment schedule the model's ``beta`` is set at the
    start of every epoch. ``callback(epoch, metrics)`` is called every epoch (metrics None) and every
    ``log_every`` epochs with per-seed-median metrics. With ``checkpoint``, the loop's whole state is
    saved every ``checkpoint.every`` epochs and a matching saved state is resumed from: the result
    equals an uninterrupted run's bit for bit (same device and thread count). ``param_dims`` (name ->
    dim names after the seed axis, the model kind's PARAM_DIMS) is passed to optimizer plug-ins. The
    optimizer has a value per slot (``slot_optim``) under a sweep, per-parameter learning rates, or
    where the plan asks for it (``plan.per_slot``).
    """
    E = plan.epochs
    if source is None:
        source = TrainingSet(data["x_train"], data["y_train"], plan.batch_size, plan.seeds, device,
                             per_slot=data["x_train"].dim() > data["x_test"].dim())
    x_te, y_te = data["x_test"].to(device), data["y_test"].to(device)
    tr = _training(model, plan, device, source, param_dims)
    rec = Recorder(model, data, plan, start_epoch, device, tr.loss_acc, source.steps_per_epoch)
    first = _resume(checkpoint, device, model, tr, rec)
    for e in range(first, E + 1):
        if checkpoint is not None and e > first and e % checkpoint.every == 0:
            save_checkpoint(checkpoint, e, {"model": model.state_dict(), **tr.state_dict(), **rec.state})
        if tr.heat is not None:
            model.beta = 1.0 / float(tr.heat[e])
        rec.evaluate(model, e, x_te, y_te, tr.freezer)
        total = _train_metrics(model, rec, tr, start_epoch + e, e)
        if callback is not None:
            callback(start_epoch + e, rec.log_line(e) if e % plan.log_every == 0 or e == E else None)
        if e == E:
            break
        on_grad = rec.grad_hook(model, e, source.steps_per_epoch)
        on_step = rec.step_hook(model, e)
        if source.step_is_metrics_pass:
            _step(tr.opt, tr.sched, tr.freezer, total, on_grad)
            if on_step is not None:
                on_step(0)
        else:
            _minibatch_epoch(model, tr, start_epoch + e + 1, on_grad, on_step)
    if tr.heat is not None:  # after training the model holds the schedule's final temperature, its tau
        model.beta = None
    out = rec.result(plan.seeds, E, tr.freezer, np.full(E + 1, model.tau) if tr.heat is None else tr.heat)
    out.optimizer_state = optimizer_state_size(tr.opt)
    return out


def _resume(checkpoint, device, model, tr: _Training, rec: Recorder) -> int:
    """Restore a matching checkpoint's state; the epoch to continue from (0 without one)."""
    resumed = load_checkpoint(checkpoint, device)
    if resumed is None or any(k not in resumed for k in rec.state):  # none, or from a version recording less
        return 0
    model.load_state_dict(resumed["model"])
    tr.load_state_dict(resumed)
    rec.state = {k: resumed[k] for k in rec.state}
    return resumed["epoch"]


def _train_metrics(model, rec: Recorder, tr: _Training, epoch: int, e: int):
    """Training metrics at epoch e (global ``epoch``). Where the source's metrics pass is also the
    step's, its loss (summed over the alive seeds) is returned for the backward pass."""
    x, y = tr.source.metrics_batch()
    if tr.source.step_is_metrics_pass:
        logits = model(x)
        loss_s, acc_s = tr.loss_acc(logits, y)
        total = tr.freezer.observe(tr.objective(logits, y)[0] if tr.smoothed else loss_s, epoch)
        rec.train_metrics(e, loss_s, acc_s, tr.freezer)
        return total
    with torch.no_grad():
        loss_s, acc_s = evaluate_set(model, tr.loss_acc, x, y)
        tr.freezer.observe(loss_s, epoch)
        rec.train_metrics(e, loss_s, acc_s, tr.freezer)
    return None


def _minibatch_epoch(model, tr: _Training, epoch_after: int, on_grad,
                     on_step: Optional[Callable[[int], None]] = None) -> None:
    """One epoch of the source's mini-batch steps; ``on_step(j)`` is called after step j (the
    Recorder's per-step attention)."""
    for j, (x, y, scale) in enumerate(tr.source.steps()):  # scale: the step's weight in the epoch's mean gradient
        loss_s, _ = tr.objective(_forward(model, x, tr.drop), y)
        _step(tr.opt, tr.sched, tr.freezer, tr.freezer.observe(loss_s, epoch_after),
              None if on_grad is None else (lambda s=scale: on_grad(s)))
        if on_step is not None:
            on_step(j)


def _forward(model, x: torch.Tensor, drop) -> torch.Tensor:
    """A training step's forward pass, with the drop-path sampler ``drop`` (if any) set on the model for it alone."""
    if drop is None:
        return model(x)
    model.dropper = drop
    try:
        return model(x)
    finally:
        model.dropper = None


def _step(opt, sched, freezer: Freezer, loss: torch.Tensor, on_grad: Optional[Callable] = None) -> None:
    opt.zero_grad(set_to_none=True)
    loss.backward()
    if on_grad is not None:
        on_grad()
    freezer.before_step()
    opt.step()
    freezer.after_step()
    if sched is not None:
        sched.step()
