"""Scoring of figure galore_lowrank's claims from its statistics (its sidecar's ``stats``, or the copy kept in
``docs/stats``): the ledger job and ``publish`` call :func:`score_claims`; the figure job does not."""
from __future__ import annotations

import numpy as np

from .. import claims
from ..figures.galore_lowrank import COMPARISONS, LOW_RANK_SHARE, Params
from ..stats import rate_difference

# "GaLore reaches Adam's outcome": equal success shares within this margin, two seeds in ten (a convention fixed
# with the rule: the talk prints perplexities, 34.88 against 34.06, no success share). The Newcombe interval of
# the difference must lie within it, so fewer seeds never give a better verdict.
MATCH_MARGIN = 0.2


def successes(arm: dict, threshold: float) -> tuple[int, int]:
    acc = np.asarray(arm["final_test_acc"], dtype=float)
    return int((acc >= threshold).sum()), len(acc)


def score_low_rank(c: dict) -> dict:
    a = c["adam"]
    ranks = a["stable_rank_median_over_training"]
    k = sum(v <= LOW_RANK_SHARE * a["max_rank"][p] for p, v in ranks.items())
    n = len(ranks)
    control = ("threshold min(m, n) / 4; over training " + ", ".join(f"{p} {v:.3g}/{a['max_rank'][p]}" for p, v in
                                                                     ranks.items())
               + "; at epoch 0 " + ", ".join(f"{p} {v:.3g}" for p, v in a["stable_rank_first"].items()))
    return claims.score(k / n if n else float("nan"), (float("nan"),) * 2, len(a["seeds"]), control,
                        claims.share_holds(k, n, of="parameters"))


def score_state(c: dict) -> dict:
    r = c["state_bytes_ratio_galore_over_adam"]
    return claims.score(r, (r, r), len(c["adam"]["seeds"]),
                        f"Adam {c['adam']['state_bytes_per_seed']:.0f} B per seed, GaLore "
                        f"{c['galore']['state_bytes_per_seed']:.0f} B", claims.below(r, r, 1.0))


def score_match(c: dict, control_arm: str, threshold: float) -> dict:
    """GaLore's success share minus the control arm's ('adam': Adam at its own lr; 'matched': GaLore's lr x scale),
    equal within MATCH_MARGIN (claims.agrees on the Newcombe interval of the difference)."""
    if control_arm not in c:
        return claims.not_run("no matched-step Adam run (comparison key 'matched')")
    ctrl = c[control_arm]
    if control_arm == "matched" and not _is_matched(c):
        return claims.not_run(f"{ctrl['run']}: lr {ctrl['lr']:g} is not GaLore's lr x scale")
    k, n = successes(c["galore"], threshold)
    k0, n0 = successes(ctrl, threshold)
    if not (n and n0):
        return claims.not_run(f"{ctrl['run']} and the GaLore run share no seed")
    d, lo, hi = rate_difference(k, n, k0, n0)
    galore_step = c["galore"]["lr"] * _scale(c)
    step = "" if control_arm == "matched" else (f"; confounded: GaLore's projected step (lr x scale) is {galore_step:g}, "
                                                f"{galore_step / ctrl['lr']:g} x Adam's")
    control = (claims.fmt_rate(f"GaLore {c['galore']['run']}", k, n) + "; "
               + claims.fmt_rate(f"{ctrl['run']} (lr {ctrl['lr']:g})", k0, n0) + step)
    if k0 == 0:  # two arms that both fail match trivially: no evidence that GaLore performs as the control does
        return claims.score(d, (lo, hi), n, control, claims.guard(
            "not run", "the control reaches the threshold in no seed: there is no performance to match"))
    return claims.score(d, (lo, hi), n, control, claims.agrees(d, lo, hi, 0.0, MATCH_MARGIN))


def score_plateau(c: dict, threshold: float) -> dict:
    if "matched" not in c:
        return claims.not_run("no matched-step Adam run (comparison key 'matched')")
    if not _is_matched(c):
        return claims.not_run(f"{c['matched']['run']}: lr {c['matched']['lr']:g} is not GaLore's lr x scale")
    k, n = successes(c["matched"], threshold)
    k0, n0 = successes(c["galore"], threshold)
    if not (n and n0):
        return claims.not_run(f"{c['matched']['run']} and the GaLore run share no seed")
    return claims.rate_exceeds(k, n, k0, n0, f"{c['galore']['run']} (GaLore)")


def _scale(c: dict) -> float:
    return float(c["galore"]["options"].get("scale", 0.25))  # galore_adam's default scale


def _is_matched(c: dict) -> bool:
    return bool(np.isclose(c["matched"]["lr"], c["galore"]["lr"] * _scale(c), rtol=1e-9))


def score_claims(stats: dict, params: Params) -> dict:
    out = {}
    for suffix, label in COMPARISONS.items():
        c = stats.get(label)
        ids = [f"tian.galore_lowrank.{w}_{suffix}" for w in ("gradient_low_rank", "state_smaller", "matches_adam",
                                                            "matches_matched_step")]
        if c is None:
            out.update({i: claims.not_run(f"comparison {label!r} not drawn") for i in ids})
            continue
        out[ids[0]], out[ids[1]] = score_low_rank(c), score_state(c)
        out[ids[2]] = score_match(c, "adam", params.success_threshold)
        out[ids[3]] = score_match(c, "matched", params.success_threshold)
    c = stats.get(COMPARISONS["reasoning"])
    out["tian.galore_lowrank.plateau_is_projection_reasoning"] = (
        score_plateau(c, params.success_threshold) if c else claims.not_run("comparison 'eureka_reasoning' not drawn"))
    return out
