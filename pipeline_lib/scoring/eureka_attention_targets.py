"""Scoring of figure eureka_attention_targets's claims from its statistics (its sidecar's ``stats``, or the copy kept
in ``docs/stats``): where the CLS attention goes before and after Eureka-moments on the reasoning task."""
from __future__ import annotations

import numpy as np

from .. import claims
from ..figures.eureka_attention_targets import Params
from ..intervals import read_floats

ONLY = 0.9  # "attends only the targets": at least 9 tenths of the attention on the four tokens is on c and d


def score_claims(stats: dict, params: Params) -> dict:
    return {"eureka.attention_targets.reasoning_wrong_tokens_before_eureka": wrong_tokens(stats),
            "eureka.attention_targets.reasoning_no_eureka_attends_targets_only": targets_only(stats),
            "eureka.attention_targets.reasoning_eureka_attends_indicators": indicators_after(stats)}


def _arm(stats: dict) -> dict:
    return stats["arms"][stats["arm"]]


def wrong_tokens(stats: dict) -> dict:
    """The arm's mean target share before the Eureka-moment (or in the run's later half) above one half."""
    a = _arm(stats)
    m, lo, hi = claims.mean_interval(a["before"])
    start = read_floats(a["start"])
    return claims.score(m, (lo, hi), int(np.isfinite(read_floats(a["before"])).sum()),
                        f"arm {stats['arm']}: the targets' share over the later half of the time before each seed's "
                        f"Eureka-moment (or of the run); at the first record (a near-uniform start): "
                        f"{np.nanmean(start):.3f}; even attention on the four tokens gives 0.5",
                        claims.above(m, lo, 0.5))


def targets_only(stats: dict) -> dict:
    """Every seed of the arm without a Eureka-moment puts at least :data:`ONLY` of its attention on the targets
    over the run's later half."""
    a = _arm(stats)
    none = [b for b, e in zip(a["before"], a["eureka_epoch"]) if e is None and b is not None]
    k = sum(b >= ONLY for b in none)
    p, lo, hi = claims.rate(k, len(none)) if none else (float("nan"),) * 3
    return claims.score(p, (lo, hi), len(none),
                        f"arm {stats['arm']}, seeds without a Eureka-moment: targets' shares over the run's later half "
                        + (", ".join(f"{b:.3f}" for b in none) or "none") + f" (bar {ONLY:g})",
                        claims.share_holds(k, len(none)))


def indicators_after(stats: dict) -> dict:
    """Over every arm's seeds with a Eureka-moment: the indicators' share (1 - the targets') after it minus before
    it, against the same change in the seeds without one, cut at their arm's median Eureka epoch (the control: the
    drift that comes without a Eureka-moment): the first must exceed the second (``exceeds`` on t intervals)."""
    def change(windows: dict) -> np.ndarray:  # per seed; NaN where a window is missing (no moment, no record)
        return read_floats(windows["before"]) - read_floats(windows["after"])

    rise = np.concatenate([change(a) for a in stats["arms"].values()])  # "after" is None without a moment
    control = np.concatenate([change(a["control"]) for a in stats["arms"].values()])
    rise, control = rise[np.isfinite(rise)], control[np.isfinite(control)]
    m, lo, hi = claims.mean_interval(rise)
    cm, clo, chi = claims.mean_interval(control)
    return claims.score(m, (lo, hi), len(rise),
                        f"the indicators' share after minus before the Eureka-moment, over {len(rise)} seeds of "
                        f"{len(stats['arms'])} arms; the seeds without one, cut at their arm's median Eureka epoch (the "
                        f"control): {cm:.3f} [{clo:.3f}, {chi:.3f}] over {len(control)} seeds",
                        claims.exceeds(m, lo, cm, chi))
