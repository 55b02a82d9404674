"""The circuit model, with a leading ``seed`` axis on every parameter (S seeds train in lock-step).

Circuit model of "Easing Optimization Paths: a Circuit Perspective" (Cabannes, Simsek, Bietti), for
input ``x`` of length T over a vocabulary of size V, width d, MLP width h (DESIGN section 6):

    z_t   = RMS(W_E[x_t] + P_t)                         (1) token + position, normalised
    s     = softmax(z^T w_Q / tau)   over positions t     (2) one learned query, no key
    z_A   = sum_t s_t W_V z_t ;  zbar = RMS(z_A)
    z_O   = zbar + W_2^T GELU(W_1 zbar)                  (3) residual MLP
    logit = W_U z_O                                      (4)

``architecture: paper_code`` is instead the forward pass of the paper's own code (facebookresearch/pal,
``src/factorization/models/softmax_model.py``), which differs from the equations above in three places:

    RMS'(x) = x / (sqrt(mean(x^2)) + 1e-5)              epsilon outside the root, in (1) and (3)
    z_O     = z_A + W_2^T GELU(W_1 RMS'(z_A) + b_1) + b_2  residual from z_A, not RMS(z_A); MLP biases

and ties the unembedding (the reference's ``output.weight = token_emb.weight``): give that model
``tied_unembed: true`` (kept a separate key so that the two can be told apart).

Two implementations of the same function:
* ``forward_reference``/``internals``: the equations literally, one vector per (sequence, position);
* ``forward``: the fast path. ``z_t`` depends only on the pair (token, position), so the ``(T, V, d)``
  table of all of them is built once per step; attention logits are gathered from it, the softmax
  weights scattered into a ``(batch, T*V)`` matrix and pooled with one matmul against the table
  (and W_V applied after pooling: sum_t s_t W_V z_t = W_V sum_t s_t z_t). No (batch, T, d) tensor
  is formed. Tests check both against a per-sequence loop.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..attention import attention_weights, resolved_tau, softmax_last
from . import seed_generator

NAME = "circuit"
CONFIG = """
properties:
  vocab:
    description: "Embedding-table size; null means the dataset's number of token values. Must be >= that (larger allows p=2 -> p=4 finetuning)."
    type: [integer, "null"]
    minimum: 2
    default: null
  mlp_ratio: {description: "Hidden width of the MLP as a multiple of d (h = mlp_ratio * d).", type: integer, minimum: 1, default: 4}
  tied_unembed: {description: "Use W_U = W_E (tied embedding and unembedding; the paper's code ties them).", type: boolean, default: false}
  architecture:
    description: "paper_text: the paper's equations (RMS(z_A) + MLP(RMS(z_A)), eps inside the root, no MLP biases); paper_code: the forward pass of the paper's code (z_A + MLP(RMS'(z_A)) with MLP biases, RMS' = x / (sqrt(mean x^2) + 1e-5)); combine with tied_unembed: true for the reference exactly."
    enum: [paper_text, paper_code]
    default: paper_text
"""
CHECKS = [
    ["vocab", "vocab is None or vocab >= tokens",
     "vocab={vocab} is smaller than the {tokens} token values of dataset '{dataset}' used by run '{run}'; "
     "allowed vocab >= {tokens}"],
    ["vocab", "(vocab if vocab is not None else tokens) >= classes",
     "the logits are over the vocabulary, but dataset '{dataset}' of run '{run}' has {classes} classes; "
     "allowed vocab >= {classes}"],
]
ARCH = "(vocab if vocab is not None else tokens, T)"
SITES = "['z_A', 'mlp_out']"
RECORDS = ["attention", "z_A"]


@dataclass(frozen=True)
class Params:
    d: int
    vocab: int | None = None
    mlp_ratio: int = 4
    tied_unembed: bool = False
    architecture: str = "paper_text"


# Dims of each parameter (after the leading seed axis), in the workflow's vocabulary of names.
PARAM_DIMS = {
    "W_E": ("token", "d_model"),
    "P": ("position", "d_model"),
    "w_Q": ("d_model",),
    "W_V": ("d_model", "d_model_in"),
    "W_1": ("d_mlp", "d_model"),
    "W_2": ("d_mlp", "d_model"),
    "W_U": ("token", "d_model"),
    "b_1": ("d_mlp",),  # paper_code only
    "b_2": ("d_model",),  # paper_code only
}

RMS_EPS = 1e-6
CODE_RMS_EPS = 1e-5  # the paper's code: added to the root, not under it


def rms_norm(x: torch.Tensor) -> torch.Tensor:
    """Parameter-free RMS normalisation over the last axis."""
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + RMS_EPS)


def code_rms_norm(x: torch.Tensor) -> torch.Tensor:
    """The paper's code's RMSNorm: x / (sqrt(mean(x^2)) + 1e-5)."""
    return x / (x.pow(2).mean(-1, keepdim=True).sqrt() + CODE_RMS_EPS)


class Internals(NamedTuple):
    """Named intermediates of the circuit model, each with a leading seed axis."""

    attention: torch.Tensor  # (S, B, T) softmax weights s_t
    z_A: torch.Tensor  # (S, B, d) attention output before RMS
    mlp_out: torch.Tensor  # (S, B, d) the MLP branch W_2^T GELU(W_1 zbar) (+ biases: paper_code)
    z_O: torch.Tensor  # (S, B, d) residual-MLP output zbar + mlp_out (paper_code: z_A + mlp_out)
    logits: torch.Tensor  # (S, B, V)


class CircuitModel(nn.Module):
    """One-layer cross-attention transformer of the circuits paper, for S seeds at once."""

    records_gradients = False
    records_attention_histogram = False
    embed_site = "z_A"  # the d=2 model's z_A is drawn in the plane (Fig. 4)

    def __init__(self, n_seeds: int, vocab: int, T: int, d: int, mlp_ratio: int = 4,
                 tau: float | None = None, tied_unembed: bool = False, variant: str = "softmax",
                 architecture: str = "paper_text"):
        super().__init__()
        self.S, self.V, self.T, self.d, self.h = n_seeds, vocab, T, d, mlp_ratio * d
        self.d_head = d  # one head of width d
        self.tau = math.sqrt(d) if tau is None else float(tau)  # tau = sqrt(d), paper's default
        self.variant = variant  # softmax / normsoftmax / normsoftmax_var (pipeline_lib.attention)
        self.beta: float | None = None  # Heat Treatment: inverse temperature set per epoch
        self.tied_unembed = tied_unembed
        if architecture not in ("paper_text", "paper_code"):
            raise ValueError(f"architecture must be paper_text or paper_code, got {architecture!r}")
        self.architecture = architecture
        self.norm = code_rms_norm if architecture == "paper_code" else rms_norm
        S, V, h = n_seeds, vocab, self.h
        self.W_E = nn.Parameter(torch.empty(S, V, d))
        self.P = nn.Parameter(torch.empty(S, T, d))
        self.w_Q = nn.Parameter(torch.empty(S, d))
        self.W_V = nn.Parameter(torch.empty(S, d, d))
        self.W_1 = nn.Parameter(torch.empty(S, h, d))
        self.W_2 = nn.Parameter(torch.empty(S, h, d))
        self.W_U = None if tied_unembed else nn.Parameter(torch.empty(S, V, d))
        code = architecture == "paper_code"
        self.b_1 = nn.Parameter(torch.empty(S, h)) if code else None
        self.b_2 = nn.Parameter(torch.empty(S, d)) if code else None

    # -- parameters ---------------------------------------------------------------------------------
    def param_names(self) -> list[str]:
        return [n for n in PARAM_DIMS if getattr(self, n) is not None]

    @torch.no_grad()
    def init_seeds(self, seeds: list[int]) -> None:
        """Initialise slot i from seed ``seeds[i]`` alone (embeddings N(0,1), linear maps
        U(-1/sqrt(fan_in), 1/sqrt(fan_in)) as torch's nn.Embedding / nn.Linear defaults; the
        paper_code biases the same, drawn last, so the other parameters equal paper_text's)."""
        assert len(seeds) == self.S
        for i, seed in enumerate(seeds):
            g = seed_generator(seed, "init")
            for name in self.param_names():
                p = getattr(self, name)[i]
                if name in ("W_E", "P"):
                    val = torch.randn(p.shape, generator=g)
                else:
                    fan_in = self.h if name in ("W_2", "b_2") else self.d
                    val = (torch.rand(p.shape, generator=g) * 2 - 1) / math.sqrt(fan_in)
                p.copy_(val)

    @torch.no_grad()
    def load_arrays(self, arrays: dict[str, np.ndarray]) -> None:
        """Set parameters from arrays of shape (S, ...), e.g. a parent run's final weights."""
        for name in self.param_names():
            getattr(self, name).copy_(torch.as_tensor(arrays[name]))

    def unembed(self) -> torch.Tensor:
        return self.W_E if self.W_U is None else self.W_U

    # -- helpers -----------------------------------------------------------------------------------
    def _temperature(self) -> float:
        return 1.0 / self.beta if self.beta is not None else self.tau

    def _table_scores(self, table: torch.Tensor, pattern: str) -> torch.Tensor:
        """Scores z . w_Q of the (position, token) table; for softmax already divided by tau, before
        the gather (48 divisions instead of one per example and position); the NormSoftmax variants
        need the raw scores."""
        a = torch.einsum(pattern, table, self.w_Q)
        return a / self._temperature() if self.variant == "softmax" else a

    def _normalise_gathered(self, scores: torch.Tensor) -> torch.Tensor:
        """Attention weights over positions from ``_table_scores`` gathered per example."""
        if self.variant == "softmax":
            return softmax_last(scores)
        return attention_weights(scores, self.variant, self._temperature())

    def _per_seed(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T) shared by all seeds, or (S, B, T) -> (S, B, T)."""
        return x.expand(self.S, *x.shape) if x.dim() == 2 else x

    def _readout(self, z_A: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(mlp_out, z_O, logits) from the attention output."""
        zbar = self.norm(z_A)
        # Explicit bmm rather than einsum: einsum's backward hands GELU a strided gradient, which
        # sends gelu_backward down a slow path (24 ms instead of 4 ms per step on this CPU).
        if self.b_1 is None:
            hidden = F.gelu(torch.bmm(zbar, self.W_1.transpose(1, 2)))  # (S, B, h)
            mlp_out = torch.bmm(hidden, self.W_2)  # (S, B, d)
            z_O = zbar + mlp_out
        else:  # paper_code: biases (baddbmm adds them in the same kernel), residual from z_A
            hidden = F.gelu(torch.baddbmm(self.b_1[:, None, :], zbar, self.W_1.transpose(1, 2)))
            mlp_out = torch.baddbmm(self.b_2[:, None, :], hidden, self.W_2)
            z_O = z_A + mlp_out
        return mlp_out, z_O, torch.bmm(z_O, self.unembed().transpose(1, 2))  # (S, B, V)

    # -- reference implementation: the equations literally -----------------------------------------
    def internals(self, x: torch.Tensor) -> Internals:
        x = self._per_seed(x)
        seed_idx = torch.arange(self.S, device=x.device)[:, None, None]
        z = self.norm(self.W_E[seed_idx, x] + self.P[:, None])  # (S, B, T, d)
        attention = attention_weights(torch.einsum("sbtd,sd->sbt", z, self.w_Q), self.variant, self._temperature())
        values = torch.einsum("sed,sbtd->sbte", self.W_V, z)  # W_V z_t for every t: (S, B, T, d)
        z_A = torch.einsum("sbt,sbte->sbe", attention, values)  # (S, B, d)
        return Internals(attention, z_A, *self._readout(z_A))

    def forward_reference(self, x: torch.Tensor) -> torch.Tensor:
        return self.internals(x).logits

    def site(self, internals: Internals, name: str) -> torch.Tensor:
        """z_A or mlp_out: (S, B, d)."""
        return getattr(internals, name)

    # -- fast path: the (position, token) table ----------------------------------------------------
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits (S, B, V) for x of shape (B, T) (all seeds see it) or (S, B, T)."""
        S, T, V, d = self.S, self.T, self.V, self.d
        table = self.norm(self.P[:, :, None, :] + self.W_E[:, None, :, :]).reshape(S, T * V, d)  # (S, T*V, d)
        a = self._table_scores(table, "snd,sd->sn")  # (S, T*V) scores per (t, token)
        idx = x + V * torch.arange(T, device=x.device)  # (..., B, T) row of (t, x_t) in the table
        if idx.dim() == 2:
            scores = a[:, idx]  # (S, B, T)
            idx = idx.expand(S, *idx.shape)
        else:
            scores = torch.gather(a[:, None, :].expand(S, idx.shape[1], T * V), 2, idx)
        attention = self._normalise_gathered(scores)  # (S, B, T)
        weights = torch.zeros(S, idx.shape[1], T * V, device=x.device, dtype=table.dtype)
        weights.scatter_(2, idx, attention)  # (S, B, T*V) in place (no copy); (t, x_t) rows are distinct
        pooled = torch.bmm(weights, table)  # (S, B, d) = sum_t s_t z_t
        z_A = torch.einsum("sbd,sed->sbe", pooled, self.W_V)  # W_V after pooling
        return self._readout(z_A)[2]

    def attention(self, x: torch.Tensor) -> torch.Tensor:
        """Attention weights (S, B, T) of the fast path's quantities, cheap: no MLP."""
        x = self._per_seed(x)
        table = self.norm(self.P[:, :, None, :] + self.W_E[:, None, :, :])  # (S, T, V, d)
        a = self._table_scores(table, "stvd,sd->stv")
        pos = torch.arange(self.T, device=x.device)
        scores = a[torch.arange(self.S, device=x.device)[:, None, None], pos, x]  # (S, B, T)
        return self._normalise_gathered(scores)


def build(params: Params, n_seeds: int, shape: dict, attention) -> CircuitModel:
    """The model of a run (not initialised); vocab defaults to the dataset's number of token values.
    ``shape`` is the dataset's (tokens, T, ...); ``attention`` the run's AttentionConfig."""
    vocab = params.vocab if params.vocab is not None else shape["tokens"]
    return CircuitModel(n_seeds, vocab, shape["T"], params.d, params.mlp_ratio, resolved_tau(attention, params.d),
                        params.tied_unembed, attention.variant, params.architecture)


def as_inputs(x: np.ndarray, params: Params | None = None) -> torch.Tensor:
    """Dataset ``x`` (n, T) -> the model's input tensor (token ids)."""
    return torch.as_tensor(x, dtype=torch.long)
