"""The JoMA model (one attention layer with a residual, a linear readout), seed-batched.

For class k with context frequencies x = X[:, k] (M_c tokens), attention logits z (M_c) shared by the
one query, temperature T, orthonormal embeddings U = [I; 0] (d x (M_c + 1): U_c the context tokens'
columns, u_q the query's):

    b = softmax(z / T + log x)      (the attention over the context, in expectation over x)
    f = U_c b + u_q                 (attention output plus the query's residual)
    logits = f^T W                  (W: d x K)

``attention`` chooses b among the talk's three ("JoMA Settings"): ``softmax`` as above, ``exp``
b_l = x_l exp(z_l / T) and ``linear`` b_l = x_l z_l / T (unnormalised).

Both z and W start N(0, ``init_std``^2). JoMA's claim (Theorem 1): under gradient flow with step sizes
eta_z for z and eta_W for W, and V = U_c^T W, rho = eta_z / eta_W,
softmax: z(t) ~ rho (sum_k V_lk^2/(2T) - xbar_l |W|_F^2/(2T)) + C (under the theorem's assumption on b),
exp: z(t) = rho sum_k V_lk^2/(2T) + C, linear: z(t)^2 = rho sum_k V_lk^2 + C (``analysis.joma`` checks them).
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
  attention: {description: "b from z and the frequencies x: softmax(z/T + log x), exp: x exp(z/T), linear: x z/T.", type: string, enum: [softmax, exp, linear], default: softmax}
"""
CHECKS = [["d", "d >= tokens + 1", "d={d} cannot hold the orthonormal embeddings of the {tokens} context tokens and the "
                                     "query of dataset '{dataset}'; allowed d >= {tokens + 1}"]]
ARCH = "(d, tokens, classes)"
SITES = "['f']"
RECORDS = "['attention'] if attention == 'softmax' else []"  # exp and linear b are not distributions

PARAM_DIMS = {"z": ("token",), "W": ("d_model", "class")}


@dataclass(frozen=True)
class Params:
    d: int
    temperature: float = 0.5
    init_std: float = 0.01
    attention: str = "softmax"


class Internals(NamedTuple):
    attention: torch.Tensor  # (S, B, M_c) b
    f: torch.Tensor  # (S, B, d)
    logits: torch.Tensor  # (S, B, K)


class JomaModel(DirectModel):
    def __init__(self, n_seeds: int, n_context: int, d: int, n_classes: int, temperature: float = 0.5,
                 init_std: float = 0.01, attention: str = "softmax"):
        super().__init__()
        self.S, self.Mc, self.d, self.K = n_seeds, n_context, d, n_classes
        self.attention_kind = attention
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
        z = self.z[:, None, :] / self.tau
        if self.attention_kind == "softmax":
            b = torch.softmax(z + torch.log(x), dim=-1)
        elif self.attention_kind == "exp":
            b = x * torch.exp(z)
        else:
            b = x * z
        U = self.embeddings().to(b)
        f = b @ U[:, : self.Mc].T + U[:, self.Mc]  # (S, B, d)
        return Internals(b, f, torch.bmm(f, self.W))

    def attention(self, x: torch.Tensor) -> torch.Tensor | None:
        """The softmax attention b; None for the unnormalised kinds (their b is no distribution to record)."""
        return self.internals(x).attention if self.attention_kind == "softmax" else None


def build(params: Params, n_seeds: int, shape: dict, attention) -> JomaModel:
    return JomaModel(n_seeds, shape["tokens"], params.d, shape["classes"], params.temperature, params.init_std,
                     params.attention)


def as_inputs(x: np.ndarray, params: Params | None = None) -> torch.Tensor:
    """Dataset ``x`` (K, M_c) context frequencies -> a float tensor."""
    return torch.as_tensor(x, dtype=torch.float32)
