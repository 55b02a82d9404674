"""The reparameterised one-layer transformer of Tian's Scan&Snap analysis, seed-batched.

For a sequence x_1..x_T over M tokens (one-hot embeddings), with Z and Y both M x M:

    a_t    = softmax_{t<T}( Z[x_T, x_t] )             attention of the last token to the context
                                                       (t <= T with ``attend_query: true``: x_T itself too)
    h      = sum_{t<T} a_t e_{x_t} ,  h <- h / |h|_2   (normalised; set ``normalize: false`` to skip)
    logits = Y h                                       next-token logits over the M tokens

Z is zero-initialised in the talk's setting (``init: zero``); ``init: uniform`` draws both from
U(-1/sqrt(M), 1/sqrt(M)), torch's nn.Linear default, as the learning-rate sweep does.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch
from torch import nn

from .direct import DirectModel

NAME = "scan_snap"
CONFIG = """
properties:
  d: {description: "Not used (leave it out): Z and Y are M x M over the dataset's M one-hot tokens.", type: integer, minimum: 1}
  init: {description: "zero: Z = Y = 0; uniform: U(-1/sqrt(M), 1/sqrt(M)) entries (nn.Linear's default).", type: string, enum: [zero, uniform], default: zero}
  normalize: {description: "Divide the attention output h by its L2 norm before Y.", type: boolean, default: true}
  attend_query: {description: "The last token attends to itself as well as to the context (causal self-attention), so it enters h; false: the talk's Scan&Snap, context tokens only.", type: boolean, default: false}
"""
ARCH = "(tokens,)"
SITES = "['h']"
RECORDS = ["attention"]

PARAM_DIMS = {"Z": ("query_token", "token"), "Y": ("out_token", "token")}


@dataclass(frozen=True)
class Params:
    d: int | None = None
    init: str = "zero"
    normalize: bool = True
    attend_query: bool = False


class Internals(NamedTuple):
    attention: torch.Tensor  # (S, B, T-1) a_t (T with attend_query)
    h: torch.Tensor  # (S, B, M) attention output (normalised when the model normalises)
    logits: torch.Tensor  # (S, B, M)


class ScanSnapModel(DirectModel):
    """Z (S, M, M) and Y (S, M, M) for S seeds."""

    def __init__(self, n_seeds: int, M: int, init: str = "zero", normalize: bool = True, attend_query: bool = False):
        super().__init__()
        self.S, self.M, self.init, self.normalize, self.attend_query = n_seeds, M, init, normalize, attend_query
        self.d_head, self.tau, self.beta = M, 1.0, None  # the softmax has no temperature
        self.Z = nn.Parameter(torch.zeros(n_seeds, M, M))
        self.Y = nn.Parameter(torch.zeros(n_seeds, M, M))

    def param_names(self) -> list[str]:
        return ["Z", "Y"]

    def init_seeds(self, seeds: list[int]) -> None:
        self.init_each(seeds, lambda name, shape, g: torch.zeros(shape) if self.init == "zero"
                       else (torch.rand(shape, generator=g) * 2 - 1) / math.sqrt(self.M))

    def _per_seed(self, x: torch.Tensor) -> torch.Tensor:
        return x.expand(self.S, *x.shape) if x.dim() == 2 else x

    def internals(self, x: torch.Tensor) -> Internals:
        x = self._per_seed(x)  # (S, B, T)
        S, B, T = x.shape
        ctx, last = (x if self.attend_query else x[:, :, :-1]), x[:, :, -1]
        rows = self.Z[torch.arange(S, device=x.device)[:, None], last]  # (S, B, M): Z[x_T, :]
        attention = torch.softmax(torch.gather(rows, 2, ctx), dim=-1)  # (S, B, T-1), T with attend_query
        h = torch.zeros(S, B, self.M, dtype=attention.dtype, device=x.device).scatter_add(2, ctx, attention)
        if self.normalize:
            h = h / h.norm(dim=-1, keepdim=True)
        return Internals(attention, h, torch.einsum("som,sbm->sbo", self.Y, h))


def build(params: Params, n_seeds: int, shape: dict, attention) -> ScanSnapModel:
    return ScanSnapModel(n_seeds, shape["tokens"], params.init, params.normalize, params.attend_query)


def as_inputs(x: np.ndarray, params: Params | None = None) -> torch.Tensor:
    return torch.as_tensor(x, dtype=torch.long)
