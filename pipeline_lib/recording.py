"""What a run records (its recording schedule, the on-device recorder) and the host-side record it returns."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np
import torch

from .freezer import Freezer
from .losses import evaluate_set


@dataclass
class Recording:
    """Everything a run records, as host numpy arrays; seeds along axis 0 unless noted."""

    epochs: np.ndarray  # (E+1,) global epoch numbers
    train_loss: np.ndarray  # (S, E+1)
    train_acc: np.ndarray
    test_loss: np.ndarray
    test_acc: np.ndarray
    attention_epochs: np.ndarray  # (A,)
    attention: Optional[np.ndarray]  # (S, A, n_probe, positions); None for a model without attention
    snapshot_epochs: np.ndarray  # (K,)
    weights: dict  # name -> (K, S, ...)
    diverged_epoch: np.ndarray  # (S,) first epoch with a non-finite loss, -1 if none
    temperature: np.ndarray  # (E+1,) attention temperature used in epoch e (1/beta under Heat Treatment)
    grads: Optional[dict] = None  # name -> (S, E+1, ...): mean |grad| during epoch e (models with grad_summary)
    attention_hist: Optional[np.ndarray] = None  # (S, E+1, L, bins): attention weights of stats_x at epoch e
    optimizer_state: Optional[dict] = None  # elements and bytes of the optimizer's state at the end (all seeds)
    step_attention: Optional[np.ndarray] = None  # (S, n+1, n_probe, positions): after each of the first n steps
    steps_per_epoch: int = 1


def recorded_epochs(schedule, start: int, stop: int) -> list[int]:
    """Epochs in [start, stop] a ScheduleConfig records: every epoch up to ``dense_until``,
    ``log_points`` log-spaced ones, every multiple of ``every``; both ends always."""
    n = stop - start
    local = {0, n}
    local.update(range(0, min(schedule.dense_until, n) + 1))
    if schedule.log_points and n > 0:
        for i in range(schedule.log_points):
            local.add(int(round(n ** (i / max(schedule.log_points - 1, 1)))))
    if schedule.every:
        local.update(range(0, n + 1, schedule.every))
    return sorted(start + e for e in local if 0 <= e <= n)


class Recorder:
    """What a run records, preallocated on the device and written into once per epoch (no host sync
    except at weight snapshots); its state is what a resume checkpoint saves besides the model's. It observes
    only: the metrics are read with ``loss_acc`` (the engine's per-seed loss and accuracy), and the training
    objective and the temperature schedule are the engine's."""

    def __init__(self, model, data: dict, plan, start_epoch: int, device, loss_acc: Callable,
                 steps_per_epoch: int = 1):
        E = plan.epochs
        self.start_epoch = start_epoch
        self.probe_x = data["probe_x"].to(device)
        with torch.no_grad():
            probe_att = model.attention(self.probe_x)  # None: the model has no attention to record
        self.att_epochs = ([] if probe_att is None else
                           [e - start_epoch for e in recorded_epochs(plan.record_attention, start_epoch, start_epoch + E)])
        self.snap_epochs = [e - start_epoch for e in recorded_epochs(plan.record_weights, start_epoch, start_epoch + E)]
        self.att_index = {e: i for i, e in enumerate(self.att_epochs)}
        self.snap_index = {e: i for i, e in enumerate(self.snap_epochs)}
        self.loss_acc = loss_acc
        self.steps_per_epoch = steps_per_epoch
        self.step_epochs = 0 if probe_att is None else min(plan.step_attention_epochs, E)
        self.stats_x = data["stats_x"].to(device) if "stats_x" in data and model.records_attention_histogram else None
        with torch.no_grad():
            self.state = {
                "metrics": torch.full((4, E + 1, model.S), float("nan"), device=device),  # train/test loss/acc
                "attention": (None if probe_att is None else
                              torch.zeros(len(self.att_epochs), *probe_att.shape, device=device)),
                "step_attention": (torch.zeros(self.step_epochs * steps_per_epoch + 1, *probe_att.shape, device=device)
                                   if self.step_epochs else None),
                "weights": {n: np.zeros((len(self.snap_epochs), *getattr(model, n).shape), dtype=np.float32)
                            for n in model.param_names()},
                "hist": (torch.zeros(E + 1, *model.attention_histogram(self.stats_x).shape, device=device)
                         if self.stats_x is not None else None),
                "grads": ({n: torch.full((E + 1, *getattr(model, n).shape[:-2]), float("nan"), device=device)
                           for n in ("W_Q", "W_K", "W_V")} if model.records_gradients else None),
            }

    @torch.no_grad()
    def evaluate(self, model, e: int, x_te, y_te, freezer: "Freezer") -> None:
        """Test metrics, attention of the probes, histogram and weight snapshot after e epochs."""
        st = self.state
        if st["hist"] is not None:
            st["hist"][e] = model.attention_histogram(self.stats_x)
        te_loss, te_acc = evaluate_set(model, self.loss_acc, x_te, y_te)
        st["metrics"][2, e], st["metrics"][3, e] = freezer.mask(te_loss), freezer.mask(te_acc)
        if e in self.att_index:
            st["attention"][self.att_index[e]] = model.attention(self.probe_x)
        if e in self.snap_index:
            for n in st["weights"]:
                st["weights"][n][self.snap_index[e]] = getattr(model, n).detach().cpu().numpy()

    def train_metrics(self, e: int, loss_s, acc_s, freezer: "Freezer") -> None:
        self.state["metrics"][0, e], self.state["metrics"][1, e] = freezer.mask(loss_s.detach()), freezer.mask(acc_s)

    def log_line(self, e: int) -> dict:
        """Per-seed-median metrics at epoch e (a host sync: only every log_every epochs)."""
        m = self.state["metrics"][:, e].cpu().numpy()
        return {k: float(np.nanmedian(v)) if np.isfinite(v).any() else float("nan")
                for k, v in zip(("train_loss", "train_acc", "test_loss", "test_acc"), m)}

    def step_hook(self, model, e: int) -> Optional[Callable[[int], None]]:
        """For the epochs of ``step_attention_epochs``: records the probes' attention after step j of
        epoch e (and, before epoch 0's first step, at the start)."""
        if e >= self.step_epochs:
            return None
        att = self.state["step_attention"]
        if e == 0:
            with torch.no_grad():
                att[0] = model.attention(self.probe_x)

        @torch.no_grad()
        def after_step(j: int, first=e * self.steps_per_epoch + 1):
            att[first + j] = model.attention(self.probe_x)
        return after_step

    def grad_hook(self, model, e: int, steps_per_epoch: int) -> Optional[Callable]:
        """Called after each backward pass of epoch e: adds the step's share of the mean |grad|."""
        grads = self.state["grads"]
        if grads is None:
            return None

        def on_grad(scale=1.0 / steps_per_epoch):
            for n, v in model.grad_summary().items():
                grads[n][e] = torch.nan_to_num(grads[n][e], nan=0.0) + scale * v
        return on_grad

    def result(self, seeds, E: int, freezer: "Freezer", temperature: np.ndarray) -> Recording:
        """The record, on the host; ``temperature``: the attention temperature of each epoch (the engine's)."""
        st = self.state
        m = st["metrics"].cpu().numpy().transpose(0, 2, 1)  # (4, S, E+1)
        seed_first = lambda t: np.moveaxis(t.cpu().numpy(), 1, 0)  # noqa: E731  (E+1, S, ...) -> (S, E+1, ...)
        return Recording(
            epochs=np.arange(self.start_epoch, self.start_epoch + E + 1),
            train_loss=m[0], train_acc=m[1], test_loss=m[2], test_acc=m[3],
            attention_epochs=np.array(self.att_epochs) + self.start_epoch,
            attention=None if st["attention"] is None else st["attention"].cpu().numpy().transpose(1, 0, 2, 3),
            snapshot_epochs=np.array(self.snap_epochs) + self.start_epoch,
            weights=st["weights"], diverged_epoch=freezer.diverged_epoch.cpu().numpy(),
            temperature=temperature,
            grads=None if st["grads"] is None else {n: seed_first(g) for n, g in st["grads"].items()},
            attention_hist=None if st["hist"] is None else seed_first(st["hist"]),
            step_attention=None if st["step_attention"] is None else seed_first(st["step_attention"]),
            steps_per_epoch=self.steps_per_epoch,
        )
