"""CoGO's algebra on random networks (Tian's talk, 'Structure of Loss Functions' and 'Ring Homomorphism'):
left, the model's own centred MSE over all d^2 pairs against the slides' loss written in the Fourier terms r
(filled: networks whose embedding rows sum to zero, on the diagonal; open: the rows' means kept, where the formula
misses);
right, the relative error of each identity per network (pair): the loss formula, r(z1 + z2) = r(z1) + r(z2),
r(z1 * z2) = r(z1) r(z2) and r(1) = 1, each r computed from the constructed network's weights, beside the
product taken on the token weights, for which r is not multiplicative. No training: the identities are
checked on the weights (``pipeline_lib/cogo_algebra.py`` gives the conventions)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure

from .. import cogo_algebra as ca
from . import style

NAME = "cogo_algebra"
PAPER = "Tian: algebraic structure of solutions (CoGO, GaLore)"
CONFIG = """
description: CoGO's loss decomposition and ring homomorphism checked on random networks.
properties:
  d: {description: "Moduli d (the talk's table has 23, 71 and 127).", type: array, items: {type: integer, minimum: 3}, minItems: 1, default: [23, 71]}
  q: {description: "Hidden nodes of each random network of the loss check.", type: integer, minimum: 1, default: 8}
  q_factors: {description: "Hidden nodes of the two networks multiplied in the ring check (their product has q1 * q2).", type: array, items: {type: integer, minimum: 1}, minItems: 2, maxItems: 2, default: [3, 4]}
  networks: {description: "Random networks (network pairs) per d.", type: integer, minimum: 1, default: 20}
  seed: {description: "Seed of the random networks.", type: integer, minimum: 0, default: 0}
"""
TOLERANCE = 1e-9  # an identity holds when its relative error is under this: float64 rounding is ~1e-16 x the sizes


@dataclass(frozen=True)
class Params:
    d: tuple[int, ...] = (23, 71)
    q: int = 8
    q_factors: tuple[int, ...] = (3, 4)
    networks: int = 20
    seed: int = 0


IDENTITIES = {"loss (zero-mean rows)": "loss_zero_mean", "r(z1 + z2)": "add", "r(z1 * z2)": "mul", "r(1)": "one",
              "loss (rows keep their mean)": "loss_with_mean", "r(token-weight Kronecker)": "token_kronecker"}


def measure(params: Params) -> dict:
    """Per d, per network: the model's loss and the formula's (with and without zero-mean rows) and the ring
    identities' relative errors."""
    rng = np.random.default_rng(params.seed)
    out = {}
    for d in params.d:
        rows = {k: [] for k in ("model_zero_mean", "formula_zero_mean", "model_with_mean", "formula_with_mean",
                                *IDENTITIES.values())}
        for _ in range(params.networks):
            for zero_mean in (True, False):
                net = ca.random_net(rng, d, params.q, zero_mean)
                tag = "zero_mean" if zero_mean else "with_mean"
                m, f = ca.model_loss(net), ca.loss_from_r(net)
                rows[f"model_{tag}"].append(m)
                rows[f"formula_{tag}"].append(f)
                rows[f"loss_{tag}"].append(abs(m - f) / abs(m))
            n1, n2 = (ca.random_net(rng, d, q) for q in params.q_factors)
            for k, v in ca.homomorphism_errors(n1, n2).items():
                rows[k].append(v)
        out[int(d)] = rows
    return out


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    per_d = measure(params)
    fig, axes = style.figure(ncols=2, width=4.2, height=3.4)
    ax = axes[0, 0]
    for i, (d, rows) in enumerate(per_d.items()):
        color = style.ARM_COLORS[i % len(style.ARM_COLORS)]
        ax.scatter(rows["model_zero_mean"], rows["formula_zero_mean"], s=12, color=color,
                   label=f"d = {d}, rows of zero mean")
        ax.scatter(rows["model_with_mean"], rows["formula_with_mean"], s=12, facecolors="none", edgecolors=color,
                   label=f"d = {d}, rows keep their mean")
    lims = [min(ax.get_xlim()[0], ax.get_ylim()[0]), max(ax.get_xlim()[1], ax.get_ylim()[1])]
    ax.plot(lims, lims, color="k", lw=0.8, ls="--", label="formula = model")
    ax.set_xlabel("the model's centred MSE (all d² pairs)")
    ax.set_ylabel("the slides' d⁻¹ Σ_k ℓ_k(z) + 1 − 1/d")
    ax.set_title("Loss in the Fourier terms r", fontsize=9)
    ax.legend(fontsize=6.5)

    ax = axes[0, 1]
    labels = list(IDENTITIES)
    for i, (d, rows) in enumerate(per_d.items()):
        color = style.ARM_COLORS[i % len(style.ARM_COLORS)]
        for j, key in enumerate(IDENTITIES.values()):
            y = np.maximum(np.asarray(rows[key]), 1e-18)  # an exact 0 drawn at the axis floor
            x = j + (i - (len(per_d) - 1) / 2) * 0.25 + np.linspace(-0.06, 0.06, len(y))
            ax.scatter(x, y, s=8, color=color, label=f"d = {d}" if j == 0 else None)
    ax.axhline(TOLERANCE, color="k", lw=0.8, ls="--", label=f"holds below {TOLERANCE:g}")
    ax.set_yscale("log")
    ax.set_xticks(range(len(labels)), labels, rotation=30, ha="right", fontsize=7)
    ax.set_ylabel("relative error per network (pair);\nan exact 0 at the floor")
    ax.set_title("Identities (left four: the slides'; right two: controls)", fontsize=9)
    ax.legend(fontsize=6.5)

    def worst(key):
        return float(max(max(rows[key]) for rows in per_d.values()))

    def least(key):
        return float(min(min(rows[key]) for rows in per_d.values()))

    stats = {"d": [int(d) for d in per_d], "networks": params.networks, "q": params.q,
             "q_factors": list(params.q_factors), "tolerance": TOLERANCE,
             "loss_zero_mean_max": worst("loss_zero_mean"), "loss_with_mean_min": least("loss_with_mean"),
             "add_max": worst("add"), "mul_max": worst("mul"), "one_max": worst("one"),
             "token_kronecker_min": least("token_kronecker")}
    stats["summary"] = (f"largest relative errors over {params.networks} networks per d = {stats['d']}: loss formula "
                        f"{stats['loss_zero_mean_max']:.1e} (rows of zero mean; at least "
                        f"{stats['loss_with_mean_min']:.1e} with the rows' means kept), r(z1 + z2) {stats['add_max']:.1e}, "
                        f"r(z1 * z2) {stats['mul_max']:.1e}, r(1) {stats['one_max']:.1e}; the token-weight Kronecker "
                        f"misses by at least {stats['token_kronecker_min']:.2f}")
    return fig, stats
