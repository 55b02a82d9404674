"""Scoring of figure cogo_algebra's claims from its statistics (its sidecar's ``stats``, or the copy kept in
``docs/stats``): identities hold when their largest relative error over the random networks is under the
figure's tolerance."""
from __future__ import annotations

from .. import claims
from ..figures.cogo_algebra import Params


def score_loss(stats: dict) -> dict:
    worst, tol = stats["loss_zero_mean_max"], stats["tolerance"]
    return claims.score(worst, (worst, worst), None,
                        f"tolerance {tol:g}; with the embedding rows' means kept the formula misses by at least "
                        f"{stats['loss_with_mean_min']:.2e} (d = {stats['d']}, {stats['networks']} networks each)",
                        claims.below(worst, worst, tol))


def score_homomorphism(stats: dict) -> dict:
    worst, tol = max(stats["add_max"], stats["mul_max"], stats["one_max"]), stats["tolerance"]
    return claims.score(worst, (worst, worst), None,
                        f"tolerance {tol:g}; largest errors r(z1 + z2) {stats['add_max']:.1e}, r(z1 * z2) "
                        f"{stats['mul_max']:.1e}, r(1) {stats['one_max']:.1e}; the product on the token weights misses "
                        f"by at least {stats['token_kronecker_min']:.2f} (d = {stats['d']}, {stats['networks']} pairs each)",
                        claims.below(worst, worst, tol))


def score_claims(stats: dict, params: Params) -> dict:
    return {"tian.cogo_algebra.loss_in_r_terms": score_loss(stats),
            "tian.cogo_algebra.r_ring_homomorphism": score_homomorphism(stats)}
