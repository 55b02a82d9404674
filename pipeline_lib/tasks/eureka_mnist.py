"""The two-step image task of 'Eureka-Moments in Transformers' as the paper composes it: MNIST
indicator digits and FashionMNIST targets in a 2 x 2 grid of 28 x 28 tiles (56 x 56 images).

The four source files of each set (MNIST, FashionMNIST) are the original gzipped IDX files, read from
``root`` (``<root>/mnist/`` and ``<root>/fashion_mnist/``) and downloaded there when missing and
``download`` is on. The IDX format is four lines of reading (a magic number, the sizes, the bytes), so
the task reads it itself rather than adding torchvision, whose wheel must match torch's version.

Differences from the reference code (``datasets.py`` of boschresearch/eurekaMoments, the
``spacial_decision_indicator_digit_1_2_fashion`` task), stated: grayscale tiles (the reference tints
the indicators blue or red at random, a colour that plays no part in the label), pixel values
quantised to 0..16 (the ViT's input scale, as the digits task's), and a fixed composed set of
``n_train`` images (the reference composes new images every epoch).
"""
from __future__ import annotations

import gzip
import os
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import xarray as xr

from . import TaskData, split_values, two_step_dataset
from .eureka_digits import digits_step1, swap_halves

NAME = "eureka_mnist"
MODELS = ["vit"]
CONFIG = """
required: [n_train, n_test]
properties:
  n_train: {description: "Composed training images (sources: the 60,000 training images of each set).", type: integer, minimum: 1}
  n_test: {description: "Composed test images (sources: the 10,000 test images of each set).", type: integer, minimum: 1}
  root: {description: "Folder of the IDX files (mnist/, fashion_mnist/), relative to the working directory.", type: string, default: data}
  download: {description: "Download missing IDX files into root (needs a network).", type: boolean, default: true}
  positions:
    description: "fixed: indicators top-left and bottom-right; random: the No-position task (as eureka_digits)."
    type: string
    enum: [fixed, random]
    default: fixed
"""
SHAPE = {"n_train": "n_train", "n_test": "n_test", "tokens": "None", "T": "3136", "classes": "10"}
PROBE_TARGETS = "['step1']"

TILE = 28
FILES = {"train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
         "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")}
MIRRORS = {"mnist": "https://ossci-datasets.s3.amazonaws.com/mnist/",
           "fashion_mnist": "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"}


@dataclass(frozen=True)
class Params:
    n_train: int
    n_test: int
    root: str = "data"
    download: bool = True
    positions: str = "fixed"
    seed: int = 0


def generate(params: Params) -> xr.Dataset:
    data = eureka_mnist(params.n_train, params.n_test, params.seed, params.root, params.download, params.positions)
    latent = np.concatenate([data.latent_train, data.latent_test])
    return two_step_dataset(data, digits_step1(latent), latent[:, [1, 2]],
                            "hidden first step: the two indicator digits have the same class",
                            "56x56 image flattened row-major, values 0..16")


def probe_targets(ds: xr.Dataset, split: str, n: int) -> dict[str, np.ndarray]:
    return {"step1": split_values(ds, "step1", split, n)}


def read_idx(path: Path) -> np.ndarray:
    """An IDX file (gzipped or not) as an array: magic 0x0000 0803 (images, (n, rows, cols)) or 0801
    (labels, (n,)); unsigned bytes only, as MNIST's and FashionMNIST's."""
    raw = (gzip.open if path.suffix == ".gz" else open)(path, "rb").read()
    if raw[:2] != b"\x00\x00" or raw[2] != 0x08 or raw[3] not in (1, 3):
        raise ValueError(f"{path} is not an IDX file of unsigned bytes (magic {raw[:4].hex()})")
    dims = [int.from_bytes(raw[4 + 4 * i: 8 + 4 * i], "big") for i in range(raw[3])]
    data = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * raw[3])
    if data.size != int(np.prod(dims)):
        raise ValueError(f"{path}: {data.size} bytes of data for sizes {dims}")
    return data.reshape(dims)


def load_set(root: str | Path, name: str, split: str, download: bool) -> tuple[np.ndarray, np.ndarray]:
    """Images (n, 28, 28) uint8 and labels (n,) of ``name`` (mnist or fashion_mnist), downloading the
    missing files into ``<root>/<name>/`` when ``download`` is on."""
    folder = Path(root) / name
    paths = [folder / f for f in FILES[split]]
    for path in paths:
        if path.exists():
            continue
        if not download:
            raise FileNotFoundError(f"{path} is missing and config key 'download' is false; place the IDX files "
                                    f"{', '.join(FILES[split])} in {folder} or set download: true")
        folder.mkdir(parents=True, exist_ok=True)
        url = MIRRORS[name] + path.name
        tmp = path.with_suffix(".part")
        try:
            urllib.request.urlretrieve(url, tmp)
        except OSError as exc:
            raise FileNotFoundError(f"could not download {url} ({exc}); place the file at {path} (config key "
                                    f"'root' names the folder) or run where the network is reachable") from exc
        os.replace(tmp, path)
    images, labels = (read_idx(p) for p in paths)
    if len(images) != len(labels):
        raise ValueError(f"{folder}: {len(images)} images but {len(labels)} labels in the {split} files")
    return images, labels.astype(np.int64)


def eureka_mnist(n_train: int, n_test: int, seed: int = 0, root: str | Path = "data", download: bool = True,
                 positions: str = "fixed") -> TaskData:
    """Composed images as :func:`~pipeline_lib.tasks.eureka_digits.eureka_digits` composes them, from
    MNIST digits 1 and 2 (indicators, top-left and bottom-right) and FashionMNIST items (targets, top-right
    and bottom-left): the label is the top-right item's class if the indicators agree, else the
    bottom-left's. Training images use the sets' training files, test images their test files."""
    if positions not in ("fixed", "random"):
        raise ValueError(f"config key 'positions': {positions!r}; allowed: fixed, random")
    rng = np.random.default_rng(seed)
    parts = []
    for split, count in (("train", n_train), ("test", n_test)):
        digits, digit_y = load_set(root, "mnist", split, download)
        items, item_y = load_set(root, "fashion_mnist", split, download)
        pool = np.flatnonzero(np.isin(digit_y, (1, 2)))
        tl, br = rng.choice(pool, count), rng.choice(pool, count)
        tr, bl = rng.choice(len(items), count), rng.choice(len(items), count)
        img = np.zeros((count, 2 * TILE, 2 * TILE), dtype=np.uint8)
        img[:, :TILE, :TILE], img[:, TILE:, TILE:] = digits[tl], digits[br]
        img[:, :TILE, TILE:], img[:, TILE:, :TILE] = items[tr], items[bl]
        latent = np.stack([digit_y[tl], item_y[tr], item_y[bl], digit_y[br]], 1)
        label = np.where(latent[:, 0] == latent[:, 3], latent[:, 1], latent[:, 2])
        parts.append((img, label, latent))
    if positions == "random":
        parts = [(swap_halves(img, rng), label, latent) for img, label, latent in parts]
    (x_tr, y_tr, q_tr), (x_te, y_te, q_te) = [(quantised(img).reshape(len(img), -1), label, latent)
                                              for img, label, latent in parts]
    attrs = {"task": "eureka_mnist", "n_train": n_train, "n_test": n_test, "seed": seed, "n_classes": 10,
             "positions": positions, "sources": "MNIST digits 1, 2 (indicators), FashionMNIST (targets)",
             "latent": "classes of the top indicator, top target, bottom target, bottom indicator"}
    return TaskData(x_tr, y_tr, x_te, y_te, attrs, latent_train=q_tr, latent_test=q_te)


def write_idx(path: Path, array: np.ndarray) -> None:
    """Write an unsigned-byte array as a gzipped IDX file (byte for byte the same on every call)."""
    array = np.ascontiguousarray(array, dtype=np.uint8)
    header = bytes([0, 0, 8, array.ndim]) + b"".join(int(n).to_bytes(4, "big") for n in array.shape)
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as fh:
        fh.write(header + array.tobytes())


def write_stand_ins(root: str | Path, n_train: int = 100, n_test: int = 50) -> None:
    """Small offline stand-ins for the two sets in their IDX layout under ``root`` (the test config's
    ``.test/data`` and the unit tests): scikit-learn's 8x8 digits scaled up 3x and padded to 28x28, the
    digit itself for MNIST and its transpose for FashionMNIST, labels the digit's class. Not real data:
    they exercise the loading and composing code without a network."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    big = np.pad(np.kron(digits.images, np.ones((3, 3))), ((0, 0), (2, 2), (2, 2))) * (255 / 16)
    images, labels = np.rint(big).astype(np.uint8), digits.target.astype(np.uint8)
    for name, pictures in (("mnist", images), ("fashion_mnist", images.transpose(0, 2, 1))):
        folder = Path(root) / name
        folder.mkdir(parents=True, exist_ok=True)
        for split, rows in (("train", slice(0, n_train)), ("test", slice(n_train, n_train + n_test))):
            write_idx(folder / FILES[split][0], pictures[rows])
            write_idx(folder / FILES[split][1], labels[rows])


def quantised(images: np.ndarray) -> np.ndarray:
    """uint8 pixels 0..255 -> 0..16 (the ViT's input scale: it divides by 16), rounded to the nearest level."""
    return np.rint(images.astype(np.float32) * (16 / 255)).astype(np.uint8)
