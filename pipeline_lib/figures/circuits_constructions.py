"""Three statements of the circuits paper that need no training, checked on the construction and the datasets they
describe. Left (Fig. 1 caption): the center-tapped full-wave rectifier as a two-layer ReLU network with +1/-1
weights and a bias, h = ReLU(W_1 x + b), y = W_2 h with W_1 = (+1, -1), b = (-v, -v), W_2 = (+1, +1), against the
rectifier's output max(|x| - v, 0) (v the diode's drop; v = 0 an ideal diode), and the best one-layer (affine)
least-squares fit beside it. Middle (Sec. II.b, 'The spurious part consists of the 3 tokens on the right'): for
each position t, whether the stored labels of a sparse-modular-addition dataset are determined without the token
at t: the share of sequences whose label is not their group's most common one, grouping by the first k tokens other
than t (by the first k tokens for t >= k). Zero: the label needs nothing at t. Right (Sec. III, 'a circuit
specified for 2^11 points that generalize to 12^4 > 2^14 points'): the training set's size, the input space p^T,
the printed 12^4 and 2^14, on a log2 scale, with the p^k first-k patterns that decide the label and how many of
them the training set holds."""
from __future__ import annotations

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
N_GRID = 601  # input points of the rectifier


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
    """The drawn net (weights +1/-1, bias -drop on both hidden units) against the rectified output max(|x| - drop,
    0), and the best affine fit's largest error (a one-layer net)."""
    want = np.maximum(np.abs(x) - drop, 0.0)
    got = relu_net(x, np.array([1.0, -1.0]), np.array([-drop, -drop]), np.array([1.0, 1.0]))
    design = np.stack([x, np.ones_like(x)], axis=1)
    fit = design @ np.linalg.lstsq(design, want, rcond=None)[0]
    return {"drop": drop, "max_error": float(np.max(np.abs(got - want))),
            "affine_max_error": float(np.max(np.abs(fit - want))), "x": x, "net": got, "want": want, "fit": fit}


def impurity(x: np.ndarray, y: np.ndarray, positions: list[int]) -> float:
    """Share of sequences whose label is not the most common label among the sequences that share their tokens at
    ``positions`` (0: the label is a function of those tokens on these sequences)."""
    _, group = np.unique(x[:, positions], axis=0, return_inverse=True)
    group = group.ravel()
    counts = np.zeros((group.max() + 1, int(y.max()) + 1), dtype=np.int64)
    np.add.at(counts, (group, y), 1)
    return float(1.0 - counts.max(axis=1).sum() / len(y))


def _sma(paths, name: str, key: str):
    ds = read_dataset(paths.dataset(name), rule="dataset")
    if ds.attrs.get("task_task") != "sparse_modular_addition":
        raise ConfigError(f"config key 'figures.{NAME}.{key}': dataset {name!r} is task "
                          f"{ds.attrs.get('task_task')!r}; allowed: a sparse_modular_addition dataset")
    return ds, int(ds.attrs["task_p"]), int(ds.attrs["task_T"]), int(ds.attrs["task_k"])


def spurious(paths, name: str) -> dict:
    ds, p, T, k = _sma(paths, name, "spurious")
    x, y = ds.x.values, ds.y.values
    per = [impurity(x, y, [s for s in range(k) if s != t]) for t in range(T)]
    others = [v for v in per if v > 0]
    return {"dataset": name, "p": p, "T": T, "k": k, "n": int(len(y)), "impurity_without": per,
            "spurious_positions": [t for t, v in enumerate(per) if v == 0.0], "right_three": list(range(T - 3, T)),
            "least_impurity_of_the_others": min(others) if others else None}


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
    ax.bar(pos, spur["impurity_without"], color=[style.ARM_COLORS[0] if t < spur["k"] else style.ARM_COLORS[1]
                                                 for t in pos])
    ax.set_xticks(pos, [f"x{t}" for t in pos])
    ax.set_ylabel("labels not fixed without x_t")
    ax.set_title(f"Spurious tokens ({spur['dataset']}, k = {spur['k']})", fontsize=9)
    ax = axes[0, 2]
    bars = {"train (n)": hay["log2_train"], "printed 12^4": math.log2(hay["printed"]), "2^14": 14.0,
            f"space {hay['p']}^{hay['T']}": hay["log2_space"], f"patterns {hay['p']}^{hay['k']}": math.log2(hay["patterns"]),
            "patterns in train": math.log2(hay["patterns_in_train"])}
    ax.barh(list(bars), list(bars.values()), color=style.ARM_COLORS[2])
    ax.set_xlabel("log2 count")
    ax.set_title(f"Sec. III: the haystack ({hay['dataset']})", fontsize=9)
    stats = {"rectifier": {"drops": [r["drop"] for r in rect], "x_max": params.x_max, "n_points": N_GRID,
                           "max_error": max(r["max_error"] for r in rect),
                           "affine_max_error": min(r["affine_max_error"] for r in rect)},
             "spurious": spur, "haystack": hay}
    stats["summary"] = (
        f"rectifier: the +1/-1 ReLU net with bias -v equals max(|x| - v, 0) within {stats['rectifier']['max_error']:.1e} "
        f"for v = {stats['rectifier']['drops']} (best affine fit off by {stats['rectifier']['affine_max_error']:.3f}); "
        f"{spur['dataset']}: the labels need no token at positions {spur['spurious_positions']} (T = {spur['T']}, "
        f"k = {spur['k']}); {hay['dataset']}: {hay['n_train']} training sequences (2^{hay['log2_train']:.2f}) out of "
        f"{hay['p']}^{hay['T']} = 2^{hay['log2_space']:g}; {hay['patterns_in_train']} of the {hay['patterns']} first-k "
        f"patterns occur in training, covering {hay['test_patterns_seen']:.3f} of the test sequences")
    return fig, stats
