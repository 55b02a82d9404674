"""Scoring of figure fig7_param_tsne's claims from its statistics (its sidecar's ``stats``, or the copy kept in
``docs/stats``): the ledger job and ``publish`` call :func:`score_claims`; the figure job does not."""
from __future__ import annotations

from .. import claims
from ..figures.fig7_param_tsne import Params


def score_claims(stats: dict, params: Params) -> dict:
    d = stats.get("distances")
    if d is None:
        return {"circuits.fig7.arms_end_apart": claims.not_run("the param_embed entry has a single run")}
    cross = d["end_cross_arm_per_seed"]
    if len(cross) < 2:
        return {"circuits.fig7.arms_end_apart": claims.not_run("a single seed: no second seed of an arm to compare")}
    m, lo, hi = claims.mean_interval(cross)
    verdicts, texts = [], []
    for arm, same in d["end_same_arm_per_seed"].items():
        m0, lo0, hi0 = claims.mean_interval(same)
        verdicts.append(claims.exceeds(m, lo, m0, hi0))
        texts.append(claims.fmt_interval(f"two seeds of {arm}", m0, lo0, hi0))
    texts.append(f"start distance between the arms at most {max(d['start_cross_arm_per_seed']):.3g}")
    return {"circuits.fig7.arms_end_apart": claims.score(m, (lo, hi), len(cross), "; ".join(texts),
                                                         claims.weakest(*verdicts))}
