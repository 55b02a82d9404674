"""Scoring of figure attention_entropy's claims from its statistics (its sidecar's ``stats``, or the copy kept in
``docs/stats``): the ledger job and ``publish`` call :func:`score_claims`; the figure job does not."""
from __future__ import annotations

import numpy as np

from .. import claims
from ..figures.attention_entropy import Params


def score_claims(stats: dict, params: Params) -> dict:
    """Its declared claims over the runs the figure draws (each run's per-seed first and last entropy)."""
    runs = {r: stats[r] for r in params.runs if isinstance(stats.get(r), dict)}
    if not runs:
        why = claims.not_run("no run with attention drawn")
        return {"tian.attention_entropy.sparser_every_run": why, "tian.attention_entropy.sparser_typical_run": why}
    drops = {r: claims.median_interval(np.subtract(s["initial_per_seed"], s["final_per_seed"]))
             for r, s in runs.items()}
    holds = [r for r, (m, lo, _) in drops.items() if claims.above(m, lo, 0.0) == "reproduced"]
    k, n = len(holds), len(runs)
    p, lo, hi = claims.rate(k, n)
    start = float(np.median([s["initial_median"] for s in runs.values()]))
    fails = [r for r in runs if r not in holds]
    control = (f"first-snapshot entropy (untrained, or the parent's weights for a finetune), median over {n} runs "
               f"{start:.3f}; "
               + (f"not holding: {', '.join(fails)}" if fails else "every run holds"))
    seeds = min(len(s["final_per_seed"]) for s in runs.values())
    m, mlo, mhi = claims.median_interval([d[0] for d in drops.values()])
    return {"tian.attention_entropy.sparser_every_run": claims.score(p, (lo, hi), seeds, control,
                                                                      claims.share_holds(k, n, of="runs")),
            "tian.attention_entropy.sparser_typical_run": claims.score(
                m, (mlo, mhi), seeds, f"no change 0; start entropy, median over {n} runs {start:.3f}",
                claims.above(m, mlo, 0.0))}
