"""Dataset generators (DESIGN section 7), one module per task family. Pure numpy; no files, no torch.

Each family lives in its own module (``sma``: sparse modular addition; ``eureka``: the two-step tasks
of 'Eureka-Moments in Transformers') so that a rule's code hash, taken over the modules its stage
imports, changes only when the generator it actually uses changes.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class TaskData:
    """Train/test split of a sequence-classification task; ``attrs`` go into the artifact."""

    x_train: np.ndarray  # (n_train, T) int64
    y_train: np.ndarray  # (n_train,) int64
    x_test: np.ndarray  # (n_test, T) int64
    y_test: np.ndarray  # (n_test,) int64
    attrs: dict = field(default_factory=dict)
    latent_train: np.ndarray | None = None  # hidden variables a task is built from (probe targets)
    latent_test: np.ndarray | None = None
