"""Scoring of figure cogo_dynamics's claims from its statistics (its sidecar's ``stats``, or the copy kept in
``docs/stats``): the ledger job and ``publish`` call :func:`score_claims`; the figure job does not."""
from __future__ import annotations

import numpy as np

from .. import claims
from ..figures.cogo_dynamics import LOSS_FALLEN, Params


def score_claims(stats: dict, params: Params) -> dict:
    seeds = stats.get("per_seed")
    if not seeds or not seeds["seed"]:
        return {"tian.cogo_dynamics.structure_after_loss": claims.not_run(f"{stats['run']}: no solved seed")}
    pairs = list(zip(seeds["missing_epoch"], seeds["loss_fall_epoch"]))
    k = sum(m is not None and f is not None and m >= f for m, f in pairs)
    n = len(pairs)
    p, lo, hi = claims.rate(k, n)
    fell = [f for _, f in pairs if f is not None]
    control = (f"loss at <= {LOSS_FALLEN:g} of epoch 0 by epoch {np.median(fell):g} (median of {len(fell)} of {n} "
               "seeds)" if fell else "the loss never fell to 10% of epoch 0") + (
        f"; share with q_k in {{0, 4, 6}} at epoch 0: {np.median(seeds['share_46_epoch0']):.2f}")
    return {"tian.cogo_dynamics.structure_after_loss": claims.score(p, (lo, hi), n, control,
                                                                   claims.share_holds(k, n))}
