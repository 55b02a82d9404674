"""Three statements of the circuits paper that need no training, checked on the construction and the datasets they
describe. Left (Fig. 1 caption): the center-tapped full-wave rectifier as a two-layer ReLU network in the caption's
alphabet: h = ReLU(W_1 x + b), y = W_2 h with every entry of W_1 and W_2 +1 or -1 (16 nets) and b = (-v, -v), each
against the rectifier's output max(|x| - v, 0) (v the diode's drop; v = 0 an ideal diode); the net closest to it
is drawn, with the best affine least-squares fit (no ReLU layer) beside it. Middle (Sec. II.b, 'The spurious part consists of the 3 tokens on the right'): for
each position t, whether the stored labels of a sparse-modular-addition dataset are determined without the token
at t: over the pairs of stored sequences that differ at t alone, the share whose labels differ. Zero: the label
never moved with the token at t. Right (Sec. III, 'a circuit
specified for 2^11 points that generalize to 12^4 > 2^14 points'): the training set's size, the input space p^T,
the printed 12^4 and 2^14, on a log2 scale, with the p^k first-k patterns that decide the label and how many of
them the training set holds."""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure

from ..plumbing.errors import ConfigError
from ..plumbing.store import read_dataset
from . import style

NAME = "circuits_constructions"
PAPER = "Easing Optimization Paths: a Circuit Perspective"
CONFIG = """
description: Fig. 1's rectifier as a 2-layer ReLU net, the spurious positions of the task's labels, and Sec. III's counts (no training).
required: [spurious, haystack]
properties:
  spurious: {description: "A sparse_modular_addition dataset whose labels are grouped per position (Fig. 2's task: T = 8, k = 5).", type: string, x-ref: dataset}
  haystack: {description: "The sparse_modular_addition dataset of Fig. 5's runs (p = 4, T = 12, k = 5, n = 2048).", type: string, x-ref: dataset}
  drops: {description: "Diode drops v of the rectifier (0: an ideal diode).", type: array, items: {type: number, minimum: 0}, minItems: 1, default: [0.0, 0.7]}
  x_max: {description: "The rectifier's input runs over [-x_max, x_max].", type: number, exclusiveMinimum: 0, default: 3.0}
"""
CHECKS = [["drops", "all(v < x_max for v in drops)", "every drop must be below x_max = {x_max} (at or above it the "
                                                   "rectified output is zero over the whole range); got {drops}"]]
N_GRID = 601  # input points of the rectifier
SIGNS = list(itertools.product((1.0, -1.0), repeat=2))  # the caption's red (+1) and blue (-1) arrows, per layer
EXACT = 1e-12  # a net computes the rectifier where its largest error is under this (float64 rounding here)


@dataclass(frozen=True)
class Params:
    spurious: str
    haystack: str
    drops: tuple[float, ...] = (0.0, 0.7)
    x_max: float = 3.0


def relu_net(x: np.ndarray, w1: np.ndarray, b1: np.ndarray, w2: np.ndarray) -> np.ndarray:
    """y = w2 . ReLU(w1 x + b1), one input and one output: a two-layer ReLU network without an output bias."""
    return np.maximum(np.outer(x, w1) + b1, 0.0) @ w2


def rectifier(x: np.ndarray, drop: float) -> dict:
    """Every two-layer net of the caption's alphabet (weights +1 or -1, bias -drop on both hidden units) against the
    rectified output max(|x| - drop, 0): the smallest largest-error over the 16 nets, the nets within
    :data:`EXACT` of it, and the best affine fit's largest error (a map without the ReLU layer)."""
    want = np.maximum(np.abs(x) - drop, 0.0)
    nets = [(w1, w2) for w1 in SIGNS for w2 in SIGNS]
    outs = [relu_net(x, np.array(w1), np.full(2, -drop), np.array(w2)) for w1, w2 in nets]
    errors = [float(np.max(np.abs(o - want))) for o in outs]
    best = int(np.argmin(errors))
    design = np.stack([x, np.ones_like(x)], axis=1)
    fit = design @ np.linalg.lstsq(design, want, rcond=None)[0]
    return {"drop": drop, "max_error": errors[best], "exact_nets": [list(map(list, n)) for n, e in zip(nets, errors)
                                                                   if e <= EXACT],
            "affine_max_error": float(np.max(np.abs(fit - want))), "x": x, "net": outs[best], "want": want, "fit": fit}


def label_changes(x: np.ndarray, y: np.ndarray, t: int) -> tuple[int, int]:
    """(pairs of sequences that differ at position ``t`` alone, those of them whose labels differ)."""
    _, group = np.unique(np.delete(x, t, axis=1), axis=0, return_inverse=True)
    order = np.argsort(group.ravel(), kind="stable")
    bounds = np.flatnonzero(np.diff(group.ravel()[order])) + 1
    pairs = changed = 0
    for members in np.split(order, bounds):
        for i, a in enumerate(members):
            for b in members[i + 1:]:
                if x[a, t] != x[b, t]:  # equal rows (a sequence drawn twice) are not a pair
                    pairs, changed = pairs + 1, changed + int(y[a] != y[b])
    return pairs, changed


def _sma(paths, name: str, key: str):
    ds = read_dataset(paths.dataset(name), rule="dataset")
    if ds.attrs.get("task_task") != "sparse_modular_addition":
        raise ConfigError(f"config key 'figures.{NAME}.{key}': dataset {name!r} is task "
                          f"{ds.attrs.get('task_task')!r}; allowed: a sparse_modular_addition dataset")
    return ds, int(ds.attrs["task_p"]), int(ds.attrs["task_T"]), int(ds.attrs["task_k"])


def spurious(paths, name: str) -> dict:
    ds, p, T, k = _sma(paths, name, "spurious")
    x, y = ds.x.values, ds.y.values
    counts = [label_changes(x, y, t) for t in range(T)]
    share = [c / n if n else None for n, c in counts]
    others = [v for v in share if v]
    return {"dataset": name, "p": p, "T": T, "k": k, "n": int(len(y)), "pairs": [n for n, _ in counts],
            "label_changes": [c for _, c in counts], "share_changed": share,
            "spurious_positions": [t for t, v in enumerate(share) if v == 0.0], "right_three": list(range(T - 3, T)),
            "least_pairs": min(n for n, _ in counts), "least_share_of_the_others": min(others) if others else None}


def haystack(paths, name: str) -> dict:
    ds, p, T, k = _sma(paths, name, "haystack")
    train = ds.split.values == "train"
    if "draw" in ds.coords:  # one seed's training set: draw 0
        train &= ds.draw.values == 0
    test = ds.split.values == "test"
    first = ds.x.values[:, :k] @ (p ** np.arange(k - 1, -1, -1))
    seen = set(first[train].tolist())
    return {"dataset": name, "p": p, "T": T, "k": k, "n_train": int(train.sum()),
            "log2_train": math.log2(int(train.sum())), "log2_space": T * math.log2(p), "printed": 12**4,
            "two_to_14": 2**14, "patterns": p**k, "patterns_in_train": len(seen),
            "test_patterns_seen": float(np.mean([c in seen for c in first[test]]))}


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    x = np.linspace(-params.x_max, params.x_max, N_GRID)
    rect = [rectifier(x, float(v)) for v in params.drops]
    spur, hay = spurious(paths, params.spurious), haystack(paths, params.haystack)
    fig, axes = style.figure(ncols=3, width=3.6, height=3.0)
    ax = axes[0, 0]
    for i, r in enumerate(rect):
        color = style.ARM_COLORS[i % len(style.ARM_COLORS)]
        ax.plot(x, r["want"], color=color, lw=3, alpha=0.35, label=f"max(|x| − {r['drop']:g}, 0)")
        ax.plot(x, r["net"], color=color, ls="--", lw=1.2, label=f"ReLU net, bias {0.0 - r['drop']:g}")
        ax.plot(x, r["fit"], color=color, ls=":", lw=1, label="best affine (one layer)" if i == 0 else None)
    ax.set_xlabel("input x")
    ax.set_ylabel("output")
    ax.set_title("Fig. 1: full-wave rectifier", fontsize=9)
    ax.legend(fontsize=6)
    ax = axes[0, 1]
    pos = np.arange(spur["T"])
    ax.bar(pos, [v or 0.0 for v in spur["share_changed"]],
           color=[style.ARM_COLORS[0] if t < spur["k"] else style.ARM_COLORS[1] for t in pos])
    ax.set_xticks(pos, [f"x{t}" for t in pos])
    ax.set_ylabel("label changed (pairs differing at x_t alone)")
    ax.set_title(f"Spurious tokens ({spur['dataset']}, k = {spur['k']})", fontsize=9)
    ax = axes[0, 2]
    bars = {"train (n)": hay["log2_train"], "printed 12^4": math.log2(hay["printed"]), "2^14": 14.0,
            f"space {hay['p']}^{hay['T']}": hay["log2_space"], f"patterns {hay['p']}^{hay['k']}": math.log2(hay["patterns"]),
            "patterns in train": math.log2(hay["patterns_in_train"])}
    ax.barh(list(bars), list(bars.values()), color=style.ARM_COLORS[2])
    ax.set_xlabel("log2 count")
    ax.set_title(f"Sec. III: the haystack ({hay['dataset']})", fontsize=9)
    stats = {"rectifier": {"drops": [r["drop"] for r in rect], "x_max": params.x_max, "n_points": N_GRID,
                           "nets_tried": len(SIGNS) ** 2, "max_error": max(r["max_error"] for r in rect),
                           "exact_nets": [n for n in rect[0]["exact_nets"] if all(n in r["exact_nets"] for r in rect)],
                           "affine_max_error": min(r["affine_max_error"] for r in rect)},
             "spurious": spur, "haystack": hay}
    stats["summary"] = (
        f"rectifier: of {stats['rectifier']['nets_tried']} +1/-1 ReLU nets with bias -v, {len(stats['rectifier']['exact_nets'])} "
        f"equal max(|x| - v, 0), the closest within {stats['rectifier']['max_error']:.1e} for v = "
        f"{stats['rectifier']['drops']} (best affine fit off by {stats['rectifier']['affine_max_error']:.3f}); "
        f"{spur['dataset']}: the labels need no token at positions {spur['spurious_positions']} (T = {spur['T']}, "
        f"k = {spur['k']}); {hay['dataset']}: {hay['n_train']} training sequences (2^{hay['log2_train']:.2f}) out of "
        f"{hay['p']}^{hay['T']} = 2^{hay['log2_space']:g}; {hay['patterns_in_train']} of the {hay['patterns']} first-k "
        f"patterns occur in training, covering {hay['test_patterns_seen']:.3f} of the test sequences")
    return fig, stats
