"""Decoder-only (causal) pre-LN transformer over token sequences, next-token logits at every position,
with a leading ``seed`` axis on every parameter (S seeds train in lock-step): the shortest-path
transformer of Tian et al. ("Spectral Journey", arXiv 2502.08794: 2 layers).

Layer l: z += Attn(LN(z)) with a causal mask; z += MLP(LN(z)) (GELU); logits = LN(z) W_U + b_U.
Positions (``positions``): a learned absolute embedding P added to the token embedding, or rotary
embeddings (RoPE, Su et al. 2021; a third-party summary of the paper says its models use them): each
head's queries and keys rotated, pair (2i, 2i+1) of a head's dimensions at position t by the angle
t * 10000^(-2i / d_head), so that a query-key score depends on the two positions only through their
difference; no P then.
Inputs are padded at the end with the vocabulary's last token id (``<pad>``); the trailing columns
where every sequence of a batch is padding are not computed (causal attention: no earlier position
sees them), so the logits have as many positions as the batch's longest sequence. The loss
(``loss_acc``) is the cross-entropy at the positions whose label is >= 0, averaged per seed over
those tokens; the accuracy is the fraction of those tokens predicted (teacher forcing). Without
gradients (evaluation), batches are run in chunks of ``EVAL_CHUNK`` sequences.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..attention import resolved_tau
from .layer_stack import STACK_DIMS, SeedStackModel, seed_layer_norm

NAME = "decoder"
CONFIG = """
properties:
  n_heads: {description: "Attention heads per layer (d must be divisible by it).", type: integer, minimum: 1, default: 2}
  depth: {description: "Number of layers.", type: integer, minimum: 1, default: 2}
  mlp_ratio: {description: "Hidden width of the MLP as a multiple of d.", type: integer, minimum: 1, default: 4}
  positions:
    description: "learned: a learned embedding per position added to the tokens' (default learned); rope: rotary embeddings on each head's queries and keys, no absolute embedding."
    enum: [learned, rope]
"""
CHECKS = [["n_heads", "d % n_heads == 0", "d={d} is not divisible by n_heads={n_heads}; allowed: a divisor of d"]]
ARCH = "(tokens, T, classes)"
SITES = "[]"  # no probe sites: a batch's positions depend on its longest sequence (see site())
RECORDS = []

EVAL_CHUNK = 512  # sequences per pass without gradients

PARAM_DIMS = {"W_E": ("token", "d_model"), "P": ("position", "d_model"), **STACK_DIMS,
              "W_U": ("d_model", "class"), "b_U": ("class",)}


class DecoderInternals(NamedTuple):
    resid: list[torch.Tensor]  # per layer (S, B, T, d): the residual stream after the layer
    attention: list[torch.Tensor]  # per layer (S, B, H, T, T) causal attention weights
    logits: torch.Tensor  # (S, B, T, C)


@dataclass(frozen=True)
class Params:
    d: int
    n_heads: int = 2
    depth: int = 2
    mlp_ratio: int = 4
    positions: str = "learned"


ROPE_BASE = 10000.0


def rotary(u: torch.Tensor) -> torch.Tensor:
    """RoPE on (..., T, e) queries or keys: pair (2i, 2i+1) at position t rotated by the angle
    t * ROPE_BASE^(-2i / e); an odd head width leaves its last dimension as it is."""
    T, e = u.shape[-2:]
    half = e // 2
    freq = ROPE_BASE ** (-torch.arange(0, 2 * half, 2, dtype=torch.float32, device=u.device) / e)
    angle = torch.arange(T, dtype=torch.float32, device=u.device)[:, None] * freq  # (T, e // 2)
    cos, sin = angle.cos().to(u.dtype), angle.sin().to(u.dtype)
    even, odd = u[..., 0:2 * half:2], u[..., 1:2 * half:2]
    turned = torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)
    return torch.cat([turned, u[..., 2 * half:]], dim=-1)


class SeedDecoder(SeedStackModel):
    """Causal decoder of ``depth`` layers over token sequences: embedding (with learned positions, or RoPE
    in the attention), the shared layer stack (``layer_stack``), an unembedding to the classes at every
    position."""

    records_gradients = False
    records_attention_histogram = False
    embed_site = None

    def __init__(self, n_seeds: int, vocab: int, n_positions: int, n_classes: int, d_model: int, n_heads: int,
                 depth: int = 2, mlp_ratio: int = 4, tau: float | None = None, positions: str = "learned"):
        super().__init__(n_seeds, d_model, n_heads, depth, tau)
        if positions not in ("learned", "rope"):
            raise ValueError(f"positions={positions!r}; allowed: learned, rope")
        self.pad, self.rope = vocab - 1, positions == "rope"
        S, d = n_seeds, d_model
        self.W_E = nn.Parameter(torch.empty(S, vocab, d))
        if not self.rope:
            self.P = nn.Parameter(torch.empty(S, n_positions, d))
        self.add_layer_stack(mlp_ratio)
        self.W_U, self.b_U = nn.Parameter(torch.empty(S, d, n_classes)), nn.Parameter(torch.zeros(S, n_classes))

    # -- forward ------------------------------------------------------------------------------------
    def _trimmed(self, x: torch.Tensor) -> torch.Tensor:
        """(S, B, T') inputs: the seed axis added if missing, trailing all-padding columns dropped."""
        x = x.expand(self.S, *x.shape) if x.dim() == 2 else x
        used = (x != self.pad).flatten(0, 1).any(0)
        n = int(used.nonzero().max()) + 1 if bool(used.any()) else 1
        return x[..., :n]

    def _layers(self, x: torch.Tensor, keep: bool):
        """Residual stream through every layer; with ``keep``, the per-layer streams and weights."""
        S, B, T = x.shape
        z = self.W_E[torch.arange(S, device=x.device)[:, None, None], x]
        if not self.rope:
            z = z + self.P[:, None, :T]
        resid, attention = [], []
        for layer in range(self.L):
            zn = seed_layer_norm(z, self.ln1_g[:, layer], self.ln1_b[:, layer])
            q, k, v = (self._project(zn, W[:, layer]) for W in (self.W_Q, self.W_K, self.W_V))  # (S, B, H, T, e)
            if self.rope:
                q, k = rotary(q), rotary(k)
            if keep:  # the direct form: explicit masked softmax
                scores = (q @ k.transpose(-1, -2)) / self.temperature()
                mask = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
                w = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
                heads = w @ v
                attention.append(w)
            else:
                heads = F.scaled_dot_product_attention(q.flatten(0, 1), k.flatten(0, 1), v.flatten(0, 1),
                                                       is_causal=True, scale=1.0 / self.temperature()).view(q.shape)
            z = self._mlp_residual(z + self._heads_out(heads, layer), layer)
            if keep:
                resid.append(z)
        return z, resid, attention

    def _logits(self, z: torch.Tensor) -> torch.Tensor:
        S, B, T, d = z.shape
        zf = seed_layer_norm(z, self.lnf_g, self.lnf_b)
        return (torch.bmm(zf.reshape(S, B * T, d), self.W_U) + self.b_U[:, None]).view(S, B, T, -1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Next-token logits (S, B, T', C), T' the longest sequence of the batch."""
        if not torch.is_grad_enabled() and x.shape[-2] > EVAL_CHUNK:
            parts = [self.forward(x[..., i:i + EVAL_CHUNK, :]) for i in range(0, x.shape[-2], EVAL_CHUNK)]
            T = max(p.shape[2] for p in parts)
            return torch.cat([F.pad(p, (0, 0, 0, T - p.shape[2])) for p in parts], dim=1)
        return self._logits(self._layers(self._trimmed(x), keep=False)[0])

    def internals(self, x: torch.Tensor) -> DecoderInternals:
        z, resid, attention = self._layers(self._trimmed(x), keep=True)
        return DecoderInternals(resid, attention, self._logits(z))

    def site(self, internals: DecoderInternals, name: str) -> torch.Tensor:
        """``resid_<layer>``: the residual stream after that layer, flattened over positions (S, B, T'*d);
        T' depends on the batch's longest sequence, so it is not offered to the probes (SITES)."""
        r = internals.resid[int(name.rsplit("_", 1)[1])]
        return r.reshape(*r.shape[:2], -1)

    @torch.no_grad()
    def attention(self, x: torch.Tensor) -> None:
        return None  # RECORDS has no 'attention': the run records none

    @staticmethod
    def loss_acc(logits: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Per seed: mean cross-entropy over the labelled positions (y >= 0) and the fraction of them
        predicted. logits (S, B, T', C); y (B, T) or (S, B, T) with -1 where there is no label
        (T' <= T: the trimmed columns hold no label)."""
        S, B, T, C = logits.shape
        y = y.expand(S, *y.shape[-2:])[..., :T]
        valid = y >= 0
        target = y.clamp(min=0)
        ce = F.cross_entropy(logits.reshape(-1, C), target.reshape(-1), reduction="none").view(S, B, T)
        count = valid.sum((1, 2)).clamp(min=1)
        loss = (ce * valid).sum((1, 2)) / count
        acc = ((logits.argmax(-1) == target) & valid).sum((1, 2)) / count
        return loss, acc.float()

    @torch.no_grad()
    def greedy(self, x: torch.Tensor, start: torch.Tensor, steps: int) -> torch.Tensor:
        """Greedy decoding: x (B, T) prompts padded at the end, ``start`` (B,) the first position to
        fill; writes ``steps`` tokens per sequence and seed (each the argmax at the position before),
        returns them (S, B, steps). Positions past T are not decoded (their tokens are <pad>)."""
        B, T = x.shape
        buf = x.expand(self.S, B, T).clone()
        pos_all = start.to(x.device)[None].expand(self.S, B)
        out = torch.full((self.S, B, steps), self.pad, dtype=torch.long, device=x.device)
        seeds = torch.arange(self.S, device=x.device)[:, None]
        rows = torch.arange(B, device=x.device)[None]
        for k in range(steps):
            pos = pos_all + k
            ok = pos < T
            if not bool(ok.any()):
                break
            logits = self.forward(buf)  # (S, B, T', C)
            prev = (pos - 1).clamp(max=logits.shape[2] - 1)
            tok = logits[seeds, rows, prev].argmax(-1)
            tok = torch.where(ok, tok, torch.full_like(tok, self.pad))
            out[..., k] = tok
            buf[seeds, rows, pos.clamp(max=T - 1)] = torch.where(ok, tok, buf[seeds, rows, pos.clamp(max=T - 1)])
        return out


def build(params: Params, n_seeds: int, shape: dict, attention) -> SeedDecoder:
    if attention.variant != "softmax":
        raise ValueError(f"model kind decoder supports attention variant 'softmax' only (a run's attention.variant "
                         f"is {attention.variant!r})")
    return SeedDecoder(n_seeds, shape["tokens"], shape["T"], shape["classes"], params.d, params.n_heads,
                       params.depth, params.mlp_ratio, tau=resolved_tau(attention, params.d // params.n_heads),
                       positions=params.positions)


def as_inputs(x: np.ndarray, params: Params | None = None) -> torch.Tensor:
    return torch.as_tensor(x, dtype=torch.long)
