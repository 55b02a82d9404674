"""Where the training loop's batches come from (``pipeline_lib.engine``).

A batch source gives the loop, for every epoch, the batch whose per-seed loss and accuracy are the
epoch's training metrics, and the epoch's training steps:

- :class:`TrainingSet`: a fixed training set. In full-batch mode the metrics' forward pass over the
  whole set is also the epoch's one step. With mini-batches the metrics are an evaluation of the whole
  set (no gradient) and the epoch is ``ceil(N / B)`` steps, each seed drawing its own order.
- :class:`FreshSamples`: an online task's distribution (a task module's ``sampler``). "Epoch" e means
  "after e steps": every step draws a fresh batch per slot, and the training metrics at step e are
  those of step e's batch before its update (what the reference logs print).

Both keep each seed's data-order generators, whose state a resume checkpoint saves.
"""
from __future__ import annotations

import math
from typing import Callable, Iterator

import torch

from .models import seed_generator


class TrainingSet:
    """A fixed training set, full batch or mini-batches of ``batch_size``: one that every slot shares
    (x (N, ...), y (N, ...)) or, ``per_slot``, one per slot (x (S, N, ...), y (S, N, ...): each seed its
    own data draw)."""

    def __init__(self, x: torch.Tensor, y: torch.Tensor, batch_size, seeds: list[int], device,
                 per_slot: bool = False):
        self.x, self.y, self.per_slot = x.to(device), y.to(device), per_slot
        self.n = N = self.x.shape[1 if per_slot else 0]
        self.full_batch = batch_size == "full" or batch_size >= N
        self.batch = N if self.full_batch else int(batch_size)
        self.steps_per_epoch = 1 if self.full_batch else math.ceil(N / self.batch)
        self.generators = [seed_generator(s, "data") for s in seeds]
        self.device = device

    @property
    def step_is_metrics_pass(self) -> bool:
        """Whether the epoch's one step back-propagates the training metrics' forward pass."""
        return self.full_batch

    def metrics_batch(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The inputs and labels of the epoch's training metrics: the whole set."""
        return self.x, self.y

    def steps(self) -> Iterator[tuple[torch.Tensor, torch.Tensor, float]]:
        """One epoch of mini-batches (x (S, b, ...), y (S, b), the step's weight b / N in the epoch's
        mean gradient), each seed in its own order (of its own set, when the slots have one each)."""
        N = self.n
        perm = torch.stack([torch.randperm(N, generator=g) for g in self.generators]).to(self.device)  # (S, N)
        slot = torch.arange(perm.shape[0], device=self.device)[:, None]
        for j in range(self.steps_per_epoch):
            idx = perm[:, j * self.batch:(j + 1) * self.batch]  # (S, b): each seed its own order
            rows = (slot, idx) if self.per_slot else idx  # of its own set, or of the shared one
            yield self.x[rows], self.y[rows], idx.shape[1] / N


class FreshSamples:
    """Fresh samples every step from ``sample(n) -> (x (S, n, ...), y (S, n))``, which draws with
    ``generators`` (one per slot). The step trains on the metrics pass's batch, so there is no
    ``steps``."""

    steps_per_epoch = 1
    step_is_metrics_pass = True

    def __init__(self, sample: Callable[[int], tuple[torch.Tensor, torch.Tensor]], batch_size,
                 generators: list[torch.Generator], device):
        self.sample, self.batch, self.generators, self.device = sample, int(batch_size), generators, device

    def metrics_batch(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Step e's batch: its metrics are the step's training metrics, its loss the step's loss."""
        x, y = self.sample(self.batch)
        return x.to(self.device), y.to(self.device)
