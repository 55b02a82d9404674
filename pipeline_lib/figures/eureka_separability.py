"""Linear separability of random labels against the features' dimensionality, Sec. 5.1's caveat to its linear
probes in 'Eureka-Moments in Transformers', checked on random points (no training): the share of draws of n
Gaussian points with random +-1 labels that an affine classifier separates exactly (a linear programme decides
each), against the dimension d, beside the exact probability of Cover's (1965) function-counting theorem for points
in general position, 2^(1 - n) sum_{k <= d} C(n - 1, k). A control pads points of a fixed rank 2 with zeros up to
each d: the dimension grows but the features' rank does not, so separation must not become more likely."""
from __future__ import annotations

from dataclasses import dataclass
from math import comb

import numpy as np
from matplotlib.figure import Figure

from ..stats import wilson_interval
from . import style

NAME = "eureka_separability"
PAPER = "Eureka-Moments in Transformers"  # the report's category
CONFIG = """
description: Sec. 5.1's caveat that linear separation becomes likely as the features' dimension grows, on random points (no training).
properties:
  n: {description: "Points per draw (the probe's training samples).", type: integer, minimum: 4, default: 40}
  dims: {description: "Feature dimensions, increasing.", type: array, items: {type: integer, minimum: 1}, minItems: 2, default: [2, 10, 15, 18, 20, 22, 25, 30, 40]}
  draws: {description: "Draws of points and labels per dimension.", type: integer, minimum: 10, default: 200}
  control_rank: {description: "Rank of the control's points, padded with zeros to each dimension.", type: integer, minimum: 1, default: 2}
  seed: {description: "Seed of the random points and labels.", type: integer, minimum: 0, default: 0}
"""


MARGIN = 1e-6  # a margin above this share of the points' scale separates (HiGHS holds constraints to 1e-7)


@dataclass(frozen=True)
class Params:
    n: int = 40
    dims: tuple[int, ...] = (2, 10, 15, 18, 20, 22, 25, 30, 40)
    draws: int = 200
    control_rank: int = 2
    seed: int = 0


def cover_probability(n: int, d: int) -> float:
    """The probability that random labels on n points in general position in R^d are affinely separable (Cover
    1965, with the bias as a (d + 1)-th weight): 2^(1 - n) sum_{k=0}^{d} C(n - 1, k)."""
    return min(1.0, sum(comb(n - 1, k) for k in range(d + 1)) / 2 ** (n - 1))


def separable(x: np.ndarray, y: np.ndarray) -> bool:
    """Whether some affine w . x + b gives every point its label's sign: the largest margin t of y_i (w . x_i + b)
    >= t over the box |w_j|, |b| <= 1 (a linear programme that always has an optimum, t = 0 at w = 0), recomputed
    from the solution, exceeds :data:`MARGIN` times the points' scale (well above the solver's tolerance)."""
    from scipy.optimize import linprog

    lifted = y[:, None] * np.hstack([x, np.ones((len(x), 1))])
    a = np.hstack([-lifted, np.ones((len(x), 1))])  # t - y (w . x + b) <= 0
    c = np.zeros(a.shape[1])
    c[-1] = -1.0  # maximise t
    bounds = [(-1.0, 1.0)] * (a.shape[1] - 1) + [(None, 1.0)]
    res = linprog(c, A_ub=a, b_ub=np.zeros(len(x)), bounds=bounds, method="highs")
    if res.status != 0:
        raise RuntimeError(f"the separability programme found no optimum: {res.message}")
    return float((lifted @ res.x[:-1]).min()) > MARGIN * max(1.0, float(np.abs(x).max()))


def measure(params: Params) -> dict:
    """Per dimension: how many draws were separable, for full-rank points and for the rank-limited control."""
    rng = np.random.default_rng(params.seed)
    full, control = [], []
    for d in params.dims:
        hits = [0, 0]
        for _ in range(params.draws):
            y = rng.choice([-1.0, 1.0], params.n)
            x = rng.normal(size=(params.n, d))
            low = np.zeros((params.n, d))
            r = min(params.control_rank, d)
            low[:, :r] = rng.normal(size=(params.n, r))
            hits[0] += separable(x, y)
            hits[1] += separable(low, y)
        full.append(hits[0])
        control.append(hits[1])
    return {"separable": full, "control_separable": control}


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    stats = stats_of(measure(params), params)
    fig, axes = style.figure(ncols=1, width=4.2, height=3.2)
    ax = axes[0, 0]
    dims = list(params.dims)
    for i, (key, label) in enumerate((("share", "full-rank points"),
                                      ("control_share", f"rank {params.control_rank}, zero-padded (a control)"))):
        lo, hi = np.array(stats[f"{key}_interval"]).T
        ax.errorbar(dims, stats[key], yerr=[np.array(stats[key]) - lo, hi - np.array(stats[key])], marker="os"[i],
                    color=style.ARM_COLORS[i], capsize=2, label=label)
    ax.plot(dims, stats["cover"], color="0.3", ls="--", lw=1, label="Cover's exact probability")
    ax.axvline(params.n / 2 - 1, color="0.6", ls=":", lw=0.8, label="d = n/2 - 1 (Cover: 1/2)")
    ax.set_xlabel("feature dimension d")
    ax.set_ylabel(f"share of random labelings separable (n = {params.n})")
    ax.set_title("Separation becomes likely as d grows", fontsize=9)
    ax.legend(fontsize=7)
    return fig, stats


def stats_of(m: dict, params: Params) -> dict:
    n, draws = params.n, params.draws
    out = {"n": n, "dims": list(params.dims), "draws": draws, "control_rank": params.control_rank,
           "separable": [int(k) for k in m["separable"]], "control_separable": [int(k) for k in m["control_separable"]],
           "cover": [cover_probability(n, d) for d in params.dims],
           "control_cover": [cover_probability(n, min(params.control_rank, d)) for d in params.dims]}
    for key in ("", "control_"):
        out[f"{key}share"] = [k / draws for k in out[f"{key}separable"]]
        out[f"{key}share_interval"] = [list(wilson_interval(k, draws)) for k in out[f"{key}separable"]]
    out["summary"] = (f"random labels on {n} Gaussian points separable in "
                      + ", ".join(f"{s:.2f}" for s in out["share"]) + " of draws at d = "
                      + ", ".join(map(str, params.dims)) + " (Cover: " + ", ".join(f"{c:.2f}" for c in out["cover"])
                      + f"); rank {params.control_rank} zero-padded: "
                      + ", ".join(f"{s:.2f}" for s in out["control_share"]))
    return out
