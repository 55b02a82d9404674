"""JoMA's two printed dynamics integrated as the talk writes them (no training): left, the linear case
v' = Delta o exp(v^2 / 2) ('JoMA for Linear Activation'): the most salient component diverges in finite time
while the others level off at finite values; right, the nonlinear case v' = (mu - v) o exp(v^2 / 2)
('JoMA for Nonlinear activation', Theorem 4): each component's convergence rate ln 1/delta_j(t),
delta_j = 1 - v_j / mu_j, over the slowest one's, against exp(mu_j^2 / 2) / exp(mu_k^2 / 2) (dashed).
Both from v(0) = 0, by scipy's adaptive Runge-Kutta (rtol 1e-10); the nonlinear case is integrated in
s = ln 1/delta, whose equation s' = exp(mu^2 (1 - e^-s)^2 / 2) stays smooth as delta -> 0. Third panel ('Implication
of Theorem'): the attention those paths give, b = softmax(v^2 / 2) over the components (JoMA's exp-attention
invariant z = sum_k v_k^2 / 2 + c with one node, K = 1, and c = 0 from the zero start; uniform x), as its entropy
over time: the linear case's should only fall (sparser), the nonlinear case's fall and rise again (sparser, then
denser)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import ScalarFormatter
from scipy.integrate import solve_ivp
from scipy.special import erf, erfinv, softmax

from ..analysis.scan_snap import entropy
from . import style

NAME = "joma_odes"
PAPER = "Tian: training dynamics of attention (Scan&Snap, JoMA)"
CONFIG = """
description: JoMA's linear and nonlinear dynamics integrated as printed (salient divergence; Theorem 4's rate ratios).
properties:
  delta: {description: "Delta_lm of the linear case, one per component (the largest is the most salient).", type: array, items: {type: number, exclusiveMinimum: 0}, minItems: 2, default: [1.0, 0.7, 0.4, 0.1]}
  v_salient: {description: "The linear case is integrated until the most salient component reaches this value (its divergence; at least 5.5, where erfc(v / sqrt 2) < 1e-7 puts the time within 1e-7 of the blow-up; at most 7, beyond which the time left before the blow-up, erfc(v / sqrt 2) of it, nears float64 spacing and the solver stops short).", type: number, minimum: 5.5, maximum: 7, default: 6.0}
  mu: {description: "mu_j of the nonlinear case, one per component.", type: array, items: {type: number, exclusiveMinimum: 0}, minItems: 2, default: [0.5, 1.0, 1.5, 2.0, 2.5]}
  delta_end: {description: "The nonlinear case is integrated until the slowest component's delta falls to this.", type: number, exclusiveMinimum: 0, exclusiveMaximum: 1, default: 1.0e-6}
"""
RTOL = 1e-10
N_GRID = 2000  # points of each path at which the attention's entropy is read (log-spaced in t, plus t = 0)


@dataclass(frozen=True)
class Params:
    delta: tuple[float, ...] = (1.0, 0.7, 0.4, 0.1)
    v_salient: float = 6.0
    mu: tuple[float, ...] = (0.5, 1.0, 1.5, 2.0, 2.5)
    delta_end: float = 1e-6


def attention(v: np.ndarray) -> np.ndarray:
    """b = softmax(v^2 / 2) over the components (axis 0 of ``v``, components x times): the attention of JoMA's
    exp-attention invariant with one node and a zero start."""
    return softmax(v**2 / 2, axis=0)


def grid(t_end: float, blowup: bool = False) -> np.ndarray:
    """0, then :data:`N_GRID` - 1 times log-spaced from t_end 1e-6 to t_end (the nonlinear case's salient
    components settle early, its slow ones late); with ``blowup`` (the linear case, whose salient component
    diverges at t_end) half of them log-spaced in the time left, t_end - t from t_end to t_end 1e-9 instead, where
    the attention changes most."""
    if not blowup:
        return np.concatenate([[0.0], np.geomspace(t_end * 1e-6, t_end, N_GRID - 1)])
    half = (N_GRID - 1) // 2
    late = t_end - np.geomspace(t_end, t_end * 1e-9, N_GRID - 1 - half)
    return np.unique(np.concatenate([[0.0], np.geomspace(t_end * 1e-6, t_end, half), late, [t_end]]))


def rebound(h: np.ndarray) -> float:
    """The share of an entropy path's fall that it recovers by its end: (H_end - H_min) / (H_0 - H_min); 0 for a
    path that only falls, and for one that never falls (nothing to recover)."""
    fall = h[0] - h.min()
    return float((h[-1] - h.min()) / fall) if fall > 0 else 0.0


def linear(delta: np.ndarray, v_salient: float) -> dict:
    """v' = delta o exp(v^2 / 2) from 0 until max v = v_salient: the path; each other component's end value against
    the exact solution at that time (erf(v / sqrt 2) = delta t sqrt(2 / pi)) and against its finite limit at the
    salient one's blow-up, sqrt(2) erfinv(delta / max delta); the printed invariant erf(v / 2) / delta's relative
    spread over the components at the end."""
    top = int(np.argmax(delta))

    def hit(t, v):
        return v[top] - v_salient
    hit.terminal = True
    sol = solve_ivp(lambda t, v: delta * np.exp(v**2 / 2), (0, 10 * np.sqrt(np.pi / 2) / delta[top]), np.zeros(len(delta)),
                    method="DOP853", rtol=RTOL, atol=1e-12, events=hit, dense_output=True)
    if sol.status != 1:  # the salient component never reached v_salient: no divergence to report
        raise RuntimeError(f"joma_odes: the linear case did not reach v = {v_salient} ({sol.message})")
    end = sol.y_events[0][0]  # the state at the event itself
    others = np.arange(len(delta)) != top
    limits = np.sqrt(2) * erfinv(delta / delta[top])
    # the exact solution at the same time: erf(v / sqrt 2) = delta t sqrt(2 / pi)
    exact_now = np.sqrt(2) * erfinv(np.minimum(delta * sol.t_events[0][0] * np.sqrt(2 / np.pi), 1.0))
    printed = erf(end / 2) / delta
    exact = erf(end / np.sqrt(2)) / delta
    t_end = float(sol.t_events[0][0])
    t_h = grid(t_end, blowup=True)
    v_h = np.concatenate([sol.sol(t_h[:-1]), end[:, None]], axis=1)  # the event's own state last
    h = entropy(attention(v_h), axis=0)
    return {"t": sol.t, "v": sol.y, "t_end": float(sol.t[-1]), "t_blowup": float(np.sqrt(np.pi / 2) / delta[top]),
            "end": end, "limits": limits, "top": top, "t_entropy": t_h, "entropy": h,
            "salient_share_end": float(attention(end[:, None])[top, 0]),
            "entropy_max_rise": float(np.diff(h).max()), "entropy_rebound": rebound(h),
            "others_max_gap": float(np.abs(end[others] - exact_now[others]).max()),
            "others_max_gap_to_limit": float(np.abs(end[others] - limits[others]).max()),
            "others_max_end": float(np.abs(end[others]).max()),
            "printed_invariant_spread": float(np.ptp(printed) / np.abs(printed).mean()),
            "sqrt2_invariant_spread": float(np.ptp(exact) / np.abs(exact).mean())}


def nonlinear(mu: np.ndarray, delta_end: float) -> dict:
    """s_j = ln 1/delta_j from s(0) = 0 (v(0) = 0) until the slowest reaches ln 1/delta_end; the rates' ratios to
    the slowest component's against exp((mu_j^2 - mu_k^2) / 2), at that end and at half of it."""
    s_end = np.log(1 / delta_end)

    def done(t, s):
        return s.min() - s_end
    done.terminal = True
    sol = solve_ivp(lambda t, s: np.exp(mu**2 * (1 - np.exp(-s))**2 / 2), (0, 1e3 * s_end), np.zeros(len(mu)),
                    method="DOP853", rtol=RTOL, atol=1e-12, events=done, dense_output=True)
    t_end = float(sol.t[-1])
    slow = int(np.argmin(mu))
    predicted = np.exp((mu**2 - mu[slow] ** 2) / 2)

    def deviation(t):
        s = sol.sol(t)
        return np.abs(s / s[slow] / predicted - 1)
    t = np.linspace(t_end / 200, t_end, 200)
    t_h = grid(t_end)
    v_h = mu[:, None] * (1 - np.exp(-sol.sol(t_h)))  # v = mu (1 - delta), delta = e^-s
    h = entropy(attention(v_h), axis=0)
    low = int(np.argmin(h))
    return {"t": t, "ratio": sol.sol(t) / sol.sol(t)[slow], "predicted": predicted, "t_end": t_end, "slow": slow,
            "deviation_end": float(deviation(t_end).max()), "deviation_half": float(deviation(t_end / 2).max()),
            "t_entropy": t_h, "entropy": h, "entropy_start": float(h[0]), "entropy_min": float(h[low]),
            "entropy_end": float(h[-1]), "t_entropy_min": float(t_h[low]), "entropy_rebound": rebound(h),
            "delta_max_end": float((1 - v_h[:, -1] / mu).max())}


def entropy_panel(ax, lin: dict, non: dict) -> None:
    """The attention's entropy over time on both paths (log time, the start's t = 0 left out)."""
    for case, color, label in ((lin, style.ARM_COLORS[0], "linear (Δ)"), (non, style.ARM_COLORS[1], "nonlinear (μ)")):
        ax.plot(case["t_entropy"][1:] / case["t_end"], case["entropy"][1:], color=color, label=label)
    ax.set_xscale("log")
    ax.set_xlabel("t / t at the path's end")
    ax.set_ylabel("entropy of softmax(v²/2) (nats)")
    ax.set_title("Attention: sparser, then denser?", fontsize=9)
    ax.legend(fontsize=7)


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    lin = linear(np.asarray(params.delta, float), params.v_salient)
    non = nonlinear(np.asarray(params.mu, float), params.delta_end)
    fig, axes = style.figure(ncols=3, width=3.8, height=3.0)
    ax = axes[0, 0]
    for i, d in enumerate(params.delta):
        color = style.ARM_COLORS[i % len(style.ARM_COLORS)]
        ax.plot(lin["t"], lin["v"][i], color=color, label=f"Δ = {d:g}")
        if i != lin["top"]:
            ax.axhline(lin["limits"][i], color=color, lw=0.8, ls=":")
    ax.axvline(lin["t_blowup"], color="k", lw=0.8, ls="--", label="blow-up √(π/2)/max Δ")
    ax.set_xlabel("t")
    ax.set_ylabel("v_l(t) (dotted: √2 erf⁻¹(Δ_l / max Δ))")
    ax.set_title("Linear: v' = Δ ∘ exp(v²/2)", fontsize=9)
    ax.legend(fontsize=7)
    ax = axes[0, 1]
    others = [i for i in range(len(params.mu)) if i != non["slow"]]
    for n, i in enumerate(others):
        color = style.ARM_COLORS[i % len(style.ARM_COLORS)]
        ax.plot(non["t"], non["ratio"][i], color=color, label=f"μ = {params.mu[i]:g}")
        ax.axhline(non["predicted"][i], color=color, lw=0.8, ls="--",
                   label="predicted exp((μ_j² − μ_min²)/2)" if n == 0 else None)  # one key for every dashed line
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(ScalarFormatter())  # 1, 2, 4, 6 on the ticks, not 10^0, 2 x 10^0, ...
    ax.yaxis.set_minor_formatter(ScalarFormatter())
    ax.set_xlabel(f"t (until the slowest δ = {params.delta_end:g})")
    ax.set_ylabel(f"ln(1/δ_j) / ln(1/δ) of μ = {params.mu[non['slow']]:g}")
    ax.set_title("Nonlinear: v' = (μ − v) ∘ exp(v²/2)", fontsize=9)
    ax.legend(fontsize=7)
    entropy_panel(axes[0, 2], lin, non)
    stats = {"linear": {"delta": list(params.delta), "v_salient": params.v_salient, "t_end": lin["t_end"],
                        "t_blowup": lin["t_blowup"], "end": lin["end"].tolist(),
                        "limits": [None if i == lin["top"] else float(x) for i, x in enumerate(lin["limits"])],
                        "others_max_gap": lin["others_max_gap"], "others_max_end": lin["others_max_end"],
                        "others_max_gap_to_limit": lin["others_max_gap_to_limit"],
                        "printed_invariant_spread": lin["printed_invariant_spread"],
                        "sqrt2_invariant_spread": lin["sqrt2_invariant_spread"],
                        "salient_share_end": lin["salient_share_end"], "entropy_max_rise": lin["entropy_max_rise"],
                        "entropy_rebound": lin["entropy_rebound"], "entropy_start": float(lin["entropy"][0]),
                        "entropy_end": float(lin["entropy"][-1])},
             "nonlinear": {"mu": list(params.mu), "delta_end": params.delta_end, "t_end": non["t_end"],
                           "predicted": non["predicted"].tolist(), "ratio_end": non["ratio"][:, -1].tolist(),
                           "deviation_end": non["deviation_end"], "deviation_half": non["deviation_half"],
                           **{k: non[k] for k in ("entropy_start", "entropy_min", "entropy_end", "t_entropy_min",
                                                  "entropy_rebound", "delta_max_end")}}}
    stats["summary"] = (f"linear: the most salient component reaches v = {params.v_salient:g} at t = {lin['t_end']:.4f} "
                        f"(blow-up {lin['t_blowup']:.4f}); the others end within {lin['others_max_gap']:.1e} of the exact "
                        f"solution and {lin['others_max_gap_to_limit']:.1e} of their finite limits; nonlinear: the rate ratios deviate from exp(mu_j^2/2)/exp(mu_k^2/2) by at most "
                        f"{non['deviation_end']:.3f} at the slowest delta = {params.delta_end:g} "
                        f"({non['deviation_half']:.3f} at half that time); the attention softmax(v^2/2): linear, "
                        f"entropy {stats['linear']['entropy_start']:.3f} -> {stats['linear']['entropy_end']:.2e} nats, "
                        f"salient share {lin['salient_share_end']:.6f} at the end; nonlinear, entropy "
                        f"{non['entropy_start']:.3f} -> lowest {non['entropy_min']:.3f} (t = {non['t_entropy_min']:.3g}) "
                        f"-> {non['entropy_end']:.3f} at the end, {non['entropy_rebound']:.3f} of its fall recovered")
    return fig, stats
