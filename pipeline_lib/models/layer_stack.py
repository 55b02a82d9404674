"""The pre-LN layer stack that the encoder (``transformer``) and the decoder (``decoder``) share: its
parameters with a leading seed axis, their initialisation and loading, the per-head projection and
the MLP sublayer. Each model composes it: it registers the stack's parameters between its own
(embedding before, classifier or unembedding after) and calls the shared pieces in its forward pass.

Layer l: z += Attn(LN1(z)); z += MLP(LN2(z)) with a GELU MLP of width ``mlp_ratio * d``; the stack
ends with a final LayerNorm (``lnf``). Every matrix is N(0, 0.02^2) from the slot's own seed
(GPT-2 style), biases 0, gains 1.

Drop-path (stochastic depth, timm's ``DropPath`` as the Eureka paper's reference ViT uses it): while the
engine trains with a :class:`DropPath` sampler set on the model, each residual branch of layer l is
zeroed per example with probability p_l and otherwise scaled by 1 / (1 - p_l), p_l rising linearly from
0 at the first layer to ``drop_path`` at the last (timm's rule: a one-layer stack drops nothing).
"""
from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from . import seed_generator

LN_EPS = 1e-5

# dims of the stack's parameters (after the leading seed axis), in the workflow's vocabulary of names
STACK_DIMS = {
    "ln1_g": ("layer", "d_model"), "ln1_b": ("layer", "d_model"),
    "W_Q": ("layer", "head", "d_model", "d_head"), "W_K": ("layer", "head", "d_model", "d_head"),
    "W_V": ("layer", "head", "d_model", "d_head"), "W_O": ("layer", "head", "d_head", "d_model"),
    "ln2_g": ("layer", "d_model"), "ln2_b": ("layer", "d_model"),
    "W_1": ("layer", "d_model", "d_mlp"), "b_1": ("layer", "d_mlp"),
    "W_2": ("layer", "d_mlp", "d_model"), "b_2": ("layer", "d_model"),
    "lnf_g": ("d_model",), "lnf_b": ("d_model",),
}


class DropPath:
    """The per-example keep masks of stochastic depth for the slots of a run: one generator per slot,
    seeded by the slot's seed alone (a slot's masks do not depend on the others), drawn on the CPU in
    the order the layers ask for them; its generators' states are saved with a resume checkpoint."""

    def __init__(self, rates: list[float], seeds: list[int]):
        self.rates = rates
        self.generators = [seed_generator(s, "droppath") for s in seeds]

    def mask(self, layer: int, batch: int) -> torch.Tensor:
        """(S, B) floats: 0 for a dropped branch, 1 / (1 - p) for a kept one (timm: floor(keep + U) / keep)."""
        keep = 1.0 - self.rates[layer]
        u = torch.stack([torch.rand(batch, generator=g) for g in self.generators])
        return torch.floor(keep + u) / keep


def drop_path_rates(drop_path: float, depth: int) -> list[float]:
    """Per-layer drop probabilities: timm's ``linspace(0, drop_path, depth)``."""
    return torch.linspace(0, drop_path, depth).tolist()


def seed_layer_norm(x: torch.Tensor, gain: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """LayerNorm over the last axis with per-seed gain/bias (S, d); x is (S, ..., d)."""
    shape = (x.shape[0],) + (1,) * (x.dim() - 2) + (x.shape[-1],)
    return F.layer_norm(x, x.shape[-1:], eps=LN_EPS) * gain.view(shape) + bias.view(shape)


class SeedStackModel(nn.Module):
    """Base of a model built around the layer stack: sizes, temperature, parameter handling and the
    stack's sublayers. A subclass initialises it with the sizes, registers its own parameters and
    calls :meth:`add_layer_stack` where the stack's belong in the parameter order (the order of
    initialisation)."""

    def __init__(self, n_seeds: int, d_model: int, n_heads: int, depth: int, tau: float | None):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
        self.S, self.L, self.H, self.d = n_seeds, depth, n_heads, d_model
        self.e = self.d_head = d_model // n_heads
        self.tau = math.sqrt(self.e) if tau is None else float(tau)  # tau = sqrt(d_head) by default
        self.beta: float | None = None  # Heat Treatment: inverse temperature set per epoch
        self.drop_rates = [0.0] * depth  # drop-path probability per layer (drop_path_rates)
        self.dropper: DropPath | None = None  # set by the engine around its training steps

    def add_layer_stack(self, mlp_ratio: int) -> None:
        """Register the stack's parameters (:data:`STACK_DIMS`, in that order)."""
        S, L, H, d, e, h = self.S, self.L, self.H, self.d, self.e, mlp_ratio * self.d
        self.ln1_g, self.ln1_b = nn.Parameter(torch.ones(S, L, d)), nn.Parameter(torch.zeros(S, L, d))
        self.W_Q = nn.Parameter(torch.empty(S, L, H, d, e))
        self.W_K = nn.Parameter(torch.empty(S, L, H, d, e))
        self.W_V = nn.Parameter(torch.empty(S, L, H, d, e))
        self.W_O = nn.Parameter(torch.empty(S, L, H, e, d))
        self.ln2_g, self.ln2_b = nn.Parameter(torch.ones(S, L, d)), nn.Parameter(torch.zeros(S, L, d))
        self.W_1, self.b_1 = nn.Parameter(torch.empty(S, L, d, h)), nn.Parameter(torch.zeros(S, L, h))
        self.W_2, self.b_2 = nn.Parameter(torch.empty(S, L, h, d)), nn.Parameter(torch.zeros(S, L, d))
        self.lnf_g, self.lnf_b = nn.Parameter(torch.ones(S, d)), nn.Parameter(torch.zeros(S, d))

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

    @torch.no_grad()
    def load_arrays(self, arrays: dict) -> None:
        """Set parameters from arrays of shape (S, ...), e.g. a parent run's final weights."""
        for name, p in self.named_parameters():
            p.copy_(torch.as_tensor(np.asarray(arrays[name])))

    def drop_path_sampler(self, seeds: list[int]) -> DropPath | None:
        """The drop-path masks' sampler for training slots of these seeds (None: the model drops nothing)."""
        return DropPath(self.drop_rates, seeds) if any(self.drop_rates) else None

    def temperature(self) -> float:
        """tau, or 1/beta while Heat Treatment sets the inverse temperature."""
        return 1.0 / self.beta if self.beta is not None else self.tau

    # -- the stack's sublayers ----------------------------------------------------------------------
    def _project(self, zn: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
        """(S, B, T, d) x per-head (S, H, d, e) -> (S, B, H, T, e), as one batched matmul."""
        S, B, T, d = zn.shape
        flat = torch.bmm(zn.reshape(S, B * T, d), W.permute(0, 2, 1, 3).reshape(S, d, self.H * self.e))
        return flat.view(S, B, T, self.H, self.e).permute(0, 1, 3, 2, 4)

    def _heads_out(self, heads: torch.Tensor, layer: int) -> torch.Tensor:
        """The heads' outputs (S, B, H, T, e) through ``layer``'s W_O, concatenated: (S, B, T, d)."""
        S, B, H, T, e = heads.shape
        W_O = self.W_O[:, layer].reshape(S, H * e, self.d)
        return torch.bmm(heads.permute(0, 1, 3, 2, 4).reshape(S, B * T, H * e), W_O).view(S, B, T, self.d)

    def _mlp_residual(self, z: torch.Tensor, layer: int) -> torch.Tensor:
        """z + MLP(LN2(z)) of ``layer`` for the residual stream z (S, B, T, d)."""
        zn = seed_layer_norm(z, self.ln2_g[:, layer], self.ln2_b[:, layer])
        S, B, T, d = zn.shape
        hidden = F.gelu(torch.bmm(zn.reshape(S, B * T, d), self.W_1[:, layer]) + self.b_1[:, layer, None])
        return z + self._dropped((torch.bmm(hidden, self.W_2[:, layer]) + self.b_2[:, layer, None]).view(S, B, T, d),
                                 layer)

    def _dropped(self, branch: torch.Tensor, layer: int) -> torch.Tensor:
        """A residual branch (S, B, ...) of ``layer`` under drop-path: only in a training step (a sampler
        set, gradients on) and where the layer's rate is not 0; otherwise the branch itself."""
        if self.dropper is None or not self.drop_rates[layer] or not torch.is_grad_enabled():
            return branch
        m = self.dropper.mask(layer, branch.shape[1]).to(branch.device, branch.dtype)
        return branch * m.view(*m.shape, *([1] * (branch.dim() - 2)))
