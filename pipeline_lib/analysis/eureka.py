"""Eureka-moment statistics ('Eureka-Moments in Transformers', Table 1): per seed the first epoch
whose test accuracy exceeds a threshold; per arm the share of seeds that have one (the Eureka-ratio,
with a 95% Wilson interval), their mean Eureka epoch and their accuracy."""
from __future__ import annotations

import numpy as np
from scipy.stats import binomtest


def eureka_epochs(test_acc: np.ndarray, epochs: np.ndarray, threshold: float) -> np.ndarray:
    """First epoch at which test accuracy exceeds ``threshold``, per seed (rows); NaN if never."""
    above = np.nan_to_num(np.asarray(test_acc, dtype=float), nan=-np.inf) > threshold
    first = np.argmax(above, axis=1)
    return np.where(above.any(axis=1), np.asarray(epochs, dtype=float)[first], np.nan)


def ratio_interval(successes: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion."""
    ci = binomtest(successes, n).proportion_ci(confidence_level=level, method="wilson")
    return float(ci.low), float(ci.high)


def eureka_summary(test_acc: np.ndarray, epochs: np.ndarray, threshold: float) -> dict:
    """Per-seed Eureka epochs and final accuracy, and the arm's Table-1 numbers. ``test_acc`` is
    (seeds, epochs); a seed whose last accuracy is NaN (diverged) counts as one without Eureka."""
    ep = eureka_epochs(test_acc, epochs, threshold)
    final = np.asarray(test_acc, dtype=float)[:, -1]
    hit = np.isfinite(ep)
    n, k = len(ep), int(hit.sum())
    lo, hi = ratio_interval(k, n)
    return {
        "eureka_epoch": ep, "final_test_acc": final,
        "n_seeds": n, "n_eureka": k, "eureka_ratio": k / n, "ratio_ci_low": lo, "ratio_ci_high": hi,
        "mean_eureka_epoch": float(np.mean(ep[hit])) if k else float("nan"),
        "acc_after_eureka": float(np.nanmean(final[hit])) if k else float("nan"),
        "mean_final_test_acc": float(np.nanmean(final)) if np.isfinite(final).any() else float("nan"),
    }
