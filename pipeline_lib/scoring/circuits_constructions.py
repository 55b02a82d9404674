"""Scoring of figure circuits_constructions's claims from its statistics (its sidecar's ``stats``, or the copy kept
in ``docs/stats``)."""
from __future__ import annotations

from .. import claims
from ..figures.circuits_constructions import Params

EXACT = 1e-12  # "implemented": the net's output equals the rectifier's up to float64 rounding at these magnitudes
UNABLE = 0.1  # the one-layer control must miss the rectified output by more than this somewhere on the grid


def score_rectifier(stats: dict) -> dict:
    """Fig. 1: the drawn two-layer net computes the rectifier's output (largest error under :data:`EXACT` for every
    drop) while the best one-layer (affine) fit cannot (its largest error above :data:`UNABLE`)."""
    r = stats["rectifier"]
    err, ctl = r["max_error"], r["affine_max_error"]
    verdict = claims.weakest(claims.below(err, err, EXACT), claims.above(ctl, ctl, UNABLE))
    return claims.score(err, (err, err), None,
                        f"ReLU(x - v) + ReLU(-x - v) against max(|x| - v, 0) at {r['n_points']} points of "
                        f"[-{r['x_max']:g}, {r['x_max']:g}], v = {r['drops']}; the best affine fit's largest error "
                        f"(control, one layer): {ctl:.3f}", verdict)


def score_spurious(stats: dict) -> dict:
    """Sec. II.b: the positions whose token the stored labels never need are exactly the three on the right;
    the statistic is how many positions the two sets do not share (0 required)."""
    s = stats["spurious"]
    found, want = set(s["spurious_positions"]), set(s["right_three"])
    off = len(found ^ want)
    least = s["least_impurity_of_the_others"]
    return claims.score(off, (off, off), None,
                        f"{s['dataset']} (p = {s['p']}, T = {s['T']}, k = {s['k']}, {s['n']} sequences): labels fixed "
                        f"without the token at positions {sorted(found)} (0-indexed), the three on the right being "
                        f"{sorted(want)}; without any other position at least "
                        f"{'-' if least is None else f'{least:.3f}'} of the labels are not fixed",
                        claims.below(off, off, 0.5))


def score_haystack(stats: dict) -> dict:
    """Sec. III: a training set of 2^11 sequences, and more than 2^14 inputs to generalise to."""
    h = stats["haystack"]
    gap = abs(h["log2_train"] - 11)
    verdict = claims.weakest(claims.below(gap, gap, 1e-9), claims.above(h["log2_space"], h["log2_space"], 14))
    return claims.score(h["log2_space"], (h["log2_space"], h["log2_space"]), None,
                        f"{h['dataset']}: {h['n_train']} training sequences (2^{h['log2_train']:.2f}); the input space "
                        f"{h['p']}^{h['T']} = 2^{h['log2_space']:g} (the printed 12^4 = {h['printed']} against 2^14 = "
                        f"{h['two_to_14']}); the label reads only the {h['patterns']} patterns of the first "
                        f"{h['k']} tokens, {h['patterns_in_train']} of which occur in training ("
                        f"{h['test_patterns_seen']:.3f} of the test sequences)", verdict)


def score_claims(stats: dict, params: Params) -> dict:
    return {"circuits.constructions.rectifier_two_layer_relu": score_rectifier(stats),
            "circuits.constructions.spurious_right_three": score_spurious(stats),
            "circuits.constructions.needle_in_haystack_counts": score_haystack(stats)}
