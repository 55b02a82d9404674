"""The algebra of Tian's CoGO slides on the two-layer quadratic network of modular addition
(``models/quadratic_mlp.py``): the loss written in the Fourier terms r, and r as a ring homomorphism.

A network z is its weights W_a, W_b (q x d) and W_c (d x q). Over frequencies k of Z_d:

    z_a[k, j] = sum_m W_a[j, m] e^{2 pi i m k / d}        (z_b likewise: the slides' "(Scaled) Fourier Transform")
    z_c[k, j] = (2 / d^2) sum_m W_c[m, j] e^{-2 pi i m k / d}

    r[k1, k2, k]   = sum_j z_a[k1, j] z_b[k2, j] z_c[k, j]
    r_p[k1, k2, k] = sum_j z_p[k1, j] z_p[k2, j] z_c[k, j]      (p = a, b)

The slides print z_c with the same exponent as z_a and no scale; the opposite exponent and the factor 2/d^2
are what the model's centred MSE, averaged over all d^2 pairs (a, b), gives when it is expanded in these terms
(the derivation: the output's Fourier coefficient k != 0 of pair (a, b) is a sum of Fourier modes of (a, b):
the mode (k1, k2) carries r[k1, k2, k], the modes (m, 0) and (0, m) carry half of sum_k' r_p[k', m - k', k]).
Then, for networks whose embedding rows sum to zero (z_a[0, :] = z_b[0, :] = 0; the slides print no such
condition), the loss is the slides' formula exactly:

    l(z) = d^-1 sum_{k != 0} l_k(z) + 1 - 1/d,
    l_k = -2 r[k,k,k] + sum_{k1,k2} |r[k1,k2,k]|^2 + 1/4 |sum_p sum_k' r_p[k',-k',k]|^2
          + 1/4 sum_{m != 0} sum_p |sum_k' r_p[k', m-k', k]|^2

(-2 r[k,k,k] summed over k and -k is real). The ring: z1 + z2 concatenates the hidden nodes; z1 * z2 is the
Kronecker product along the hidden nodes taken per frequency (node (j1, j2) has z[k, (j1, j2)] =
z1[k, j1] z2[k, j2] for a, b and c), which on the weights is the circular convolution of the two nodes' rows
(of W_c's columns scaled by 2/d^2): a real network again. The unit 1 is one node with z = 1 at every
frequency.
"""
from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np
import torch


class Net(NamedTuple):
    W_a: np.ndarray  # (q, d)
    W_b: np.ndarray  # (q, d)
    W_c: np.ndarray  # (d, q)


def _basis(d: int) -> np.ndarray:
    m = np.arange(d)
    return np.exp(2j * np.pi * np.outer(m, m) / d)  # [m, k]


def z_terms(net: Net) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """z_a, z_b, z_c, each (d frequencies, q nodes)."""
    d = net.W_a.shape[1]
    E = _basis(d)
    return (net.W_a @ E).T, (net.W_b @ E).T, (2.0 / d**2) * (net.W_c.T @ E.conj()).T


def r_terms(net: Net) -> dict[str, np.ndarray]:
    """r (k1, k2, k) and r_a, r_b (k1, k2, k), each (d, d, d) complex."""
    za, zb, zc = z_terms(net)
    return {"r": np.einsum("aj,bj,kj->abk", za, zb, zc), "r_a": np.einsum("aj,bj,kj->abk", za, za, zc),
            "r_b": np.einsum("aj,bj,kj->abk", zb, zb, zc)}


def loss_from_r(net: Net) -> float:
    """The slides' l(z) = d^-1 sum_{k != 0} l_k(z) + 1 - 1/d, computed from the r terms alone."""
    r = r_terms(net)
    d = r["r"].shape[0]
    k = np.arange(1, d)
    kp = np.arange(d)
    # s_p[m, k] = sum_k' r_p[k', m - k', k]
    s = {p: r[p][kp[None, :], (np.arange(d)[:, None] - kp[None, :]) % d, :].sum(1) for p in ("r_a", "r_b")}
    lk = (-2 * np.real(r["r"][k, k, k]) + (np.abs(r["r"][:, :, k]) ** 2).sum((0, 1))
          + 0.25 * np.abs(s["r_a"][0, k] + s["r_b"][0, k]) ** 2
          + 0.25 * sum((np.abs(s[p][1:, :][:, k]) ** 2).sum(0) for p in ("r_a", "r_b")))
    return float(lk.sum() / d + 1 - 1 / d)


def model_loss(net: Net) -> float:
    """The model's own centred MSE (``quadratic_mlp``'s forward pass and loss, float64) over all d^2 pairs."""
    from .models.quadratic_mlp import QuadraticMLP
    q, d = net.W_a.shape
    model = QuadraticMLP(1, d, q).double()
    with torch.no_grad():
        for name in ("W_a", "W_b", "W_c"):
            getattr(model, name).copy_(torch.as_tensor(getattr(net, name))[None])
        a, b = np.meshgrid(np.arange(d), np.arange(d), indexing="ij")
        x = torch.as_tensor(np.stack([a.ravel(), b.ravel()], 1))
        loss, _ = model.loss_acc(model.internals(x).logits, torch.as_tensor((a.ravel() + b.ravel()) % d))
    return float(loss[0])


def add(n1: Net, n2: Net) -> Net:
    """z1 + z2: the hidden nodes of both."""
    return Net(np.vstack([n1.W_a, n2.W_a]), np.vstack([n1.W_b, n2.W_b]), np.hstack([n1.W_c, n2.W_c]))


def _conv_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Every row of x (q1, d) circularly convolved with every row of y (q2, d): (q1 * q2, d), row j1 * q2 + j2."""
    f = np.fft.fft(x)[:, None, :] * np.fft.fft(y)[None, :, :]
    return np.real(np.fft.ifft(f)).reshape(-1, x.shape[1])


def mul(n1: Net, n2: Net) -> Net:
    """z1 * z2: node (j1, j2) per frequency the product of nodes j1 and j2 (a circular convolution of weights)."""
    d = n1.W_a.shape[1]
    return Net(_conv_rows(n1.W_a, n2.W_a), _conv_rows(n1.W_b, n2.W_b),
               (2.0 / d**2) * _conv_rows(n1.W_c.T, n2.W_c.T).T)


def token_kronecker(n1: Net, n2: Net) -> Net:
    """The Kronecker product along the hidden nodes taken on the token weights (node (j1, j2)'s row the
    elementwise product of rows j1 and j2): the literal reading that r is *not* multiplicative for (a control)."""
    def rows(x, y):
        return (x[:, None, :] * y[None, :, :]).reshape(-1, x.shape[1])
    return Net(rows(n1.W_a, n2.W_a), rows(n1.W_b, n2.W_b), rows(n1.W_c.T, n2.W_c.T).T)


def one(d: int) -> Net:
    """The unit: one node with z = 1 at every frequency."""
    e0 = np.zeros((1, d))
    e0[0, 0] = 1.0
    return Net(e0, e0.copy(), (d**2 / 2.0) * e0.T)


def random_net(rng: np.random.Generator, d: int, q: int, zero_mean: bool = True) -> Net:
    """Weights N(0, 1/d) (W_c N(0, 1/q)); with ``zero_mean`` each embedding row has its mean removed."""
    W_a, W_b = rng.normal(0, d**-0.5, (q, d)), rng.normal(0, d**-0.5, (q, d))
    if zero_mean:
        W_a, W_b = W_a - W_a.mean(1, keepdims=True), W_b - W_b.mean(1, keepdims=True)
    return Net(W_a, W_b, rng.normal(0, q**-0.5, (d, q)))


def relative_error(got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> float:
    """The largest |got - want| of each kind of r term (r, r_a, r_b) relative to that kind's largest |want|, the
    largest of the three (so an error in the smallest kind is not hidden by the largest's scale)."""
    return float(max(np.abs(got[n] - want[n]).max() / np.abs(want[n]).max() for n in want))


def homomorphism_errors(n1: Net, n2: Net) -> dict[str, float]:
    """Relative errors of r(z1 + z2) = r(z1) + r(z2), r(z1 * z2) = r(z1) r(z2) and r(1) = 1, each r computed
    from the constructed network's weights; and of the product for the token-weight Kronecker (a control)."""
    r1, r2 = r_terms(n1), r_terms(n2)
    d = n1.W_a.shape[1]
    return {"add": relative_error(r_terms(add(n1, n2)), {n: r1[n] + r2[n] for n in r1}),
            "mul": relative_error(r_terms(mul(n1, n2)), {n: r1[n] * r2[n] for n in r1}),
            "one": relative_error(r_terms(one(d)), {n: np.ones_like(r1[n]) for n in r1}),
            "token_kronecker": relative_error(r_terms(token_kronecker(n1, n2)), {n: r1[n] * r2[n] for n in r1})}


# -- the talk's sets of partial and global solutions, and its composed optimizer ------------------------------------
#
# Sufficient conditions of a global optimizer ('Structure of Loss Functions' / slide 2), over k != 0:
#   R_g: r[k, k, k] = 1;  R_c: r[k1, k2, k] = 0 for (k1, k2) != (k, k);  R_n: r_p[k', -k', k] = 0;
#   R_*: r_p[k', m - k', k] = 0 for m != 0.
# The talk names the partial solutions z_syn (in R_c and R_n, not R_*) and z_nu (in R_*) without printing them;
# their forms here are the ones the reference's classifier recognises (luckmatters cogo/factorize_sol.py: an order-3
# factor of columns 1, w, w-bar; an order-2 factor whose z_a is -z_b), on one frequency k:
#   z_syn: three nodes with z_a = z_b = z_c = w^j (w = e^{2 pi i / 3}, j = 0, 1, 2);
#   z_nu:  two nodes, (1, 1, 1) and (nu, -nu, -1/nu^2) for a real nu != 0.
# Then z_syn * z_nu has r[k, k, k] = 3 x 2 = 6, and z_F6 = 6^{-1/3} sum_k z_syn^(k) * z_nu^(k) is in every set.


def frequency_net(d: int, k: int, nodes: list[tuple[complex, complex, complex]]) -> Net:
    """The real network whose node j is (z_a, z_b, z_c) = nodes[j] at frequency k (their conjugates at -k) and zero at
    every other frequency: W_a[j, m] = 2 Re(a_j e^{-2 pi i m k / d}) / d, W_c[m, j] = d Re(c_j e^{2 pi i m k / d})."""
    e = np.exp(-2j * np.pi * np.arange(d) * k / d)
    a, b, c = (np.array([n[i] for n in nodes], dtype=complex)[:, None] for i in range(3))
    return Net(2 * np.real(a * e) / d, 2 * np.real(b * e) / d, (d * np.real(c * e.conj())).T)


def z_syn(d: int, k: int) -> Net:
    w = np.exp(2j * np.pi / 3)
    return frequency_net(d, k, [(w**j, w**j, w**j) for j in range(3)])


def z_nu(d: int, k: int, nu: float) -> Net:
    return frequency_net(d, k, [(1, 1, 1), (nu, -nu, -1 / nu**2)])


def scaled(net: Net, s: float) -> Net:
    """s z: every weight times s^(1/3), so that every r term is s times its value (r is trilinear)."""
    c = np.cbrt(s)
    return Net(net.W_a * c, net.W_b * c, net.W_c * c)


def total(nets: list[Net]) -> Net:
    """z_1 + z_2 + ...: the ring sum (every network's hidden nodes)."""
    return functools.reduce(add, nets)


def z_f6(d: int, nus: np.ndarray) -> Net:
    """The talk's order-6 optimizer 6^{-1/3} sum_{k=1}^{(d-1)/2} z_syn^(k) * z_nu^(k) (nus: nu per frequency)."""
    return total([scaled(mul(z_syn(d, k), z_nu(d, k, nu)), 1 / 6)
                  for k, nu in zip(range(1, (d - 1) // 2 + 1), nus, strict=True)])


def set_residuals(net: Net) -> dict[str, float]:
    """How far ``net`` is from each set, over the outputs k != 0: R_g the largest |r[k, k, k] - 1|; R_c, R_n, R_* the
    largest |term| among the terms the set requires to vanish (r_a's and r_b's for R_n and R_*)."""
    r = r_terms(net)
    d = r["r"].shape[0]
    k, kp = np.arange(1, d), np.arange(d)
    off = r["r"].copy()
    off[k, k, k] = 0
    out = {"R_g": float(np.abs(r["r"][k, k, k] - 1).max()), "R_c": float(np.abs(off[:, :, 1:]).max())}
    out["R_n"] = float(max(np.abs(r[p][kp, (-kp) % d][:, 1:]).max() for p in ("r_a", "r_b")))
    out["R_*"] = float(max(np.abs(r[p][kp, (m - kp) % d][:, 1:]).max() for p in ("r_a", "r_b") for m in range(1, d)))
    return out
