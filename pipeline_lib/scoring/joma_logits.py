"""Scoring of figure joma_logits's claims from its statistics (its sidecar's ``stats``, or the copy kept in
``docs/stats``): the ledger job and ``publish`` call :func:`score_claims`; the figure job does not."""
from __future__ import annotations

import numpy as np

from .. import claims
from ..figures.joma_logits import NC_HIGH, NEGLIGIBLE, Params


def score_claims(stats: dict, params: Params) -> dict:
    """Its declared claims; a case (label) this config does not draw is not run."""
    g, u = stats.get("gaussian"), stats.get("uniform")
    missing = claims.not_run("case 'gaussian' not drawn")
    out = {"tian.joma_logits.nc_high_gaussian": _nc_high(g) if g else missing,
           "tian.joma_logits.second_term_negligible_gaussian": _second_term(g) if g else missing,
           "tian.joma_logits.v_low_rank_gaussian": _v_low_rank(g) if g else missing,
           "tian.joma_logits.vdot_lower_rank_gaussian": _vdot_lower(g) if g else missing,
           "tian.joma_logits.v_row_growth_varies_gaussian": _rows_vary(g) if g else missing}
    out["tian.joma_logits.nc_high_uniform"] = _nc_high(u) if u else claims.not_run("case 'uniform' not drawn")
    return out


def _v_low_rank(s: dict) -> dict:
    """"V gradually becomes low rank": V's final stable rank (median over seeds, bootstrap interval) below a quarter of
    the largest rank (the convention of the gradient low-rank claims) and below its value at initialisation."""
    m, lo, hi = claims.median_interval(s["v_rank_final_per_seed"])
    m0, lo0, hi0 = claims.median_interval(s["v_rank_initial_per_seed"])
    quarter = s["max_rank"] / 4
    return claims.score(m, (lo, hi), len(s["v_rank_final_per_seed"]),
                        claims.fmt_interval("at initialisation", m0, lo0, hi0)
                        + f"; a quarter of min(M_c, K) = {s['max_rank']}: {quarter:g}",
                        claims.weakest(claims.below(m, hi, quarter), claims.below(m, hi, lo0)))


# "The growth rate of each row of V varies widely": the fastest row grows at least ten times as fast as the median
# row (an order of magnitude: a level the project chose, the talk prints none)
ROW_SPREAD = 10.0


def _rows_vary(s: dict) -> dict:
    """The fastest row's growth over the median row's, per seed over the whole run; the median over seeds (bootstrap
    interval) above :data:`ROW_SPREAD`, the same ratio over the first recorded step beside it."""
    if "v_row_growth_ratio_per_seed" not in s:
        return claims.not_run("the statistics predate the norms of V's rows: rerun the figure")
    ratios = s["v_row_growth_ratio_per_seed"]
    m, lo, hi = claims.median_interval(ratios)
    first = np.median(s["v_row_growth_ratio_first_step_per_seed"])
    return claims.score(m, (lo, hi), len(ratios), f"bar {ROW_SPREAD:g} (an order of magnitude); per seed "
                        + ", ".join(f"{v:.3g}" for v in ratios) + f"; over the first recorded step: {first:.3g}",
                        claims.above(m, lo, ROW_SPREAD))


def _vdot_lower(s: dict) -> dict:
    """"V-dot can be even more low-rank": per seed, V's median stable rank over steps 1..end minus V-dot's over the
    same steps; the mean difference (t interval) above 0."""
    diff = [v - d for v, d in zip(s["v_rank_median_per_seed"], s["vdot_rank_median_per_seed"])]
    m, lo, hi = claims.mean_interval(diff)
    return claims.score(m, (lo, hi), len(diff), f"V's stable rank, median over steps and seeds "
                        f"{np.median(s['v_rank_median_per_seed']):.2f}; V-dot's {np.median(s['vdot_rank_median_per_seed']):.2f}",
                        claims.above(m, lo, 0.0))


def _nc_high(s: dict) -> dict:
    lowest = s["min_nc_after_step0"]["per_seed"]
    k, n = sum(v >= NC_HIGH for v in lowest), len(lowest)
    p, lo, hi = claims.rate(k, n)
    frozen = np.median(s["final_nc_frozen"])
    return claims.score(p, (lo, hi), n, f"frozen estimate NC {frozen:.3f}; lowest NC per seed "
                        + ", ".join(f"{v:.3f}" for v in lowest), claims.share_holds(k, n))


def _second_term(s: dict) -> dict:
    m, lo, hi = claims.median_interval(s["final_nc_term2"])
    first = np.median(s["final_nc_term1"])
    return claims.score(m, (lo, hi), len(s["final_nc_term2"]), f"first term alone {first:.3f}",
                        claims.near(m, lo, hi, 0.0, NEGLIGIBLE))
