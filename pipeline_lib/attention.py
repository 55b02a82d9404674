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
        return torch.softmax(scores / tau, dim=-1)
    if variant == "normsoftmax":
        sigma = scores.std(dim=-1, keepdim=True)
    elif variant == "normsoftmax_var":
        sigma = scores.var(dim=-1, keepdim=True, unbiased=False)
    else:
        raise ValueError(f"unknown attention variant {variant!r}; allowed: {', '.join(VARIANTS)}")
    return torch.softmax(scores / torch.clamp(sigma, max=tau), dim=-1)


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
