"""Analysis ``fourier``: the Fourier structure of a modular-addition solution (Tian's CoGO analysis;
luckmatters ``cogo/analyze_util.py``, ``factorize_sol.py``, ``sol_distri.py`` read, not copied).

Per seed and weight snapshot of a ``quadratic_mlp`` run, with W_a, W_b (q x d) and W_c (d x q):

    A[k, j] = (1/d) sum_m W_a[j, m] e^{-2 pi i m k / d}     (B likewise from W_b)
    C[k, j] = (1/d) sum_m W_c[m, j] e^{+2 pi i m k / d}

* order of frequency k = 1..(d-1)/2: #{j : |A[k, j]| > threshold} (the talk's histogram);
* node j belongs to the frequency k <= (d-1)/2 maximising |A[k, j]| when that maximum exceeds the
  threshold; q_k = the nodes of k;
* a frequency with q_k = 4 or 6 is tested against the constructed solutions: the 3 x q_k matrix
  F = [A_k; B_k; C_k] is split, over the column permutation that makes the ratios of its C row
  most constant (and after flipping the sign of A and B in columns that need it), into two halves
  whose ratio should be constant per row; the error is the spread of those ratios (a Frobenius
  norm), "factorable" when it is at most ``tolerance`` sqrt(3 q_k). The two factors are then
  classified as order-2 or order-3 partial solutions, giving the solution types z_{nu=i} * z_xi,
  z_{nu=i} * z_{syn,ab}, z_nu * z_syn or other.

Accuracy gate: a seed whose final train or test accuracy is below 1 is not solved and not analysed
(its entries are NaN). The per-seed table columns (``table_*``) are those of the talk's table.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import xarray as xr

from ..plumbing.store import read_dataset

NAME = "fourier"
PER_RUN = True
CONFIG = """
description: "Fourier structure of modular-addition solutions (order per frequency, factorisation, solution type)."
properties:
  runs:
    description: "Runs of a quadratic_mlp model (modular addition)."
    type: array
    items: {type: string, x-ref: run, x-reads: [weights, trajectory], x-requires: {properties: {model: {properties: {kind: {const: quadratic_mlp}}}}}, x-requires-message: "is not a run of a quadratic_mlp model"}
    default: []
  threshold: {description: "Magnitude above which a node counts for a frequency (the talk's 0.05).", type: number, exclusiveMinimum: 0, default: 0.05}
  tolerance: {description: "Factorable when the error is at most tolerance * sqrt(3 q_k) (the talk's 0.1).", type: number, exclusiveMinimum: 0, default: 0.1}
"""
RESOURCES = {"runtime": 10, "mem_mb": 4000}

# the kinds classify() gives a factor (codes of the artifact's factor_kind_2 / factor_kind_3; -1: none)
FACTOR_KINDS = ("order-2-xi", "order-2-4c", "order-2-nu", "order-2-unknown", "order-2-unnormalized",
                "order-3-syn", "order-3-syn-ab", "order-3-unknown", "order-3-unnormalized-1",
                "order-3-unnormalized-2", "error")
# solution types of a factorable order-4/6 frequency (codes in the artifact; -1: not analysed)
TYPES = ("nu_i*xi", "nu_i*syn_ab", "nu*syn", "other")
TYPE_LABELS = {"nu_i*xi": "z_{nu=i} * z_xi", "nu_i*syn_ab": "z_{nu=i} * z_{syn,ab}", "nu*syn": "z_nu * z_syn",
               "other": "others"}
TABLE = ("pct_not_46", "nonfact_4", "nonfact_6", "err_4", "err_6", *(f"sol_{t}" for t in TYPES))


@dataclass(frozen=True)
class Params:
    runs: tuple[str, ...] = ()
    threshold: float = 0.05
    tolerance: float = 0.1


def fourier_coefficients(W_a: np.ndarray, W_b: np.ndarray, W_c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A, B, C (..., d frequencies, q nodes) of W_a, W_b (..., q, d) and W_c (..., d, q), by the
    explicit Fourier basis (the tests compare it with numpy's FFT)."""
    d = W_a.shape[-1]
    basis = np.exp(2j * np.pi * np.outer(np.arange(d), np.arange(d)) / d)  # [m, k] = e^{2 pi i m k / d}
    A = np.swapaxes(W_a @ basis.conj(), -1, -2) / d
    B = np.swapaxes(W_b @ basis.conj(), -1, -2) / d
    C = np.swapaxes(np.swapaxes(W_c, -1, -2) @ basis, -1, -2) / d
    return A, B, C


def orders(A: np.ndarray, threshold: float) -> np.ndarray:
    """Order of each frequency 1..(d-1)/2: nodes with |A[k, j]| > threshold. A (..., d, q)."""
    n = (A.shape[-2] - 1) // 2
    return (np.abs(A[..., 1:n + 1, :]) > threshold).sum(-1)


def node_frequencies(A: np.ndarray, threshold: float) -> np.ndarray:
    """The frequency 0..(d-1)/2 of each node (argmax |A[k, j]|), -1 where the maximum is at most
    the threshold. A (d, q) -> (q,)."""
    mag = np.abs(A[: (A.shape[0] - 1) // 2 + 1])
    best = mag.argmax(0)
    return np.where(mag.max(0) > threshold, best, -1)


def split_factors(F: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Factor F (3 x q, q even) into a 2-column and a q/2-column partial solution: returns
    (component1 (3 x 2), component2 (3 x q/2), error)."""
    q = F.shape[1]
    h = q // 2
    perms = np.array(list(itertools.permutations(range(q))))
    c = F[2][perms]  # (P, q)
    ratio = c[:, :h] / c[:, h:]
    errs = np.sqrt((np.abs(ratio - ratio.mean(1, keepdims=True)) ** 2).sum(1))
    # the first permutation (itertools order) of least spread, as the reference's strict '<' loop picks in
    # exact arithmetic: permutations of equal spread (e.g. reordering the pairs) must not be chosen by the
    # last bit, since the choice decides the sign flips below; NaN spreads (a zero C coefficient) are skipped
    best = np.nanmin(errs)
    F = F[:, perms[int(np.flatnonzero(errs <= best * (1 + 1e-9) + 1e-300)[0])]].copy()
    test = F[0, h:] / F[0, :h]
    flip = np.abs(test - test[0]) > 0.2
    F[:2, :h][:, flip] *= -1  # (-1, -1, 1) on a column leaves its contribution a b c unchanged
    sec1, sec2 = F[:, :h], F[:, h:]
    ratio = sec2 / sec1
    err = float(np.sqrt((np.abs(ratio - ratio.mean(1, keepdims=True)) ** 2).sum()))
    component1 = np.stack([np.ones(3, dtype=complex), ratio.mean(1)], 1)
    return component1, sec1 / sec1[:, :1], err


def classify(comp: np.ndarray, thres: float = 0.1) -> str:
    """The kind of a partial solution (3 x 2: order 2, 3 x 3: order 3), columns normalised by the
    cube root of their product."""
    A = comp / np.prod(comp, axis=0, keepdims=True) ** (1.0 / 3)
    one, i = 1.0 + 0j, 1j
    if A.shape[1] == 2:
        if abs(A[0, 1] * A[1, 1] * A[2, 1] - one) > thres:
            return "order-2-unnormalized"
        if abs(A[2, 1] - i) < thres or abs(A[2, 1] + i) < thres:
            return "order-2-xi"
        if abs(A[2, 1] - one) < thres and (abs(A[0, 1] - i) < thres or abs(A[0, 1] + i) < thres):
            return "order-2-4c"
        if abs(A[0, 1] + A[1, 1]) < thres:
            return "order-2-nu"
        return "order-2-unknown"
    if A.shape[1] == 3:
        w = np.exp(2j * np.pi / 3)
        for col in (1, 2):
            if abs(A[0, col] * A[1, col] * A[2, col] - one) > thres:
                return f"order-3-unnormalized-{col}"
        A = A.copy()
        for col in (1, 2):
            if A[0, col].real > 0:
                A[:2, col] *= -1
        if A[2, 1].imag < 0:
            A = A.conj()
        if (np.linalg.norm(A[:, 1] - w) < thres * math.sqrt(3)
                and np.linalg.norm(A[:, 2] - np.conj(w)) < thres * math.sqrt(3)):
            return "order-3-syn"
        if abs(A[2, 1] - w) < thres and abs(A[2, 2] - np.conj(w)) < thres:
            return "order-3-syn-ab"
        return "order-3-unknown"
    return "error"


def solution_type(kinds: tuple[str, str]) -> str:
    pair = tuple(sorted(kinds))
    if pair == ("order-2-4c", "order-2-xi"):
        return "nu_i*xi"
    if pair == ("order-2-nu", "order-3-syn"):
        return "nu*syn"
    if pair in (("order-2-4c", "order-3-syn-ab"), ("order-2-4c", "order-3-syn")):
        return "nu_i*syn_ab"
    return "other"


def factorise(F: np.ndarray, tolerance: float = 0.1) -> tuple[float, bool, str]:
    """(error, factorable, solution type) of an order-4/6 frequency F = [A_k; B_k; C_k] (3 x q)."""
    err, factorable, kind, _ = factorise_kinds(F, tolerance)
    return err, factorable, kind


def factorise_kinds(F: np.ndarray, tolerance: float = 0.1) -> tuple[float, bool, str, tuple[str, str]]:
    """:func:`factorise` and the two factors' kinds (:func:`classify`: the order-2 one first)."""
    c1, c2, err = split_factors(F)
    factorable = err <= tolerance * math.sqrt(F.size)
    kinds = (classify(c1), classify(c2))
    return err, factorable, solution_type(kinds) if factorable else "other", kinds


def analyse(A: np.ndarray, B: np.ndarray, C: np.ndarray, threshold: float, tolerance: float) -> dict:
    """One seed's snapshot: per frequency 1..n order, q_k, error, factorable, type code and the codes of its two
    factors' kinds (FACTOR_KINDS: the 2-column factor's, and the other's, of order 2 or 3)."""
    n = (A.shape[0] - 1) // 2
    node_k = node_frequencies(A, threshold)
    out = {"order": orders(A, threshold), "q_k": np.array([(node_k == k).sum() for k in range(1, n + 1)]),
           "fact_error": np.full(n, np.nan), "factorable": np.full(n, np.nan), "sol_type": np.full(n, -1),
           "factor_kind_2": np.full(n, -1), "factor_kind_3": np.full(n, -1)}
    for k in range(1, n + 1):
        nodes = np.flatnonzero(node_k == k)
        if len(nodes) not in (4, 6):
            continue
        err, ok, kind, kinds = factorise_kinds(np.stack([A[k, nodes], B[k, nodes], C[k, nodes]]), tolerance)
        out["fact_error"][k - 1], out["factorable"][k - 1] = err, float(ok)
        out["factor_kind_2"][k - 1], out["factor_kind_3"][k - 1] = (FACTOR_KINDS.index(x) for x in kinds)
        if ok:
            out["sol_type"][k - 1] = TYPES.index(kind)
    return out


def table_row(q_k: np.ndarray, fact_error: np.ndarray, factorable: np.ndarray, sol_type: np.ndarray) -> dict:
    """The talk's table columns for one seed (per frequency arrays 1..n): % of frequencies whose q_k is
    not 0, 4 or 6; % non-factorable among order-4 and order-6; mean error of the factorable ones
    (x 1e-2 as the talk prints it, so multiplied by 100 here); % of each solution type among the
    factorable ones. As in the reference, a percentage over no frequency is 0; a mean error over none is NaN."""
    n = len(q_k)
    o4, o6 = q_k == 4, q_k == 6
    fact = factorable == 1
    n_fact = int(fact.sum())
    mean = lambda v: float(np.mean(v)) if len(v) else float("nan")  # noqa: E731
    row = {"pct_not_46": 100 * float((~(o4 | o6 | (q_k == 0))).sum()) / n,
           "nonfact_4": 100 * float((o4 & ~fact).sum()) / max(int(o4.sum()), 1),
           "nonfact_6": 100 * float((o6 & ~fact).sum()) / max(int(o6.sum()), 1),
           "err_4": 100 * mean(fact_error[o4 & fact]), "err_6": 100 * mean(fact_error[o6 & fact])}
    for code, t in enumerate(TYPES):
        row[f"sol_{t}"] = 100 * float((sol_type[fact] == code).sum()) / max(n_fact, 1)
    return row


def compute(cfg, name: str, params: Params, paths, threads: int = 1) -> tuple[xr.Dataset, dict]:
    w = read_dataset(paths.weights(name), rule="train")
    traj = read_dataset(paths.trajectory(name), rule="train")
    Wa, Wb, Wc = (w[n].values.astype(np.float64) for n in ("W_a", "W_b", "W_c"))  # (snapshot, seed, ...)
    K, S, q, d = Wa.shape
    n = (d - 1) // 2
    tr_acc, te_acc = traj.train_acc.isel(epoch=-1).values, traj.test_acc.isel(epoch=-1).values
    solved = (tr_acc >= 1.0) & (te_acc >= 1.0)
    A, B, C = fourier_coefficients(Wa, Wb, Wc)  # (snapshot, seed, d, q)
    per = {k: np.full((S, K, n), np.nan) for k in ("order", "q_k", "fact_error", "factorable", "sol_type",
                                                   "factor_kind_2", "factor_kind_3")}
    table = {c: np.full(S, np.nan) for c in TABLE}
    node_k = np.full((S, q), -1)
    for s in np.flatnonzero(solved):
        for t in range(K):
            res = analyse(A[t, s], B[t, s], C[t, s], params.threshold, params.tolerance)
            for key, v in res.items():
                per[key][s, t] = v
        for c, v in table_row(*(per[k][s, -1] for k in ("q_k", "fact_error", "factorable", "sol_type"))).items():
            table[c][s] = v
        node_k[s] = node_frequencies(A[-1, s], params.threshold)
    dims = ("seed", "snapshot", "freq")
    data = {key: (dims, v) for key, v in per.items()}
    half = slice(0, n + 1)
    data.update({f"{m}_mag": (("seed", "freq0", "node"), np.abs(X[-1][:, half]).astype(np.float32))
                 for m, X in (("A", A), ("B", B), ("C", C))})
    data.update({"node_freq": (("seed", "node"), node_k), "solved": (("seed",), solved),
                 "final_train_acc": (("seed",), tr_acc), "final_test_acc": (("seed",), te_acc)})
    data.update({f"table_{c}": (("seed",), v) for c, v in table.items()})
    out = xr.Dataset(data, coords={"seed": w.seed.values, "snapshot": w.snapshot.values, "freq": np.arange(1, n + 1),
                                   "freq0": np.arange(n + 1), "node": np.arange(q)})
    out["order"].attrs["description"] = f"#nodes with |A[k, j]| > {params.threshold} (frequency k)"
    out["q_k"].attrs["description"] = "nodes whose largest |A[k, j]| over k <= (d-1)/2 is at k (and above the threshold)"
    out["fact_error"].attrs["description"] = "factorisation error of an order-4/6 frequency (q_k 4 or 6); NaN otherwise"
    out["factorable"].attrs["description"] = f"1 if the error is at most {params.tolerance} sqrt(3 q_k), 0 if not, NaN: not tested"
    out["sol_type"].attrs["description"] = "solution type code: " + ", ".join(f"{i}: {t}" for i, t in enumerate(TYPES)) + "; -1/NaN: none"
    for key, which in (("factor_kind_2", "the 2-column factor"), ("factor_kind_3", "the other factor (order 2 or 3)")):
        out[key].attrs["description"] = (f"kind of {which} of an order-4/6 frequency, factorable or not: "
                                         + ", ".join(f"{i}: {t}" for i, t in enumerate(FACTOR_KINDS)) + "; -1/NaN: none")
    out["A_mag"].attrs["description"] = "|A[k, j]| at the final snapshot, k = 0..(d-1)/2"
    out["solved"].attrs["description"] = "final train and test accuracy both 1 (else the seed is not analysed: NaN)"
    out["node_freq"].attrs["description"] = "frequency each node belongs to at the final snapshot (-1: none)"
    return out, {"run": name, "d": d, "q": q, "threshold": params.threshold, "tolerance": params.tolerance,
                 "types": ", ".join(TYPES), "n_solved": int(solved.sum()), "n_seeds": S}
