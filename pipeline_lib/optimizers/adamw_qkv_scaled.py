"""AdamW after rescaling the attention's query, key and value gradients to one magnitude: the
"W_QKV grad scaling" baseline of 'Eureka-Moments in Transformers' (Sec. 5.3 'Can the problem be
fixed by rescaling of the gradient magnitude for W_V, W_Q and W_K?', Table 1), seed-batched.

After each backward pass and before the AdamW update, for every seed and every layer, each of the
gradients of W_Q, W_K, W_V (S, layer, head, d_model, d_head) is multiplied by m / m_X, where m_X is
its own mean absolute entry and m the target: ``mode: mean_grad`` (default) the mean absolute entry
of the three together, (m_Q + m_K + m_V) / 3; ``mean_to_value_grad`` W_V's, m_V. These are the two
per-layer modes of the reference code (boschresearch/eurekaMoments ``utils.py``,
``Retain_Native_Scaler`` with ``--scale_qkv_grad``; read, not copied), whose default is ``mean_grad``;
the reference scales one fused qkv matrix per layer, here the three per-head stacks of a layer hold the
same entries (W_Q, W_K, W_V have one shape, so the mean over the fused matrix is the mean of the three
means). A gradient that is all zeros is left as it is; a diverged seed's non-finite gradients stay within
that seed (the engine freezes its parameters). Everything else, weight
decay groups included (``optimizer.no_weight_decay``), is torch's AdamW. A run's recorded gradients
(``qkv_gradients``) are the ones before the rescaling.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

NAME = "adamw_qkv_scaled"
CONFIG = """
properties:
  mode: {description: "W_QKV grad scaling: mean_grad (default mean_grad: each of W_Q, W_K, W_V to the mean absolute gradient of the three, per seed and layer) or mean_to_value_grad (W_Q and W_K to W_V's).", type: string, enum: [mean_grad, mean_to_value_grad]}
"""
TAKES_NAMES = True  # it finds W_Q, W_K, W_V by name and honours optimizer.no_weight_decay
QKV = ("W_Q", "W_K", "W_V")


@dataclass(frozen=True)
class Params:
    mode: str = "mean_grad"


def build(params, opt_cfg, dims: list, names: list[str]) -> "QKVScaledAdamW":
    from ..slot_optim import weight_decay_groups

    p = Params(**dict(opt_cfg.options))
    by_name = dict(zip(names, params))
    if any(n not in by_name for n in QKV):
        raise ValueError(f"config key 'optimizer.name': {NAME!r} rescales the gradients of {', '.join(QKV)}, which "
                         f"the run's model does not have (its parameters: {', '.join(names)}); allowed: a model with "
                         "attention (transformer, vit, decoder)")
    groups = weight_decay_groups(params, names, opt_cfg.no_weight_decay)
    return QKVScaledAdamW(groups, [by_name[n] for n in QKV], p.mode, lr=opt_cfg.lr, betas=opt_cfg.betas,
                          weight_decay=opt_cfg.weight_decay, foreach=True)


def scale_qkv_grads(grads: list[torch.Tensor], mode: str = "mean_grad") -> None:
    """Rescale the gradients (S, layer, ...) of W_Q, W_K, W_V in place (module docstring)."""
    means = [g.abs().mean(dim=tuple(range(2, g.dim())), keepdim=True) for g in grads]
    target = (means[0] + means[1] + means[2]) / 3 if mode == "mean_grad" else means[2]
    for g, m in zip(grads, means):
        g.mul_(torch.where(m > 0, target / torch.where(m > 0, m, torch.ones_like(m)), torch.ones_like(m)))


class QKVScaledAdamW(torch.optim.AdamW):
    """torch's AdamW whose ``step`` first rescales the W_Q, W_K, W_V gradients (:func:`scale_qkv_grads`)."""

    def __init__(self, params, qkv: list[torch.Tensor], mode: str = "mean_grad", **kwargs):
        super().__init__(params, **kwargs)
        if mode not in ("mean_grad", "mean_to_value_grad"):
            raise ValueError(f"config key 'optimizer.mode': {mode!r}; allowed: mean_grad, mean_to_value_grad")
        self.qkv, self.mode = qkv, mode

    @torch.no_grad()
    def step(self, closure=None):
        grads = [p.grad for p in self.qkv]
        if all(g is not None for g in grads):
            scale_qkv_grads(grads, self.mode)
        return super().step(closure)
