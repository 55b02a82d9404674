"""The JoMA model (one attention layer with a residual, a linear readout), seed-batched.

For class k with context frequencies x = X[:, k] (M_c tokens), attention logits z (M_c) shared by the
one query, temperature T, orthonormal embeddings U = [I; 0] (d x (M_c + 1): U_c the context tokens'
columns, u_q the query's):

    b = softmax(z / T + log x)      (the attention over the context, in expectation over x)
    f = U_c b + u_q                 (attention output plus the query's residual)
    logits = f^T W                  (W: d x K)

Both z and W start N(0, ``init_std``^2). JoMA's claim: under SGD, z(t) stays close to
zhat = sum_k V_lk^2/(2T) - xbar_l |W|_F^2/(2T) + C with V = U_c^T W (``analysis.joma`` checks it).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch
from torch import nn

from . import seed_generator
from .direct import DirectModel

NAME = "joma"
CONFIG = """
properties:
  temperature: {description: "Attention temperature T.", type: number, exclusiveMinimum: 0, default: 0.5}
  init_std: {description: "Standard deviation of the normal initialisation of z and W.", type: number, minimum: 0, default: 0.01}
"""
CHECKS = [["d", "d >= tokens + 1", "d={d} cannot hold the orthonormal embeddings of the {tokens} context tokens and the "
                                     "query of dataset '{dataset}'; allowed d >= {tokens + 1}"]]
ARCH = "(d, tokens, classes)"
SITES = "['f']"
RECORDS = ["attention"]

PARAM_DIMS = {"z": ("token",), "W": ("d_model", "class")}


@dataclass(frozen=True)
class Params:
    d: int
    temperature: float = 0.5
    init_std: float = 0.01


class Internals(NamedTuple):
    attention: torch.Tensor  # (S, B, M_c) b
    f: torch.Tensor  # (S, B, d)
    logits: torch.Tensor  # (S, B, K)


class JomaModel(DirectModel):
    def __init__(self, n_seeds: int, n_context: int, d: int, n_classes: int, temperature: float = 0.5,
                 init_std: float = 0.01):
        super().__init__()
        self.S, self.Mc, self.d, self.K = n_seeds, n_context, d, n_classes
        self.tau, self.d_head, self.beta, self.init_std = float(temperature), n_context, None, init_std
        self.z = nn.Parameter(torch.zeros(n_seeds, n_context))
        self.W = nn.Parameter(torch.zeros(n_seeds, d, n_classes))

    def param_names(self) -> list[str]:
        return ["z", "W"]

    def embeddings(self) -> torch.Tensor:
        """U (d, M_c + 1) = [I; 0]: context tokens first, the query last."""
        return torch.eye(self.d, self.Mc + 1)

    @torch.no_grad()
    def init_seeds(self, seeds: list[int]) -> None:
        assert len(seeds) == self.S
        for i, seed in enumerate(seeds):
            g = seed_generator(seed, "init")
            for name in ("W", "z"):
                p = getattr(self, name)[i]
                p.copy_(torch.randn(p.shape, generator=g) * self.init_std)

    def internals(self, x: torch.Tensor) -> Internals:
        x = x.expand(self.S, *x.shape) if x.dim() == 2 else x  # (S, B, M_c) frequencies
        b = torch.softmax(self.z[:, None, :] / self.tau + torch.log(x), dim=-1)
        U = self.embeddings().to(b)
        f = b @ U[:, : self.Mc].T + U[:, self.Mc]  # (S, B, d)
        return Internals(b, f, torch.bmm(f, self.W))


def build(params: Params, n_seeds: int, shape: dict, attention) -> JomaModel:
    return JomaModel(n_seeds, shape["tokens"], params.d, shape["classes"], params.temperature, params.init_std)


def as_inputs(x: np.ndarray, params: Params | None = None) -> torch.Tensor:
    """Dataset ``x`` (K, M_c) context frequencies -> a float tensor."""
    return torch.as_tensor(x, dtype=torch.float32)
