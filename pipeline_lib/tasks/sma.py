"""Sparse modular addition (Easing Optimization Paths): y = sum of the first k tokens mod p."""
from __future__ import annotations

import numpy as np

from . import TaskData

# Spaces up to this size are enumerated exactly when drawing a disjoint test set.
_ENUMERATE_LIMIT = 1 << 22


def sparse_modular_addition(p: int, T: int, k: int, n_train: int, n_test: int, seed: int = 0) -> TaskData:
    """Sparse modular addition: ``x ~ U(Z_p^T)``, ``y = sum_{t<k} x_t mod p``.

    Training sequences are sampled with replacement, as in the paper's code. The test set is drawn
    from sequences absent from the training set whenever ``p^T`` leaves enough of them; otherwise
    the remainder is sampled freely and the number of test sequences that also occur in the
    training set is recorded as ``attrs['test_train_overlap']``.
    """
    if not 1 <= k <= T:
        raise ValueError(f"k must satisfy 1 <= k <= T, got k={k}, T={T}")
    rng = np.random.default_rng(seed)
    x_train = rng.integers(0, p, size=(n_train, T), dtype=np.int64)
    train_keys = {row.tobytes() for row in x_train}
    space = p**T
    if space <= _ENUMERATE_LIMIT:
        codes = np.arange(space, dtype=np.int64)
        digits = (codes[:, None] // p ** np.arange(T, dtype=np.int64)) % p  # (space, T)
        unseen = np.array([row.tobytes() not in train_keys for row in digits])
        pool = digits[unseen]
        if len(pool) >= n_test:
            x_test = pool[rng.choice(len(pool), size=n_test, replace=False)]
        else:  # not enough unseen sequences: take them all, fill the rest from the whole space
            fill = digits[rng.choice(space, size=n_test - len(pool), replace=True)]
            x_test = np.concatenate([pool, fill])[rng.permutation(n_test)]
    else:  # rejection sampling: a random sequence is almost never a training one
        rows: list[np.ndarray] = []
        while len(rows) < n_test:
            cand = rng.integers(0, p, size=(n_test, T), dtype=np.int64)
            rows.extend(r for r in cand if r.tobytes() not in train_keys)
        x_test = np.stack(rows[:n_test])
    overlap = int(sum(row.tobytes() in train_keys for row in x_test))
    attrs = {
        "task": "sparse_modular_addition", "p": p, "T": T, "k": k, "n_train": n_train, "n_test": n_test,
        "seed": seed, "n_classes": p, "test_train_overlap": overlap,
        "n_unique_train": len(train_keys),
    }
    return TaskData(x_train, sparse_sum_label(x_train, k, p), x_test, sparse_sum_label(x_test, k, p), attrs)


def sparse_sum_label(x: np.ndarray, k: int, p: int) -> np.ndarray:
    """The target of sparse modular addition: sum of the first k tokens mod p."""
    return x[:, :k].sum(axis=1) % p
