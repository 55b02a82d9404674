"""The JoMA verification setting (Tian et al., "JoMA: Demystifying Multilayer Transformers via JOint
Dynamics of MLP and Attention"; the talk's "JoMA Settings"; luckmatters ``joma/draw_figure_2_3.py``
read, not copied).

M_c = ``num_distinct`` + ``num_common`` context tokens and K classes (one sample per class). Column k
of the frequency matrix X (token, class) is class k's distribution of context tokens: ``uniform``
draws every entry from U(0, 1/2); ``gaussian`` replaces the distinct rows by
exp(-(l - num_distinct k / K)^2 / ``width``) (the common rows stay random); columns are normalised.
The artifact's sample k is x = X[:, k] (its ``position`` axis is the context token) with label k;
the test split is the same K samples.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr

from . import TaskData

NAME = "joma"
MODELS = ["joma"]
CONFIG = """
properties:
  num_distinct: {description: "Distinct context tokens (rows the gaussian case shapes).", type: integer, minimum: 1, default: 10}
  num_common: {description: "Common context tokens (random frequencies in both cases).", type: integer, minimum: 0, default: 10}
  K: {description: "Classes, one sample each.", type: integer, minimum: 2, default: 20}
  x: {description: "uniform: X entries U(0, 1/2); gaussian: distinct rows exp(-(l - num_distinct k/K)^2/width).", type: string, enum: [uniform, gaussian], default: gaussian}
  width: {description: "Width of the gaussian rows.", type: number, exclusiveMinimum: 0, default: 30}
"""
SHAPE = {"n_train": "K", "n_test": "K", "tokens": "num_distinct + num_common", "T": "num_distinct + num_common",
         "classes": "K"}
PROBE_TARGETS = "['label']"


@dataclass(frozen=True)
class Params:
    num_distinct: int = 10
    num_common: int = 10
    K: int = 20
    x: str = "gaussian"
    width: float = 30.0
    seed: int = 0


def frequencies(params: Params) -> np.ndarray:
    """X (token, class), columns summing to 1."""
    rng = np.random.default_rng(params.seed)
    Mc, K = params.num_distinct + params.num_common, params.K
    X = rng.random((Mc, K)) / 2
    if params.x == "gaussian":
        idx = np.arange(params.num_distinct)[:, None]
        X[: params.num_distinct] = np.exp(-((idx - np.arange(K)[None] * params.num_distinct / K) ** 2) / params.width)
    return X / X.sum(0, keepdims=True)


def generate(params: Params) -> xr.Dataset:
    X = frequencies(params)
    y = np.arange(params.K)
    ds = TaskData(X.T, y, X.T, y, {"n_classes": params.K, "x": params.x}).to_dataset()
    ds["X"] = (("token", "class"), X)
    ds["X"].attrs["description"] = "X[l, k]: frequency of context token l in class k (columns sum to 1)"
    ds["xbar"] = (("token",), X.mean(1))
    ds.attrs.update({f"task_{k}": v for k, v in vars(params).items()})
    return ds


def probe_targets(ds: xr.Dataset, split: str, n: int) -> dict[str, np.ndarray]:
    return {"label": ds.y.values[ds.split.values == split][:n]}
