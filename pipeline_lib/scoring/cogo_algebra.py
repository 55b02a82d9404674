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


# the partial solution z_syn is "not in R_*": a term of R_* that must vanish is at least this far from 0
APART = 1e-3


def score_composed(stats: dict) -> dict:
    """'Composing Global Optimizers from Partial Ones': z_syn in R_c and R_n but not R_*, z_nu in R_*, their product in
    all three; the largest membership residual under the tolerance and z_syn's R_* residual above :data:`APART`."""
    if "composed" not in stats:
        return claims.not_run("the statistics predate the composed solutions: rerun the figure")
    c, tol = stats["composed"], stats["tolerance"]
    inside = max(c["syn_in_max"], c["nu_in_max"], c["product_in_max"])
    return claims.score(inside, (inside, inside), None,
                        f"largest residual of the memberships: z_syn in R_c and R_n {c['syn_in_max']:.1e}, z_nu in R_* and R_n "
                        f"{c['nu_in_max']:.1e}, z_syn * z_nu in R_c, R_n and R_* {c['product_in_max']:.1e} (tolerance "
                        f"{tol:g}); z_syn's distance from R_* {c['syn_out_min']:.3g} (must exceed {APART:g}); z_nu's from "
                        f"R_c {c['nu_out_min']:.3g} (d = {stats['d']})",
                        claims.weakest(claims.below(inside, inside, tol),
                                       claims.above(c["syn_out_min"], c["syn_out_min"], APART)))


def score_f6(stats: dict) -> dict:
    """The order-6 optimizer z_F6 = 6^{-1/3} sum_k z_syn^(k) * z_nu^(k): in every set and at the MSE's global minimum 0
    (the model's own loss under the tolerance); each partial solution alone stated beside."""
    if "composed" not in stats:
        return claims.not_run("the statistics predate the composed solutions: rerun the figure")
    c, tol = stats["composed"], stats["tolerance"]
    loss = c["f6_loss_max"]
    return claims.score(loss, (loss, loss), None,
                        f"the model's centred MSE of z_F6 (nodes {c['f6_nodes']} for d = {stats['d']}); its largest set "
                        f"residual {c['f6_sets_max']:.1e}; tolerance {tol:g}; alone, scaled to r_kkk = 1: z_syn "
                        f"{c['syn_alone_loss_min']:.3f}, z_nu {c['nu_alone_loss_min']:.3f}",
                        claims.weakest(claims.below(loss, loss, tol), claims.below(c["f6_sets_max"], c["f6_sets_max"], tol)))


def score_claims(stats: dict, params: Params) -> dict:
    return {"tian.cogo_algebra.loss_in_r_terms": score_loss(stats),
            "tian.cogo_algebra.r_ring_homomorphism": score_homomorphism(stats),
            "tian.cogo_algebra.composed_partial_solutions": score_composed(stats),
            "tian.cogo_algebra.f6_global_optimizer": score_f6(stats)}
