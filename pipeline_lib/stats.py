"""Statistics shared by analyses and figures (no plotting here): binomial intervals, success counts
and the log-spaced choice of epochs or snapshots."""
from __future__ import annotations

import math

import numpy as np


def wilson_interval(successes: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion (e.g. 4/10 -> (0.17, 0.69)), written as Newcombe
    (1998, method 3) gives it: centre (2np + z^2) / 2(n + z^2), half-width z sqrt(4npq + z^2) / 2(n + z^2),
    clipped to 0 at k = 0 and 1 at k = n. Equal to scipy's ``binomtest(k, n).proportion_ci(method="wilson")``
    (tested) without importing ``scipy.stats`` (~1 s of every figure job); ``ndtri`` is its normal quantile."""
    from scipy.special import ndtri

    if not (n >= 1 and 0 <= successes <= n and 0 < level < 1):
        raise ValueError(f"Wilson interval of {successes}/{n} at level {level}: needs n >= 1, 0 <= k <= n, 0 < level < 1")
    p = successes / n
    z = float(ndtri(0.5 + 0.5 * level))
    denom = 2 * (n + z**2)
    centre = (2 * n * p + z**2) / denom
    delta = z / denom * math.sqrt(4 * n * p * (1 - p) + z**2)
    return (0.0 if successes == 0 else centre - delta), (1.0 if successes == n else centre + delta)


def rate_difference(k1: int, n1: int, k2: int, n2: int, level: float = 0.95) -> tuple[float, float, float]:
    """(p1 - p2, low, high): the difference of two independent binomial proportions with Newcombe's
    (1998, method 10) hybrid score interval built from the two Wilson intervals, e.g. 56/70 - 48/80 ->
    (0.200, 0.052, 0.334), the worked example of that paper (tested)."""
    p1, p2 = k1 / n1, k2 / n2
    (l1, u1), (l2, u2) = wilson_interval(k1, n1, level), wilson_interval(k2, n2, level)
    d = p1 - p2
    return d, d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2), d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)


def success_label(name: str, successes: int, n: int) -> str:
    """'name k/n [low, high]' with the 95% Wilson interval, as figures and reports print it."""
    lo, hi = wilson_interval(successes, n)
    return f"{name} {successes}/{n} [{lo:.2f}, {hi:.2f}]"


def success_counts(final_values: np.ndarray, threshold: float) -> tuple[int, int]:
    """(seeds whose final value is >= threshold, seeds); a diverged (NaN) seed is a failure."""
    v = np.asarray(final_values, dtype=float)
    return int(np.sum(np.nan_to_num(v, nan=-1.0) >= threshold)), int(v.size)


def log_spaced_indices(n: int, m: int) -> list[int]:
    """About ``m`` of the indices 0..n-1, log-spaced; the first and the last always included."""
    idx = np.unique(np.round(np.geomspace(1, n, m)).astype(int) - 1)
    return sorted(set(idx.tolist()) | {0, n - 1})


def log_spaced_values(values: np.ndarray, m: int) -> list[int]:
    """About ``m`` of the sorted ``values`` (e.g. recorded epochs) nearest to log-spaced points of
    their range, first and last included; all of them if there are at most ``m``."""
    values = np.asarray(values)
    if len(values) <= m:
        return [int(v) for v in values]
    targets = np.geomspace(1, values[-1] + 1, m) - 1
    idx = sorted({int(np.argmin(np.abs(values - t))) for t in targets} | {0, len(values) - 1})
    return [int(values[i]) for i in idx]
