"""Modular addition a + b = c mod d, the setting of Tian's "composing global optimizers" (CoGO)
analysis of algebraic solutions (luckmatters ``ssl/real-dataset/modular_addition_simple2.py`` read, not
copied).

All d^2 pairs (a, b) with label (a + b) mod d; a random ``train_fraction`` of them (the dataset's
``seed``) is the training set, the rest the test set (disjoint by construction). ``x`` is (a, b).
The reference draws a split per training seed; here the runs' seeds share their dataset's split
(declare one dataset per split seed to vary it).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr

from . import TaskData

NAME = "modular_addition"
MODELS = ["quadratic_mlp"]
CONFIG = """
properties:
  d: {description: "The modulus: tokens 0..d-1, d classes.", type: integer, minimum: 2, default: 23}
  train_fraction:
    description: "Fraction of the d^2 pairs used for training (the rest is the test set)."
    type: number
    exclusiveMinimum: 0
    exclusiveMaximum: 1
    default: 0.9
"""
SHAPE = {"n_train": "int(round(train_fraction * d * d))", "n_test": "d * d - int(round(train_fraction * d * d))",
         "tokens": "d", "T": "2", "classes": "d"}
CHECKS = [["train_fraction", "0 < int(round(train_fraction * d * d)) < d * d",
           "train_fraction={train_fraction} leaves no training or no test pair of the {d * d}; allowed: a fraction "
           "that keeps both"]]


@dataclass(frozen=True)
class Params:
    d: int = 23
    train_fraction: float = 0.9
    seed: int = 0


def all_pairs(d: int) -> tuple[np.ndarray, np.ndarray]:
    """Every (a, b) in {0..d-1}^2 (a major) and its label (a + b) mod d."""
    x = np.stack(np.meshgrid(np.arange(d), np.arange(d), indexing="ij"), -1).reshape(-1, 2).astype(np.int64)
    return x, (x[:, 0] + x[:, 1]) % d


def generate(params: Params) -> xr.Dataset:
    x, y = all_pairs(params.d)
    perm = np.random.default_rng(params.seed).permutation(len(x))
    n_train = int(round(params.train_fraction * len(x)))
    tr, te = np.sort(perm[:n_train]), np.sort(perm[n_train:])
    attrs = {"task": NAME, "d": params.d, "train_fraction": params.train_fraction, "seed": params.seed,
             "n_classes": params.d, "T": 2}
    ds = TaskData(x[tr], y[tr], x[te], y[te], attrs).to_dataset()
    ds["x"].attrs["description"] = "(a, b)"
    ds["y"].attrs["description"] = "(a + b) mod d"
    return ds


def probe_targets(ds: xr.Dataset, split: str, n: int) -> dict[str, np.ndarray]:
    """No probe targets: the model's hidden nodes are read off its weights (analysis ``fourier``)."""
    return {}
