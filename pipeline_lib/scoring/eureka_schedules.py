"""Scoring of figure eureka_schedules's claims from its statistics (its sidecar's ``stats``, or the copy kept in
``docs/stats``): the ledger job and ``publish`` call :func:`score_claims`; the figure job does not."""
from __future__ import annotations

import functools

import numpy as np

from .. import claims
from ..figures.eureka_arms import BASE
from ..figures.eureka_schedules import LOWTEMP, N_DRAWS, N_PERM, TASKS, Params


def score_claims(stats: dict, params: Params) -> dict:
    """Per task the Softmax arm's sensitivity to the schedule and the lower temperature's smaller sensitivity."""
    out = {}
    for task in TASKS:
        entry = stats.get("tasks", {}).get(task)
        out[f"eureka.schedules.{task}_softmax_ratio_sensitive"] = sensitive_score(entry)
        out[f"eureka.schedules.{task}_lowtemp_less_sensitive"] = less_sensitive_score(entry)
    return out


def _counts(entry: dict, label: str) -> list[tuple[int, int]] | None:
    """The arm's (Eureka seeds, seeds) per schedule; None where the arm misses a schedule."""
    arm = entry["arms"].get(label)
    if arm is None or any(k is None for k in arm["n_eureka"]):
        return None
    return list(zip(arm["n_eureka"], arm["n_seeds"]))


def spread(cells: list[tuple[int, int]]) -> float:
    """The largest difference in Eureka-ratio between two schedules."""
    shares = [k / n for k, n in cells]
    return max(shares) - min(shares)


def permutation_null(cells: list[tuple[int, int]], n_perm: int = N_PERM, seed: int = 0) -> np.ndarray:
    """The spread with the arm's seeds shuffled across the schedules (each schedule keeps its seed count): what
    the spread is when the schedule does not matter."""
    rng = np.random.default_rng(seed)
    sizes = [n for _, n in cells]
    outcomes = np.concatenate([np.r_[np.ones(k), np.zeros(n - k)] for k, n in cells])
    starts, sizes = np.r_[0, np.cumsum(sizes)[:-1]], np.asarray(sizes, dtype=float)
    out = np.empty(n_perm)
    for i in range(n_perm):
        shares = np.add.reduceat(rng.permutation(outcomes), starts) / sizes  # sums of 0/1: exact, as each mean
        out[i] = shares.max() - shares.min()
    return out


def sensitive_score(entry: dict | None, n_perm: int = N_PERM) -> dict:
    """Softmax's spread of Eureka-ratios over the schedules above its permutation null (``claims.exceeds``: the
    null's median and 95th percentile as the control; reproduced where the spread is above that percentile, a
    permutation test at 5%). The seed control (the reference schedule on other seeds) is a second check: where
    two seed sets of one schedule differ as much as the schedules do, the claim is not reproduced (guard)."""
    if entry is None:
        return claims.not_run("the figure draws no such task")
    cells = _counts(entry, BASE)
    if cells is None or len(cells) < 2:
        return claims.not_run(f"fewer than two schedules with arm {BASE!r}")
    if "control" not in entry:
        return claims.not_run("no control entry (the reference schedule on other seeds)")
    s = spread(cells)
    null = permutation_null(cells, n_perm)
    med, q95 = float(np.median(null)), float(np.quantile(null, 0.95))
    p_value = (1 + int((null >= s - 1e-12).sum())) / (1 + len(null))
    ref = cells[0]
    ctrl = (entry["control"]["n_eureka"], entry["control"]["n_seeds"])
    seed_gap = abs(ctrl[0] / ctrl[1] - ref[0] / ref[1])
    control = (f"the same {sum(n for _, n in cells)} seeds shuffled across the schedules (no schedule effect): "
               f"median spread {med:.2f}, 95th percentile {q95:.2f}, permutation p = {p_value:.2g}; per schedule "
               + ", ".join(f"{e} {k}/{n}" for e, (k, n) in zip(entry["schedules"], cells))
               + f"; seed control: the reference schedule on other seeds {ctrl[0]}/{ctrl[1]} (differs by {seed_gap:.2f})")
    verdict = claims.exceeds(s, s, med, q95)
    if str(verdict) != "not reproduced" and seed_gap >= s:
        verdict = claims.guard("not reproduced", f"two seed sets of the reference schedule differ by {seed_gap:.2f}, "
                               f"as much as the schedules' spread {s:.2f}")
    return claims.score(s, (np.nan, np.nan), min(n for _, n in cells), control, verdict)


@functools.lru_cache(maxsize=4096)
def _binomial_spread(p: float, n: int, k: int) -> float:
    """The expected spread of ``k`` shares of ``n`` seeds each at the same ratio ``p`` (seed noise alone):
    E[max] - E[min] of k Binomial(n, p) counts, divided by n. Remembered: an interval's redraws ask for a few
    pooled ratios thousands of times."""
    from math import comb

    pmf = np.array([comb(n, x) * p ** x * (1 - p) ** (n - x) for x in range(n + 1)])
    cdf = np.minimum(np.cumsum(pmf), 1.0)
    below = np.r_[0.0, cdf[:-1]]  # P(X < x)
    x = np.arange(n + 1)
    e_max = float(np.sum(x * (cdf ** k - below ** k)))
    e_min = float(np.sum(x * ((1 - below) ** k - (1 - cdf) ** k)))
    return (e_max - e_min) / n


def excess_spread(cells: list[tuple[int, int]]) -> float:
    """An arm's spread over the schedules minus the spread seed noise gives at its pooled ratio (every cell of
    ``n`` seeds)."""
    n = cells[0][1]
    p = sum(k for k, _ in cells) / (n * len(cells))
    return spread(cells) - _binomial_spread(p, n, len(cells))


def spread_gap(a: list[tuple[int, int]], b: list[tuple[int, int]], n_draws: int = N_DRAWS,
               seed: int = 0) -> tuple[float, float, float]:
    """(excess_spread(a) - excess_spread(b), 95% interval): the interval from redrawing every cell from its
    posterior predictive (a ratio from its Jeffreys posterior Beta(k + 1/2, n - k + 1/2), then n seeds), so a cell
    at 0/n or n/n keeps the uncertainty of n seeds."""
    rng = np.random.default_rng(seed)

    def redraw(cells):
        return [(int(rng.binomial(n, rng.beta(k + 0.5, n - k + 0.5))), n) for k, n in cells]

    gaps = [excess_spread(redraw(a)) - excess_spread(redraw(b)) for _ in range(n_draws)]
    lo, hi = np.quantile(gaps, [0.025, 0.975])
    return excess_spread(a) - excess_spread(b), float(lo), float(hi)


def less_sensitive_score(entry: dict | None, n_draws: int = N_DRAWS) -> dict:
    """Softmax's excess spread over the schedules above the lower temperature's (``claims.above``: the interval
    of the difference, :func:`spread_gap`, above 0). An arm flat across the schedules has no excess, so a flat
    Softmax beside a varying tau = 1/3 scores against the claim."""
    if entry is None:
        return claims.not_run("the figure draws no such task")
    base, cold = _counts(entry, BASE), _counts(entry, LOWTEMP)
    if base is None or cold is None or len(base) < 2:
        return claims.not_run(f"arms {BASE!r} and {LOWTEMP!r} not both under two schedules or more")
    if len({n for _, n in base + cold}) > 1:
        return claims.not_run("the cells differ in their seed counts (the binomial expectation needs one count)")
    gap, lo, hi = spread_gap(base, cold, n_draws)
    control = "; ".join(f"{label}: spread {spread(c):.2f} ({', '.join(f'{k}/{m}' for k, m in c)}), "
                        f"{excess_spread(c):+.2f} beyond seed noise" for label, c in ((BASE, base), (LOWTEMP, cold)))
    return claims.score(gap, (lo, hi), base[0][1], control, claims.above(gap, lo, 0.0))
