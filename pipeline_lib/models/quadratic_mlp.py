"""The two-layer network with quadratic activation of Tian's modular-addition analysis (CoGO;
luckmatters ``ssl/real-dataset/modular_addition_simple2.py`` read, not copied: separate ``layera``,
``layerb``, ``layerc``), seed-batched.

For a pair (a, b) over d tokens with fixed one-hot embeddings e_a, e_b, q hidden nodes, no bias:

    h = (W_a e_a + W_b e_b)^2          (elementwise; W_a, W_b: q x d)
    o = W_c h                          (W_c: d x q)

The loss is the MSE after centring, per sample ||o - mean(o) - (e_c - 1/d)||^2 averaged over the
batch (the reference's "mse"); the prediction is argmax o. Every weight starts U(-1/sqrt(fan_in),
1/sqrt(fan_in)) (nn.Linear's default: fan_in d for W_a, W_b and q for W_c). The model has no
attention, so its runs record none.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch
from torch import nn

from .direct import DirectModel

NAME = "quadratic_mlp"
CONFIG = """
properties:
  d: {description: "Not used (leave it out): the one-hot embeddings have the dataset's d columns.", type: integer, minimum: 1}
  q: {description: "Hidden nodes.", type: integer, minimum: 1, default: 512}
"""
ARCH = "(tokens, classes)"
SITES = "['h']"
RECORDS = []

PARAM_DIMS = {"W_a": ("hidden", "token"), "W_b": ("hidden", "token"), "W_c": ("class", "hidden")}


@dataclass(frozen=True)
class Params:
    d: int | None = None
    q: int = 512


class Internals(NamedTuple):
    pre: torch.Tensor  # (S, B, q) W_a e_a + W_b e_b
    h: torch.Tensor  # (S, B, q) its square
    logits: torch.Tensor  # (S, B, d) o


class QuadraticMLP(DirectModel):
    """W_a, W_b (S, q, d) and W_c (S, d, q) for S seeds."""

    def __init__(self, n_seeds: int, d: int, q: int = 512):
        super().__init__()
        self.S, self.d, self.q = n_seeds, d, q
        self.d_head, self.tau, self.beta = 1, 1.0, None  # no attention
        self.W_a = nn.Parameter(torch.zeros(n_seeds, q, d))
        self.W_b = nn.Parameter(torch.zeros(n_seeds, q, d))
        self.W_c = nn.Parameter(torch.zeros(n_seeds, d, q))

    def param_names(self) -> list[str]:
        return ["W_a", "W_b", "W_c"]

    def init_seeds(self, seeds: list[int]) -> None:
        # U(-1/sqrt(fan_in), 1/sqrt(fan_in)); fan_in is each matrix's second dim (d for W_a, W_b; q for W_c)
        self.init_each(seeds, lambda name, shape, g: (torch.rand(shape, generator=g) * 2 - 1) * (1.0 / math.sqrt(shape[1])))

    def internals(self, x: torch.Tensor) -> Internals:
        """x (B, 2) token pairs shared by the seeds, or (S, B, 2) a batch per seed."""
        # [e_a; e_b] (.., B, 2d) times [W_a W_b]^T: one matmul whose backward is one matmul too (measured
        # 6.7 ms per forward + backward against 9-10 ms for indexing rows, d=23, q=512, 5 seeds, 476 pairs)
        onehot = torch.nn.functional.one_hot(x + torch.tensor([0, self.d], device=x.device), 2 * self.d)
        pre = torch.matmul(onehot.sum(-2).to(self.W_a.dtype), torch.cat([self.W_a, self.W_b], 2).transpose(1, 2))
        h = pre * pre
        return Internals(pre, h, torch.bmm(h, self.W_c.transpose(1, 2)))

    def attention(self, x: torch.Tensor) -> None:
        return None

    def loss_acc(self, out: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-seed centred MSE (mean over samples) and accuracy; out (S, B, d), y (B,) or (S, B)."""
        S, B, d = out.shape
        y = y.expand(S, B)
        target = torch.nn.functional.one_hot(y, d).to(out.dtype) - 1.0 / d
        loss = (out - out.mean(-1, keepdim=True) - target).pow(2).sum(-1).mean(1)
        return loss, (out.argmax(-1) == y).float().mean(1)


def build(params: Params, n_seeds: int, shape: dict, attention) -> QuadraticMLP:
    # Weight decay drives the ~90% of weights that no frequency uses towards 0; they pass 1e-38 and
    # float32 arithmetic on subnormal numbers is ~10x slower on x86 (measured: 15 s per 1000 epochs at
    # d = 23 early in training, 50-120 s later, with 89% of the final weights subnormal). Flushing them
    # to zero is a process-wide setting; every training or analysis job is its own process.
    torch.set_flush_denormal(True)
    return QuadraticMLP(n_seeds, shape["tokens"], params.q)


def as_inputs(x: np.ndarray, params: Params | None = None) -> torch.Tensor:
    """Dataset ``x`` (N, 2) pairs -> a long tensor."""
    return torch.as_tensor(x, dtype=torch.long)
