"""Scoring of figure fig5_accuracy's claims from its statistics (its sidecar's ``stats``, or the copy kept in
``docs/stats``): the ledger job and ``publish`` call :func:`score_claims`; the figure job does not."""
from __future__ import annotations

import numpy as np

from .. import claims
from ..figures.fig5_accuracy import Params

CHANCE = 1 / 4  # Fig. 5's task is p = 4: one class in four
NEAR_CHANCE = 0.1  # "do not generalize": final test accuracy at most this above chance (a level the project chose)


def score_claims(stats: dict, params: Params) -> dict:
    def better(arm: str, control: str) -> dict:
        """"easily finds a circuit that can generalize (pinkish curves)", against scratch: every curriculum seed
        generalises (share_holds, as the blueish curves are read for scratch) and its share exceeds the control's."""
        if arm not in stats or control not in stats:
            return claims.not_run(f"arms {arm!r} and {control!r} not both drawn")
        a, c = stats[arm], stats[control]
        p, lo, hi = claims.rate(a["successes"], a["seeds"])
        beside = claims.fmt_rate(control, c["successes"], c["seeds"])
        if "final_test_acc" in a and "final_test_acc" in c:
            med_a, med_c = (claims.median_interval(x["final_test_acc"])[0] for x in (a, c))
            beside += f"; median final test accuracy {arm} {med_a:.3f}, {control} {med_c:.3f}"
        return claims.score(p, (lo, hi), a["seeds"], beside,
                            claims.weakest(claims.share_holds(a["successes"], a["seeds"]),
                                           claims.rates_exceed(a["successes"], a["seeds"], c["successes"], c["seeds"])))

    out = {"circuits.fig5.curriculum_beats_scratch": better("curriculum", "scratch"),
           "circuits.fig5.curriculum_beats_scratch_paper_code": better("curriculum, paper code", "scratch, paper code"),
           "circuits.fig5.curriculum_beats_scratch_mlp": better("curriculum, MLP", "scratch, MLP")}
    out["circuits.fig5.curriculum_generalises_soon_after_switch"] = (
        faster("curriculum", "scratch", stats) if "curriculum" in stats and "scratch" in stats
        else claims.not_run("arms 'curriculum' and 'scratch' not both drawn"))
    out["circuits.fig5.discontinuity_at_switch"] = discontinuity("curriculum", stats)
    if "scratch" in stats:
        s = stats["scratch"]
        thr = s["threshold"]
        near = CHANCE + NEAR_CHANCE
        memorize = sum(tr is not None and te is not None and tr >= thr and te < near
                       for tr, te in zip(s["final_train_acc"], s["final_test_acc"]))
        general = sum(te is not None and te >= thr for te in s["final_test_acc"])
        between = sum(te is not None and near <= te < thr for te in s["final_test_acc"])
        p, lo, hi = claims.rate(memorize, s["seeds"])
        out["circuits.fig5.scratch_does_not_generalise"] = claims.score(
            p, (lo, hi), s["seeds"], f"seeds that memorize (train accuracy >= {thr:g}) but do not generalize (test "
            f"accuracy < {near:g}, at most {NEAR_CHANCE:g} above chance): {memorize} of {s['seeds']}; {general} "
            f"generalize (test accuracy >= {thr:g}), {between} reach {near:g}-{thr:g}", claims.share_holds(memorize, s["seeds"]))
    return out


def faster(arm: str, control: str, stats: dict) -> dict:
    """"Easily finds a circuit" read as time: the arm's median epochs from its switch to the success threshold
    against the control's median from its start; a seed that never reaches it counts as one epoch beyond the
    longer of the two phases, in both arms alike. Reproduced when the arm's bootstrap interval lies below the
    control's median; not reproduced unless more than half of the arm's seeds reach the threshold. Where no more
    than half of the control's seeds reach it, its median is no time but has a lower bound: each such seed's time
    exceeds the control's phase, so its median with those seeds at the phase's length bounds it from below, and
    the arm's interval is read against that bound."""
    a, c = stats[arm], stats[control]
    never = max(a["phase_epochs"], c["phase_epochs"]) + 1

    def censored(s: dict, at: int = never) -> list[int]:
        return [at if e is None else e for e in s["epochs_to_threshold"]]

    m, lo, hi = claims.median_interval(censored(a))
    m0, lo0, hi0 = claims.median_interval(censored(c))
    reached = [e for e in a["epochs_to_threshold"] if e is not None]
    text = (claims.fmt_interval(f"{control}: median epochs from its start (never: {never})", m0, lo0, hi0, digits=5)
            + f"; {arm}: {len(reached)} of {a['seeds']} seeds reach test accuracy >= {a['threshold']:g} after the "
            f"switch (epoch {a['phase_start']}), of the {a['phase_epochs']} epochs of finetuning")
    if 2 * len(reached) <= a["seeds"]:  # no majority reaches it: the median is no time
        return claims.score(m, (lo, hi), a["seeds"], text, claims.guard(
            "not reproduced", f"no more than half of the {arm} seeds reach the threshold within its phase"))
    if 2 * sum(e is not None for e in c["epochs_to_threshold"]) <= c["seeds"]:  # the control's median is no time
        bound = float(np.median(censored(c, c["phase_epochs"])))
        text += (f"; no more than half of the {control} seeds reach the threshold, so its median is at least "
                 f"{bound:g} (its never-reaching seeds at its phase's {c['phase_epochs']} epochs, a lower bound)")
        return claims.score(m, (lo, hi), a["seeds"], text, claims.below(m, hi, bound))
    return claims.score(m, (lo, hi), a["seeds"], text, claims.below(m, hi, m0))


def discontinuity(arm: str, stats: dict) -> dict:
    """"The discontinuity" at the switch: a seed shows it when, in both its train and its test accuracy, the
    one-epoch change across the switch is larger than every other one-epoch change of the same curve; the
    sentence describes the curves of every seed (share_holds: all reproduced, a majority partial)."""
    change = stats.get(arm, {}).get("switch_change")
    if change is None:
        return claims.not_run(f"arm {arm!r} with a switch not drawn")
    shows = [[c is not None and e is not None and abs(c) > e
              for c, e in zip(change[var]["at_switch"], change[var]["largest_elsewhere"])]
             for var in ("train_acc", "test_acc")]
    per_seed = [train and test for train, test in zip(*shows)]
    k, n = sum(per_seed), len(per_seed)
    p, lo, hi = claims.rate(k, n)
    at = [abs(c) for c in change["test_acc"]["at_switch"] if c is not None]
    other = [e for e in change["test_acc"]["largest_elsewhere"] if e is not None]
    text = (f"{arm} seeds whose train and test accuracy change more across the switch than at any other epoch: "
            f"{k} of {n}; test accuracy's change across the switch {min(at):.3f}-{max(at):.3f}, the largest "
            f"elsewhere {min(other):.3f}-{max(other):.3f} (per seed)" if at and other else
            f"{arm}: no seed with a finite change")
    return claims.score(p, (lo, hi), n, text, claims.share_holds(k, n))
