"""Scoring of figure eureka_qkv_gradients's claims from its statistics (its sidecar's ``stats``, or the copy kept in
``docs/stats``): the ledger job and ``publish`` call :func:`score_claims`; the figure job does not."""
from __future__ import annotations

import math

from .. import claims
from ..figures.eureka_arms import BASE, EXPERIMENTS, INTERVENTIONS
from ..figures.eureka_qkv_gradients import Params
from .eureka_table import counted_twice

# Sec. 5.1: "gradients for W_K and W_Q are 0.5-1 orders of magnitude smaller than those for W_V": each ratio to
# W_V's between 10^-1 and 10^-0.5, the printed range (a gap of two orders is not "0.5-1")
ORDERS = 10 ** -0.5
ORDERS_AT_MOST = 10 ** -1.0
# "Differences between the gradients are much smaller for ... ViT tau=1/3, ViT+HT and NormSoftmax"
ARMS = {k: INTERVENTIONS[k] for k in ("lowtemp", "ht", "normsoftmax")}
WEIGHTS = ("W_Q", "W_K")
# "much smaller": at most half Softmax's difference, in orders of magnitude (the project's reading of "much"; the
# paper prints no bar). The sentence is the paper's on its image task (digits); the reasoning task's claims are
# the project's own, that each arm raises the ratios (own.yaml)
MUCH_SMALLER = 0.5
SOURCE_TASK = "digits"


def ratios(arm: dict, weight: str = "W_Q") -> list[float]:
    """Per seed mean |grad weight| / mean |grad W_V| before the Eureka epoch (seeds without a window left out)."""
    w, v = arm[weight]["mean_before_eureka"], arm["W_V"]["mean_before_eureka"]
    return [a / b for a, b in zip(w, v) if a is not None and b]


def gaps(arm: dict, weight: str = "W_Q") -> list[float]:
    """Per seed the difference between ``weight``'s gradient and W_V's before the Eureka epoch in orders of
    magnitude: |log10(mean |grad weight| / mean |grad W_V|)|, 0 where they are equal, in either direction (a seed
    whose ``weight`` had no gradient at all: an infinite difference, never left out)."""
    return [abs(math.log10(r)) if r > 0 else math.inf for r in ratios(arm, weight)]


def _small(arm: dict) -> dict:
    """Both W_Q's and W_K's gradient between 10^-1 and 10^-0.5 of W_V's (the weakest of the four bounds); the
    estimate shown is the larger ratio."""
    own = {w: ratios(arm, w) for w in WEIGHTS}
    parts = {w: claims.mean_interval(own[w]) for w in WEIGHTS}
    verdict = claims.weakest(*(claims.below(m, hi, ORDERS) for m, _, hi in parts.values()),
                             *(claims.above(m, lo, ORDERS_AT_MOST) for m, lo, _ in parts.values()))
    binding = max(WEIGHTS, key=lambda w: parts[w][0])
    other = next(w for w in WEIGHTS if w != binding)
    return claims.score(parts[binding][0], parts[binding][1:], len(own[binding]),
                        f"{binding}/W_V shown (the larger); " + claims.fmt_interval(f"{other}/W_V", *parts[other])
                        + f"; bounds 10^-1 = {ORDERS_AT_MOST:.3f} and 10^-0.5 = {ORDERS:.3f}", verdict)


def _raises(arm: dict, base: dict) -> dict:
    """Both W_Q/W_V and W_K/W_V above Softmax's (the weakest of the two); W_Q/W_V shown."""
    own = {w: ratios(arm, w) for w in WEIGHTS}
    intervals = {w: claims.mean_interval(own[w]) for w in WEIGHTS}
    verdicts, texts = [], []
    for w in WEIGHTS:
        m0, lo0, hi0 = claims.mean_interval(ratios(base, w))
        verdicts.append(claims.exceeds(intervals[w][0], intervals[w][1], m0, hi0))
        texts.append(claims.fmt_interval(f"{BASE} {w}/W_V", m0, lo0, hi0))
    m, lo, hi = intervals["W_Q"]
    return claims.score(m, (lo, hi), len(own["W_Q"]), "; ".join(texts) + "; "
                        + claims.fmt_interval("this arm's W_K/W_V", *intervals["W_K"]), claims.weakest(*verdicts))


def _gap_interval(values: list[float]) -> tuple[float, float, float]:
    """The differences' mean and t interval; an infinite difference makes the mean infinite, without an interval."""
    return claims.mean_interval(values) if all(map(math.isfinite, values)) else (math.inf, math.nan, math.nan)


def _narrows(arm: dict, base: dict) -> dict:
    """Both W_Q's and W_K's difference to W_V's (:func:`gaps`) under :data:`MUCH_SMALLER` of Softmax's (the weakest
    of the two; ``claims.exceeds`` on the negated differences, as eureka_table's lowering rows); W_Q's shown."""
    own = {w: _gap_interval(gaps(arm, w)) for w in WEIGHTS}
    verdicts, texts = [], []
    for w in WEIGHTS:
        m0, lo0, hi0 = _gap_interval(gaps(base, w))
        m, lo, hi = own[w]
        verdicts.append(claims.exceeds(-m, -hi, -MUCH_SMALLER * m0, -MUCH_SMALLER * lo0))
        texts.append(claims.fmt_interval(f"{BASE} {w} difference", m0, lo0, hi0)
                     + f" (half: {MUCH_SMALLER * m0:.3g}; half its low end: {MUCH_SMALLER * lo0:.3g})")
    m, lo, hi = own["W_Q"]
    return claims.score(m, (lo, hi), len(gaps(arm, "W_Q")), "orders of magnitude; " + "; ".join(texts) + "; "
                        + claims.fmt_interval("this arm's W_K difference", *own["W_K"]), claims.weakest(*verdicts))


def _arm_claim(exp: str, key: str) -> str:
    """An intervention's claim: on the paper's task it narrows the gap between the Q/K and V gradients (Sec. 5.1's
    words), on the reasoning task (the project's rows) it raises the Q/K share."""
    return f"eureka.qkv_gradients.{exp}_{key}_" + ("narrows_qk_gap" if exp == SOURCE_TASK else "raises_qk_share")


def score_claims(stats: dict, params: Params) -> dict:
    """Softmax's W_Q/W_V and W_K/W_V gradient ratios before the Eureka-moment between 10^-1 and 10^-0.5; tau=1/3, HT and
    NormSoftmax bring both differences under half Softmax's on the paper's task, and raise both ratios above
    Softmax's on the reasoning task (the project's own claims)."""
    out = {}
    for exp in EXPERIMENTS:
        arms = {k: v for k, v in stats.get(exp, {}).items()
                if all("mean_before_eureka" in v.get(w, {}) for w in (*WEIGHTS, "W_V"))}
        if BASE not in arms:
            out[f"eureka.qkv_gradients.{exp}_softmax_qk_gradients_small"] = claims.not_run(
                f"arm {BASE!r} of experiment {exp!r} not drawn with its test accuracy")
            for key in ARMS:
                out[_arm_claim(exp, key)] = claims.not_run(f"arm {BASE!r} not drawn")
            continue
        out[f"eureka.qkv_gradients.{exp}_softmax_qk_gradients_small"] = _small(arms[BASE])
        for key, arm in ARMS.items():
            cid = _arm_claim(exp, key)
            rule = _narrows if exp == SOURCE_TASK else _raises
            out[cid] = ((counted_twice(arms, arm, exp) or rule(arms[arm], arms[BASE])) if arm in arms
                        else claims.not_run(f"arm {arm!r} of experiment {exp!r} not drawn"))
    return out
