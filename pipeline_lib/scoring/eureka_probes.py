"""Scoring of figure eureka_probes's claims from its statistics (its sidecar's ``stats``, or the copy kept in
``docs/stats``): the ledger job and ``publish`` call :func:`score_claims`; the figure job does not."""
from __future__ import annotations

from .. import claims
from ..figures.eureka_arms import EXPERIMENTS
from ..figures.eureka_probes import ARMS, SITE, Params


def score_claims(stats: dict, params: Params) -> dict:
    """Per experiment and arm: the step-1 probe of the final CLS representation at the last snapshot against
    the majority-class rate."""
    out = {}
    for exp in EXPERIMENTS:
        arms = stats.get(exp, {})
        for key, arm in ARMS.items():
            cid = f"eureka.probes.{exp}_{key}_step1_decodable"
            if SITE not in arms.get(arm, {}):
                out[cid] = claims.not_run(f"arm {arm!r} of experiment {exp!r} not probed at site {SITE!r}")
                continue
            acc = arms[arm][SITE]["last_per_seed"]
            m, lo, hi = claims.mean_interval(acc)
            chance = arms["chance"]
            out[cid] = claims.score(m, (lo, hi), sum(a is not None for a in acc), f"majority-class rate {chance:.3f}",
                                    claims.above(m, lo, chance))
    return out
