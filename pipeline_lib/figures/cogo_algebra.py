"""CoGO's algebra on random networks (Tian's talk, 'Structure of Loss Functions', 'Ring Homomorphism' and
'Composing Global Optimizers from Partial Ones'): left, the model's own centred MSE over all d^2 pairs against the
slides' loss written in the Fourier terms r (filled: networks whose embedding rows sum to zero, on the diagonal;
open: the rows' means kept, where the formula misses); middle, the relative error of each identity per network
(pair): the loss formula, r(z1 + z2) = r(z1) + r(z2), r(z1 * z2) = r(z1) r(z2) and r(1) = 1, each r computed from
the constructed network's weights, beside the product taken on the token weights, for which r is not
multiplicative; right, the model's loss of the talk's order-6 optimizer 6^(-1/3) sum_k z_syn^(k) * z_nu^(k)
against each partial solution alone (scaled to r_kkk = 1). No training: everything is checked on the weights
(``pipeline_lib/cogo_algebra.py`` gives the conventions and the partial solutions' forms)."""
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


def composed(params: Params) -> dict:
    """Per d: the talk's partial solutions on frequency 1 and their product (each set's residual), the order-6
    optimizer z_F6 (its residuals and the model's loss, nu drawn per frequency) and, as controls, the loss of each
    partial solution alone at every frequency, scaled to r[k, k, k] = 1."""
    rng = np.random.default_rng(params.seed + 1)
    out = {}
    for d in params.d:
        n = (d - 1) // 2
        nus = rng.uniform(0.5, 2.0, n) * rng.choice([-1.0, 1.0], n)
        syn, nu = ca.z_syn(d, 1), ca.z_nu(d, 1, float(nus[0]))
        f6 = ca.z_f6(d, nus)

        def alone(make, s):
            return ca.model_loss(ca.total([ca.scaled(make(k), s) for k in range(1, n + 1)]))

        out[int(d)] = {"syn": ca.set_residuals(syn), "nu": ca.set_residuals(nu),
                       "product": ca.set_residuals(ca.mul(syn, nu)), "f6": ca.set_residuals(f6),
                       "f6_loss": ca.model_loss(f6), "f6_nodes": int(f6.W_a.shape[0]),
                       "syn_alone_loss": alone(lambda k: ca.z_syn(d, k), 1 / 3),
                       "nu_alone_loss": alone(lambda k: ca.z_nu(d, k, float(nus[k - 1])), 1 / 2)}
    return out


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    per_d = measure(params)
    comp = composed(params)
    fig, axes = style.figure(ncols=3, width=4.2, height=3.4)
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

    _optimizer_panel(axes[0, 2], comp)

    def worst(key):
        return float(max(max(rows[key]) for rows in per_d.values()))

    def least(key):
        return float(min(min(rows[key]) for rows in per_d.values()))

    stats = {"d": [int(d) for d in per_d], "networks": params.networks, "q": params.q,
             "q_factors": list(params.q_factors), "tolerance": TOLERANCE,
             "loss_zero_mean_max": worst("loss_zero_mean"), "loss_with_mean_min": least("loss_with_mean"),
             "add_max": worst("add"), "mul_max": worst("mul"), "one_max": worst("one"),
             "token_kronecker_min": least("token_kronecker")}
    stats["composed"] = _composed_stats(comp)
    stats["summary"] = (f"largest relative errors over {params.networks} networks per d = {stats['d']}: loss formula "
                        f"{stats['loss_zero_mean_max']:.1e} (rows of zero mean; at least "
                        f"{stats['loss_with_mean_min']:.1e} with the rows' means kept), r(z1 + z2) {stats['add_max']:.1e}, "
                        f"r(z1 * z2) {stats['mul_max']:.1e}, r(1) {stats['one_max']:.1e}; the token-weight Kronecker "
                        f"misses by at least {stats['token_kronecker_min']:.2f}; z_F6's loss "
                        f"{stats['composed']['f6_loss_max']:.1e} (z_syn alone {stats['composed']['syn_alone_loss_min']:.2f}, "
                        f"z_nu alone {stats['composed']['nu_alone_loss_min']:.2f})")
    return fig, stats


def _optimizer_panel(ax, comp: dict) -> None:
    """The model's loss of z_F6 against each partial solution alone, per d (log scale, an exact 0 at the floor)."""
    for i, (d, c) in enumerate(comp.items()):
        y = np.maximum([c["f6_loss"], c["syn_alone_loss"], c["nu_alone_loss"]], 1e-18)
        ax.scatter(np.arange(3) + (i - (len(comp) - 1) / 2) * 0.2, y, s=18,
                   color=style.ARM_COLORS[i % len(style.ARM_COLORS)], label=f"d = {d}")
    ax.axhline(TOLERANCE, color="k", lw=0.8, ls="--", label=f"global minimum 0 (within {TOLERANCE:g})")
    ax.set_yscale("log")
    ax.set_xticks(range(3), ("z_F6", "z_syn alone", "z_nu alone"), fontsize=7)
    ax.set_ylabel("the model's centred MSE; 0 at the floor")
    ax.set_title("6^(-1/3) Σ_k z_syn * z_nu: a global optimizer", fontsize=9)
    ax.legend(fontsize=6.5)


def _composed_stats(comp: dict) -> dict:
    """The composed solutions' numbers the claims read: the worst over d of each membership and loss."""
    return {"syn_in_max": max(max(c["syn"]["R_c"], c["syn"]["R_n"]) for c in comp.values()),
            "syn_out_min": min(c["syn"]["R_*"] for c in comp.values()),
            "nu_in_max": max(max(c["nu"]["R_*"], c["nu"]["R_n"]) for c in comp.values()),
            "nu_out_min": min(c["nu"]["R_c"] for c in comp.values()),
            "product_in_max": max(max(c["product"][k] for k in ("R_c", "R_n", "R_*")) for c in comp.values()),
            "f6_sets_max": max(max(c["f6"].values()) for c in comp.values()),
            "f6_loss_max": max(c["f6_loss"] for c in comp.values()),
            "f6_nodes": {str(d): c["f6_nodes"] for d, c in comp.items()},
            "syn_alone_loss_min": min(c["syn_alone_loss"] for c in comp.values()),
            "nu_alone_loss_min": min(c["nu_alone_loss"] for c in comp.values())}
