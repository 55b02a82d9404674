"""Linear probes: how linearly decodable is a target from a recorded site (logistic regression)."""
from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler


def probe_accuracy(train_x: np.ndarray, train_y: np.ndarray, test_x: np.ndarray, test_y: np.ndarray,
                   max_iter: int = 300) -> float:
    """Held-out accuracy of a standardised multinomial logistic regression (NaN if one class)."""
    if len(np.unique(train_y)) < 2 or not (np.isfinite(train_x).all() and np.isfinite(test_x).all()):
        return float("nan")
    clf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=max_iter))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(train_x, train_y)
    return float(clf.score(test_x, test_y))


def chance_accuracy(train_y: np.ndarray, test_y: np.ndarray) -> float:
    """Accuracy of always predicting the most frequent training class."""
    values, counts = np.unique(train_y, return_counts=True)
    return float(np.mean(test_y == values[np.argmax(counts)]))


def sma_targets(x: np.ndarray, k: int, p: int) -> dict[str, np.ndarray]:
    """Probe targets of sparse modular addition: the label, the sum of the first k tokens (not
    reduced), the number of zeros among them (the paper's 'addition modulo k+1' sub-circuit), and
    each of the first k tokens."""
    first = x[:, :k]
    targets = {"label": first.sum(1) % p, "sum_k": first.sum(1), "zeros_k": (first == 0).sum(1)}
    targets.update({f"token_{t}": first[:, t] for t in range(k)})
    return targets
