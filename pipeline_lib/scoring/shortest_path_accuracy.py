"""Scoring of figure shortest_path_accuracy's claims from its statistics (its sidecar's ``stats``, or the copy kept in
``docs/stats``): the ledger job and ``publish`` call :func:`score_claims`; the figure job does not."""
from __future__ import annotations

from .. import claims
from ..figures.shortest_path_accuracy import NEAR_PERFECT, Params


def score_claims(stats: dict, params: Params) -> dict:
    runs = stats["runs"]
    acc = [v for s in runs.values() for v in s["path_acc_final"]]
    if not acc:
        return {"tian.shortest_path_accuracy.near_perfect": claims.not_run("no run drawn")}
    m, lo, hi = claims.median_interval(acc)
    train = ", ".join(f"{r} {s['train_path_acc_median']:.3f}" for r, s in runs.items())
    return {"tian.shortest_path_accuracy.near_perfect": claims.score(
        m, (lo, hi), len(acc), f"threshold {NEAR_PERFECT}; training graphs (median per run): {train}",
        claims.above(m, lo, NEAR_PERFECT))}
