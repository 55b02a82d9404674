"""Learning-rate schedules of a run (``optimizer.schedule``), as factors on the optimizer's learning rate.

* ``constant``: the learning rate throughout; with ``warmup_epochs`` > 0 a linear warm-up from 0,
  step by step: factor min(1, (step + 1) / warm-up steps).
* ``cosine``: timm's ``CosineLRScheduler`` as the Eureka paper's reference code runs it (``--sched
  cosine``, stepped once per epoch, ``warmup_prefix`` off): at epoch e (0-based, the epoch being trained)

      e < W:           warmup_lr + e (lr - warmup_lr) / W                   (W = warmup_epochs)
      W <= e < T:      min_lr + (lr - min_lr) (1 + cos(pi e / T)) / 2       (T = epochs - cooldown_epochs)
      e >= T:          min_lr                                               (the cool-down)

  The reference trains ``--epochs`` plus ``--cooldown-epochs`` epochs: a run's ``epochs`` here is the
  total, its ``cooldown_epochs`` the tail held at the floor.

The factor is the schedule's learning rate divided by ``lr``; under a sweep or per-parameter learning
rates every slot's rate is multiplied by it, so ``min_lr`` and ``warmup_lr`` scale with each slot's rate.
"""
from __future__ import annotations

import math
from typing import Callable, Optional

SCHEDULES = ("constant", "cosine")


def epoch_lr(opt_cfg, epochs: int, e: int) -> float:
    """The ``cosine`` schedule's learning rate for epoch ``e`` of a run of ``epochs`` epochs."""
    lr, warm = opt_cfg.lr, opt_cfg.warmup_epochs
    if e < warm:
        return opt_cfg.warmup_lr + e * (lr - opt_cfg.warmup_lr) / warm
    T = epochs - opt_cfg.cooldown_epochs
    if e >= T:
        return opt_cfg.min_lr
    return opt_cfg.min_lr + 0.5 * (lr - opt_cfg.min_lr) * (1 + math.cos(math.pi * e / T))


def lr_factor(opt_cfg, epochs: int, steps_per_epoch: int) -> Optional[Callable[[int], float]]:
    """Step -> factor on the learning rate (for ``torch.optim.lr_scheduler.LambdaLR``), or None for a
    constant rate without warm-up."""
    if opt_cfg.schedule == "cosine":
        return lambda step: epoch_lr(opt_cfg, epochs, step // steps_per_epoch) / opt_cfg.lr
    if opt_cfg.schedule != "constant":
        raise ValueError(f"config key 'optimizer.schedule': unknown schedule {opt_cfg.schedule!r}; "
                         f"allowed: {', '.join(SCHEDULES)}")
    warmup_steps = opt_cfg.warmup_epochs * steps_per_epoch
    if not warmup_steps:
        return None
    return lambda step: min(1.0, (step + 1) / warmup_steps)
