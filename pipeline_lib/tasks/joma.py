"""The JoMA verification setting (Tian et al., "JoMA: Demystifying Multilayer Transformers via JOint
Dynamics of MLP and Attention"; the talk's "JoMA Settings"; luckmatters ``joma/draw_figure_2_3.py``
read, not copied).

M_c = ``num_distinct`` + ``num_common`` context tokens and K classes (one sample per class). Column k
of the frequency matrix X (token, class) is class k's distribution of context tokens: ``uniform``
draws every entry from U(0, 1/2); ``gaussian`` replaces the distinct rows by
exp(-(l - num_distinct k / K)^2 / ``width``) (the common rows stay random); columns are normalised.
The artifact's sample k is x = X[:, k] (its ``position`` axis is the context token) with label k;
the test split is the same K samples.

With ``draws`` = N >= 1 the dataset holds N frequency matrices, one per seed (the authors draw a fresh X
for every run): draw i is drawn from (seed, i), the i-th seed of a run trains on draw i's K samples, and
``X`` / ``xbar`` gain a leading ``x_draw`` axis. The test split is draw 0's K samples (JoMA's statistics
read the weights, not test accuracy): a seed after the first is tested, and its attention measured by the
attention analyses, on another seed's X.
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
  draws:
    description: "Independent frequency matrices X, one per seed: the i-th seed of a run trains on draw i (a run
      has at most this many seeds); draw i is drawn from (seed, i). default 0: one X that every seed shares,
      drawn from seed alone."
    type: integer
    minimum: 0
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
    draws: int = 0


def frequencies(params: Params, draw: int | None = None) -> np.ndarray:
    """X (token, class), columns summing to 1: the shared X (``draw`` None, drawn from seed) or draw i's
    (drawn from (seed, i))."""
    rng = np.random.default_rng(params.seed if draw is None else [params.seed, draw])
    Mc, K = params.num_distinct + params.num_common, params.K
    X = rng.random((Mc, K)) / 2
    if params.x == "gaussian":
        idx = np.arange(params.num_distinct)[:, None]
        X[: params.num_distinct] = np.exp(-((idx - np.arange(K)[None] * params.num_distinct / K) ** 2) / params.width)
    return X / X.sum(0, keepdims=True)


def generate(params: Params) -> xr.Dataset:
    y = np.arange(params.K)
    meta = {"n_classes": params.K, "x": params.x}
    if params.draws:
        X = np.stack([frequencies(params, i) for i in range(params.draws)])  # (draw, token, class)
        ds = TaskData(np.concatenate([x.T for x in X]), np.tile(y, params.draws), X[0].T, y, meta,
                      draw=np.repeat(np.arange(params.draws), params.K)).to_dataset()
        dims = ("x_draw", "token", "class")
    else:
        X = frequencies(params)
        ds = TaskData(X.T, y, X.T, y, meta).to_dataset()
        dims = ("token", "class")
    ds["X"] = (dims, X)
    ds["X"].attrs["description"] = "X[l, k]: frequency of context token l in class k (columns sum to 1)"
    ds["xbar"] = (dims[:-1], X.mean(-1))
    ds.attrs.update({f"task_{k}": v for k, v in vars(params).items()})
    return ds


def probe_targets(ds: xr.Dataset, split: str, n: int) -> dict[str, np.ndarray]:
    return {"label": ds.y.values[ds.split.values == split][:n]}
