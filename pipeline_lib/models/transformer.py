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

import math
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from ..attention import attention_weights
from . import seed_generator

LN_EPS = 1e-5


class TransformerInternals(NamedTuple):
    attention: list[torch.Tensor]  # per layer (S, B, H, T+1, T+1) normalised attention weights
    attn_out: list[torch.Tensor]  # per layer (S, B, T+1, d) attention block output (before the residual)
    cls: torch.Tensor  # (S, B, d) final CLS representation (after the last LayerNorm)
    logits: torch.Tensor  # (S, B, C)


def seed_layer_norm(x: torch.Tensor, gain: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """LayerNorm over the last axis with per-seed gain/bias (S, d); x is (S, ..., d)."""
    shape = (x.shape[0],) + (1,) * (x.dim() - 2) + (x.shape[-1],)
    return F.layer_norm(x, x.shape[-1:], eps=LN_EPS) * gain.view(shape) + bias.view(shape)


class SeedTransformer(nn.Module):
    """Encoder of ``depth`` layers, ``n_heads`` heads, CLS token, learned positions, classifier on CLS."""

    def __init__(self, n_seeds: int, n_classes: int, n_tokens: int, d_model: int, n_heads: int, depth: int = 1,
                 mlp_ratio: int = 4, vocab: int | None = None, patch_dim: int | None = None,
                 variant: str = "softmax", tau: float | None = None):
        super().__init__()
        if (vocab is None) == (patch_dim is None):
            raise ValueError("give exactly one of vocab (token inputs) or patch_dim (patch inputs)")
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
        S, L, H, d = n_seeds, depth, n_heads, d_model
        e, h = d_model // n_heads, mlp_ratio * d_model
        self.S, self.L, self.H, self.d, self.e = S, L, H, d, e
        self.variant = variant
        self.tau = math.sqrt(e) if tau is None else float(tau)  # tau = sqrt(d_head) by default
        self.beta: float | None = None  # Heat Treatment: inverse temperature set per epoch
        if vocab is not None:
            self.W_E = nn.Parameter(torch.empty(S, vocab, d))
        else:
            self.W_patch = nn.Parameter(torch.empty(S, patch_dim, d))
            self.b_patch = nn.Parameter(torch.zeros(S, d))
        self.cls = nn.Parameter(torch.empty(S, d))
        self.P = nn.Parameter(torch.empty(S, n_tokens + 1, d))
        self.ln1_g, self.ln1_b = nn.Parameter(torch.ones(S, L, d)), nn.Parameter(torch.zeros(S, L, d))
        self.W_Q = nn.Parameter(torch.empty(S, L, H, d, e))
        self.W_K = nn.Parameter(torch.empty(S, L, H, d, e))
        self.W_V = nn.Parameter(torch.empty(S, L, H, d, e))
        self.W_O = nn.Parameter(torch.empty(S, L, H, e, d))
        self.ln2_g, self.ln2_b = nn.Parameter(torch.ones(S, L, d)), nn.Parameter(torch.zeros(S, L, d))
        self.W_1, self.b_1 = nn.Parameter(torch.empty(S, L, d, h)), nn.Parameter(torch.zeros(S, L, h))
        self.W_2, self.b_2 = nn.Parameter(torch.empty(S, L, h, d)), nn.Parameter(torch.zeros(S, L, d))
        self.lnf_g, self.lnf_b = nn.Parameter(torch.ones(S, d)), nn.Parameter(torch.zeros(S, d))
        self.W_cls, self.b_cls = nn.Parameter(torch.empty(S, d, n_classes)), nn.Parameter(torch.zeros(S, n_classes))

    # -- parameters ---------------------------------------------------------------------------------
    def param_names(self) -> list[str]:
        return [n for n, _ in self.named_parameters()]

    @torch.no_grad()
    def init_seeds(self, seeds: list[int]) -> None:
        """Slot i from seed ``seeds[i]`` alone: matrices N(0, 0.02^2) (GPT-2 style), biases 0, gains 1."""
        assert len(seeds) == self.S
        for i, seed in enumerate(seeds):
            g = seed_generator(seed, "init")
            for name, p in self.named_parameters():
                if name.startswith(("ln", "b_")):
                    continue  # gains stay 1, biases 0
                p[i].copy_(torch.randn(p[i].shape, generator=g) * 0.02)

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
        q = torch.einsum("sbtd,shde->sbhte", zn, self.W_Q[:, layer])
        k = torch.einsum("sbtd,shde->sbhte", zn, self.W_K[:, layer])
        v = torch.einsum("sbtd,shde->sbhte", zn, self.W_V[:, layer])
        scores = torch.einsum("sbhte,sbhue->sbhtu", q, k)  # raw q.k, (S, B, H, T, T)
        tau = 1.0 / self.beta if self.beta is not None else self.tau
        weights = attention_weights(scores, self.variant, tau)
        heads = torch.einsum("sbhtu,sbhue->sbhte", weights, v)
        return weights, torch.einsum("sbhte,shed->sbtd", heads, self.W_O[:, layer])

    def internals(self, x: torch.Tensor) -> TransformerInternals:
        z = self._embed(x)
        attention, attn_out = [], []
        for layer in range(self.L):
            w, a = self._attention(z, layer)
            attention.append(w)
            attn_out.append(a)
            z = z + a
            zn = seed_layer_norm(z, self.ln2_g[:, layer], self.ln2_b[:, layer])
            hidden = F.gelu(torch.einsum("sbtd,sdh->sbth", zn, self.W_1[:, layer]) + self.b_1[:, layer, None, None])
            z = z + torch.einsum("sbth,shd->sbtd", hidden, self.W_2[:, layer]) + self.b_2[:, layer, None, None]
        cls = seed_layer_norm(z[:, :, 0], self.lnf_g, self.lnf_b)  # (S, B, d)
        logits = torch.einsum("sbd,sdc->sbc", cls, self.W_cls) + self.b_cls[:, None]
        return TransformerInternals(attention, attn_out, cls, logits)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.internals(x).logits

    # -- gradients ----------------------------------------------------------------------------------
    @torch.no_grad()
    def grad_summary(self) -> dict[str, torch.Tensor]:
        """Mean |gradient| of W_Q, W_K, W_V per seed, layer and head: (S, L, H) each."""
        return {n: getattr(self, n).grad.abs().mean(dim=(-2, -1)) for n in ("W_Q", "W_K", "W_V")}
