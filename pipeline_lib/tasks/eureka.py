"""Two-step tasks of 'Eureka-Moments in Transformers' (Hoffmann et al.): reasoning and digits."""
from __future__ import annotations

import numpy as np

from . import TaskData


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
