"""Pre-LN transformer encoder with a CLS token for the two-step tasks of 'Eureka-Moments in
Transformers', with a leading ``seed`` axis on every parameter (S seeds train in lock-step).

Inputs are tokens (the reasoning task: an embedding table) or flattened image patches (the digits
task: a linear patch embedding, i.e. a small ViT). Every attention uses the normalisations of
``pipeline_lib.attention`` (softmax with temperature, NormSoftmax, NormSoftmax-var); Heat Treatment
sets ``beta`` (the inverse temperature) from outside, per epoch. Internals that analyses need are
returned by name from ``internals``; ``grad_summary`` gives the mean |gradient| of W_Q, W_K, W_V per
layer and head (Fig. 5 of the Eureka paper).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..attention import attention_weights, resolved_tau
from .layer_stack import STACK_DIMS, SeedStackModel, drop_path_rates, seed_layer_norm

NAME = "transformer"
CONFIG = """
properties:
  vocab:
    description: "Embedding-table size; null means the dataset's number of token values (must be >= that)."
    type: [integer, "null"]
    minimum: 2
    default: null
  n_heads: {description: "Attention heads per layer (d must be divisible by it).", type: integer, minimum: 1, default: 4}
  depth: {description: "Number of layers.", type: integer, minimum: 1, default: 1}
  mlp_ratio: {description: "Hidden width of the MLP as a multiple of d.", type: integer, minimum: 1, default: 4}
  drop_path:
    description: >
      Drop-path (stochastic depth) rate of the last layer in training steps, rising linearly from 0 at
      the first (timm's rule, as the Eureka reference ViT: a one-layer model drops nothing); default 0.
    type: number
    minimum: 0
    exclusiveMaximum: 1
"""
CHECKS = [
    ["n_heads", "d % n_heads == 0", "d={d} is not divisible by n_heads={n_heads}; allowed: a divisor of d"],
    ["vocab", "vocab is None or vocab >= tokens",
     "vocab={vocab} is smaller than the {tokens} token values of dataset '{dataset}' used by run '{run}'; "
     "allowed vocab >= {tokens}"],
]
ARCH = "(vocab if vocab is not None else tokens, T, classes)"
# every layer's attention output at the CLS position and the final CLS representation
SITES = "[f'attn_out_{layer}' for layer in range(depth)] + ['cls']"
RECORDS = ["attention", "qkv_gradients", "attention_hist"]

HIST_BINS = 20  # attention-weight histogram: equal bins over [0, 1]

# Dims of each parameter (after the leading seed axis), in the workflow's vocabulary of names.
PARAM_DIMS = {
    "W_E": ("token", "d_model"), "W_patch": ("patch_pixel", "d_model"), "b_patch": ("d_model",),
    "cls": ("d_model",), "P": ("position", "d_model"),
    **STACK_DIMS, "W_cls": ("d_model", "class"), "b_cls": ("class",),
}


class TransformerInternals(NamedTuple):
    attention: list[torch.Tensor]  # per layer (S, B, H, T+1, T+1) normalised attention weights
    attn_out: list[torch.Tensor]  # per layer (S, B, T+1, d) attention block output (before the residual)
    cls: torch.Tensor  # (S, B, d) final CLS representation (after the last LayerNorm)
    logits: torch.Tensor  # (S, B, C)


@dataclass(frozen=True)
class Params:
    d: int
    vocab: int | None = None
    n_heads: int = 4
    depth: int = 1
    mlp_ratio: int = 4
    drop_path: float = 0.0


class SeedTransformer(SeedStackModel):
    """Encoder of ``depth`` layers, ``n_heads`` heads, CLS token, learned positions, classifier on CLS."""

    records_gradients = True
    records_attention_histogram = True
    embed_site = None

    def __init__(self, n_seeds: int, n_classes: int, n_tokens: int, d_model: int, n_heads: int, depth: int = 1,
                 mlp_ratio: int = 4, vocab: int | None = None, patch_dim: int | None = None,
                 variant: str = "softmax", tau: float | None = None, drop_path: float = 0.0):
        if (vocab is None) == (patch_dim is None):
            raise ValueError("give exactly one of vocab (token inputs) or patch_dim (patch inputs)")
        super().__init__(n_seeds, d_model, n_heads, depth, tau)
        self.variant = variant
        self.drop_rates = drop_path_rates(drop_path, depth)
        S, d = n_seeds, d_model
        if vocab is not None:
            self.W_E = nn.Parameter(torch.empty(S, vocab, d))
        else:
            self.W_patch = nn.Parameter(torch.empty(S, patch_dim, d))
            self.b_patch = nn.Parameter(torch.zeros(S, d))
        self.cls = nn.Parameter(torch.empty(S, d))
        self.P = nn.Parameter(torch.empty(S, n_tokens + 1, d))
        self.add_layer_stack(mlp_ratio)
        self.W_cls, self.b_cls = nn.Parameter(torch.empty(S, d, n_classes)), nn.Parameter(torch.zeros(S, n_classes))

    # -- forward ------------------------------------------------------------------------------------
    def _embed(self, x: torch.Tensor) -> torch.Tensor:
        """(B, N) tokens / (B, N, patch_dim) patches, shared by all seeds, or with a leading S axis."""
        if hasattr(self, "W_E"):
            x = x.expand(self.S, *x.shape) if x.dim() == 2 else x
            z = self.W_E[torch.arange(self.S, device=x.device)[:, None, None], x]  # (S, B, N, d)
        else:
            x = x.expand(self.S, *x.shape) if x.dim() == 3 else x
            z = torch.einsum("sbnp,spd->sbnd", x, self.W_patch) + self.b_patch[:, None, None]
        cls = self.cls[:, None, None, :].expand(self.S, z.shape[1], 1, self.d)
        return torch.cat([cls, z], dim=2) + self.P[:, None]  # (S, B, N+1, d)

    def _attention(self, z: torch.Tensor, layer: int) -> tuple[torch.Tensor, torch.Tensor]:
        zn = seed_layer_norm(z, self.ln1_g[:, layer], self.ln1_b[:, layer])
        q, k, v = (self._project(zn, W[:, layer]) for W in (self.W_Q, self.W_K, self.W_V))  # (S, B, H, T, e)
        scores = q @ k.transpose(-1, -2)  # raw q.k, (S, B, H, T, T)
        weights = attention_weights(scores, self.variant, self.temperature())
        return weights, self._heads_out(weights @ v, layer)

    def internals(self, x: torch.Tensor) -> TransformerInternals:
        z = self._embed(x)
        attention, attn_out = [], []
        for layer in range(self.L):
            w, a = self._attention(z, layer)
            attention.append(w)
            attn_out.append(a)
            z = self._mlp_residual(z + self._dropped(a, layer), layer)
        cls = seed_layer_norm(z[:, :, 0], self.lnf_g, self.lnf_b)  # (S, B, d)
        logits = torch.einsum("sbd,sdc->sbc", cls, self.W_cls) + self.b_cls[:, None]
        return TransformerInternals(attention, attn_out, cls, logits)

    def site(self, internals: TransformerInternals, name: str) -> torch.Tensor:
        """``cls`` (S, B, d) or ``attn_out_<layer>`` at the CLS position (S, B, d)."""
        if name == "cls":
            return internals.cls
        return internals.attn_out[int(name.rsplit("_", 1)[1])][:, :, 0]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits (S, B, C). One-layer token models take the fast path (same function)."""
        if self.L == 1 and hasattr(self, "W_E"):
            return self._forward_one_layer_tokens(x)
        return self.internals(x).logits

    def _forward_one_layer_tokens(self, x: torch.Tensor) -> torch.Tensor:
        """One layer over tokens: only the CLS row reaches the classifier, and before attention every
        input vector depends only on its (position, token) pair. So keys and values are computed once
        per step on the (position, token) table, the CLS query once per seed, attention weights are
        scattered into a (batch, positions*vocab) matrix and pooled with one matmul, and the MLP runs
        on the CLS row alone. Tested against ``internals`` (the direct form)."""
        S, H, e, d = self.S, self.H, self.e, self.d
        x = x.expand(S, *x.shape) if x.dim() == 2 else x  # (S, B, N)
        B, N = x.shape[1], x.shape[2]
        V = self.W_E.shape[1]
        g1, b1 = self.ln1_g[:, 0], self.ln1_b[:, 0]
        table = seed_layer_norm((self.W_E[:, None] + self.P[:, 1:, None]).reshape(S, N * V, d), g1, b1)
        cls0 = self.cls + self.P[:, 0]  # (S, d): the CLS input, the same for every example
        cls_n = seed_layer_norm(cls0, g1, b1)
        per_head = lambda z, W: torch.einsum("snd,shde->shne", z, W)  # noqa: E731  (S, H, n, e)
        q = per_head(cls_n[:, None], self.W_Q[:, 0])  # (S, H, 1, e)
        k_tab, v_tab = per_head(table, self.W_K[:, 0]), per_head(table, self.W_V[:, 0])  # (S, H, N*V, e)
        k_cls, v_cls = per_head(cls_n[:, None], self.W_K[:, 0]), per_head(cls_n[:, None], self.W_V[:, 0])
        s_tab = (k_tab @ q.transpose(-1, -2)).squeeze(-1)  # (S, H, N*V)
        s_cls = (k_cls @ q.transpose(-1, -2)).squeeze(-1)  # (S, H, 1)
        idx = x + V * torch.arange(N, device=x.device)  # (S, B, N): row of (n, x_n) in the table
        seed_idx = torch.arange(S, device=x.device)[:, None, None]
        s_tok = s_tab.permute(0, 2, 1)[seed_idx, idx]  # (S, B, N, H)
        scores = torch.cat([s_cls.permute(0, 2, 1)[:, None].expand(S, B, 1, H), s_tok], dim=2)
        weights = attention_weights(scores.transpose(2, 3), self.variant, self.temperature())  # (S, B, H, N+1)
        scattered = torch.zeros(S, H, B, N * V, device=x.device, dtype=weights.dtype)
        scattered.scatter_(3, idx[:, None].expand(S, H, B, N), weights[..., 1:].permute(0, 2, 1, 3))
        pooled = scattered @ v_tab + weights[..., :1].permute(0, 2, 1, 3) * v_cls  # (S, H, B, e)
        attn_out = torch.bmm(pooled.permute(0, 2, 1, 3).reshape(S, B, H * e), self.W_O[:, 0].reshape(S, H * e, d))
        z = cls0[:, None] + attn_out  # (S, B, d): the CLS row after attention
        zn = seed_layer_norm(z, self.ln2_g[:, 0], self.ln2_b[:, 0])
        hidden = F.gelu(torch.bmm(zn, self.W_1[:, 0]) + self.b_1[:, 0, None])
        z = z + torch.bmm(hidden, self.W_2[:, 0]) + self.b_2[:, 0, None]
        cls = seed_layer_norm(z, self.lnf_g, self.lnf_b)
        return torch.bmm(cls, self.W_cls) + self.b_cls[:, None]

    # -- recording ----------------------------------------------------------------------------------
    @torch.no_grad()
    def attention(self, x: torch.Tensor) -> torch.Tensor:
        """The CLS query's attention over the N+1 positions (CLS first), last layer, mean over heads:
        (S, B, N+1)."""
        return self.internals(x).attention[-1][:, :, :, 0].mean(2)

    @torch.no_grad()
    def attention_histogram(self, x: torch.Tensor, bins: int = HIST_BINS) -> torch.Tensor:
        """Fraction of attention weights (all queries, keys and heads of ``x``) in each of ``bins``
        equal bins over [0, 1], per seed and layer: (S, L, bins)."""
        out = []
        for w in self.internals(x).attention:
            idx = (w.reshape(self.S, -1) * bins).long().clamp_(0, bins - 1)
            counts = torch.zeros(self.S, bins, device=w.device).scatter_add_(1, idx, torch.ones_like(w.reshape(self.S, -1)))
            out.append(counts / idx.shape[1])
        return torch.stack(out, 1)

    # -- gradients ----------------------------------------------------------------------------------
    @torch.no_grad()
    def grad_summary(self) -> dict[str, torch.Tensor]:
        """Mean |gradient| of W_Q, W_K, W_V per seed, layer and head: (S, L, H) each."""
        return {n: getattr(self, n).grad.abs().mean(dim=(-2, -1)) for n in ("W_Q", "W_K", "W_V")}


def build(params: Params, n_seeds: int, shape: dict, attention) -> SeedTransformer:
    """The model of a run over tokens (not initialised); vocab defaults to the dataset's token count."""
    vocab = params.vocab if params.vocab is not None else shape["tokens"]
    return SeedTransformer(n_seeds, shape["classes"], shape["T"], params.d, params.n_heads, params.depth,
                           params.mlp_ratio, vocab=vocab, variant=attention.variant,
                           tau=resolved_tau(attention, params.d // params.n_heads), drop_path=params.drop_path)


def as_inputs(x: np.ndarray, params: Params | None = None) -> torch.Tensor:
    """Dataset ``x`` (n, T) -> token ids."""
    return torch.as_tensor(x, dtype=torch.long)
