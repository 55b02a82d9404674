"""Analysis ``joma``: JoMA's estimate of the attention logits from the MLP weights, per step.

At every weight snapshot of a JoMA run: V = U_c^T W (the readout as seen by the context tokens),
zhat1 = sum_k V_lk^2 / (2T), zhat2 = -xbar_l |W|_F^2 / (2T), zhat = rho (zhat1 + zhat2) + C with
rho = eta_z / eta_W (the slot's learning-rate ratio of z to W, 1 unless the run sets ``lr_ratio``) and
C = z(0) - rho (zhat1 + zhat2)(0), and the normalised correlation NC(a, b) (cosine of the centred
vectors) of z with zhat and with each term alone (the softmax estimate, whatever the run's attention).
T, U and xbar come from the run's model and dataset (a dataset with draws gives each slot its own draw's
xbar).

Theorem 1's invariant per attention kind (the model's ``attention``), as lhs = rhs + C:
softmax z = zhat (above), exp z = rho zhat1 + C, linear z^2 = 2 T rho zhat1 + C = rho sum_k V_lk^2 + C.
``invariant_gap`` is |lhs - rhs|_2 over tokens per step, ``lhs_moved`` |lhs(t) - lhs(0)|_2; the
controls are the gap of the other unnormalised kind's form (exp for linear, linear for exp and
softmax; ``control_moved`` its own left side's movement, in its units) and the gap with rho = 1.
``flow_steps`` counts the steps before the training loss first rises (by more than float32's
resolution): gradient flow lowers the loss monotonically, so after it SGD has left the flow the
theorem describes.
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
description: "JoMA: attention logits z against their estimate from the readout W, per step; the stable rank of V = U_c^T W and of its change, and the norm of each of its rows."
properties:
  runs:
    description: "Runs of task joma with a joma model."
    type: array
    items: {type: string, x-ref: run, x-reads: [weights, dataset, trajectory], x-requires: {properties: {model: {properties: {kind: {const: joma}}}}}, x-requires-message: "is not a run of a joma model"}
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
    """(zhat1, zhat2) (..., M_c) from W (..., d, K), embeddings U (d, M_c + 1), xbar (M_c,) or per slot
    (seed, M_c) for W (step, seed, d, K)."""
    Mc = xbar.shape[-1]
    V = np.einsum("dl,...dk->...lk", U[:, :Mc], W)
    zhat1 = (V ** 2).sum(-1) / (2 * T)
    zhat2 = -xbar * (W ** 2).sum((-2, -1))[..., None] / (2 * T)
    return zhat1, zhat2


def joma_estimate(z: np.ndarray, W: np.ndarray, U: np.ndarray, xbar: np.ndarray, T: float,
                  rho: np.ndarray | float = 1.0) -> dict[str, np.ndarray]:
    """zhat and the NCs for z (step, ..., M_c) and W (step, ..., d, K), step 0 first (sets C); ``rho``
    (scalar or per slot, (seed,)) = eta_z / eta_W."""
    zhat1, zhat2 = estimate_terms(W, U, xbar, T)
    rho = np.asarray(rho, dtype=np.float64)[..., None]
    C = z[0] - rho * (zhat1[0] + zhat2[0])
    zhat = rho * (zhat1 + zhat2) + C
    return {"zhat": zhat, "zhat1": zhat1, "zhat2": zhat2, "nc": normalised_correlation(zhat, z),
            "nc_term1": normalised_correlation(zhat1, z), "nc_term2": normalised_correlation(zhat2, z)}


def v_ranks(W: np.ndarray, U: np.ndarray, Mc: int) -> tuple[np.ndarray, np.ndarray]:
    """Stable ranks of V = U_c^T W (step, ..., M_c, K) at every step and of its change from the previous step
    (step 0: NaN): the talk's "V gradually becomes low rank" and "V-dot can be even more low-rank"."""
    V = torch.as_tensor(np.einsum("dl,...dk->...lk", U[:, :Mc], W))
    dV = torch.diff(V, dim=0)
    return stable_rank(V).numpy(), np.concatenate([np.full((1, *V.shape[1:-2]), np.nan), stable_rank(dV).numpy()])


def v_row_norms(W: np.ndarray, U: np.ndarray, Mc: int) -> np.ndarray:
    """|V_l|_2 of every row l (context token) of V = U_c^T W (step, ..., M_c): the talk's "the growth rate of each
    row of V varies widely" is read on them."""
    return np.linalg.norm(np.einsum("dl,...dk->...lk", U[:, :Mc], W), axis=-1)


def invariant_sides(form: str, z: np.ndarray, zhat1: np.ndarray, T: float, rho: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(lhs, rhs) (step, seed, M_c) of Theorem 1's unnormalised invariants, the constant C fixed at step 0:
    exp z = rho sum_k V^2/(2T) + C; linear z^2 = rho sum_k V^2 + C (zhat1 = sum_k V^2/(2T))."""
    rho = np.asarray(rho, dtype=np.float64)[..., None]
    lhs, rhs = (z, rho * zhat1) if form == "exp" else (z ** 2, rho * 2 * T * zhat1)
    return lhs, rhs + (lhs[0] - rhs[0])


def flow_steps(train_loss: np.ndarray, rtol: float = 1e-6) -> np.ndarray:
    """Per seed (seed, epoch): the number of steps before the training loss first rises by more than ``rtol``
    of itself (float32 resolution) or stops being finite; the whole run if neither happens. A loss that never
    rises is necessary for SGD to follow the gradient flow, not sufficient."""
    rises = (train_loss[:, 1:] > train_loss[:, :-1] * (1 + rtol)) | ~np.isfinite(train_loss[:, 1:])
    return np.where(rises.any(1), rises.argmax(1), train_loss.shape[1] - 1)


def slot_xbar(data: xr.Dataset, run_seeds: np.ndarray, seeds: tuple[int, ...]) -> np.ndarray:
    """xbar (M_c,) of a shared X, or (seed, M_c): each slot's draw, the i-th of the run's seeds on draw i."""
    if "x_draw" not in data.xbar.dims:
        return data.xbar.values
    index = {s: i for i, s in enumerate(seeds)}
    return data.xbar.values[[index[int(s)] for s in run_seeds]]


def compute(cfg, name: str, params: Params, paths, threads: int = 1) -> tuple[xr.Dataset, dict]:
    spec = cfg.run_spec(name)
    w = read_dataset(paths.weights(name), rule="train")
    traj = read_dataset(paths.trajectory(name), rule="train")
    data = read_dataset(paths.dataset(spec.dataset), rule="dataset")
    model = build_run_model(spec, 1)
    U, T, kind = model.embeddings().numpy().astype(np.float64), model.tau, model.attention_kind
    z, W = w.z.values.astype(np.float64), w.W.values.astype(np.float64)  # (step, seed, ...)
    run_seeds = w.run_seed.values if "run_seed" in w.coords else w.seed.values
    xbar = slot_xbar(data, run_seeds, spec.seeds)
    rho = np.array([s["lr_ratio"].get("z", 1.0) / s["lr_ratio"].get("W", 1.0) for s in spec.slots])
    est = joma_estimate(z, W, U, xbar, T, rho)
    v_rank, vdot_rank = v_ranks(W, U, z.shape[-1])
    v_rows = v_row_norms(W, U, z.shape[-1])
    control = "exp" if kind == "linear" else "linear"

    def sides(form: str, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if form == "softmax":
            return z, (est if r is rho else joma_estimate(z, W, U, xbar, T, r))["zhat"]
        return invariant_sides(form, z, est["zhat1"], T, r)

    own, other = sides(kind, rho), sides(control, rho)
    gaps = {key: np.linalg.norm(lhs - rhs, axis=-1) for key, (lhs, rhs) in
            (("invariant_gap", own), ("control_gap", other), ("gap_rho1", sides(kind, np.ones_like(rho))))}
    moved, control_moved = (np.linalg.norm(lhs - lhs[0], axis=-1) for lhs, _ in (own, other))
    dims = ("step", "seed")
    out = xr.Dataset(
        {"z": ((*dims, "token"), z), "zhat": ((*dims, "token"), est["zhat"]),
         "nc": (dims, est["nc"]), "nc_term1": (dims, est["nc_term1"]), "nc_term2": (dims, est["nc_term2"]),
         "v_stable_rank": (dims, v_rank), "vdot_stable_rank": (dims, vdot_rank), "v_row_norm": ((*dims, "token"), v_rows),
         "v_max_rank": ((), min(z.shape[-1], W.shape[-1])),
         **{k: (dims, v) for k, v in gaps.items()}, "lhs_moved": (dims, moved), "control_moved": (dims, control_moved),
         "flow_steps": (("seed",), flow_steps(traj.train_loss.values.astype(np.float64))), "rho": (("seed",), rho)},
        coords={"step": w.snapshot.values, "seed": w.seed.values, "token": np.arange(z.shape[-1])},
    ).transpose("seed", "step", ...)
    out["invariant_gap"].attrs["description"] = (f"|lhs - rhs|_2 of the {kind} attention's invariant (softmax: z - zhat; "
                                                 "exp: z - rho sum_k V^2/(2T) - C; linear: z^2 - rho sum_k V^2 - C)")
    out["control_gap"].attrs["description"] = f"the same gap for the {control} attention's form (a control)"
    out["gap_rho1"].attrs["description"] = "the invariant's gap with rho = 1 (ignoring the learning-rate ratio; a control)"
    out["lhs_moved"].attrs["description"] = "|lhs(t) - lhs(0)|_2: how far the invariant's left side moved"
    out["control_moved"].attrs["description"] = "the same for the control form's left side (its own units)"
    out["flow_steps"].attrs["description"] = "steps before the training loss first rises (gradient flow never raises it)"
    out["rho"].attrs["description"] = "eta_z / eta_W of the slot"
    out["nc"].attrs["description"] = "NC(zhat, z): normalised correlation of the estimate with the real logits"
    out["nc_term1"].attrs["description"] = "NC(sum_k V_lk^2/(2T), z)"
    out["nc_term2"].attrs["description"] = "NC(-xbar_l |W|_F^2/(2T), z)"
    out["v_stable_rank"].attrs["description"] = "stable rank ||V||_F^2/||V||_2^2 of V = U_c^T W (M_c x K)"
    out["v_max_rank"].attrs["description"] = "min(M_c, K): the largest rank V can have"
    out["v_row_norm"].attrs["description"] = "|V_l|_2 of each row l (context token) of V = U_c^T W"
    out["vdot_stable_rank"].attrs["description"] = ("stable rank of V's change from the previous recorded step (the "
                                                    "gradient's, under SGD with weights every step); step 0: NaN")
    return out, {"run": name, "temperature": T, "x": str(data.attrs.get("task_x", "")), "attention": kind}
