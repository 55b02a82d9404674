"""Analysis ``joma``: JoMA's estimate of the attention logits from the MLP weights, per step.

At every weight snapshot of a JoMA run: V = U_c^T W (the readout as seen by the context tokens),
zhat1 = sum_k V_lk^2 / (2T), zhat2 = -xbar_l |W|_F^2 / (2T), zhat = zhat1 + zhat2 + C with
C = z(0) - (zhat1 + zhat2)(0), and the normalised correlation NC(a, b) (cosine of the centred
vectors) of z with zhat and with each term alone. T, U and xbar come from the run's model and
dataset. ``shuffle_tokens`` permutes V's token rows (a control: NC near 0 unless the claim holds by
accident).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import xarray as xr

from ..models import build_run_model
from ..plumbing.store import read_dataset
from .gradient_rank import stable_rank

NAME = "joma"
PER_RUN = True
CONFIG = """
description: "JoMA: attention logits z against their estimate from the readout W, per step; the stable rank of V = U_c^T W and of its change."
properties:
  runs:
    description: "Runs of task joma with a joma model."
    type: array
    items: {type: string, x-ref: run, x-reads: [weights, dataset], x-requires: {properties: {model: {properties: {kind: {const: joma}}}}}, x-requires-message: "is not a run of a joma model"}
    default: []
"""
USES = ["model"]
RESOURCES = {"runtime": 10, "mem_mb": 4000}


@dataclass(frozen=True)
class Params:
    runs: tuple[str, ...] = ()


def normalised_correlation(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """NC along the last axis: cosine of the mean-centred vectors (0 where one is constant)."""
    a = a - a.mean(-1, keepdims=True)
    b = b - b.mean(-1, keepdims=True)
    na, nb = np.linalg.norm(a, axis=-1), np.linalg.norm(b, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((na > 0) & (nb > 0), (a * b).sum(-1) / (na * nb), 0.0)


def estimate_terms(W: np.ndarray, U: np.ndarray, xbar: np.ndarray, T: float) -> tuple[np.ndarray, np.ndarray]:
    """(zhat1, zhat2) (..., M_c) from W (..., d, K), embeddings U (d, M_c + 1), xbar (M_c,)."""
    Mc = len(xbar)
    V = np.einsum("dl,...dk->...lk", U[:, :Mc], W)
    zhat1 = (V ** 2).sum(-1) / (2 * T)
    zhat2 = -xbar * (W ** 2).sum((-2, -1))[..., None] / (2 * T)
    return zhat1, zhat2


def joma_estimate(z: np.ndarray, W: np.ndarray, U: np.ndarray, xbar: np.ndarray, T: float) -> dict[str, np.ndarray]:
    """zhat and the NCs for z (step, ..., M_c) and W (step, ..., d, K), step 0 first (sets C)."""
    zhat1, zhat2 = estimate_terms(W, U, xbar, T)
    C = z[0] - (zhat1[0] + zhat2[0])
    zhat = zhat1 + zhat2 + C
    return {"zhat": zhat, "zhat1": zhat1, "zhat2": zhat2, "nc": normalised_correlation(zhat, z),
            "nc_term1": normalised_correlation(zhat1, z), "nc_term2": normalised_correlation(zhat2, z)}


def v_ranks(W: np.ndarray, U: np.ndarray, Mc: int) -> tuple[np.ndarray, np.ndarray]:
    """Stable ranks of V = U_c^T W (step, ..., M_c, K) at every step and of its change from the previous step
    (step 0: NaN): the talk's "V gradually becomes low rank" and "V-dot can be even more low-rank"."""
    V = torch.as_tensor(np.einsum("dl,...dk->...lk", U[:, :Mc], W))
    dV = torch.diff(V, dim=0)
    return stable_rank(V).numpy(), np.concatenate([np.full((1, *V.shape[1:-2]), np.nan), stable_rank(dV).numpy()])


def compute(cfg, name: str, params: Params, paths, threads: int = 1) -> tuple[xr.Dataset, dict]:
    spec = cfg.run_spec(name)
    w = read_dataset(paths.weights(name), rule="train")
    data = read_dataset(paths.dataset(spec.dataset), rule="dataset")
    model = build_run_model(spec, 1)
    U, T = model.embeddings().numpy().astype(np.float64), model.tau
    z, W = w.z.values.astype(np.float64), w.W.values.astype(np.float64)  # (step, seed, ...)
    est = joma_estimate(z, W, U, data.xbar.values, T)
    v_rank, vdot_rank = v_ranks(W, U, z.shape[-1])
    dims = ("step", "seed")
    out = xr.Dataset(
        {"z": ((*dims, "token"), z), "zhat": ((*dims, "token"), est["zhat"]),
         "nc": (dims, est["nc"]), "nc_term1": (dims, est["nc_term1"]), "nc_term2": (dims, est["nc_term2"]),
         "v_stable_rank": (dims, v_rank), "vdot_stable_rank": (dims, vdot_rank),
         "v_max_rank": ((), min(z.shape[-1], W.shape[-1]))},
        coords={"step": w.snapshot.values, "seed": w.seed.values, "token": np.arange(z.shape[-1])},
    ).transpose("seed", "step", ...)
    out["nc"].attrs["description"] = "NC(zhat, z): normalised correlation of the estimate with the real logits"
    out["nc_term1"].attrs["description"] = "NC(sum_k V_lk^2/(2T), z)"
    out["nc_term2"].attrs["description"] = "NC(-xbar_l |W|_F^2/(2T), z)"
    out["v_stable_rank"].attrs["description"] = "stable rank ||V||_F^2/||V||_2^2 of V = U_c^T W (M_c x K)"
    out["v_max_rank"].attrs["description"] = "min(M_c, K): the largest rank V can have"
    out["vdot_stable_rank"].attrs["description"] = ("stable rank of V's change from the previous recorded step (the "
                                                    "gradient's, under SGD with weights every step); step 0: NaN")
    return out, {"run": name, "temperature": T, "x": str(data.attrs.get("task_x", ""))}
