"""The two-step reasoning task of 'Eureka-Moments in Transformers' (Hoffmann et al.)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr

from . import TaskData, split_values, two_step_dataset

NAME = "eureka_reasoning"
MODELS = ["transformer"]
CONFIG = """
properties:
  n: {description: "Token values 0..n: all (a, b, c, d) in {0..n}^4, n+1 classes.", type: integer, minimum: 1, default: 10}
  train_fraction:
    description: "Fraction of the tuples used for training (the rest is the test set)."
    type: number
    exclusiveMinimum: 0
    exclusiveMaximum: 1
    default: 0.3
"""
SHAPE = {"n_train": "int(round(train_fraction * (n + 1) ** 4))",
         "n_test": "(n + 1) ** 4 - int(round(train_fraction * (n + 1) ** 4))",
         "tokens": "n + 1", "T": "4", "classes": "n + 1"}
PROBE_TARGETS = "['step1']"


@dataclass(frozen=True)
class Params:
    n: int = 10
    train_fraction: float = 0.3
    seed: int = 0


def generate(params: Params) -> xr.Dataset:
    data = eureka_reasoning(params.n, params.train_fraction, params.seed)
    x = np.concatenate([data.x_train, data.x_test])
    return two_step_dataset(data, eureka_step1(x), x[:, 2:4], "hidden first step: a and b have different parity",
                            "tokens (a, b, c, d)")


def probe_targets(ds: xr.Dataset, split: str, n: int) -> dict[str, np.ndarray]:
    return {"step1": split_values(ds, "step1", split, n)}


def eureka_reasoning(n: int = 10, train_fraction: float = 0.3, seed: int = 0) -> TaskData:
    """All (a, b, c, d) in {0..n}^4; step 1 is g(a, b) = [a and b have different parity], and the label
    is c if g else d (n + 1 classes). Only the label is supervised. A random ``train_fraction`` of the
    tuples is the training set, the rest the test set (disjoint by construction).
    """
    grid = np.stack(np.meshgrid(*[np.arange(n + 1)] * 4, indexing="ij"), -1).reshape(-1, 4).astype(np.int64)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(grid))
    n_train = int(round(train_fraction * len(grid)))
    tr, te = grid[perm[:n_train]], grid[perm[n_train:]]
    attrs = {"task": "eureka_reasoning", "n": n, "train_fraction": train_fraction, "seed": seed,
             "n_classes": n + 1, "T": 4, "p": n + 1}
    return TaskData(tr, eureka_label(tr), te, eureka_label(te), attrs)


def eureka_step1(x: np.ndarray) -> np.ndarray:
    """The hidden first step: 1 where a and b have different parity."""
    return (x[:, 0] % 2 != x[:, 1] % 2).astype(np.int64)


def eureka_label(x: np.ndarray) -> np.ndarray:
    return np.where(eureka_step1(x) == 1, x[:, 2], x[:, 3])
