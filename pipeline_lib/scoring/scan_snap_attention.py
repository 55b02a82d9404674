"""Scoring of figure scan_snap_attention's claims from its statistics (its sidecar's ``stats``, or the copy kept in
``docs/stats``): the ledger job and ``publish`` call :func:`score_claims`; the figure job does not."""
from __future__ import annotations

import numpy as np

from .. import claims
from ..figures.scan_snap_attention import LOG, LOSS_STEPS, REFERENCE, REFERENCE_CLAIMS, REL_TOL, Params


def score_claims(stats: dict, params: Params) -> dict:
    """Its declared claims on :func:`stats`' numbers (the reference matches only for the logged setting)."""
    n = stats["seeds"]
    ids = {c: f"tian.scan_snap_attention.{c}" for c in ("common_mass_falls", "top_distinct_rises", *REFERENCE_CLAIMS)}
    out = {ids["common_mass_falls"]: _moved(stats["common_mass"], n, claims.below),
           ids["top_distinct_rises"]: _moved(stats["top_distinct"], n, claims.above),
           "tian.scan_snap_attention.growth_ordered_by_frequency": growth_ordered(stats)}
    if not stats["reference_setting"]:
        why = f"run {params.run!r} is not the logged setting of {LOG}: no reference to compare with"
        return out | {ids[c]: claims.not_run(why) for c in REFERENCE_CLAIMS}
    scale = f"theory t0 = 2K ln M / eta_Y = {stats['theory_t0']:.1f}"
    t10, t90 = (np.asarray(stats["common_mass_10_90_percent_steps"]["per_seed"], dtype=float).reshape(-1, 2).T)
    settle, s_lo, s_hi = claims.median_interval(stats.get("common_mass_settle_step", []))
    if params.class_index != 0:  # the references are class 0's
        why = f"the figure follows class {params.class_index}; the references are class 0's"
        out |= {ids[c]: claims.not_run(why) for c in ("common_mass_final", "top_distinct_final")}
    return {
        ids["common_mass_final"]: _near(stats["common_mass"]["final_per_seed"], 0.41, 0.02, n,
                                        f"step-0 common mass {stats['common_mass']['initial']:.3f}"),
        ids["top_distinct_final"]: _near(stats["top_distinct"]["final_per_seed"], 0.17, REL_TOL * 0.17, n,
                                         f"step-0 top distinct {stats['top_distinct']['initial']:.3f}"),
    } | out | {
        ids["loss_matches_log"]: _loss_matches(stats["loss"], n),
        ids["snap_starts_near_8"]: _near(t10, 8.0, REL_TOL * 8, n, scale),
        ids["snap_ends_near_30"]: _near(t90, 30.0, REL_TOL * 30, n, scale),
        ids["frozen_after_40"]: claims.score(settle, (s_lo, s_hi), n, scale, claims.below(settle, s_hi, 40.0)),
    }


ORDERED = 0.9  # "grows faster with larger P(l|m,n)": rank correlation of growth with frequency, nearly every pair in order


def growth_ordered(stats: dict) -> dict:
    """"z_ml(t) grows faster with larger P(l|m,n)": the median over seeds of Spearman's rho between the distinct
    tokens' frequency and their logits' growth over training (mean over classes), against :data:`ORDERED`."""
    if "distinct_growth_order" not in stats:
        return claims.not_run("the statistics predate the growth order: rerun the figure")
    rho = stats["distinct_growth_order"]["per_seed"]
    m, lo, hi = claims.median_interval(rho)
    text = (f"none: an ordering within each run (no ordering gives rho 0, sd 1/3 over 10 tokens); per seed "
            f"{', '.join(f'{r:.3f}' for r in rho)}")
    return claims.score(m, (lo, hi), len(rho), text, claims.above(m, lo, ORDERED))


def _moved(s: dict, n: int, rule) -> dict:
    """The final median against the step-0 (untrained) value: ``rule`` is claims.below or claims.above."""
    m, lo, hi = claims.median_interval(s["final_per_seed"])
    bound = hi if rule is claims.below else lo
    return claims.score(m, (lo, hi), n, f"untrained (step 0) {s['initial']:.4g}", rule(m, bound, s["initial"]))


def _near(values, reference: float, tol: float, n: int, control: str) -> dict:
    m, lo, hi = claims.median_interval(values)
    return claims.score(m, (lo, hi), n, f"none; {control}", claims.near(m, lo, hi, reference, tol))


def _loss_matches(loss: dict, n: int) -> dict:
    """The share of the logged steps whose median loss matches the log (each step: claims.near)."""
    steps = [t for t in LOSS_STEPS if str(t) in loss]
    if len(steps) < len(LOSS_STEPS):
        return claims.not_run(f"steps {sorted(set(LOSS_STEPS) - set(steps))} not trained")
    hits, missed = 0, []
    for t in steps:
        m, lo, hi = claims.median_interval(loss[str(t)]["per_seed"])
        ref = REFERENCE["loss"][t]
        if claims.near(m, lo, hi, ref, REL_TOL * ref) == "reproduced":
            hits += 1
        else:
            missed.append(f"step {t}: {m:.3g} vs {ref:.3g}")
    p, lo, hi = claims.rate(hits, len(steps))
    control = (f"untrained loss ln 34 = {np.log(34):.3f} (step 0 measured {loss['0']['median']:.4g}); "
               + ("; ".join(missed) if missed else "every step matches"))
    return claims.score(p, (lo, hi), n, control, claims.share_holds(hits, len(steps), of="steps"))
