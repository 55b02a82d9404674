"""Scoring of figure eureka_probes's claims from its statistics (its sidecar's ``stats``, or the copy kept in
``docs/stats``): the ledger job and ``publish`` call :func:`score_claims`; the figure job does not."""
from __future__ import annotations

from .. import claims
from ..figures.eureka_arms import BASE, EXPERIMENTS, INTERVENTIONS
from ..figures.eureka_probes import ARMS, SITE, Params

# Fig. 2's contrast: the paper's ViT without a Eureka-moment (a) against its ViT+HT with one (b)
CONTRAST = {"softmax_step1_not_decodable_without_eureka": (BASE, False),
            "ht_step1_decodable_with_eureka": (INTERVENTIONS["ht"], True)}


def score_claims(stats: dict, params: Params) -> dict:
    """Per experiment: the step-1 probe of the final CLS representation at the last snapshot, per arm against the
    majority-class rate, and Fig. 2's contrast between the seeds with and without a Eureka-moment."""
    out = {}
    for exp in EXPERIMENTS:
        arms = stats.get(exp, {})
        for key, arm in ARMS.items():
            if arm in (a for a, _ in CONTRAST.values()):
                continue
            cid = f"eureka.probes.{exp}_{key}_step1_decodable"
            if SITE not in arms.get(arm, {}):
                out[cid] = claims.not_run(f"arm {arm!r} of experiment {exp!r} not probed at site {SITE!r}")
                continue
            acc = arms[arm][SITE]["last_per_seed"]
            m, lo, hi = claims.mean_interval(acc)
            chance = arms["chance"]
            out[cid] = claims.score(m, (lo, hi), sum(a is not None for a in acc), f"majority-class rate {chance:.3f}",
                                    claims.above(m, lo, chance))
        for key, (arm, with_eureka) in CONTRAST.items():
            out[f"eureka.probes.{exp}_{key}"] = contrast(arms, arm, with_eureka, exp)
    return out


def contrast(arms: dict, arm: str, with_eureka: bool, exp: str) -> dict:
    """The step-1 probe accuracy of ``arm``'s seeds with (``with_eureka``) or without a Eureka-moment against the
    same arm's seeds in the other group: above them (with) or below them (without), t intervals disjoint
    (claims.exceeds); not run while either group has fewer than two seeds. One arm: the groups differ in the
    Eureka-moment, not also in the intervention (seeds of every arm pooled would mix NormSoftmax's with the
    Softmax's)."""
    if not arms:
        return claims.not_run(f"experiment {exp!r} not probed by this config")
    epochs = arms.get("eureka_epoch_per_seed")
    if epochs is None:
        return claims.not_run("the statistics predate per-seed Eureka epochs: rerun the figure")
    if SITE not in arms.get(arm, {}):
        return claims.not_run(f"arm {arm!r} of experiment {exp!r} not probed at site {SITE!r}")

    def split(label: str, has: bool) -> list[float]:
        acc = arms[label][SITE]["last_per_seed"]
        return [a for a, e in zip(acc, epochs[label]) if a is not None and (e is not None) == has]

    own = split(arm, with_eureka)
    others = split(arm, not with_eureka)
    group, other = ("with", "without") if with_eureka else ("without", "with")
    if len(own) < 2 or len(others) < 2:
        return claims.not_run(f"{len(own)} seed(s) of arm {arm!r} of experiment {exp!r} {group} a Eureka-moment and "
                              f"{len(others)} {other} one: no two intervals to compare")
    m, lo, hi = claims.mean_interval(own)
    m0, lo0, hi0 = claims.mean_interval(others)
    control = claims.fmt_interval(f"the arm's seeds {other} a Eureka-moment ({len(others)})", m0, lo0, hi0)
    verdict = claims.exceeds(m, lo, m0, hi0) if with_eureka else claims.exceeds(m0, lo0, m, hi)
    return claims.score(m, (lo, hi), len(own), control, verdict)
