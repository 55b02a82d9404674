"""Scoring of figure joma_odes's claims from its statistics (its sidecar's ``stats``, or the copy kept in
``docs/stats``)."""
from __future__ import annotations

from .. import claims
from ..figures.joma_odes import Params

GAP = 1e-6  # "finite": the other components end within this of their limits, at the salient one's blow-up
NEAR = 0.1  # the "~" of Theorem 4: the ratios within 10% of the predicted, a convention (no margin printed)


def score_linear(stats: dict) -> dict:
    lin = stats["linear"]
    gap, late = lin["others_max_gap"], abs(lin["t_end"] - lin["t_blowup"]) / lin["t_blowup"]
    verdict = claims.weakest(claims.below(gap, gap, GAP), claims.below(late, late, GAP))
    return claims.score(gap, (gap, gap), None,
                        f"the salient component (Delta {max(lin['delta']):g}) reaches v = {lin['v_salient']:g} at "
                        f"t = {lin['t_end']:.6f}, its blow-up sqrt(pi/2)/Delta = {lin['t_blowup']:.6f} (relative gap "
                        f"{late:.1e}); the others end at most at |v| = {lin['others_max_end']:.3f}, within "
                        f"{lin['others_max_gap_to_limit']:.1e} of their finite limits; tolerance {GAP:g}",
                        verdict)


def score_printed_invariant(stats: dict) -> dict:
    """Theorem 2's invariant as printed, erf(v_l(t)/2)/Delta_lm equal over the components l, on the printed ODE's
    solution at the salient component's end: its relative spread under :data:`GAP`; the sqrt(2) form beside."""
    lin = stats["linear"]
    spread = lin["printed_invariant_spread"]
    return claims.score(spread, (spread, spread), None,
                        f"relative spread (largest minus smallest over their mean) of erf(v_l/2)/Delta_l over the "
                        f"components Delta = {lin['delta']} at t = {lin['t_end']:.6f}; of erf(v_l/sqrt 2)/Delta_l, "
                        f"which the printed ODE conserves: {lin['sqrt2_invariant_spread']:.1e}; tolerance {GAP:g}",
                        claims.below(spread, spread, GAP))


def score_rates(stats: dict) -> dict:
    non = stats["nonlinear"]
    end, half = non["deviation_end"], non["deviation_half"]
    verdict = claims.weakest(claims.below(end, end, NEAR), claims.below(end, end, half))
    return claims.score(end, (end, end), None,
                        f"mu = {non['mu']}; at half the time the deviation was {half:.3f} (it must shrink: an "
                        f"asymptotic ~); predicted ratios {[round(x, 3) for x in non['predicted']]}, measured "
                        f"{[round(x, 3) for x in non['ratio_end']]}", verdict)


def score_claims(stats: dict, params: Params) -> dict:
    return {"tian.joma_odes.linear_only_salient_diverges": score_linear(stats),
            "tian.joma_odes.linear_invariant_as_printed": score_printed_invariant(stats),
            "tian.joma_odes.nonlinear_rate_ratio": score_rates(stats)}
