"""Scoring of figure eureka_separability's claim from its statistics (its sidecar's ``stats``, or the copy kept in
``docs/stats``): Sec. 5.1's caveat that linear separation becomes very likely as the features' dimension grows."""
from __future__ import annotations

from .. import claims
from ..figures.eureka_separability import Params

VERY_LIKELY = 0.9  # "very likely": at least 9 in 10 random labelings separable
COVER_SE = 4.0  # the instrument's check: each share within 4 binomial standard errors (and one draw) of Cover's


def score_claims(stats: dict, params: Params) -> dict:
    return {"eureka.separability.likely_in_high_dimension": likely(stats)}


def likely(s: dict) -> dict:
    """The share of separable labelings at the largest dimension above :data:`VERY_LIKELY` (its Wilson interval) and
    above the share at the smallest (``rates_exceed``): the weakest of the two. Not run where the check cannot be
    trusted: where the rank-limited control becomes very likely too (it cannot tell dimension from rank), or where
    a share misses Cover's exact probability (the programme would then measure something else than separability)."""
    k, k0, n = s["separable"][-1], s["separable"][0], s["draws"]
    share, (lo, hi) = k / n, s["share_interval"][-1]
    dims = s["dims"]
    misses = [abs(p - c) / (COVER_SE * (c * (1 - c) / n) ** 0.5 + 1 / n) for p, c in zip(s["share"], s["cover"])]
    control = (f"separable at d = {dims[0]}: {k0} of {n}, at d = {dims[-1]}: {k} of {n} ({s['n']} points); Cover's exact "
               f"probability {s['cover'][0]:.3g} and {s['cover'][-1]:.3g}, every share within "
               f"{max(misses):.2f} of its tolerance ({COVER_SE:g} standard errors and one draw); rank "
               f"{s['control_rank']} zero-padded to d (a control): {s['control_separable'][0]} and "
               f"{s['control_separable'][-1]} of {n}")
    if s["control_share"][-1] >= VERY_LIKELY:
        verdict = claims.guard("not run", "the rank-limited control becomes very likely too: the check cannot tell")
    elif max(misses) > 1:
        verdict = claims.guard("not run", "the separability programme misses Cover's exact probability")
    else:
        verdict = claims.weakest(claims.above(share, lo, VERY_LIKELY), claims.rates_exceed(k, n, k0, n, of="draws"))
    return claims.score(share, (lo, hi), None, control, verdict)
