"""A diverged seed stops training: its parameters stay where they were, its metrics become NaN."""
from __future__ import annotations

import torch


class Freezer:
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
