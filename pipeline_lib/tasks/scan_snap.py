"""The synthetic next-token distribution of Tian's Scan&Snap analysis (talk "Exploring Training
Mechanism in Transformers via the Lens of Training Dynamics"; luckmatters ``decoder_only.py``'s
``Dataset2`` read, not copied).

Tokens, in order: ``num_common`` common tokens (every class, weight ``common_weight`` each); per
class ``num_distinct`` distinct tokens with weights ``linspace(distinct_min, distinct_max)``; one
*last* token per group of ``num_next_per_last`` classes; one *next* token per class. A class n is
picked uniformly; the T-1 context tokens are drawn i.i.d. from p(l|n) (the weights of its support,
normalised); x_T is the class's last token and the label its next token.

An online task (``ONLINE``): runs draw fresh samples every step from the distribution stored in the
artifact (``probs``, ``last_token``, ``next_token``) with :func:`sample`; the artifact's x/y are a
fixed test set only.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import xarray as xr

NAME = "scan_snap"
MODELS = ["scan_snap"]
ONLINE = True
CONFIG = """
properties:
  num_last: {description: "Number of last tokens (query tokens x_T).", type: integer, minimum: 1, default: 2}
  num_next_per_last: {description: "Classes (next tokens) per last token.", type: integer, minimum: 1, default: 1}
  num_common: {description: "Common tokens shared by every class.", type: integer, minimum: 0, default: 10}
  num_distinct: {description: "Distinct tokens of each class.", type: integer, minimum: 1, default: 10}
  common_weight: {description: "Unnormalised weight of each common token.", type: number, exclusiveMinimum: 0, default: 1.0}
  distinct_min: {description: "Weight of the least frequent distinct token (weights linspace(min, max)).", type: number, exclusiveMinimum: 0, default: 0.1}
  distinct_max: {description: "Weight of the most frequent distinct token.", type: number, exclusiveMinimum: 0, default: 1.0}
  T: {description: "Sequence length including the last token (T-1 context tokens).", type: integer, minimum: 2, default: 128}
  n_test: {description: "Fixed test sequences stored in the artifact (training samples are fresh every step).", type: integer, minimum: 1, default: 512}
"""
# n_train: an online task has no fixed training set; a batch may hold any number of samples
SHAPE = {"n_train": "10 ** 9", "n_test": "n_test",
         "tokens": "num_common + num_last * num_next_per_last * (num_distinct + 1) + num_last",
         "T": "T", "classes": "num_common + num_last * num_next_per_last * (num_distinct + 1) + num_last"}
CHECKS = [["distinct_max", "distinct_max >= distinct_min",
           "distinct_max={distinct_max} is below distinct_min={distinct_min}; allowed distinct_max >= distinct_min"]]
PROBE_TARGETS = "['label', 'last']"


@dataclass(frozen=True)
class Params:
    num_last: int = 2
    num_next_per_last: int = 1
    num_common: int = 10
    num_distinct: int = 10
    common_weight: float = 1.0
    distinct_min: float = 0.1
    distinct_max: float = 1.0
    T: int = 128
    n_test: int = 512
    seed: int = 0


def layout(params: Params) -> dict[str, np.ndarray]:
    """The distribution: ``probs`` (class, token) = p(l|n), ``last_token`` and ``next_token`` per
    class, ``distinct`` (class, rank) the ids of each class's distinct tokens (rank 0 least
    frequent), ``common`` the common ids."""
    n_cls = params.num_last * params.num_next_per_last
    common = np.arange(params.num_common)
    distinct = params.num_common + np.arange(n_cls * params.num_distinct).reshape(n_cls, params.num_distinct)
    last0 = params.num_common + n_cls * params.num_distinct
    next0 = last0 + params.num_last
    M = next0 + n_cls
    probs = np.zeros((n_cls, M))
    weights = np.linspace(params.distinct_min, params.distinct_max, params.num_distinct)
    for n in range(n_cls):
        probs[n, common] = params.common_weight
        probs[n, distinct[n]] = weights
    probs /= probs.sum(1, keepdims=True)
    classes = np.arange(n_cls)
    return {"probs": probs, "last_token": last0 + classes // params.num_next_per_last, "next_token": next0 + classes,
            "distinct": distinct, "common": common}


def generate(params: Params) -> xr.Dataset:
    lay = layout(params)
    g = torch.Generator().manual_seed(params.seed)
    x, y, cls = draw(torch.as_tensor(lay["probs"]), torch.as_tensor(lay["last_token"]),
                     torch.as_tensor(lay["next_token"]), params.n_test, params.T, g)
    n_cls, M = lay["probs"].shape
    ds = xr.Dataset(
        {"x": (("sample", "position"), x.numpy()), "y": (("sample",), y.numpy()), "cls": (("sample",), cls.numpy()),
         "probs": (("class", "token"), lay["probs"]), "last_token": (("class",), lay["last_token"]),
         "next_token": (("class",), lay["next_token"]), "distinct": (("class", "rank"), lay["distinct"]),
         "common": (("common",), lay["common"])},
        coords={"sample": np.arange(params.n_test), "position": np.arange(params.T),
                "split": ("sample", np.array(["test"] * params.n_test, dtype=object)), "class": np.arange(n_cls)},
        attrs={f"task_{k}": v for k, v in vars(params).items()} | {"task_n_classes": n_cls, "task_M": M,
                                                                     "task_online": 1},
    )
    ds["probs"].attrs["description"] = "p(l|n): probability of context token l in a sequence of class n"
    ds["x"].attrs["description"] = "fixed test sequences; training draws fresh ones every step"
    return ds


def draw(probs: torch.Tensor, last: torch.Tensor, nxt: torch.Tensor, n: int, T: int,
         generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """n sequences: class uniform, T-1 context tokens i.i.d. from p(l|class), then the last token;
    returns (x (n, T), label (n,), class (n,))."""
    cls = torch.randint(len(probs), (n,), generator=generator)
    context = torch.multinomial(probs[cls], T - 1, replacement=True, generator=generator)
    x = torch.cat([context, last[cls, None]], dim=1)
    return x, nxt[cls], cls


class Sampler:
    """Fresh training batches from a dataset artifact's distribution, one generator per slot (seed):
    a slot's samples depend on its own generator only (measured: 0.15 s per step for 160 slots of
    128 sequences of 128 tokens; torch.searchsorted on the inverse CDF was slower here)."""

    def __init__(self, ds: xr.Dataset, generators: list[torch.Generator]):
        self.probs = torch.as_tensor(ds.probs.values)
        self.last = torch.as_tensor(ds.last_token.values)
        self.next = torch.as_tensor(ds.next_token.values)
        self.T = ds.sizes["position"]
        self.generators = generators

    def __call__(self, n: int) -> tuple[torch.Tensor, torch.Tensor]:
        """(x (S, n, T), y (S, n)): slot s's batch from its own generator."""
        drawn = [draw(self.probs, self.last, self.next, n, self.T, g)[:2] for g in self.generators]
        return torch.stack([x for x, _ in drawn]), torch.stack([y for _, y in drawn])


def sampler(ds: xr.Dataset, generators: list[torch.Generator]) -> Sampler:
    return Sampler(ds, generators)


def probe_targets(ds: xr.Dataset, split: str, n: int) -> dict[str, np.ndarray]:
    """The label (next token) and the last token of the fixed test sequences (every split is that set)."""
    return {"label": ds.y.values[:n], "last": ds.x.values[:n, -1]}
