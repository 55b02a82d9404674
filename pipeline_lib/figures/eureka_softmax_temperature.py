"""The Softmax's temperature, as Sec. 3 of 'Eureka-Moments in Transformers' describes it, checked on random
scores (no training): left, the entropy of softmax(x / tau) against tau (a low temperature gives low entropy);
middle, the norm of the Softmax's Jacobian with respect to the scores against tau, for scores whose attention has
collapsed and for nearly uniform ones (a larger tau lifts the first, a smaller tau the second); right, the standard
deviation of q . k over sqrt(d_k) for independent rows of mean 0 and variance 1 (and, as a control, variance 2);
last, the gradients of W_Q and W_K against W_V's in one attention head whose tokens collapse to one row (Noci et al.'s
rank collapse, where the attention turns uniform), and, as a control, whose attention turns uniform through small
queries on distinct tokens. The statistics also compare NormSoftmax's weights with the Softmax's on scores of low
standard deviation (``pipeline_lib/attention.py``), and read the largest entry of the Softmax's Jacobian where the
attention has collapsed, which no panel draws."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from matplotlib.figure import Figure

from ..analysis.scan_snap import entropy
from ..attention import attention_weights
from . import style

NAME = "eureka_softmax_temperature"
PAPER = "Eureka-Moments in Transformers"  # the report's category
CONFIG = """
description: Sec. 3's statements on the Softmax temperature and NormSoftmax, checked on random scores (no training).
properties:
  keys: {description: "Keys per score row (the attention's length).", type: integer, minimum: 2, default: 16}
  rows: {description: "Random score rows per check.", type: integer, minimum: 10, default: 2000}
  d_k: {description: "Head widths of the standard-deviation check (the paper's ViT: 64).", type: array, items: {type: integer, minimum: 1}, minItems: 1, default: [8, 16, 64]}
  pairs: {description: "Independent (q, k) pairs per head width in the standard-deviation check.", type: integer, minimum: 100, default: 20000}
  seed: {description: "Seed of the random scores.", type: integer, minimum: 0, default: 0}
"""
TAUS = (1 / 3, 0.5, 1.0, 2.0, 4.0, 8.0)  # the paper's low temperature 1/3 up to sqrt(64) = 8
COLLAPSED, UNIFORM = 30.0, 0.01  # spreads of the score rows whose Softmax has collapsed / is nearly uniform at tau 1
CAP_D = 64  # the head width whose sqrt(d_k) caps NormSoftmax's sigma in the amplification check (the paper's ViT)
COLLAPSE = 0.99  # a row has collapsed when its largest weight is at least this (a level the project chose)
JACOBIAN_TOP = 0.25  # the largest value an entry of diag(p) - p p^T can take (p_i (1 - p_i) at p_i = 1/2)
SPREADS = (1.0, 1e-1, 1e-2, 1e-3)  # the tokens' spread around their common row (rank collapse as it goes to 0)
DRAWS, TOKENS, WIDTH = 100, 16, 16  # random heads of the gradient check, each on 16 tokens of width 16


@dataclass(frozen=True)
class Params:
    keys: int = 16
    rows: int = 2000
    d_k: tuple[int, ...] = (8, 16, 64)
    pairs: int = 20000
    seed: int = 0


def softmax(x: np.ndarray, tau: float) -> np.ndarray:
    z = x / tau
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def jacobian_norm(x: np.ndarray, tau: float) -> np.ndarray:
    """|d softmax(x / tau) / dx|_F per row: (1 / tau) (diag(p) - p p^T)."""
    p = softmax(x, tau)
    jac = (np.einsum("ri,ij->rij", p, np.eye(p.shape[-1])) - p[:, :, None] * p[:, None, :]) / tau
    return np.linalg.norm(jac, axis=(1, 2))


def qk_std_ratio(rng: np.random.Generator, d: int, pairs: int, variance: float = 1.0) -> float:
    """The standard deviation of q . k over sqrt(d), for q and k of d independent entries of mean 0 and ``variance``."""
    q, k = (rng.normal(0.0, np.sqrt(variance), (pairs, d)) for _ in range(2))
    return float((q * k).sum(-1).std() / np.sqrt(d))


def jacobian_top(p: np.ndarray) -> np.ndarray:
    """The largest |entry| of the Softmax's own Jacobian diag(p) - p p^T per row, over :data:`JACOBIAN_TOP`."""
    jac = np.einsum("ri,ij->rij", p, np.eye(p.shape[-1])) - p[:, :, None] * p[:, None, :]
    return np.abs(jac).max((1, 2)) / JACOBIAN_TOP


def qk_gradient_shares(seed: int, collapse: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per random head (:data:`DRAWS` of them), per spread s of :data:`SPREADS` and for W_Q and W_K (last axis):
    |dL/dW| / |dL/dW_V| (Frobenius norms; float64) for one Softmax head at tau = sqrt(width), with L a random linear read-out of its
    outputs, and the attention's largest distance from uniform. ``collapse``: the tokens are one common row plus s
    times noise (rank collapse as s -> 0); else (the control) the tokens are distinct (s = 1) and the weights W_Q
    themselves are s times their draw, so that the attention turns uniform with the tokens apart. Each head keeps its
    draw at every s."""
    gen = torch.Generator().manual_seed(seed)
    shares, spread = np.zeros((DRAWS, len(SPREADS), 2)), np.zeros((DRAWS, len(SPREADS)))
    for d in range(DRAWS):
        x, noise, read = (torch.randn(shape, generator=gen, dtype=torch.float64)
                          for shape in ((1, WIDTH), (TOKENS, WIDTH), (TOKENS, WIDTH)))
        w0 = [torch.randn(WIDTH, WIDTH, generator=gen, dtype=torch.float64) / WIDTH ** 0.5 for _ in range(3)]
        for j, s in enumerate(SPREADS):
            w_q, w_k, w_v = ((w if collapse or i else s * w).clone().requires_grad_() for i, w in enumerate(w0))
            tokens = x + s * noise if collapse else x + noise
            att = torch.softmax((tokens @ w_q) @ (tokens @ w_k).T / WIDTH ** 0.5, -1)
            (read * (att @ (tokens @ w_v))).sum().backward()
            shares[d, j] = [float(w_q.grad.norm() / w_v.grad.norm()), float(w_k.grad.norm() / w_v.grad.norm())]
            spread[d, j] = float((att.detach() - 1 / TOKENS).abs().max())
    return shares, spread


def log_slopes(shares: np.ndarray) -> np.ndarray:
    """Per head: the least-squares slope of log(share) against log(s) over the spreads below 1."""
    x = np.log(np.asarray(SPREADS[1:]))
    y = np.log(shares[:, 1:])
    return ((y - y.mean(1, keepdims=True)) * (x - x.mean())).sum(1) / ((x - x.mean()) ** 2).sum()


def weight_range(x: np.ndarray, variant: str, tau: float) -> np.ndarray:
    """Largest minus smallest attention weight per row under the workflow's own attention (attention.py)."""
    w = attention_weights(torch.as_tensor(x), variant, tau).numpy()
    return w.max(-1) - w.min(-1)


def measure(params: Params) -> dict:
    """Every check's per-row (or per-width) numbers."""
    rng = np.random.default_rng(params.seed)
    z = rng.normal(size=(params.rows, params.keys))
    ent = np.stack([entropy(softmax(z, t)) for t in TAUS], 1)  # (rows, taus)
    constant = np.zeros((1, params.keys))
    small, large = TAUS[0], TAUS[-1]
    tau = float(np.sqrt(CAP_D))  # NormSoftmax's cap min(sigma, tau): tau = sqrt(d_k)
    unit = z / z.std(-1, ddof=1, keepdims=True)  # rows of standard deviation 1, as attention.py measures it
    low = unit * rng.uniform(0.05, 0.9, (params.rows, 1)) * tau  # score rows whose std is under the cap
    high = unit * rng.uniform(1.1, 3.0, (params.rows, 1)) * tau  # above it: NormSoftmax is the Softmax there
    jac_collapsed = {t: jacobian_norm(COLLAPSED * z, t) for t in TAUS}
    jac_uniform = {t: jacobian_norm(UNIFORM * z, t) for t in TAUS}
    collapsed_p = softmax(COLLAPSED * z, small)
    rank, rank_spread = qk_gradient_shares(params.seed, True)
    apart, apart_spread = qk_gradient_shares(params.seed, False)
    return {
        "entropy": ent,
        "entropy_rises": np.all(np.diff(ent, axis=1) > 0, axis=1),
        "constant_rises": np.all(np.diff([entropy(softmax(constant, t))[0] for t in TAUS]) > 0),
        "jac_collapsed": jac_collapsed,
        "jac_uniform": jac_uniform,
        # collapsed: the largest weight at the small temperature at least 0.99 (near ties of the top two are not)
        "collapsed": softmax(COLLAPSED * z, small).max(-1) >= COLLAPSE,
        "collapsed_lifted": jac_collapsed[large] > jac_collapsed[small],
        "uniform_lifted": jac_uniform[small] > jac_uniform[large],
        "qk_std": {d: qk_std_ratio(rng, d, params.pairs) for d in params.d_k},
        "qk_std_variance_2": {d: qk_std_ratio(rng, d, params.pairs, 2.0) for d in params.d_k},
        "norm_amplifies_low": weight_range(low, "normsoftmax", tau) > weight_range(low, "softmax", tau),
        "norm_amplifies_high": weight_range(high, "normsoftmax", tau) > weight_range(high, "softmax", tau) + 1e-12,
        "cap": tau,
        "collapsed_top": jacobian_top(collapsed_p[collapsed_p.max(-1) >= COLLAPSE]),
        "collapsed_entropy": entropy(collapsed_p[collapsed_p.max(-1) >= COLLAPSE]),
        "uniform_top": jacobian_top(softmax(UNIFORM * z, small)),
        "qk_rank": rank, "qk_rank_spread": rank_spread, "qk_apart": apart, "qk_apart_spread": apart_spread,
    }


def _label(ax, xlabel: str, ylabel: str, title: str) -> None:
    if xlabel.startswith("temperature"):  # the grid's own values, not a log axis's minor labels
        ax.set_xticks(TAUS, ["1/3", "1/2", "1", "2", "4", "8"])
        ax.minorticks_off()
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    m = measure(params)
    fig, axes = style.figure(ncols=4, width=3.6, height=3.2)
    ax = axes[0, 0]
    q = np.quantile(m["entropy"], [0.1, 0.5, 0.9], axis=0)
    ax.fill_between(TAUS, q[0], q[2], color=style.ARM_COLORS[0], alpha=0.3, label="10-90% of rows")
    ax.plot(TAUS, q[1], color=style.ARM_COLORS[0], label="median row")
    ax.axhline(np.log(params.keys), color="0.5", ls="--", lw=0.8, label=f"uniform: ln {params.keys}")
    ax.set_xscale("log")
    _label(ax, "temperature tau", "entropy of softmax(x / tau) (nats)", "A low temperature: low entropy")
    ax = axes[0, 1]
    for i, (key, label) in enumerate((("jac_collapsed", f"collapsed (x = {COLLAPSED:g} z)"),
                                      ("jac_uniform", f"nearly uniform (x = {UNIFORM:g} z)"))):
        ax.plot(TAUS, [np.median(m[key][t]) for t in TAUS], marker="o", color=style.ARM_COLORS[i], label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    _label(ax, "temperature tau", "|Jacobian of the Softmax|_F, median row", "Where the gradient vanishes")
    ax = axes[0, 2]
    ds = list(m["qk_std"])
    for i, (key, label) in enumerate((("qk_std", "variance 1 (the claim)"), ("qk_std_variance_2", "variance 2 (a control)"))):
        ax.plot(ds, [m[key][d] for d in ds], marker="os"[i], color=style.ARM_COLORS[i], label=label)
    ax.axhline(1.0, color="0.5", ls="--", lw=0.8)
    ax.set_xscale("log", base=2)
    _label(ax, "d_k", "std(q . k) / sqrt(d_k)", "std(q . k) = sqrt(d_k)?")
    ax = axes[0, 3]
    for i, (key, label) in enumerate((("qk_rank", "tokens collapse to one (s: their spread)"),
                                      ("qk_apart", "distinct tokens, W_Q x s (a control)"))):
        for w, (name, ls) in enumerate((("W_Q", "-"), ("W_K", "--"))):
            q = np.quantile(m[key][:, :, w], [0.1, 0.5, 0.9], axis=0)
            ax.fill_between(SPREADS, q[0], q[2], color=style.ARM_COLORS[i], alpha=0.2)
            ax.plot(SPREADS, q[1], marker="os"[i], ls=ls, color=style.ARM_COLORS[i], label=f"{name}: {label}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    _label(ax, "s (attention uniform as s -> 0)", "|grad W| / |grad W_V|, median head",
           "Uniform attention: W_Q, W_K's gradients")
    return fig, stats_of(m, params)


def _largest(x: np.ndarray) -> float:
    """The largest value, NaN where there is none (no row collapsed: the claim that reads it is not run)."""
    return float(x.max()) if x.size else float("nan")


def stats_of(m: dict, params: Params) -> dict:
    small, large = TAUS[0], TAUS[-1]
    out = {"taus": list(TAUS), "keys": params.keys, "rows": params.rows, "cap": m["cap"],
           "entropy_rises": int(m["entropy_rises"].sum()), "constant_rises": bool(m["constant_rises"]),
           "collapsed": int(m["collapsed"].sum()),
           "collapsed_lifted": int((m["collapsed_lifted"] & m["collapsed"]).sum()),
           "uniform_lifted": int(m["uniform_lifted"].sum()),
           "jacobian_median": {k: {f"{t:.3g}": float(np.median(m[k][t])) for t in (small, large)}
                               for k in ("jac_collapsed", "jac_uniform")},
           "qk_std": {str(d): v for d, v in m["qk_std"].items()},
           "qk_std_variance_2": {str(d): v for d, v in m["qk_std_variance_2"].items()},
           "qk_pairs": params.pairs,
           "norm_amplifies_low": int(m["norm_amplifies_low"].sum()),
           "norm_amplifies_high": int(m["norm_amplifies_high"].sum()),
           "collapsed_top": _largest(m["collapsed_top"]), "collapsed_entropy_max": _largest(m["collapsed_entropy"]),
           "collapse_level": COLLAPSE,
           "uniform_top": float(m["uniform_top"].min()), "jacobian_top_bound": JACOBIAN_TOP,
           "spreads": list(SPREADS), "draws": DRAWS, "tokens": TOKENS, "width": WIDTH}
    for key in ("qk_rank", "qk_apart"):
        for w, name in enumerate(("q", "k")):
            out[f"{key}_{name}_slopes"] = [float(v) for v in log_slopes(m[key][:, :, w])]
            out[f"{key}_{name}_median"] = [float(v) for v in np.median(m[key][:, :, w], 0)]
        out[f"{key}_uniform_gap"] = float(m[f"{key}_spread"][:, -1].max())
    out["summary"] = (f"entropy rises with tau in {out['entropy_rises']} of {params.rows} rows; the Jacobian lifted by a "
                      f"larger tau in {out['collapsed_lifted']} of {out['collapsed']} collapsed rows, by a smaller tau in "
                      f"{out['uniform_lifted']} nearly uniform ones; std(q . k)/sqrt(d_k) "
                      + ", ".join(f"{v:.3f}" for v in out["qk_std"].values())
                      + f"; NormSoftmax widens {out['norm_amplifies_low']} of {params.rows} low-std rows, "
                      f"{out['norm_amplifies_high']} of those at or above its cap; the collapsed rows' largest Jacobian "
                      f"entry {out['collapsed_top']:.3g} of its top; W_Q's and W_K's gradient shares fall with the "
                      f"tokens' spread at median log-slopes {np.median(out['qk_rank_q_slopes']):.2f} and "
                      f"{np.median(out['qk_rank_k_slopes']):.2f} (control {np.median(out['qk_apart_q_slopes']):.2f} and "
                      f"{np.median(out['qk_apart_k_slopes']):.2f})")
    return out
