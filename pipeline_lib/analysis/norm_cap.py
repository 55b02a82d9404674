"""Analysis ``norm_cap``: where NormSoftmax's temperature cap binds ('Eureka-Moments in Transformers',
Eq. 2: softmax(S / min(sigma(S), tau)), sigma the standard deviation of the scores over the keys).

The cap binds on an attention row when sigma(S) > tau: the row is then plain Softmax at temperature tau,
and NormSoftmax differs from Softmax only on the rows where it does not bind. The share of rows where
it binds tells whether two arms that differ only in tau (NormSoftmax at sqrt(d_head) or at 1/3, with or
without Heat Treatment) can differ at all.

It is read off the attention weights alone. For any row, log w = S / c - logsumexp(S / c) with c the
row's divisor, so the standard deviation of log w over the keys is sigma(S) / c:

* NormSoftmax: exactly 1 where the cap does not bind (c = sigma), sigma / tau > 1 where it does;
* Softmax at temperature tau: sigma / tau, above 1 exactly where NormSoftmax at the same tau would
  bind (where the two coincide).

So for every run the share of rows with std(log w) > 1 is the share on which the cap binds (NormSoftmax)
or would bind (Softmax). At each weight snapshot the run's model is rebuilt and applied to ``n_inputs``
fixed test inputs; Heat Treatment's temperature of the snapshot's epoch is used (the trajectory records
it). Nothing is retrained.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import xarray as xr

from ..selection import seed_coords
from .attention_sparsity import snapshot_layers

NAME = "norm_cap"
PER_RUN = True
CONFIG = """
description: "Share of attention rows on which NormSoftmax's cap min(sigma, tau) binds (Softmax runs: would bind), at every weight snapshot."
properties:
  runs: {description: "Runs to measure (any model whose internals return attention).", type: array, items: {type: string, x-ref: run, x-reads: [weights, dataset, trajectory], x-requires: {properties: {records: {contains: {const: attention}}}}, x-requires-message: "is a run of a model without attention (its RECORDS lack 'attention')"}, default: []}
  n_inputs: {description: "Fixed test inputs the share is taken over.", type: integer, minimum: 1, default: 256}
"""
USES = ["model"]
RESOURCES = {"runtime": 20, "mem_mb": 4000}

# std(log w) of a row whose cap does not bind is 1 up to float32 rounding (about 1e-6 on 17 keys); a binding
# cap raises it to sigma / tau, so a margin far above the rounding and far below any visible binding
MARGIN = 1e-3


@dataclass(frozen=True)
class Params:
    runs: tuple[str, ...] = ()
    n_inputs: int = 256


def log_weight_spread(att: torch.Tensor) -> torch.Tensor:
    """Standard deviation over the last (key) axis of the log attention weights (sigma(S) / divisor).
    Same estimator as NormSoftmax's sigma (torch's default, n - 1), in float64."""
    return torch.log(att.double().clamp_min(1e-300)).std(dim=-1)


def binds(att: torch.Tensor) -> torch.Tensor:
    """Per row (all leading axes): whether the cap binds (NormSoftmax) or would bind (Softmax)."""
    return log_weight_spread(att) > 1.0 + MARGIN


@torch.no_grad()
def compute(cfg, name: str, params: Params, paths, threads: int = 1) -> tuple[xr.Dataset, dict]:
    torch.set_num_threads(max(1, threads))
    spec, w, n_x, snapshots = snapshot_layers(cfg, name, paths, params.n_inputs)
    per_snap = [torch.stack([binds(a).double().mean(dim=(1, 3)) for a in layers], 1).numpy()  # (S, L, H)
                for layers in snapshots]  # each layer (S, B, H, Q, K)
    share = np.stack(per_snap, 1)  # (S, K, L, H)
    out = xr.Dataset(
        {"binds": (("seed", "snapshot", "layer", "head"), share.astype(np.float32)),
         "binds_mean": (("seed", "snapshot"), share.mean((2, 3)).astype(np.float32))},
        coords={"seed": w.seed.values, "snapshot": w.snapshot.values, "layer": np.arange(share.shape[2]),
                "head": np.arange(share.shape[3]), **seed_coords(w)},
    )
    out["binds"].attrs["description"] = (
        f"share of attention rows (queries x {n_x} test inputs) whose log-weights spread over the keys "
        "exceeds 1: NormSoftmax's cap min(sigma, tau) binds there (a Softmax run: NormSoftmax at its tau would)")
    out["binds_mean"].attrs["description"] = "binds averaged over layers and heads"
    return out, {"run": name, "model_kind": spec.model_kind, "n_inputs": int(n_x),
                 "variant": spec.attention.variant}
