"""Analysis ``scan_snap``: the attention a Scan&Snap run pays to each context token, per step.

For class n with last token m, the attention the model's Z gives context token l, in expectation
over the sequence, is c_l = exp(Z[m, l]) p(l|n) / sum_l' exp(Z[m, l']) p(l'|n) (the talk's c). At
every weight snapshot of the run this computes c over the class's support, the common tokens' total
mass, c over the class's distinct tokens renormalised, and its entropy (mean over classes): the
talk's sparsification measure, ln(num_distinct) for uniform weights, 2.151 for linspace(0.1, 1, 10)
at initialisation with Z = 0. Slot coordinates of a swept run (run_seed, lr, lr_ratio_*) are kept.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr

from ..plumbing.store import read_dataset
from ..selection import seed_coords

NAME = "scan_snap"
PER_RUN = True
CONFIG = """
description: "Per-step attention of Scan&Snap runs to the context tokens (c, common mass, distinct entropy)."
properties:
  runs:
    description: "Runs of task scan_snap with a scan_snap model."
    type: array
    items: {type: string, x-ref: run, x-reads: [weights, dataset], x-requires: {properties: {model: {properties: {kind: {const: scan_snap}}}}}, x-requires-message: "is not a run of a scan_snap model"}
    default: []
"""
RESOURCES = {"runtime": 10, "mem_mb": 4000}


@dataclass(frozen=True)
class Params:
    runs: tuple[str, ...] = ()


def token_attention(Z: np.ndarray, probs: np.ndarray, last: np.ndarray) -> np.ndarray:
    """c (..., class, token) from Z (..., M, M), p(l|n) (class, M) and each class's last token."""
    logits = Z[..., last, :]  # (..., class, M)
    support = probs > 0
    w = np.where(support, np.exp(logits - np.where(support, logits, -np.inf).max(-1, keepdims=True)) * probs, 0.0)
    return w / w.sum(-1, keepdims=True)


def entropy(p: np.ndarray, axis: int = -1) -> np.ndarray:
    """Shannon entropy (nats) of distributions along ``axis`` (0 log 0 = 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return -np.where(p > 0, p * np.log(p), 0.0).sum(axis)


def summarise(c: np.ndarray, distinct: np.ndarray, common: np.ndarray) -> dict[str, np.ndarray]:
    """common_mass (..., class), distinct_c (..., class, rank) renormalised, top_distinct (..., class):
    c of the class's most frequent distinct token, distinct_entropy (...) mean over classes."""
    n_cls = distinct.shape[0]
    d = np.stack([c[..., n, distinct[n]] for n in range(n_cls)], axis=-2)  # (..., class, rank)
    d_norm = d / d.sum(-1, keepdims=True)
    return {"common_mass": c[..., common].sum(-1), "distinct_c": d_norm, "top_distinct": d[..., -1],
            "distinct_entropy": entropy(d_norm).mean(-1)}


def compute(cfg, name: str, params: Params, paths, threads: int = 1) -> tuple[xr.Dataset, dict]:
    spec = cfg.run_spec(name)
    w = read_dataset(paths.weights(name), rule="train")
    data = read_dataset(paths.dataset(spec.dataset), rule="dataset")
    probs, last = data.probs.values, data.last_token.values
    c = token_attention(w.Z.values.astype(np.float64), probs, last)  # (snapshot, seed, class, M)
    c = np.moveaxis(c, 0, 1)  # (seed, step, class, M)
    parts = summarise(c, data.distinct.values, data.common.values)
    out = xr.Dataset(
        {"c": (("seed", "step", "class", "token"), c.astype(np.float32)),
         "common_mass": (("seed", "step", "class"), parts["common_mass"]),
         "top_distinct": (("seed", "step", "class"), parts["top_distinct"]),
         "distinct_c": (("seed", "step", "class", "rank"), parts["distinct_c"]),
         "distinct_entropy": (("seed", "step"), parts["distinct_entropy"]),
         "distinct_entropy_init": ((), float(summarise(probs, data.distinct.values,
                                                       data.common.values)["distinct_entropy"]))},
        coords={"seed": w.seed.values, "step": w.snapshot.values, "class": np.arange(len(last)),
                "rank": np.arange(data.sizes["rank"]), **seed_coords(w)},
    )
    out["c"].attrs["description"] = "c_l = exp(Z[last_n, l]) p(l|n) / sum: expected attention to context token l"
    out["distinct_c"].attrs["description"] = "c over the class's distinct tokens, renormalised; rank 0 least frequent"
    out["distinct_entropy"].attrs["description"] = "entropy (nats) of distinct_c, mean over classes"
    out["distinct_entropy_init"].attrs["description"] = "the same for c = p(l|n) (Z = 0)"
    return out, {"run": name}
