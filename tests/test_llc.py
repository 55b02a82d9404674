"""The SGLD estimator of the local learning coefficient against known values: a regular model (linear
regression, lambda = d/2), singular potentials w^(2k) (lambda = 1/(2k): for exp(-a w^(2k)) the mean of a w^(2k)
is exactly 1/(2k), at every n) and (w1 w2)^2 (lambda = 1/2 with multiplicity 2: at finite n the estimate
sits between lambda - (m-1)/log(n beta), Watanabe's free-energy expansion to first order, and lambda).
Every check runs the default step size and localization (more chains and draws than the analysis's defaults,
for a precise mean). Tolerances: 4 standard errors of the mean over the chains (computed from the chains'
spread, not fixed) plus, for the quadratic case, the step's known bias (the Euler-Maruyama discretisation of an Ornstein-
Uhlenbeck process inflates the variance by 1/(1 - eps a/4), a the curvature of n beta L)."""
import math

import numpy as np
import pytest
import torch

from pipeline_lib.llc import SGLD, per_seed, sample

CHAINS = 128


def _chains(potential, dim, n, cfg, K=CHAINS, seed=0):
    w = torch.zeros(K, dim, dtype=torch.float64, requires_grad=True)
    gens = [torch.Generator().manual_seed(seed * 10_000 + k) for k in range(K)]
    return sample([w], lambda idx: potential(w), potential(w).detach(), n, cfg, gens)


def _within(chains, exact, bias=0.0):
    est, se = chains.llc.mean(), chains.llc.std(ddof=1) / math.sqrt(len(chains.llc))
    assert not chains.diverged.any()
    assert abs(est - exact) <= 4 * se + bias, (est, se, exact)
    return est, se


def test_a_regular_model_linear_regression_has_lambda_d_over_2():
    torch.manual_seed(0)
    n, d = 1000, 4
    X = torch.randn(n, d, dtype=torch.float64)
    y = X @ torch.randn(d, dtype=torch.float64) + torch.randn(n, dtype=torch.float64)
    w_star = torch.linalg.lstsq(X, y).solution  # the minimum of L_n: a regular point
    K = CHAINS
    w = w_star.repeat(K, 1).requires_grad_(True)
    loss = lambda idx: 0.5 * ((y - w @ X.T) ** 2).mean(1)  # noqa: E731  (Gaussian NLL per example, up to a constant)
    cfg = SGLD(draws=2000, burn_in=500)  # the default step size and localization
    chains = sample([w], loss, loss(None).detach(), n, cfg, [torch.Generator().manual_seed(k) for k in range(K)])
    a = n * cfg.inverse_temperature(n) * torch.linalg.eigvalsh(X.T @ X / n).double().numpy()  # curvatures of n beta L
    g = cfg.localization
    # the Gaussian target's exact value: sum_i a_i / (2 (a_i + gamma)), d/2 as gamma -> 0 (here within 1%)
    exact = float((a / (2 * (a + g))).sum())
    assert abs(exact - d / 2) < 0.01 * d / 2
    _within(chains, exact, bias=exact * (1 / (1 - cfg.step_size * (a.max() + g) / 4) - 1))


@pytest.mark.parametrize("k", [2, 3])
def test_singular_potentials_w_to_the_2k_have_lambda_one_over_2k(k):
    n, cfg = 1000, SGLD(draws=2000, burn_in=500)
    chains = _chains(lambda w: (w ** (2 * k)).sum(1), 1, n, cfg)
    # 1/(2k) exactly without localization; with the default gamma the target's own mean, by quadrature
    nb, w = n * cfg.inverse_temperature(n), np.linspace(-3, 3, 600_001)
    dens = np.exp(-nb * w ** (2 * k) - cfg.localization * w ** 2 / 2)
    exact = float((nb * w ** (2 * k) * dens).sum() / dens.sum())
    assert abs(exact - 1 / (2 * k)) < 0.01
    _within(chains, exact)


def test_w1_w2_squared_lies_between_its_first_order_value_and_one_half():
    n = 10_000
    cfg = SGLD(draws=3000, burn_in=1000)  # the default step size and localization
    chains = _chains(lambda w: (w[:, 0] * w[:, 1]) ** 2, 2, n, cfg)
    est, se = chains.llc.mean(), chains.llc.std(ddof=1) / math.sqrt(CHAINS)
    first_order = 0.5 - 1 / math.log(n * cfg.inverse_temperature(n))  # lambda - (m - 1) / log(n beta), m = 2
    assert first_order - 4 * se <= est <= 0.5 + 4 * se, (est, se, first_order)
    # and it is not a regular 2-parameter point (lambda = 1) nor the 1/4 of w^4
    assert est < 0.75 and est > 0.25 + 4 * se


def test_seed_batched_chains_equal_single_chains():
    def run(slots):
        w = torch.zeros(len(slots), 3, dtype=torch.float64, requires_grad=True)
        X = torch.arange(12, dtype=torch.float64).reshape(4, 3) / 10
        loss = lambda idx: ((w @ X.T - 1) ** 2).mean(1) if idx is None else \
            torch.stack([((w[j] @ X[idx[j]].T - 1) ** 2).mean() for j in range(len(slots))])  # noqa: E731
        gens = [torch.Generator().manual_seed(s) for s in slots]
        return sample([w], loss, loss(None).detach(), 4, SGLD(step_size=1e-3, draws=20, burn_in=5, batch_size=2,
                                                              localization=10.0), gens)
    together = run([11, 12, 13])
    for j, s in enumerate([11, 12, 13]):
        alone = run([s])
        np.testing.assert_array_equal(alone.trace[0], together.trace[j])
    assert not np.array_equal(together.trace[0], together.trace[1])


def test_a_diverging_step_size_is_flagged_per_seed_and_never_averaged():
    # w^4 with a step far too large: the chains started at w = 1 explode (the drift grows as w^3)
    K = 4
    w = torch.tensor([[1.0], [1.0], [0.0], [0.0]], dtype=torch.float64, requires_grad=True)
    gens = [torch.Generator().manual_seed(k) for k in range(K)]
    steps = torch.tensor([[1.0], [1.0], [1e-9], [1e-9]], dtype=torch.float64)  # slots 0-1 huge, 2-3 tiny

    def loss(idx):
        return (w ** 4).sum(1) * steps[:, 0] * 1e6

    chains = sample([w], loss, loss(None).detach(), 100, SGLD(step_size=1.0, localization=0.0, draws=10, burn_in=0), gens)
    assert chains.diverged[:2].all() and np.isnan(chains.llc[:2]).all()
    llc, std, diverged = per_seed(chains, 2)  # seed 0 = slots 0-1, seed 1 = slots 2-3
    assert diverged.tolist() == [True, False] and np.isnan(llc[0]) and np.isnan(std[0])
    assert np.isfinite(llc[1])
