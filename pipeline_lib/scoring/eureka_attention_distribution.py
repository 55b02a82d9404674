"""Scoring of figure eureka_attention_distribution's claims from its statistics (its sidecar's ``stats``, or the copy kept in
``docs/stats``): the ledger job and ``publish`` call :func:`score_claims`; the figure job does not."""
from __future__ import annotations

from .. import claims
from ..figures.eureka_arms import BASE, EXPERIMENTS
from ..figures.eureka_attention_distribution import ARMS, Params


def score_claims(stats: dict, params: Params) -> dict:
    """At the last drawn epoch: most Softmax weights below 0.05; each intervention's share above 0.5 higher
    than Softmax's."""
    out = {}
    for exp in EXPERIMENTS:
        arms = stats.get(exp, {})
        if BASE not in arms:
            out[f"eureka.attention_distribution.{exp}_softmax_mostly_tiny"] = claims.not_run(
                f"arm {BASE!r} of experiment {exp!r} not drawn")
            for key in ARMS:
                out[f"eureka.attention_distribution.{exp}_{key}_more_high_weights"] = claims.not_run(
                    f"arm {BASE!r} of experiment {exp!r} not drawn")
            continue
        first, last = _ends(arms[BASE])
        m, lo, hi = claims.mean_interval(last["below_0.05_per_seed"])
        init = claims.mean_interval(first["below_0.05_per_seed"])
        control = claims.fmt_interval("Softmax share below 0.05 at the first recorded epoch", *init)
        out[f"eureka.attention_distribution.{exp}_softmax_mostly_tiny"] = claims.score(
            m, (lo, hi), len(last["below_0.05_per_seed"]), control, claims.above(m, lo, 0.5))
        m0, lo0, hi0 = claims.mean_interval(last["above_0.5_per_seed"])
        for key, arm in ARMS.items():
            cid = f"eureka.attention_distribution.{exp}_{key}_more_high_weights"
            if arm not in arms:
                out[cid] = claims.not_run(f"arm {arm!r} of experiment {exp!r} not drawn")
                continue
            high = _ends(arms[arm])[1]["above_0.5_per_seed"]
            m, lo, hi = claims.mean_interval(high)
            control = claims.fmt_interval(f"{BASE} share above 0.5", m0, lo0, hi0)
            out[cid] = claims.score(m, (lo, hi), len(high), control, claims.exceeds(m, lo, m0, hi0))
    return out


def _ends(arm: dict) -> tuple[dict, dict]:
    """The numbers of the first and the last drawn epoch of one arm."""
    epochs = sorted(arm, key=int)
    return arm[epochs[0]], arm[epochs[-1]]
