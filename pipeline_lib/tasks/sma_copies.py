"""Sparse modular addition on a repeated input (Easing Optimization Paths, Sec. II.a's thought experiment: "an
input defined as the concatenation [x_1, x_2] of twice the same original input x = x_1 = x_2"): each sequence is
``copies`` copies of a sparse-modular-addition sequence of length T, and the label is that sequence's (the sum of
its first k tokens mod p), so every copy decides it alone. The draw is the one of the task
``sparse_modular_addition`` with the same keys, so the copies' originals are that dataset's sequences."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr

from . import TaskData, split_values
from .sma import sma_targets, sparse_modular_addition

NAME = "sparse_modular_addition_copies"
MODELS = ["circuit", "transformer"]
CONFIG = """
required: [p, T, k, n_train, n_test, copies]
properties:
  p: {description: "Modulus and number of token values.", type: integer, minimum: 2}
  T: {description: "Length of the original sequence; the input is copies * T tokens long.", type: integer, minimum: 1}
  k: {description: "The label is the sum of the original's first k tokens mod p (1 <= k <= T).", type: integer, minimum: 1}
  copies: {description: "Copies of the original sequence, one after another (2: the paper's [x_1, x_2]).", type: integer, minimum: 2}
  n_train: {description: "Training sequences, sampled with replacement as in the paper.", type: integer, minimum: 1}
  n_test: {description: "Test sequences, disjoint from training whenever p^T allows.", type: integer, minimum: 1}
"""
SHAPE = {"n_train": "n_train", "n_test": "n_test", "tokens": "p", "T": "T * copies", "classes": "p"}
CHECKS = [
    ["k", "k <= T", "k={k} exceeds the original sequence's length T={T}; allowed 1 <= k <= T"],
    ["n_test", "n_test <= p ** T", "{n_test} test sequences requested but only p^T = {p ** T} distinct originals "
                                   "exist; allowed n_test <= {p ** T}"],
]
# the probe targets of the original sequence (the first copy's first k tokens)
PROBE_TARGETS = "['label', 'sum_k', 'zeros_k'] + [f'token_{t}' for t in range(k)]"


@dataclass(frozen=True)
class Params:
    p: int
    T: int
    k: int
    n_train: int
    n_test: int
    copies: int
    seed: int = 0


def generate(params: Params) -> xr.Dataset:
    return copied(sparse_modular_addition(params.p, params.T, params.k, params.n_train, params.n_test, params.seed),
                  params.copies).to_dataset()


def copied(data: TaskData, copies: int) -> TaskData:
    """``data`` with every sequence repeated ``copies`` times along the positions, labels and attrs kept (with
    ``copies`` and the task's name added)."""
    return TaskData(np.tile(data.x_train, (1, copies)), data.y_train, np.tile(data.x_test, (1, copies)),
                    data.y_test, {**data.attrs, "task": NAME, "copies": copies})


def probe_targets(ds: xr.Dataset, split: str, n: int) -> dict[str, np.ndarray]:
    return sma_targets(split_values(ds, "x", split, n), int(ds.attrs["task_k"]), int(ds.attrs["task_p"]))
