"""GaLore (Zhao et al. 2024, "GaLore: Memory-Efficient LLM Training by Gradient Low-Rank
Projection"; jiaweizzhao/GaLore ``galore_torch`` read, not copied), seed-batched.

For every parameter that is a matrix per seed (S, m, n), or a stack of them (S, layer, head, m, n:
``is_matrix`` decides from the dim names, so layer norms' (layer, d_model) are not), every ``update_gap`` steps the projector
is recomputed from the SVD of the current gradient G = U diag(s) Vh, rank r = min(rank, m, n); the
smaller side is projected:

    m >= n:  P = Vh[:r]        (r x n),  R = G P^T   (m x r),  back: N P
    m <  n:  P = U[:, :r]      (m x r),  R = P^T G   (r x n),  back: P N

Adam runs on R (its moments have R's shape and are kept, not re-projected, when P changes); the
normalised update N is projected back, scaled by ``scale`` and applied with Adam's bias-corrected
step size; then decoupled weight decay p <- p - lr wd p (``weight_decay_mode: coupled`` instead adds
wd p to the gradient first, as torch's Adam does, so a comparison with an Adam run differs only in
the projection). Per-head slices (head, ..., d_head) are projected as one matrix of H * d_head
columns or rows (:func:`to_matrix`), as the reference projects a whole q_proj. Parameters that are
not matrices per seed (biases, gains) get the same Adam update unprojected and unscaled. Unlike the
reference's usual setup (the blocks' linear layers only), every weight matrix is projected,
embeddings included. The per-seed SVDs are batched
(torch.linalg.svd over the seed axis), so seed i's update depends on seed i alone.

``base='sgd'`` replaces Adam by plain SGD on R (step lr, no moments): with rank = min(m, n) and
scale 1 that is exactly SGD (P^T P = I), which the tests check.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

NAME = "galore_adam"
CONFIG = """
properties:
  rank: {description: "GaLore: rank r of the gradient projection (clipped to min(m, n) of each matrix).", type: integer, minimum: 1}
  update_gap: {description: "GaLore: steps between recomputations of the projector from the gradient's SVD (default 200).", type: integer, minimum: 1}
  scale: {description: "GaLore: alpha, the scale of the projected-back update (default 0.25, the paper's).", type: number, exclusiveMinimum: 0}
  eps: {description: "GaLore: Adam's epsilon (default 1e-06, the reference's).", type: number, exclusiveMinimum: 0}
  weight_decay_mode: {description: "GaLore: decoupled (default decoupled: p -= lr wd p after the update, the reference's AdamW) or coupled (wd p added to the gradient before projecting, as torch's Adam).", type: string, enum: [decoupled, coupled]}
required: [rank]
"""


@dataclass(frozen=True)
class Params:
    rank: int
    update_gap: int = 200
    scale: float = 0.25
    eps: float = 1e-6
    weight_decay_mode: str = "decoupled"


# dims that stack matrices (a matrix per layer or head), never one of a matrix's two sides
STACK_DIMS = ("layer", "head")


def is_matrix(dims: tuple) -> bool:
    """Whether a parameter with these dim names (after the seed axis) is a matrix, or a stack of
    matrices along its leading dims, that GaLore projects (its last two dims are not stack dims)."""
    return len(dims) >= 2 and not set(dims[-2:]) & set(STACK_DIMS)


def _merges_heads(dims) -> bool:
    return dims is not None and "head" in dims and "d_head" in dims[-2:]


def to_matrix(t: torch.Tensor, dims) -> torch.Tensor:
    """(S, *dims) -> the matrices GaLore projects. Per-head slices (head, ..., d_head) are merged into
    one side of H * d_head, as the reference projects a whole q_proj / o_proj: W_Q (layer, head,
    d_model, d_head) -> (S, layer, d_model, H d_head); W_O (layer, head, d_head, d_model) ->
    (S, layer, H d_head, d_model)."""
    if not _merges_heads(dims):
        return t
    h = 1 + list(dims).index("head")
    if dims[-1] == "d_head":
        t = t.movedim(h, -2)
        return t.reshape(*t.shape[:-2], -1)
    t = t.movedim(h, -3)
    return t.reshape(*t.shape[:-3], -1, t.shape[-1])


def from_matrix(t: torch.Tensor, dims, shape) -> torch.Tensor:
    """The inverse of :func:`to_matrix` for a parameter of ``shape``."""
    if not _merges_heads(dims):
        return t
    h = 1 + list(dims).index("head")
    H = shape[h]
    if dims[-1] == "d_head":
        return t.reshape(*t.shape[:-1], H, -1).movedim(-2, h)
    return t.reshape(*t.shape[:-2], H, -1, t.shape[-1]).movedim(-3, h)


def build(params, opt_cfg, dims: list) -> "GaLoreAdam":
    p = Params(**dict(opt_cfg.options))
    groups = [{"params": [w], "matrix": is_matrix(d), "dims": tuple(d)} for w, d in zip(params, dims)]
    return GaLoreAdam(groups, lr=opt_cfg.lr, rank=p.rank, update_gap=p.update_gap, scale=p.scale,
                      betas=opt_cfg.betas, eps=p.eps, weight_decay=opt_cfg.weight_decay,
                      weight_decay_mode=p.weight_decay_mode)


class GaLoreAdam(torch.optim.Optimizer):
    """GaLore with an Adam (or, for tests, plain SGD) base on seed-batched parameters (see module)."""

    def __init__(self, params, lr: float, rank: int, update_gap: int = 200, scale: float = 0.25,
                 betas=(0.9, 0.999), eps: float = 1e-6, weight_decay: float = 0.0, base: str = "adam",
                 weight_decay_mode: str = "decoupled"):
        if base not in ("adam", "sgd"):
            raise ValueError(f"GaLore base {base!r}: allowed adam, sgd")
        if weight_decay_mode not in ("decoupled", "coupled"):
            raise ValueError(f"GaLore weight_decay_mode {weight_decay_mode!r}: allowed decoupled, coupled")
        super().__init__(params, dict(lr=lr, rank=rank, update_gap=update_gap, scale=scale, betas=tuple(betas),
                                      eps=eps, weight_decay=weight_decay, base=base, matrix=None, dims=None,
                                      weight_decay_mode=weight_decay_mode))

    @staticmethod
    def projector(grad: torch.Tensor, rank: int) -> torch.Tensor:
        """P of a batch of gradients (S, m, n): Vh[:, :r] (S, r, n) if m >= n, else U[:, :, :r] (S, m, r)."""
        m, n = grad.shape[-2:]
        r = min(rank, m, n)
        g = grad if grad.dtype in (torch.float32, torch.float64) else grad.float()  # SVD of half precision: in float32
        U, _, Vh = torch.linalg.svd(torch.nan_to_num(g), full_matrices=False)
        return (Vh[..., :r, :] if m >= n else U[..., :, :r]).to(grad.dtype)

    @staticmethod
    def project(grad: torch.Tensor, P: torch.Tensor) -> torch.Tensor:
        m, n = grad.shape[-2:]
        return grad @ P.transpose(-1, -2) if m >= n else P.transpose(-1, -2) @ grad

    @staticmethod
    def project_back(low: torch.Tensor, P: torch.Tensor, shape) -> torch.Tensor:
        m, n = shape[-2:]
        return low @ P if m >= n else P @ low

    @torch.no_grad()
    def step(self, closure=None):
        loss = None if closure is None else closure()
        for group in self.param_groups:
            lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                st = self.state[p]
                if not st:
                    st["step"] = torch.zeros((), dtype=torch.float32)
                # a matrix per seed (seed, ..., m, n); by default any parameter of 2+ dims after the seed
                matrix = p.dim() >= 3 if group["matrix"] is None else group["matrix"]
                coupled = group["weight_decay"] and group["weight_decay_mode"] == "coupled"
                grad = p.grad + group["weight_decay"] * p if coupled else p.grad  # torch Adam's L2
                if matrix:
                    grad = to_matrix(grad, group["dims"])
                    matrix_shape = grad.shape  # the side to project back to
                    if "projector" not in st or int(st["step"]) % group["update_gap"] == 0:
                        st["projector"] = self.projector(grad, group["rank"])
                    grad = self.project(grad, st["projector"])
                st["step"] += 1
                if group["base"] == "adam":
                    if "exp_avg" not in st:
                        st["exp_avg"], st["exp_avg_sq"] = torch.zeros_like(grad), torch.zeros_like(grad)
                    m1, m2 = st["exp_avg"], st["exp_avg_sq"]
                    m1.mul_(beta1).add_(grad, alpha=1 - beta1)
                    m2.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                    t = float(st["step"])
                    step_size = lr * math.sqrt(1 - beta2 ** t) / (1 - beta1 ** t)
                    update = m1 / (m2.sqrt() + eps)
                else:
                    step_size, update = lr, grad
                if matrix:
                    back = self.project_back(update, st["projector"], matrix_shape)
                    update = from_matrix(back, group["dims"], p.shape) * group["scale"]
                p.add_(update, alpha=-step_size)
                if group["weight_decay"] and not coupled:
                    p.add_(p, alpha=-lr * group["weight_decay"])
        return loss
