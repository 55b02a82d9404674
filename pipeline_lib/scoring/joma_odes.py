"""Scoring of figure joma_odes's claims from its statistics (its sidecar's ``stats``, or the copy kept in
``docs/stats``)."""
from __future__ import annotations

from .. import claims
from ..figures.joma_odes import Params

GAP = 1e-6  # "finite": the other components end within this of their limits, at the salient one's blow-up
NEAR = 0.1  # the "~" of Theorem 4: the ratios within 10% of the predicted, a convention (no margin printed)
TAKES_ALL = 0.99  # "takes all": the salient token's attention share at the linear path's end (a convention)
RISE = 1e-9  # "sparser": the linear path's entropy never rises by more than this (nats; the integration's noise)
REBOUND = 0.1  # "and denser": the nonlinear path's entropy recovers at least this share of its fall (a convention)


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


def score_takes_all(stats: dict) -> dict:
    """'Linear case ... Most salient feature takes all (Attention becomes sparser)': on the linear path, the
    salient token's share of softmax(v^2/2) at the end is at least :data:`TAKES_ALL` and the attention's entropy
    never rises by more than :data:`RISE` between two read points."""
    lin = stats["linear"]
    share, rise = lin["salient_share_end"], lin["entropy_max_rise"]
    verdict = claims.weakest(claims.above(share, share, TAKES_ALL), claims.below(rise, rise, RISE))
    return claims.score(share, (share, share), None,
                        f"entropy of softmax(v^2/2) {lin['entropy_start']:.3f} -> {lin['entropy_end']:.2e} nats, its "
                        f"largest rise between read points {rise:.1e} (tolerance {RISE:g}); Delta = {lin['delta']}",
                        verdict)


def score_sparser_then_denser(stats: dict) -> dict:
    """'Nonlinear case ... Most salient feature grows, and others catch up (Attention becomes sparser and denser)':
    the entropy of softmax(v^2/2) on the nonlinear path falls by more than :data:`RISE` and then recovers at least
    :data:`REBOUND` of its fall by the end; the linear path's rebound (a path that should only fall) beside it."""
    non, lin = stats["nonlinear"], stats["linear"]
    got = non["entropy_rebound"]
    low = non["entropy_min"]  # "sparser": a fall beyond the integration's noise (RISE), not a rounding-level dip
    verdict = claims.weakest(claims.below(low, low, non["entropy_start"] - RISE), claims.above(got, got, REBOUND))
    return claims.score(got, (got, got), None,
                        f"entropy {non['entropy_start']:.3f} -> lowest {non['entropy_min']:.3f} at t = "
                        f"{non['t_entropy_min']:.3g} -> {non['entropy_end']:.3f} nats at t = {non['t_end']:.3g} (every "
                        f"component then within {non['delta_max_end']:.1e} of its mu: the others caught up); mu = "
                        f"{non['mu']}; the linear path's rebound (control): {lin['entropy_rebound']:.3g}", verdict)


def score_claims(stats: dict, params: Params) -> dict:
    return {"tian.joma_odes.linear_only_salient_diverges": score_linear(stats),
            "tian.joma_odes.linear_invariant_as_printed": score_printed_invariant(stats),
            "tian.joma_odes.nonlinear_rate_ratio": score_rates(stats),
            "tian.joma_odes.linear_salient_takes_all": score_takes_all(stats),
            "tian.joma_odes.nonlinear_sparser_then_denser": score_sparser_then_denser(stats)}
