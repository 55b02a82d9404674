"""Models with a leading ``seed`` axis on every parameter, so S seeds train in lock-step.

One plug-in module per model kind (``circuit``, ``transformer``, ``vit``; the contract is written in
``models.protocol``), so that a rule's code hash changes only when the kind its run uses changes.
This file holds the per-seed generators and the lookup of a run's kind; every run depends on it,
so keep it small.
"""
from __future__ import annotations

import numpy as np
import torch


def seed_generator(seed: int, purpose: str) -> torch.Generator:
    """A CPU generator that depends only on (seed, purpose): a seed's stream never depends on others."""
    key = np.random.SeedSequence([seed, sum(ord(c) << (8 * i) for i, c in enumerate(purpose[:8]))])
    return torch.Generator().manual_seed(int(key.generate_state(1, dtype=np.uint64)[0] >> 1))


def build_run_model(spec, n_seeds: int | None = None):
    """The model a run trains (not initialised), from its resolved ``config.RunSpec``, for
    ``n_seeds`` seeds (default: the run's)."""
    module, params = _kind(spec)
    return module.build(params, len(spec.seeds) if n_seeds is None else n_seeds, spec.shape, spec.attention)


def run_inputs(spec, x: np.ndarray) -> torch.Tensor:
    """Dataset ``x`` -> the input tensor of the run's model (token ids or image patches)."""
    module, params = _kind(spec)
    return module.as_inputs(x, params)


def param_dims(spec) -> dict:
    module, params = _kind(spec)
    return module.PARAM_DIMS if module.PARAM_DIMS is not None else module.param_dims(params)


def _kind(spec):
    return spec.model_module, spec.model_params
