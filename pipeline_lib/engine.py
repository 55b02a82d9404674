"""Batched-seed training engine (DESIGN section 5).

All seeds of a run train together: every parameter carries a leading seed axis, each seed has its
own initialisation and data order, and the loss is the sum over seeds of each seed's mean loss.
Adam, AdamW and SGD are elementwise, so this is exactly S independent trainings (tested against
training the seeds one by one). A seed whose loss turns non-finite is frozen (its parameters no
longer change) and flagged; the others go on.

Epoch e of the recording means "after e epochs of training" (e = 0 is the initialisation). In
full-batch mode the forward pass of step e is also the evaluation of the training metrics at
epoch e, so no extra pass is spent on them.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import numpy as np
import torch
import torch.nn.functional as F

from .attention import heat_treatment_beta, small_last
from .models import seed_generator


def tune_allocator() -> bool:
    """Keep freed memory in the process heap (glibc only; a no-op elsewhere).

    Each training step allocates and frees the same ~10 MB activations. By default glibc hands such
    blocks back to the kernel and page-faults them in again on the next step; raising the mmap and
    trim thresholds keeps them, which measured 39 -> 32 ms per step on the Fig. 5 model (10 seeds,
    full batch, 1 thread). Call once at the start of a training process; returns True if applied.
    """
    import ctypes
    import ctypes.util
    import platform

    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
    ok_mmap = libc.mallopt(M_MMAP_THRESHOLD, 32 << 20)  # glibc's maximum
    ok_trim = libc.mallopt(M_TRIM_THRESHOLD, 1 << 30)
    return bool(ok_mmap and ok_trim)


def resolve_device(setting: str = "auto") -> torch.device:
    """'auto' -> CUDA when available, else CPU; 'cpu'/'cuda' force one (error if CUDA is missing)."""
    if setting == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if setting == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("config key 'device' is 'cuda' but torch sees no CUDA device; use 'auto' or 'cpu'")
    return torch.device(setting)


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


def build_optimizer(params, opt_cfg, dims: Optional[list] = None) -> torch.optim.Optimizer:
    """torch's Adam, AdamW or SGD; any other name is an optimizer plug-in of ``pipeline_lib/optimizers``
    (its ``build(params, opt_cfg, dims)``, ``dims``: each parameter's dim names after the seed axis;
    the run's code hash includes that module, see ``jobs.train_code``)."""
    name = opt_cfg.name
    if name not in BUILTIN_OPTIMIZERS:
        from . import registry  # plumbing: looks the plug-in up by name

        if dims is None:
            raise ValueError(f"optimizer {name!r} needs the parameters' dim names (train_seeds(param_dims=...))")
        return registry.load("optimizer", name).build(params, opt_cfg, dims)
    # foreach: one call per operation for all parameters instead of a Python loop over them (the
    # per-step overhead of mini-batch training); the same arithmetic, equal bit for bit (checked for
    # Adam, AdamW and SGD with and without momentum and weight decay).
    if name == "adam":
        return torch.optim.Adam(params, lr=opt_cfg.lr, betas=opt_cfg.betas, weight_decay=opt_cfg.weight_decay,
                                foreach=True)
    if name == "adamw":
        return torch.optim.AdamW(params, lr=opt_cfg.lr, betas=opt_cfg.betas, weight_decay=opt_cfg.weight_decay,
                                 foreach=True)
    if name == "sgd":
        return torch.optim.SGD(params, lr=opt_cfg.lr, momentum=opt_cfg.momentum, weight_decay=opt_cfg.weight_decay,
                               foreach=True)
    raise ValueError(f"unknown optimizer {name!r}; allowed: adam, adamw, sgd")


BUILTIN_OPTIMIZERS = ("adam", "adamw", "sgd")


def optimizer_state_size(opt: torch.optim.Optimizer) -> dict:
    """Elements and bytes of every tensor the optimizer keeps per parameter (moments, projectors,
    step counters), measured on the live state."""
    tensors = [v for st in opt.state.values() for v in st.values() if torch.is_tensor(v)]
    return {"elements": int(sum(t.numel() for t in tensors)),
            "bytes": int(sum(t.numel() * t.element_size() for t in tensors))}


def loss_fn(model) -> Callable:
    """The model's per-seed (loss, accuracy) of its outputs and the labels: its ``loss_acc`` when it
    declares one (e.g. a centred MSE), else cross-entropy (:func:`per_seed_loss_acc`)."""
    return getattr(model, "loss_acc", per_seed_loss_acc)


def per_seed_loss_acc(logits: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean cross-entropy and accuracy per seed. logits (S, B, V); y (B,) or (S, B)."""
    S, B, V = logits.shape
    y = y.expand(S, B)
    if small_last(logits):  # cross-entropy with the class axis in front: see attention.softmax_last
        log_p = torch.log_softmax(logits.movedim(-1, 0).contiguous(), dim=0)  # (V, S, B)
        loss = -log_p.gather(0, y[None]).squeeze(0).mean(1)
    else:
        loss = F.cross_entropy(logits.reshape(S * B, V), y.reshape(S * B), reduction="none").view(S, B).mean(1)
    acc = (logits.argmax(-1) == y).float().mean(1)
    return loss, acc


EVAL_CHUNK = 1024  # examples per evaluation pass


@torch.no_grad()
def evaluate_set(model, loss_acc: Callable, x: torch.Tensor, y: torch.Tensor, chunk: int = EVAL_CHUNK):
    """Per-seed mean loss and accuracy of the model on all of (x, y), ``chunk`` examples at a time.

    Chunks keep every intermediate tensor small: a whole test set at once (10,249 examples x 10
    seeds x 128 hidden units: 52 MB per tensor) makes the allocator map and page-fault each one
    afresh (an out-of-place add on it: 25 ms against 5.5 ms in place), and it sets the peak memory.
    The accuracy is exact (the correct counts are summed); the loss is the chunks' means weighted
    by their sizes, equal to the mean over all up to the order of the float sums. This needs the
    model's ``loss_acc`` to return per-seed means over examples and the fraction of examples correct
    (both of the workflow's do); a set of at most ``chunk`` examples, or labels other than (N,), is
    one pass, as before."""
    N = x.shape[0]  # inputs (N, ...) and labels (N,), shared by all seeds
    if N <= chunk or y.dim() != 1 or y.shape[0] != N:  # another layout: one pass, as before
        return loss_acc(model(x), y)
    loss_sum, correct = 0.0, 0.0
    for i in range(0, N, chunk):
        loss, acc = loss_acc(model(x[i:i + chunk]), y[i:i + chunk])
        n = min(chunk, N - i)
        loss_sum = loss_sum + loss * n
        correct = correct + torch.round(acc * n)
    return loss_sum / N, correct / N


class _Freezer:
    """Keeps a diverged seed's parameters where they were when its loss became non-finite."""

    def __init__(self, params: list[torch.nn.Parameter], n_seeds: int, device):
        self.params = params
        self.alive = torch.ones(n_seeds, dtype=torch.bool, device=device)
        self.diverged_epoch = torch.full((n_seeds,), -1, dtype=torch.long, device=device)
        self.saved = [p.detach().clone() for p in params]
        self._skip = False

    def observe(self, loss: torch.Tensor, epoch: int) -> torch.Tensor:
        """Update the alive mask from per-seed losses; return the loss to minimise (sum over alive)."""
        finite = torch.isfinite(loss)
        self.diverged_epoch = torch.where(self.alive & ~finite, epoch, self.diverged_epoch)
        self.alive = self.alive & finite
        return torch.where(self.alive, loss, torch.zeros_like(loss)).sum()

    def _all_alive(self) -> bool:
        """On the CPU, reading the mask costs nothing, and while every seed is alive (nearly always)
        the copy and the select are skipped. On a GPU that read would be a host sync every step, so
        there the select always runs (a handful of small elementwise operations)."""
        return self.alive.device.type == "cpu" and bool(self.alive.all())

    @torch.no_grad()
    def before_step(self):
        self._skip = self._all_alive()
        if self._skip:
            return
        for p, s in zip(self.params, self.saved):
            s.copy_(p)

    @torch.no_grad()
    def after_step(self):
        if self._skip:  # where(alive, p, saved) with every seed alive is p itself
            return
        for p, s in zip(self.params, self.saved):
            mask = self.alive.view(-1, *([1] * (p.dim() - 1)))
            p.copy_(torch.where(mask, p, s))

    def mask(self, values: torch.Tensor) -> torch.Tensor:
        return torch.where(self.alive, values, torch.full_like(values, float("nan")))


@dataclass(frozen=True)
class Checkpointing:
    """Where and how often ``train_seeds`` saves its resume state; ``key`` identifies the run's
    config (a checkpoint with another key is ignored)."""

    path: Path
    every: int
    key: str


def _save_checkpoint(ck: Checkpointing, epoch: int, state: dict) -> None:
    ck.path.parent.mkdir(parents=True, exist_ok=True)
    tmp = ck.path.with_suffix(".tmp")
    torch.save({"key": ck.key, "epoch": epoch, **state}, tmp)
    os.replace(tmp, ck.path)  # atomic: a kill leaves the previous checkpoint or the new one


def _load_checkpoint(ck: Optional[Checkpointing], device) -> Optional[dict]:
    if ck is None or not ck.path.exists():
        return None
    try:
        state = torch.load(ck.path, map_location=device, weights_only=False)
    except Exception:  # a checkpoint from a killed write or an old version: start afresh
        return None
    return state if state.get("key") == ck.key else None


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
    except at weight snapshots); its state is what a resume checkpoint saves besides the model's."""

    def __init__(self, model, data: dict, run_cfg, start_epoch: int, device, steps_per_epoch: int = 1):
        E = run_cfg.epochs
        self.start_epoch = start_epoch
        self.probe_x = data["probe_x"].to(device)
        with torch.no_grad():
            probe_att = model.attention(self.probe_x)  # None: the model has no attention to record
        self.att_epochs = ([] if probe_att is None else
                           [e - start_epoch for e in recorded_epochs(run_cfg.record_attention, start_epoch, start_epoch + E)])
        self.snap_epochs = [e - start_epoch for e in recorded_epochs(run_cfg.record_weights, start_epoch, start_epoch + E)]
        self.att_index = {e: i for i, e in enumerate(self.att_epochs)}
        self.snap_index = {e: i for i, e in enumerate(self.snap_epochs)}
        self.loss_acc = loss_fn(model)
        self.steps_per_epoch = steps_per_epoch
        self.step_epochs = 0 if probe_att is None else min(run_cfg.step_attention_epochs, E)
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
        heat = run_cfg.attention.schedule == "heat_treatment"
        self.heat = heat
        self.temperature = np.array([1.0 / heat_treatment_beta(e, E, model.d_head) if heat else model.tau
                                     for e in range(E + 1)])

    @torch.no_grad()
    def evaluate(self, model, e: int, x_te, y_te, freezer: "_Freezer") -> None:
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

    def train_metrics(self, e: int, loss_s, acc_s, freezer: "_Freezer") -> None:
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

    def result(self, seeds, E: int, freezer: "_Freezer") -> Recording:
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
            temperature=self.temperature,
            grads=None if st["grads"] is None else {n: seed_first(g) for n, g in st["grads"].items()},
            attention_hist=None if st["hist"] is None else seed_first(st["hist"]),
            step_attention=None if st["step_attention"] is None else seed_first(st["step_attention"]),
            steps_per_epoch=self.steps_per_epoch,
        )


@dataclass
class _Training:
    """The optimizer side of a run: optimizer, warm-up schedule, per-seed data order, freezer."""

    opt: torch.optim.Optimizer
    sched: Optional[torch.optim.lr_scheduler.LambdaLR]
    data_gens: list
    freezer: "_Freezer"

    def state_dict(self) -> dict:
        return {"optimizer": self.opt.state_dict(), "scheduler": self.sched.state_dict() if self.sched else None,
                "data_gens": [g.get_state() for g in self.data_gens], "alive": self.freezer.alive,
                "diverged_epoch": self.freezer.diverged_epoch}

    def load_state_dict(self, st: dict) -> None:
        self.opt.load_state_dict(st["optimizer"])
        if self.sched is not None:
            self.sched.load_state_dict(st["scheduler"])
        for g, gs in zip(self.data_gens, st["data_gens"]):
            g.set_state(gs)
        self.freezer.alive, self.freezer.diverged_epoch = st["alive"], st["diverged_epoch"]


def _training(model, run_cfg, seeds, device, steps_per_epoch: int, param_dims: Optional[dict] = None) -> _Training:
    params = [getattr(model, n) for n in model.param_names()]
    if getattr(run_cfg, "sweep", ()) or getattr(run_cfg.optimizer, "lr_ratio", ()):  # values per slot
        from .slot_optim import build_slot_optimizer

        slots = run_cfg.slots()
        if not len(slots) == len(seeds) == model.S:
            raise ValueError(f"run {run_cfg.name!r}: {len(slots)} slots (sweep cells x seeds) but {len(seeds)} seeds "
                             f"given and a model of {model.S}; train the run's slots (RunConfig.slots())")
        opt = build_slot_optimizer(dict(zip(model.param_names(), params)), run_cfg.optimizer, slots)
    else:
        opt = build_optimizer(params, run_cfg.optimizer,
                              None if param_dims is None else [tuple(param_dims[n]) for n in model.param_names()])
    warmup_steps = run_cfg.optimizer.warmup_epochs * steps_per_epoch
    sched = (torch.optim.lr_scheduler.LambdaLR(opt, lambda step: min(1.0, (step + 1) / warmup_steps))
             if warmup_steps else None)
    return _Training(opt, sched, [seed_generator(s, "data") for s in seeds], _Freezer(params, len(seeds), device))


def train_seeds(
    model,
    data: dict,
    run_cfg,
    seeds: list[int],
    device: torch.device,
    start_epoch: int = 0,
    callback: Optional[Callable[[int, Optional[dict]], None]] = None,
    checkpoint: Optional[Checkpointing] = None,
    param_dims: Optional[dict] = None,
) -> Recording:
    """Train ``model`` (already initialised, on ``device``) for ``run_cfg.epochs`` epochs.

    ``data`` holds input tensors x_train (N, ...), x_test, probe_x (token ids or image patches), int64
    labels y_train (N,), y_test, and optionally stats_x: inputs whose attention-weight histogram is
    recorded every epoch by models that declare ``records_attention_histogram``. Models that declare
    ``records_gradients`` have ``grad_summary`` recorded after every backward pass (mean over the
    epoch's steps). Under the run's Heat Treatment schedule the model's ``beta`` is set at the start
    of every epoch. ``callback(epoch, metrics)`` is called every epoch (metrics None) and every
    ``log_every`` epochs with per-seed-median metrics. With ``checkpoint``, the loop's whole state is
    saved every ``checkpoint.every`` epochs and a matching saved state is resumed from: the result
    equals an uninterrupted run's bit for bit (same device and thread count). ``param_dims`` (name ->
    dim names after the seed axis, the model kind's PARAM_DIMS) is passed to optimizer plug-ins.
    """
    E = run_cfg.epochs
    x_tr, y_tr = data["x_train"].to(device), data["y_train"].to(device)
    x_te, y_te = data["x_test"].to(device), data["y_test"].to(device)
    N = x_tr.shape[0]
    full_batch = run_cfg.batch_size == "full" or run_cfg.batch_size >= N
    B = N if full_batch else run_cfg.batch_size
    steps_per_epoch = 1 if full_batch else math.ceil(N / B)
    tr = _training(model, run_cfg, seeds, device, steps_per_epoch, param_dims)
    rec = Recorder(model, data, run_cfg, start_epoch, device, steps_per_epoch)
    first = _resume(checkpoint, device, model, tr, rec)
    for e in range(first, E + 1):
        if checkpoint is not None and e > first and e % checkpoint.every == 0:
            _save_checkpoint(checkpoint, e, {"model": model.state_dict(), **tr.state_dict(), **rec.state})
        if rec.heat:
            model.beta = 1.0 / float(rec.temperature[e])
        rec.evaluate(model, e, x_te, y_te, tr.freezer)
        total = _train_metrics(model, rec, tr.freezer, e, x_tr, y_tr, full_batch, start_epoch)
        if callback is not None:
            callback(start_epoch + e, rec.log_line(e) if e % run_cfg.log_every == 0 or e == E else None)
        if e == E:
            break
        on_grad = rec.grad_hook(model, e, steps_per_epoch)
        on_step = rec.step_hook(model, e)
        if full_batch:
            _step(tr.opt, tr.sched, tr.freezer, total, on_grad)
            if on_step is not None:
                on_step(0)
        else:
            _minibatch_epoch(model, tr, x_tr, y_tr, B, steps_per_epoch, start_epoch + e + 1, on_grad, device, on_step)
    if rec.heat:  # after training the model holds the schedule's final temperature, its tau
        model.beta = None
    out = rec.result(seeds, E, tr.freezer)
    out.optimizer_state = optimizer_state_size(tr.opt)
    return out


def _resume(checkpoint, device, model, tr: _Training, rec: Recorder) -> int:
    """Restore a matching checkpoint's state; the epoch to continue from (0 without one)."""
    resumed = _load_checkpoint(checkpoint, device)
    if resumed is None or any(k not in resumed for k in rec.state):  # none, or from a version recording less
        return 0
    model.load_state_dict(resumed["model"])
    tr.load_state_dict(resumed)
    rec.state = {k: resumed[k] for k in rec.state}
    return resumed["epoch"]


def _train_metrics(model, rec: Recorder, freezer: "_Freezer", e: int, x_tr, y_tr, full_batch: bool, start_epoch: int):
    """Training metrics at epoch e. In full-batch mode this forward pass is also the training step's,
    so its loss (summed over the alive seeds) is returned for the backward pass."""
    if full_batch:
        loss_s, acc_s = rec.loss_acc(model(x_tr), y_tr)
        total = freezer.observe(loss_s, start_epoch + e)
        rec.train_metrics(e, loss_s, acc_s, freezer)
        return total
    with torch.no_grad():
        loss_s, acc_s = evaluate_set(model, rec.loss_acc, x_tr, y_tr)
        freezer.observe(loss_s, start_epoch + e)
        rec.train_metrics(e, loss_s, acc_s, freezer)
    return None


def _minibatch_epoch(model, tr: _Training, x_tr, y_tr, B: int, steps: int, epoch_after: int, on_grad, device,
                     on_step: Optional[Callable[[int], None]] = None) -> None:
    """One epoch of mini-batch steps; each seed draws its own order of the training set; ``on_step(j)``
    is called after step j (the Recorder's per-step attention)."""
    N = x_tr.shape[0]
    loss_acc = loss_fn(model)
    perm = torch.stack([torch.randperm(N, generator=g) for g in tr.data_gens]).to(device)  # (S, N)
    for j in range(steps):
        idx = perm[:, j * B:(j + 1) * B]  # (S, b): each seed its own order
        scale = idx.shape[1] / N  # the epoch's mean gradient weighs each step by its size
        loss_s, _ = loss_acc(model(x_tr[idx]), y_tr[idx])
        _step(tr.opt, tr.sched, tr.freezer, tr.freezer.observe(loss_s, epoch_after),
              None if on_grad is None else (lambda s=scale: on_grad(s)))
        if on_step is not None:
            on_step(j)


def _step(opt, sched, freezer: _Freezer, loss: torch.Tensor, on_grad: Optional[Callable] = None) -> None:
    opt.zero_grad(set_to_none=True)
    loss.backward()
    if on_grad is not None:
        on_grad()
    freezer.before_step()
    opt.step()
    freezer.after_step()
    if sched is not None:
        sched.step()
