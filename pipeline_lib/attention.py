"""Attention normalisations of 'Eureka-Moments in Transformers' (Hoffmann et al.), for any softmax
attention of the workflow (DESIGN section 6).

Given raw scores ``S`` (``q . k``, before any scaling) with the key axis last:

* ``softmax``          softmax(S / tau), tau = sqrt(d_head) by default (or e.g. 1/3: low temperature)
* ``normsoftmax``      softmax(S / min(sigma(S), tau)), sigma the standard deviation of the scores over
                       the key axis, per query and head
* ``normsoftmax_var``  the same with the biased variance in place of sigma (as in the reference code)

Heat Treatment (HT) is a schedule of the inverse temperature beta = 1 / tau: a half-cosine from 3 down
to 1/sqrt(d_head) over the first half of training, constant afterwards.
"""
from __future__ import annotations

import math

import torch

VARIANTS = ("softmax", "normsoftmax", "normsoftmax_var")


def attention_weights(scores: torch.Tensor, variant: str, tau: float) -> torch.Tensor:
    """Normalised attention weights over the last axis of the raw scores."""
    if variant == "softmax":
        return softmax_last(scores / tau)
    if variant not in VARIANTS:
        raise ValueError(f"unknown attention variant {variant!r}; allowed: {', '.join(VARIANTS)}")
    front = small_last(scores)  # sigma and the softmax with the key axis in front, as softmax_last
    s, dim = (scores.movedim(-1, 0).contiguous(), 0) if front else (scores, -1)
    sigma = s.std(dim=dim, keepdim=True) if variant == "normsoftmax" else s.var(dim=dim, keepdim=True, unbiased=False)
    out = torch.softmax(s / torch.clamp(sigma, max=tau), dim=dim)
    return out.movedim(0, -1) if front else out


def softmax_last(x: torch.Tensor) -> torch.Tensor:
    """``torch.softmax(x, -1)``, computed with the reduced axis moved to the front when it is short.

    torch's CPU kernel for a softmax over a short, contiguous last axis (attention over 5-12 positions)
    runs one short row at a time: 4.3 ms for (10, 2048, 12) on this machine, against 1.1 ms with the
    axis moved to the front, where the kernel vectorises across rows (forward + backward: 7.7 -> 1.4
    ms; (10, 4392, 4, 5, 5): 134 -> 27 ms). Same function; the sums run in another order, so results
    differ from the last-axis kernel in the last bit (about 3e-8)."""
    if not small_last(x):
        return torch.softmax(x, dim=-1)
    return torch.softmax(x.movedim(-1, 0).contiguous(), dim=0).movedim(0, -1)


def small_last(x: torch.Tensor) -> bool:
    """Short last axis (<= 64) on the CPU with more rows than that: the case torch's kernel handles slowly."""
    return x.device.type == "cpu" and x.dim() >= 2 and x.shape[-1] <= 64 and x.numel() >= 64 * x.shape[-1]


def heat_treatment_beta(epoch: float, epochs: int, d_head: int, beta_start: float = 3.0) -> float:
    """Inverse temperature at ``epoch`` of ``epochs``: half-cosine from ``beta_start`` to 1/sqrt(d_head)
    over the first half of training, then constant."""
    beta_end = 1.0 / math.sqrt(d_head)
    half = epochs / 2
    if epoch >= half:
        return beta_end
    return beta_end + (beta_start - beta_end) * 0.5 * (1 + math.cos(math.pi * epoch / half))


def resolved_tau(attention, d_head: int) -> float:
    """A run's temperature (``attention``: its AttentionConfig); under Heat Treatment the schedule's
    final one, sqrt(d_head), which replaces tau."""
    # tau = sqrt(d_head) is both papers' default temperature (DESIGN section 6).
    if attention.tau == "sqrt_d" or attention.schedule == "heat_treatment":
        return math.sqrt(d_head)
    return float(attention.tau)


def describe(attention) -> str:
    """One line naming a run's attention, e.g. 'softmax, tau=sqrt(d_head)' or 'normsoftmax + heat treatment'."""
    tau = "sqrt(d_head)" if attention.tau == "sqrt_d" else f"{float(attention.tau):g}"
    return attention.variant + (" + heat treatment" if attention.schedule == "heat_treatment" else f", tau={tau}")
