"""The local learning coefficient (LLC) by SGLD, seed-batched: every slot of a stacked model is one chain.

For weights w* (a snapshot) and the empirical loss L_n over n training examples, the estimator of Lau et
al. ("The Local Learning Coefficient", 2023; as in the ``devinterp`` library) is

    lambda_hat(w*) = n * beta * (E_w[L_n(w)] - L_n(w*)),     beta = 1 / log n  (default)

where the expectation is over the tempered, localised posterior  p(w) ~ exp(-n beta L_n(w) - gamma/2 |w - w*|^2),
sampled by stochastic-gradient Langevin dynamics: each step

    w <- w - (eps / 2) * (n beta grad L_B(w) + gamma (w - w*)) + N(0, eps)

with L_B the loss of a mini-batch (the full set when no batch size is given). The loss of each step's batch,
before the step, is a draw; the first ``burn_in`` steps are discarded. Each chain's estimate uses its own
draws; a seed's LLC is the mean over its chains and ``llc_std`` their standard deviation. A chain whose loss
or weights become non-finite (a step size too large for the loss's curvature) makes its seed's estimate NaN
and sets ``diverged``: it is never averaged in.

Slot k's noise and batches come from its own generator, so a chain's draws do not depend on which other
chains run beside it (seed-batched chains equal single-seed chains; tested).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import torch


@dataclass(frozen=True)
class SGLD:
    """The sampler's settings (the ``llc`` analysis's config keys)."""

    step_size: float = 1e-4  # eps
    localization: float = 1.0  # gamma
    chains: int = 4
    draws: int = 200
    burn_in: int = 100
    batch_size: int | None = None  # None: the full training set every step
    beta: float | None = None  # None: 1 / log n

    def inverse_temperature(self, n: int) -> float:
        return 1.0 / math.log(n) if self.beta is None else self.beta


@dataclass
class Chains:
    """What the sampler returns per slot (K = slots): draws (K, draws) of the batch loss, the loss at the
    centre (K,), each chain's estimate (K,) and whether it diverged (K,)."""

    trace: np.ndarray
    center_loss: np.ndarray
    llc: np.ndarray
    diverged: np.ndarray


def sample(params: Sequence[torch.Tensor], batch_loss: Callable[[torch.Tensor | None], torch.Tensor],
           center_loss: torch.Tensor, n: int, cfg: SGLD, generators: Sequence[torch.Generator]) -> Chains:
    """Run one SGLD chain per slot of ``params`` (tensors with a leading slot axis K, requires_grad, set to the
    centre w* on entry; they hold the last sample on return). ``batch_loss(idx)`` is the per-slot loss (K,)
    of the examples ``idx`` (K, b) (None: all n), ``center_loss`` the per-slot L_n(w*). ``generators``: one
    per slot, for its batches and its noise."""
    K = params[0].shape[0]
    assert len(generators) == K, (len(generators), K)
    nbeta = n * cfg.inverse_temperature(n)
    center = [p.detach().clone() for p in params]
    eps = cfg.step_size
    sizes = [p[0].numel() for p in params]
    size = sum(sizes)
    device = params[0].device
    trace = torch.full((K, cfg.draws), math.nan, dtype=torch.float64, device=device)  # read once, at the end
    bad = torch.zeros(K, dtype=torch.bool, device=device)
    for t in range(cfg.burn_in + cfg.draws):
        idx = None
        if cfg.batch_size is not None and cfg.batch_size < n:
            idx = torch.stack([torch.randint(n, (cfg.batch_size,), generator=g) for g in generators])
            idx = idx.to(device)
        loss = batch_loss(idx)  # (K,)
        grads = torch.autograd.grad(torch.nan_to_num(loss, nan=0.0, posinf=0.0, neginf=0.0).sum(), list(params),
                                    allow_unused=True)
        with torch.no_grad():
            bad |= ~torch.isfinite(loss.detach())
            # one draw per slot for all its parameters (slot k's noise from its generator alone)
            noise = torch.stack([torch.randn(size, generator=gen, dtype=params[0].dtype) for gen in generators])
            noise = noise.to(device).split(sizes, dim=1)
            for p, g, c, z in zip(params, grads, center, noise):
                drift = cfg.localization * (p - c) + (0.0 if g is None else nbeta * g)
                p.add_(-(eps / 2) * drift + math.sqrt(eps) * z.reshape(p.shape))
                bad |= ~torch.isfinite(p.reshape(K, -1)).all(1)
            if t >= cfg.burn_in:
                trace[:, t - cfg.burn_in] = loss.detach()
    trace = trace.cpu().numpy()
    diverged = bad.cpu().numpy() | ~np.isfinite(trace).all(1)
    c0 = center_loss.detach().double().cpu().numpy()
    llc = nbeta * (trace.mean(1) - c0)
    llc[diverged] = np.nan
    return Chains(trace, c0, llc, diverged)


def per_seed(chains: Chains, seeds: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Slots ordered seed-major (seed s's chains are slots s*C .. s*C + C - 1) -> per seed (S,): the mean of
    its chains' estimates, their standard deviation (ddof 1; 0 for one chain) and whether any diverged
    (then both are NaN)."""
    est = chains.llc.reshape(seeds, -1)
    diverged = chains.diverged.reshape(seeds, -1).any(1)
    C = est.shape[1]
    mean = est.mean(1)
    std = est.std(1, ddof=1) if C > 1 else np.zeros(seeds)
    mean[diverged], std[diverged] = np.nan, np.nan
    return mean, std, diverged
