"""Scoring of figure circuits_constructions's claims from its statistics (its sidecar's ``stats``, or the copy kept
in ``docs/stats``)."""
from __future__ import annotations

from .. import claims
from ..figures.circuits_constructions import EXACT, Params

UNABLE = 0.1  # the one-layer control must miss the rectified output by more than this somewhere on the grid


def score_rectifier(stats: dict) -> dict:
    """Fig. 1: some net of the caption's alphabet (+1/-1 weights, a bias) computes the rectifier's output (the
    closest of them within :data:`EXACT` for every drop), which no affine map does (its best fit's largest error
    above :data:`UNABLE`)."""
    r = stats["rectifier"]
    err, ctl = r["max_error"], r["affine_max_error"]
    verdict = claims.weakest(claims.below(err, err, EXACT), claims.above(ctl, ctl, UNABLE))
    return claims.score(err, (err, err), None,
                        f"{len(r['exact_nets'])} of the {r['nets_tried']} nets with weights +1/-1 and bias -v compute "
                        f"max(|x| - v, 0) at {r['n_points']} points of [-{r['x_max']:g}, {r['x_max']:g}] for every "
                        f"v = {r['drops']} ((W_1, W_2) = {r['exact_nets']}); the best affine fit's largest error "
                        f"(control, no ReLU layer): {ctl:.3f}", verdict)


def score_spurious(stats: dict) -> dict:
    """Sec. II.b: the positions whose token never moves the stored label, over the pairs of sequences that differ
    there alone, are exactly the three on the right; the statistic is how many positions the two sets do not share
    (0 required). Not run where a position has no such pair (the dataset cannot judge it)."""
    s = stats["spurious"]
    if s["least_pairs"] == 0:
        return claims.not_run(f"{s['dataset']}: a position has no pair of sequences that differ there alone")
    found, want = set(s["spurious_positions"]), set(s["right_three"])
    off = len(found ^ want)
    least = s["least_share_of_the_others"]
    return claims.score(off, (off, off), None,
                        f"{s['dataset']} (p = {s['p']}, T = {s['T']}, k = {s['k']}, {s['n']} sequences): the label "
                        f"never changed across the pairs that differ at positions {sorted(found)} alone (0-indexed), "
                        f"the three on the right being {sorted(want)}; at any other position it changed across at "
                        f"least {'-' if least is None else f'{least:.3f}'} of them; pairs per position "
                        f"{s['pairs']}", claims.below(off, off, 0.5))


def score_haystack(stats: dict) -> dict:
    """Sec. III: a training set of 2^11 sequences, and more than 2^14 inputs to generalise to."""
    h = stats["haystack"]
    gap = abs(h["log2_train"] - 11)
    verdict = claims.weakest(claims.below(gap, gap, 1e-9), claims.above(h["log2_space"], h["log2_space"], 14))
    return claims.score(h["log2_train"], (h["log2_train"], h["log2_train"]), None,
                        f"{h['dataset']}: {h['n_train']} training sequences (2^{h['log2_train']:.2f}); the input space "
                        f"{h['p']}^{h['T']} = 2^{h['log2_space']:g} (the printed 12^4 = {h['printed']} against 2^14 = "
                        f"{h['two_to_14']}); the label reads only the {h['patterns']} patterns of the first "
                        f"{h['k']} tokens, {h['patterns_in_train']} of which occur in training ("
                        f"{h['test_patterns_seen']:.3f} of the test sequences)", verdict)


def score_claims(stats: dict, params: Params) -> dict:
    return {"circuits.constructions.rectifier_two_layer_relu": score_rectifier(stats),
            "circuits.constructions.spurious_right_three": score_spurious(stats),
            "circuits.constructions.needle_in_haystack_counts": score_haystack(stats)}
