"""The two-step image task of 'Eureka-Moments in Transformers', from scikit-learn's 8x8 digits."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr

from . import TaskData, split_values, two_step_dataset

NAME = "eureka_digits"
MODELS = ["vit"]
CONFIG = """
required: [n_train, n_test]
properties:
  n_train: {description: "Composed training images.", type: integer, minimum: 1}
  n_test: {description: "Composed test images, from source images disjoint from the training ones.", type: integer, minimum: 1}
  test_images:
    description: "Fraction of the 1797 source digit images reserved for the test set."
    type: number
    exclusiveMinimum: 0
    exclusiveMaximum: 1
    default: 0.5
  positions:
    description: >
      fixed: the indicators at top-left and bottom-right, the targets at top-right and bottom-left
      (default fixed); random: the paper's No-position task, each row's indicator and target swapping
      places with probability 1/2, independently per row and image (the label still reads the top
      row's target when the indicators agree, else the bottom row's).
    type: string
    enum: [fixed, random]
"""
SHAPE = {"n_train": "n_train", "n_test": "n_test", "tokens": "None", "T": "256", "classes": "10"}
PROBE_TARGETS = "['step1']"


@dataclass(frozen=True)
class Params:
    n_train: int
    n_test: int
    test_images: float = 0.5
    seed: int = 0
    positions: str = "fixed"


def generate(params: Params) -> xr.Dataset:
    data = eureka_digits(params.n_train, params.n_test, params.seed, params.test_images, params.positions)
    latent = np.concatenate([data.latent_train, data.latent_test])
    return two_step_dataset(data, digits_step1(latent), latent[:, [1, 2]],  # candidates: TR and BL targets
                            "hidden first step: the two indicator digits have the same class",
                            "16x16 image flattened row-major, values 0..16")


def probe_targets(ds: xr.Dataset, split: str, n: int) -> dict[str, np.ndarray]:
    return {"step1": split_values(ds, "step1", split, n)}


def eureka_digits(n_train: int = 4000, n_test: int = 1000, seed: int = 0, test_images: float = 0.5,
                  positions: str = "fixed") -> TaskData:
    """Two-step image task of 'Eureka-Moments' from scikit-learn's bundled 8x8 digits (no download).

    A 16x16 image of four digits: top-left and bottom-right are indicators of class 1 or 2, top-right
    and bottom-left are targets of any class; the label is the top-right target's class if the two
    indicators have the same class, else the bottom-left's. The 1797 source images are split into
    train and test sources first, so no source image appears in both sets. ``x`` holds the images
    flattened to 256 pixels (values 0..16); ``latent_*`` hold the four digits' classes (TL, TR, BL,
    BR), from which :func:`digits_step1` gives the hidden first step. With ``positions="random"`` (the
    No-position task) each row's indicator and target swap places with probability 1/2 (drawn after
    everything else, so the fixed task's draws are unchanged); ``latent_*`` then hold the classes of the
    top indicator, top target, bottom target and bottom indicator, wherever they are drawn.
    """
    if positions not in ("fixed", "random"):
        raise ValueError(f"config key 'positions': {positions!r}; allowed: fixed, random")
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
        parts.append((img, label, np.stack([classes[tl], classes[tr], classes[bl], classes[br]], 1)))
    if positions == "random":
        parts = [(swap_halves(img, rng), label, latent) for img, label, latent in parts]
    parts = [(img.reshape(len(img), 256), label, latent) for img, label, latent in parts]
    (x_tr, y_tr, q_tr), (x_te, y_te, q_te) = parts
    attrs = {"task": "eureka_digits", "n_train": n_train, "n_test": n_test, "seed": seed, "n_classes": 10,
             **({"positions": positions} if positions != "fixed" else {}),
             "source_images_train": cut, "source_images_test": len(images) - cut,
             "latent": "classes of the TL, TR, BL, BR digits"}
    return TaskData(x_tr, y_tr, x_te, y_te, attrs, latent_train=q_tr, latent_test=q_te)


def swap_halves(images: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(n, H, W) images with each row of tiles (top half, bottom half) mirrored tile-wise (left and right
    halves exchanged) with probability 1/2, independently per half and image."""
    out = images.copy()
    h, w = images.shape[1] // 2, images.shape[2] // 2
    for rows in (slice(0, h), slice(h, None)):
        flip = rng.random(len(images)) < 0.5
        left = out[flip, rows, :w].copy()
        out[flip, rows, :w] = out[flip, rows, w:]
        out[flip, rows, w:] = left
    return out


def digits_step1(quadrant_classes: np.ndarray) -> np.ndarray:
    """The hidden first step of the digits task: 1 where the two indicators have the same class."""
    return (quadrant_classes[:, 0] == quadrant_classes[:, 3]).astype(np.int64)
