"""Scoring of figure eureka_softmax_temperature's claims from its statistics (its sidecar's ``stats``, or the copy
kept in ``docs/stats``): statements of Sec. 3 checked on random scores, each a share of rows that must hold for
every row, or a Monte-Carlo estimate that must lie within its own sampling error of the stated value."""
from __future__ import annotations

import math

from .. import claims
from ..figures.eureka_softmax_temperature import Params

SE_BOUND = 4.0  # a Monte-Carlo estimate agrees when within 4 of its standard errors (about 1 in 16,000 by chance)
NEAR_ZERO = 0.05  # "close to 0": an entry of the Softmax's Jacobian at most 1/20 of the largest any entry can take
VANISHING_SLOPE = 0.5  # "vanishing": the gradient share falls at least as fast as sqrt(s) as the attention turns uniform


def score_claims(stats: dict, params: Params) -> dict:
    return {"eureka.softmax_temperature.low_tau_low_entropy": _entropy(stats),
            "eureka.softmax_temperature.qk_std_is_sqrt_dk": qk_std(stats),
            "eureka.softmax_temperature.tau_against_vanishing_gradients": _gradients(stats),
            "eureka.softmax_temperature.normsoftmax_amplifies_low_std": _normsoftmax(stats),
            "eureka.softmax_temperature.collapse_zeroes_jacobian": collapse_jacobian(stats),
            "eureka.softmax_temperature.uniform_vanishes_qk_gradients": uniform_qk(stats)}


def _entropy(s: dict) -> dict:
    """Every row's entropy rises with tau (share_holds over rows); a constant row's must not, else the check cannot
    fail (not run)."""
    k, n = s["entropy_rises"], s["rows"]
    p, lo, hi = claims.rate(k, n)
    verdict = (claims.guard("not run", "a constant row's entropy rises too: the check cannot fail")
               if s["constant_rises"] else claims.share_holds(k, n, of="rows"))
    return claims.score(p, (lo, hi), None, "rows whose entropy rises at every step of tau = "
                        + ", ".join(f"{t:.3g}" for t in s["taus"]) + f" ({s['keys']} keys); a constant row's entropy "
                        + ("rises too (the check cannot fail)" if s["constant_rises"] else "stays ln n (it does not rise)"),
                        verdict)


def qk_std_tolerance(d: int, pairs: int) -> float:
    """:data:`SE_BOUND` standard errors of a sample standard deviation over its true value, for q . k of d products
    of independent standard normals (kurtosis 3 + 6/d): sqrt((kurtosis - 1) / (4 n))."""
    return SE_BOUND * math.sqrt((2 + 6 / d) / (4 * pairs))


def qk_std(s: dict) -> dict:
    """std(q . k)/sqrt(d_k) within its Monte-Carlo tolerance of 1 at every head width; the worst width's miss over
    its tolerance is the statistic (reproduced below 1)."""
    misses = {d: abs(r - 1) / qk_std_tolerance(int(d), s["qk_pairs"]) for d, r in s["qk_std"].items()}
    worst = max(misses.values())
    # the control: entries of variance 2 (ratio sqrt 2) must miss at every width, or the check cannot see a wrong one
    seen = all(abs(r - 1) > qk_std_tolerance(int(d), s["qk_pairs"]) for d, r in s["qk_std_variance_2"].items())
    control = ("std(q . k)/sqrt(d_k) " + ", ".join(f"d_k = {d}: {r:.4f}" for d, r in s["qk_std"].items())
               + f" over {s['qk_pairs']} pairs each (tolerance {SE_BOUND:g} standard errors); with variance 2 "
               + ", ".join(f"{r:.3f}" for r in s["qk_std_variance_2"].values()))
    verdict = (claims.below(worst, worst, 1.0) if seen else
               claims.guard("not run", "entries of variance 2 lie within the tolerance too: the check cannot fail"))
    return claims.score(worst, (worst, worst), None, control, verdict)


def _gradients(s: dict) -> dict:
    lo_t, hi_t = f"{s['taus'][0]:.3g}", f"{s['taus'][-1]:.3g}"
    j = s["jacobian_median"]
    collapsed = claims.share_holds(s["collapsed_lifted"], s["collapsed"], of="rows")
    uniform = claims.share_holds(s["uniform_lifted"], s["rows"], of="rows")
    k, n = s["collapsed_lifted"] + s["uniform_lifted"], s["collapsed"] + s["rows"]
    p, lo, hi = claims.rate(k, n)
    return claims.score(p, (lo, hi), None,
                        f"a larger tau ({hi_t} against {lo_t}) lifts the Softmax's Jacobian in {s['collapsed_lifted']} of "
                        f"{s['collapsed']} collapsed rows (largest weight >= 0.99 at tau {lo_t}; median norm "
                        f"{j['jac_collapsed'][lo_t]:.2g} -> {j['jac_collapsed'][hi_t]:.2g}); a smaller tau lifts it in "
                        f"{s['uniform_lifted']} of {s['rows']} nearly uniform rows (median {j['jac_uniform'][hi_t]:.2g} -> "
                        f"{j['jac_uniform'][lo_t]:.2g})", claims.weakest(collapsed, uniform))


def _normsoftmax(s: dict) -> dict:
    """Every row under the cap amplified; no row above it (where Eq. 2 makes NormSoftmax the Softmax), else the
    check counts what is not the cap's doing: the weakest of the two shares."""
    k, n, wrong = s["norm_amplifies_low"], s["rows"], s["norm_amplifies_high"]
    p, lo, hi = claims.rate(k, n)
    return claims.score(p, (lo, hi), None,
                        f"rows of standard deviation under the cap sqrt(d_k) = {s['cap']:g} whose weights NormSoftmax "
                        f"spreads wider than the Softmax at tau = sqrt(d_k); at or above the cap (a control, where the "
                        f"two are one function, none may be): {wrong} of {n}",
                        claims.weakest(claims.share_holds(k, n, of="rows"), claims.share_holds(n - wrong, n, of="rows")))


def collapse_jacobian(s: dict) -> dict:
    """The largest entry of the Softmax's Jacobian over every collapsed row (as a share of the largest an entry can
    take) below :data:`NEAR_ZERO`; the nearly uniform rows' smallest must not be (else the check cannot tell: with
    more than about 80 keys a uniform row's entries fall under the bar too)."""
    if "collapse_level" not in s:
        return claims.not_run("statistics kept before this check existed: rebuild the figure")
    top, uniform = s["collapsed_top"], s["uniform_top"]
    if claims.missing(top):
        return claims.not_run(f"no row collapsed (largest weight >= {s['collapse_level']:g})")
    verdict = (claims.below(top, top, NEAR_ZERO) if uniform > NEAR_ZERO else
               claims.guard("not run", "nearly uniform rows are under the bar too: the check cannot tell"))
    return claims.score(top, (top, top), None,
                        f"the largest |entry| of diag(p) - p p^T over {s['collapsed']} collapsed rows (largest weight "
                        f">= {s['collapse_level']:g}; entropy at most {s['collapsed_entropy_max']:.3g} nats of ln "
                        f"{s['keys']} = {math.log(s['keys']):.3g}) as a share of its top {s['jacobian_top_bound']:g}: "
                        f"{top:.3g}, bar {NEAR_ZERO:g}; nearly uniform rows (a control): at least {uniform:.3g}", verdict)


def uniform_qk(s: dict) -> dict:
    """Every random head's log-slopes of W_Q's and of W_K's gradient share against the tokens' spread at least
    :data:`VANISHING_SLOPE` (both vanish as rank collapse makes the attention uniform). In the control (uniform
    attention from small W_Q on distinct tokens) no head may have both vanish, else the check cannot tell: not run."""
    if "qk_rank_q_slopes" not in s:
        return claims.not_run("statistics kept before this check existed: rebuild the figure")
    both = [min(q, k) for q, k in zip(s["qk_rank_q_slopes"], s["qk_rank_k_slopes"])]
    apart = [min(q, k) for q, k in zip(s["qk_apart_q_slopes"], s["qk_apart_k_slopes"])]
    k, n = sum(v >= VANISHING_SLOPE for v in both), len(both)
    wrong = sum(v >= VANISHING_SLOPE for v in apart)
    p, lo, hi = claims.rate(k, n)
    q_med, k_med = s["qk_rank_q_median"], s["qk_rank_k_median"]

    def _range(key: str) -> str:
        return f"{min(s[key]):.2f}-{max(s[key]):.2f}"

    control = (f"{n} random heads ({s['tokens']} tokens of width {s['width']}): from spread 1 to {s['spreads'][-1]:g} "
               f"the median |grad W_Q| / |grad W_V| falls {q_med[0]:.3g} -> {q_med[-1]:.3g}, |grad W_K| / |grad W_V| "
               f"{k_med[0]:.3g} -> {k_med[-1]:.3g} (log-slopes {_range('qk_rank_q_slopes')} and "
               f"{_range('qk_rank_k_slopes')}), the attention within {s['qk_rank_uniform_gap']:.2g} of uniform; the "
               f"control (distinct tokens, W_Q x s, attention within {s['qk_apart_uniform_gap']:.2g} of uniform): "
               f"W_Q's slopes {_range('qk_apart_q_slopes')}, W_K's {_range('qk_apart_k_slopes')}, {wrong} of "
               f"{len(apart)} heads with both at or above the bar {VANISHING_SLOPE:g}")
    verdict = (claims.share_holds(k, n, of="heads") if wrong == 0 else
               claims.guard("not run", "control heads vanish too: the check cannot tell"))
    return claims.score(p, (lo, hi), None, control, verdict)
