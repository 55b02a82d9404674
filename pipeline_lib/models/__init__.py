"""Models with a leading ``seed`` axis on every parameter, so S seeds train in lock-step.

One module per model family, so that a rule's code hash (which follows imports, and always covers
this package file) changes only when the family its run uses changes: ``circuit`` (the one-layer
cross-attention model of 'Easing Optimization Paths') and ``transformer`` (the CLS-token transformer
and ViT of 'Eureka-Moments'). Keep this file small: every model's runs depend on it.
"""
from __future__ import annotations

import numpy as np
import torch


def seed_generator(seed: int, purpose: str) -> torch.Generator:
    """A CPU generator that depends only on (seed, purpose): a seed's stream never depends on others."""
    key = np.random.SeedSequence([seed, sum(ord(c) << (8 * i) for i, c in enumerate(purpose[:8]))])
    return torch.Generator().manual_seed(int(key.generate_state(1, dtype=np.uint64)[0] >> 1))
