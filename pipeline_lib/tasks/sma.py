"""Sparse modular addition (Easing Optimization Paths): y = sum of the first k tokens mod p."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr

from . import TaskData, split_values

NAME = "sparse_modular_addition"
MODELS = ["circuit", "transformer"]
CONFIG = """
required: [p, T, k, n_train, n_test]
properties:
  p: {description: "Modulus and number of token values.", type: integer, minimum: 2}
  T: {description: "Sequence length.", type: integer, minimum: 1}
  k: {description: "The label is the sum of the first k tokens mod p (1 <= k <= T).", type: integer, minimum: 1}
  n_train: {description: "Training sequences, sampled with replacement as in the paper.", type: integer, minimum: 1}
  n_test: {description: "Test sequences, disjoint from training whenever p^T allows.", type: integer, minimum: 1}
  draws:
    description: "Independent training sets of n_train sequences, one per seed: the i-th seed of a run trains
      on draw i (a run has at most this many seeds); one test set, disjoint from every draw whenever p^T
      allows. default 0: one training set that every seed shares (draws >= 1 are drawn from (seed, p, draw), so
      the draws of two moduli are independent; the shared set is drawn from seed alone)."
    type: integer
    minimum: 0
"""
SHAPE = {"n_train": "n_train", "n_test": "n_test", "tokens": "p", "T": "T", "classes": "p"}
CHECKS = [
    ["k", "k <= T", "k={k} exceeds the sequence length T={T}; allowed 1 <= k <= T"],
    ["n_test", "n_test <= p ** T", "{n_test} test sequences requested but only p^T = {p ** T} distinct sequences "
                                   "exist; allowed n_test <= {p ** T}"],
]
# the label, the unreduced sum of the first k tokens, the number of zeros among them (the paper's
# 'addition modulo k+1' sub-circuit) and each of the first k tokens
PROBE_TARGETS = "['label', 'sum_k', 'zeros_k'] + [f'token_{t}' for t in range(k)]"
# inputs a run may record its embedding site for (run key embed_inputs): the first test sequences, or every
# pattern of the first k tokens followed by zeros (the authors' probe inputs, see first_k_patterns)
EMBED_INPUTS = ["test", "first_k_patterns"]

# Spaces up to this size are enumerated exactly when drawing a disjoint test set.
_ENUMERATE_LIMIT = 1 << 22


@dataclass(frozen=True)
class Params:
    p: int
    T: int
    k: int
    n_train: int
    n_test: int
    seed: int = 0
    draws: int = 0


def generate(params: Params) -> xr.Dataset:
    if params.draws:
        return sparse_modular_addition_draws(params.p, params.T, params.k, params.n_train, params.n_test,
                                             params.draws, params.seed).to_dataset()
    return sparse_modular_addition(params.p, params.T, params.k, params.n_train, params.n_test, params.seed).to_dataset()


def probe_targets(ds: xr.Dataset, split: str, n: int) -> dict[str, np.ndarray]:
    return sma_targets(split_values(ds, "x", split, n), int(ds.attrs["task_k"]), int(ds.attrs["task_p"]))


def embed_inputs(ds: xr.Dataset, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) of the ``kind`` of EMBED_INPUTS other than 'test' (which the trainer takes itself)."""
    if kind != "first_k_patterns":
        raise ValueError(f"embed_inputs {kind!r}: allowed {EMBED_INPUTS}")
    x = first_k_patterns(int(ds.attrs["task_p"]), int(ds.attrs["task_k"]), int(ds.attrs["task_T"]))
    return x, sparse_sum_label(x, int(ds.attrs["task_k"]), int(ds.attrs["task_p"]))


def first_k_patterns(p: int, k: int, T: int) -> np.ndarray:
    """All p^k patterns of the first k tokens, each followed by T - k zeros, (p^k, T), in base-p order
    with the first token the most significant digit: the inputs whose z_A the authors draw for Fig. 4
    (facebookresearch/pal projects/visualization/notebooks/factorization.ipynb: the 2^5 binary patterns
    "+ [0]*7", and int2base(i, base=4, length=5) + [0]*7 for p = 4)."""
    codes = np.arange(p**k, dtype=np.int64)
    first = (codes[:, None] // p ** np.arange(k - 1, -1, -1, dtype=np.int64)) % p
    return np.concatenate([first, np.zeros((p**k, T - k), dtype=np.int64)], axis=1)


def sma_targets(x: np.ndarray, k: int, p: int) -> dict[str, np.ndarray]:
    """The probe targets of PROBE_TARGETS for sequences ``x``."""
    first = x[:, :k]
    targets = {"label": first.sum(1) % p, "sum_k": first.sum(1), "zeros_k": (first == 0).sum(1)}
    targets.update({f"token_{t}": first[:, t] for t in range(k)})
    return targets


def sparse_modular_addition(p: int, T: int, k: int, n_train: int, n_test: int, seed: int = 0) -> TaskData:
    """Sparse modular addition: ``x ~ U(Z_p^T)``, ``y = sum_{t<k} x_t mod p``.

    Training sequences are sampled with replacement, as in the paper's code. The test set is drawn
    from sequences absent from the training set whenever ``p^T`` leaves enough of them; otherwise
    the remainder is sampled freely and the number of test sequences that also occur in the
    training set is recorded as ``attrs['test_train_overlap']``.
    """
    _check_k(k, T)
    rng = np.random.default_rng(seed)  # the training set, then the test set, from one stream
    return _task_data([rng.integers(0, p, size=(n_train, T), dtype=np.int64)], rng, p, T, k, n_test, seed)


def _disjoint_test_set(rng: np.random.Generator, p: int, T: int, n_test: int, train_keys: set) -> np.ndarray:
    """``n_test`` sequences absent from ``train_keys`` whenever ``p^T`` leaves enough of them, else all the
    absent ones and the remainder sampled freely."""
    space = p**T
    if space <= _ENUMERATE_LIMIT:
        codes = np.arange(space, dtype=np.int64)
        digits = (codes[:, None] // p ** np.arange(T, dtype=np.int64)) % p  # (space, T)
        unseen = np.array([row.tobytes() not in train_keys for row in digits])
        pool = digits[unseen]
        if len(pool) >= n_test:
            return pool[rng.choice(len(pool), size=n_test, replace=False)]
        fill = digits[rng.choice(space, size=n_test - len(pool), replace=True)]  # not enough unseen sequences
        return np.concatenate([pool, fill])[rng.permutation(n_test)]
    rows: list[np.ndarray] = []  # rejection sampling: a random sequence is almost never a training one
    while len(rows) < n_test:
        cand = rng.integers(0, p, size=(n_test, T), dtype=np.int64)
        rows.extend(r for r in cand if r.tobytes() not in train_keys)
    return np.stack(rows[:n_test])


def sparse_modular_addition_draws(p: int, T: int, k: int, n_train: int, n_test: int, draws: int,
                                  seed: int = 0) -> TaskData:
    """Sparse modular addition with ``draws`` independent training sets (draw d sampled with replacement
    by the generator seeded with (seed, p, d)) and one test set (seeded with (seed, p, 0, 1)), disjoint
    from all of them whenever ``p^T`` allows. The training rows of all draws lie one after another;
    ``TaskData.draw`` says which draw each row belongs to."""
    _check_k(k, T)
    x_draws = [np.random.default_rng([seed, p, d]).integers(0, p, size=(n_train, T), dtype=np.int64)
               for d in range(draws)]
    return _task_data(x_draws, np.random.default_rng([seed, p, 0, 1]), p, T, k, n_test, seed, draws=draws)


def _check_k(k: int, T: int) -> None:
    if not 1 <= k <= T:
        raise ValueError(f"k must satisfy 1 <= k <= T, got k={k}, T={T}")


def _task_data(x_draws: list[np.ndarray], test_rng: np.random.Generator, p: int, T: int, k: int, n_test: int,
               seed: int, draws: int | None = None) -> TaskData:
    """The training rows of ``x_draws`` one after another, a test set drawn by ``test_rng`` away from all
    of them, labels and attrs (``draws``: record the draw of every row; None: one shared set)."""
    x_train = np.concatenate(x_draws)
    train_keys = {row.tobytes() for row in x_train}
    x_test = _disjoint_test_set(test_rng, p, T, n_test, train_keys)
    n_train = len(x_draws[0])
    attrs = {
        "task": "sparse_modular_addition", "p": p, "T": T, "k": k, "n_train": n_train, "n_test": n_test,
        "seed": seed, "n_classes": p, "test_train_overlap": int(sum(row.tobytes() in train_keys for row in x_test)),
        **({} if draws is None else {"draws": draws}),
        "n_unique_train": min(len({row.tobytes() for row in x}) for x in x_draws),
    }
    return TaskData(x_train, sparse_sum_label(x_train, k, p), x_test, sparse_sum_label(x_test, k, p), attrs,
                    draw=None if draws is None else np.repeat(np.arange(draws), n_train))


def sparse_sum_label(x: np.ndarray, k: int, p: int) -> np.ndarray:
    """The target of sparse modular addition: sum of the first k tokens mod p."""
    return x[:, :k].sum(axis=1) % p
