"""The contract between a model kind and the engine, stages and analyses (what they may call).

A model kind is one module of ``pipeline_lib/models`` that declares, as literals (read without
importing it, see ``pipeline_lib.plumbing.registry``): ``NAME``; ``CONFIG`` (its keys of a ``models`` entry
besides ``kind`` and ``d``); ``CHECKS`` ([key, expression over its params and the dataset's shape
that must hold, message]); ``ARCH`` (an expression of the same names: what a finetune must keep
besides the params); ``SITES`` (an expression of its params: the internal sites probes can read);
``RECORDS`` (what its runs record: 'attention', 'z_A', 'qkv_gradients', 'attention_hist');
optionally ``TASKS`` (task families it serves besides those whose ``MODELS`` list it).
Its code defines ``Params`` (frozen dataclass mirroring CONFIG plus ``d``), ``PARAM_DIMS`` (dims of
each parameter after the seed axis), ``build(params, n_seeds, shape, attention) -> SeedModel`` and
``as_inputs(x, params) -> Tensor`` (dataset ``x`` to the model's input).
"""
from __future__ import annotations

from typing import Any, Mapping, Protocol, runtime_checkable

import numpy as np
import torch


@runtime_checkable
class SeedModel(Protocol):
    """S seeds of one architecture in lock-step: every parameter has a leading seed axis."""

    S: int  # number of seeds
    d_head: int  # width of one attention head (temperatures are sqrt(d_head) by default)
    tau: float  # attention temperature
    beta: float | None  # Heat Treatment's inverse temperature, set by the engine per epoch (None: tau)
    # optional capabilities, declared (not discovered):
    records_gradients: bool  # grad_summary() -> {name: (S, ...)} after each backward pass
    records_attention_histogram: bool  # attention_histogram(x) -> (S, layers, bins)
    embed_site: str | None  # a site recorded for fixed inputs at every weight snapshot (Fig. 4's z_A)

    def param_names(self) -> list[str]: ...

    def init_seeds(self, seeds: list[int]) -> None:
        """Initialise slot i from ``seeds[i]`` alone (``models.seed_generator(seed, 'init')``)."""

    def load_arrays(self, arrays: Mapping[str, np.ndarray]) -> None:
        """Set every parameter from (S, ...) arrays, e.g. a weight snapshot."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits (S, B, classes) for inputs shared by all seeds or with a leading seed axis."""

    def internals(self, x: torch.Tensor) -> Any:
        """A NamedTuple of named intermediates (the reference, direct form)."""

    def site(self, internals: Any, name: str) -> torch.Tensor:
        """One of the SITES as (S, B, features), from ``internals``."""

    def attention(self, x: torch.Tensor) -> torch.Tensor | None:
        """Attention weights recorded for probe inputs: (S, B, positions); None for a model without
        attention (its RECORDS lack 'attention'; its runs then record none)."""

    # optional: loss_acc(outputs, y) -> (loss (S,), accuracy (S,)), the model's own per-seed loss
    # (e.g. quadratic_mlp's centred MSE); without it the engine uses cross-entropy on the logits
