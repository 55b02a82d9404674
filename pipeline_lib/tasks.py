"""Dataset generators (DESIGN section 7). Pure numpy; no files, no torch."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

# Spaces up to this size are enumerated exactly when drawing a disjoint test set.
_ENUMERATE_LIMIT = 1 << 22


@dataclass(frozen=True)
class TaskData:
    """Train/test split of a sequence-classification task; ``attrs`` go into the artifact."""

    x_train: np.ndarray  # (n_train, T) int64
    y_train: np.ndarray  # (n_train,) int64
    x_test: np.ndarray  # (n_test, T) int64
    y_test: np.ndarray  # (n_test,) int64
    attrs: dict = field(default_factory=dict)
    latent_train: np.ndarray | None = None  # hidden variables a task is built from (probe targets)
    latent_test: np.ndarray | None = None


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


def eureka_reasoning(n: int = 10, train_fraction: float = 0.3, seed: int = 0) -> TaskData:
    """Two-step reasoning task of 'Eureka-Moments in Transformers'.

    All (a, b, c, d) in {0..n}^4; step 1 is g(a, b) = [a and b have different parity], and the label
    is c if g else d (n + 1 classes). Only the label is supervised. A random ``train_fraction`` of the
    tuples is the training set, the rest the test set (disjoint by construction).
    """
    grid = np.stack(np.meshgrid(*[np.arange(n + 1)] * 4, indexing="ij"), -1).reshape(-1, 4).astype(np.int64)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(grid))
    n_train = int(round(train_fraction * len(grid)))
    tr, te = grid[perm[:n_train]], grid[perm[n_train:]]
    attrs = {"task": "eureka_reasoning", "n": n, "train_fraction": train_fraction, "seed": seed,
             "n_classes": n + 1, "T": 4, "p": n + 1}
    return TaskData(tr, eureka_label(tr), te, eureka_label(te), attrs)


def eureka_step1(x: np.ndarray) -> np.ndarray:
    """The hidden first step: 1 where a and b have different parity."""
    return (x[:, 0] % 2 != x[:, 1] % 2).astype(np.int64)


def eureka_label(x: np.ndarray) -> np.ndarray:
    return np.where(eureka_step1(x) == 1, x[:, 2], x[:, 3])


def chance_without_step1(x: np.ndarray, y: np.ndarray) -> float:
    """Best accuracy of a predictor that ignores step 1: always answer c, or always answer d."""
    return float(max(np.mean(y == x[:, 2]), np.mean(y == x[:, 3])))


def eureka_digits(n_train: int = 4000, n_test: int = 1000, seed: int = 0, test_images: float = 0.5) -> TaskData:
    """Two-step image task of 'Eureka-Moments' from scikit-learn's bundled 8x8 digits (no download).

    A 16x16 image of four digits: top-left and bottom-right are indicators of class 1 or 2, top-right
    and bottom-left are targets of any class; the label is the top-right target's class if the two
    indicators have the same class, else the bottom-left's. The 1797 source images are split into
    train and test sources first, so no source image appears in both sets. ``x`` holds the images
    flattened to 256 pixels (values 0..16); ``latent_*`` hold the four digits' classes (TL, TR, BL,
    BR), from which :func:`digits_step1` gives the hidden first step.
    """
    from sklearn.datasets import load_digits

    digits = load_digits()
    images, classes = digits.images.astype(np.int64), digits.target.astype(np.int64)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(images))
    cut = int(round(len(images) * (1 - test_images)))
    parts = []
    for idx, count in ((perm[:cut], n_train), (perm[cut:], n_test)):
        ind_pool = idx[np.isin(classes[idx], (1, 2))]
        tl, br = rng.choice(ind_pool, count), rng.choice(ind_pool, count)
        tr, bl = rng.choice(idx, count), rng.choice(idx, count)
        img = np.zeros((count, 16, 16), dtype=np.int64)
        img[:, :8, :8], img[:, :8, 8:], img[:, 8:, :8], img[:, 8:, 8:] = images[tl], images[tr], images[bl], images[br]
        same = classes[tl] == classes[br]
        label = np.where(same, classes[tr], classes[bl])
        parts.append((img.reshape(count, 256), label, np.stack([classes[tl], classes[tr], classes[bl], classes[br]], 1)))
    (x_tr, y_tr, q_tr), (x_te, y_te, q_te) = parts
    attrs = {"task": "eureka_digits", "n_train": n_train, "n_test": n_test, "seed": seed, "n_classes": 10,
             "source_images_train": cut, "source_images_test": len(images) - cut,
             "latent": "classes of the TL, TR, BL, BR digits"}
    return TaskData(x_tr, y_tr, x_te, y_te, attrs, latent_train=q_tr, latent_test=q_te)


def digits_step1(quadrant_classes: np.ndarray) -> np.ndarray:
    """The hidden first step of the digits task: 1 where the two indicators have the same class."""
    return (quadrant_classes[:, 0] == quadrant_classes[:, 3]).astype(np.int64)
