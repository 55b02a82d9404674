"""The rule kinds that give a claim its verdict (:data:`KINDS`), each written once, and the record each verdict
carries of its rule and the numbers it read, so that a verdict can be re-derived (:func:`evaluate`) and a claim's
statistic moved across its rule (:func:`crossings`). :mod:`pipeline_lib.claims` re-exports them."""
from __future__ import annotations

import math
from collections.abc import Mapping

VERDICTS = ("reproduced", "partial", "not reproduced", "not run")


class ClaimError(ValueError):
    """A claim's declaration or score is malformed (names the claim)."""


# -- rules ---------------------------------------------------------------------------------------------------
# Every verdict comes from one of the rule kinds below (written once, tested once per kind and, through the record
# each verdict carries, once per claim): a kind returns a :class:`Verdict`, the verdict string with the record of
# the rule and the numbers it read (``verdict.rule``), which :func:`score` stores with the score, so a verdict can
# be re-derived (:func:`evaluate`) and moved across its rule (:func:`crossings`).
#
# The three tiers mean the same for every kind: ``reproduced`` when the interval (not just the estimate) is on the
# claimed side; ``partial`` when the estimate is on the claimed side by at least one standard error (read off the
# 95% interval: half its width / 1.96), so that a null effect seldom scores ``partial`` (tests/test_claims.py
# measures each kind's rates on a planted effect and a null) (``near`` and ``agrees``, equality within a
# tolerance: partial when only the estimate lies within it); ``not reproduced`` otherwise. An estimate without an
# interval (one seed, a deterministic count) is ``partial`` when it is on the claimed side.

Z95 = 1.959963984540054


class Verdict(str):
    """A verdict with the rule that gave it: ``rule = {"kind": ..., "args": {...}}`` (see :data:`KINDS`)."""
    rule: dict

    def __new__(cls, verdict: str, kind: str, /, **args):
        if verdict not in VERDICTS:
            raise ClaimError(f"verdict {verdict!r}: allowed {', '.join(VERDICTS)}")
        v = super().__new__(cls, verdict)
        v.rule = {"kind": kind, "args": {k: _plain(x) for k, x in args.items()}}
        return v

    def __reduce__(self):  # a copy or a pickle keeps the rule record
        return _verdict, (str(self), self.rule)


def _verdict(verdict: str, rule: dict) -> Verdict:
    v = Verdict(verdict, rule["kind"])
    v.rule = rule
    return v


def _plain(x):
    """A rule's argument as strict JSON holds it: an integer stays one, a flag a bool, a float's NaN None and an
    infinity the text "inf" / "-inf" (``float`` reads it back)."""
    import numbers

    import numpy as np

    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if x is None or isinstance(x, str):
        return x
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, numbers.Integral):
        return int(x)
    f = float(x)
    return None if math.isnan(f) else ("inf" if f > 0 else "-inf") if math.isinf(f) else f


def missing(*xs) -> bool:
    """A value that is missing: None or NaN (of any float type, numpy's included)."""
    return any(x is None or math.isnan(float(x)) for x in xs)


def _se(value, bound) -> float:
    """The standard error read off one side of a 95% interval (NaN without it)."""
    return math.nan if missing(value, bound) else abs(value - bound) / Z95


def _one_se(margin: float, se: float) -> bool:
    """The estimate's margin on the claimed side is at least one standard error (any margin > 0 without one)."""
    return margin > 0 and (math.isnan(se) or margin >= se)


def above(value: float, low: float, threshold: float) -> Verdict:
    """The claim "value exceeds threshold" (see the tiers above)."""
    return _beyond("above", value, low, threshold)


def below(value: float, high: float, threshold: float) -> Verdict:
    """The claim "value is under threshold" (mirror of :func:`above`)."""
    return _beyond("below", value, high, threshold)


def _beyond(kind: str, value: float, bound: float, threshold: float) -> Verdict:
    """:func:`above` (``bound``: the interval's low end) or :func:`below` (its high end): the margin is taken on
    the claimed side, so one rule serves both."""
    sign = 1 if kind == "above" else -1
    args = {"value": value, ("low" if sign > 0 else "high"): bound, "threshold": threshold}
    if missing(value):
        return Verdict("not run", kind, **args)
    if not missing(bound) and sign * (bound - threshold) > 0:
        return Verdict("reproduced", kind, **args)
    return Verdict("partial" if _one_se(sign * (value - threshold), _se(value, bound)) else "not reproduced", kind,
                   **args)


def exceeds(value: float, low: float, control: float, control_high: float) -> Verdict:
    """The claim "value exceeds the control's": intervals disjoint reproduced; the difference at least one
    combined standard error partial."""
    args = dict(value=value, low=low, control=control, control_high=control_high)
    if missing(value, control):
        return Verdict("not run", "exceeds", **args)
    if not missing(low, control_high) and low > control_high:
        return Verdict("reproduced", "exceeds", **args)
    known = [x for x in (_se(value, low), _se(control, control_high)) if not math.isnan(x)]
    se = math.hypot(*known) if known else math.nan  # a side without an interval adds no error it cannot show
    return Verdict("partial" if _one_se(value - control, se) else "not reproduced", "exceeds", **args)


def near(value: float, low: float, high: float, reference: float, tolerance: float) -> Verdict:
    """The claim "value equals the source's reference" where the source prints no uncertainty, within
    ``tolerance`` (declared with the claim, with its reason), as an equivalence test like :func:`agrees`:
    reproduced when the whole interval lies within reference +- tolerance, partial when only the estimate does (also
    an estimate without an interval, such as one seed's), so that fewer or noisier seeds never give a better
    verdict; otherwise not reproduced. A value known exactly passes a zero-width interval."""
    args = dict(value=value, low=low, high=high, reference=reference, tolerance=tolerance)
    if missing(value):
        return Verdict("not run", "near", **args)
    if not missing(low, high) and reference - tolerance <= low and high <= reference + tolerance:
        return Verdict("reproduced", "near", **args)
    return Verdict("partial" if abs(value - reference) <= tolerance else "not reproduced", "near", **args)


def agrees(value: float, low: float, high: float, reference: float, margin: float) -> Verdict:
    """The claim "value equals the value the source prints", tested for equivalence within ``margin`` (declared with
    the claim, before the run; for a value printed with its uncertainty :func:`printed_margin`, the source's own 95%
    half-width and half its last digit): reproduced when our 95% interval lies within reference +- margin, so that
    fewer or noisier seeds can never make a better verdict (a wide interval shows nothing); partial when only the
    estimate does (also when it has no interval); otherwise not reproduced."""
    args = dict(value=value, low=low, high=high, reference=reference, margin=margin)
    if missing(value):
        return Verdict("not run", "agrees", **args)
    if not missing(low, high) and reference - margin <= low and high <= reference + margin:
        return Verdict("reproduced", "agrees", **args)
    return Verdict("partial" if abs(value - reference) <= margin else "not reproduced", "agrees", **args)


def printed_margin(reference_se: float, rounding: float) -> float:
    """The equivalence margin of a value the source prints as mean +- its standard error: that error's 95%
    half-width, 1.96 x ``reference_se``, plus half the step of its last printed digit (``rounding``)."""
    return Z95 * reference_se + rounding / 2


def share_holds(k: int, n: int, low_share: float = 0.5, of: str = "seeds") -> Verdict:
    """A claim about every seed/run/case: all k of n reproduced; a share whose Wilson 95% interval lies above
    ``low_share`` (a majority, shown: 9 of 10, 17 of 20) partial; otherwise not reproduced. ``of``: what the
    count counts ('seeds', or e.g. 'runs', 'steps': only a count of seeds is checked seed by seed)."""
    args = dict(k=int(k), n=int(n), low_share=low_share, of=of)
    if n == 0:
        return Verdict("not run", "share_holds", **args)
    if k == n:
        return Verdict("reproduced", "share_holds", **args)
    from .stats import wilson_interval

    return Verdict("partial" if wilson_interval(int(k), int(n))[0] > low_share else "not reproduced", "share_holds",
                   **args)


def rates_exceed(k: int, n: int, k0: int, n0: int, of: str = "seeds") -> Verdict:
    """The claim "a share of k/n exceeds the control's k0/n0": :func:`exceeds` on the shares with their Wilson
    intervals, recorded as counts (``of``: what they count, as :func:`share_holds`)."""
    from .stats import wilson_interval

    lo, _ = wilson_interval(int(k), int(n))
    _, hi0 = wilson_interval(int(k0), int(n0))
    v = exceeds(k / n, lo, k0 / n0, hi0)
    return Verdict(str(v), "rates_exceed", k=int(k), n=int(n), k0=int(k0), n0=int(n0), of=of)


def guard(verdict: str, why: str) -> Verdict:
    """A verdict that no statistic decides: the claim's precondition fails on these numbers (e.g. no Softmax seed
    has a Eureka-moment, so no arm can have an earlier one). ``why`` says which; a guard is not a rule, and a
    claim whose verdict is a guard cannot be moved across its rule."""
    return Verdict(verdict, "guard", verdict=verdict, why=why)


def weakest(*verdicts: str) -> Verdict:
    """The weakest of several verdicts on one claim (a missing input first): a claim tested against several
    controls holds only as far as it holds against each."""
    order = VERDICTS[::-1]  # "not run" weakest, "reproduced" strongest
    return Verdict(min(verdicts, key=order.index), "weakest",
                   parts=[getattr(v, "rule", {"kind": "literal", "args": {"verdict": str(v)}}) for v in verdicts])


KINDS = {"above": above, "below": below, "exceeds": exceeds, "near": near, "agrees": agrees,
         "share_holds": share_holds, "rates_exceed": rates_exceed}


def evaluate(rule: Mapping) -> str:
    """The verdict a rule record gives (``{"kind", "args"}``, as :func:`score` stores it: a missing number as
    None, an infinite one as "inf" / "-inf")."""
    kind, args = rule["kind"], rule["args"]
    if kind == "weakest":
        return weakest(*(evaluate(p) for p in args["parts"]))
    if kind in ("guard", "literal"):
        return args.get("verdict", "")
    if kind not in KINDS:
        raise ClaimError(f"rule kind {kind!r}: known {', '.join(KINDS)}, weakest, guard")
    return str(KINDS[kind](**{k: math.nan if v is None else float(v) if v in ("inf", "-inf") else v
                              for k, v in args.items()}))


def _moved(rule: Mapping, holds: bool) -> dict:
    """The rule record with its statistic moved to one side of the rule: where it holds (``holds``) or fails."""
    kind, a = rule["kind"], dict(rule["args"])
    f = lambda key: math.nan if a.get(key) is None else float(a[key])  # noqa: E731
    if kind in ("above", "below"):
        sign = 1 if kind == "above" else -1
        t = f("threshold")
        bound = "low" if kind == "above" else "high"
        width = abs(f("value") - f(bound))
        step = (width if not math.isnan(width) else 0) + max(abs(t) * 0.1, 1e-3)
        value = t + sign * step if holds else t - sign * step
        # the interval keeps its width (none stays none: a rule read without one cannot say "reproduced")
        return {"kind": kind, "args": {**a, "value": value,
                                       bound: None if math.isnan(width) else value - sign * width * 0.5 ** holds}}
    if kind == "exceeds":
        c, ch = f("control"), f("control_high")
        cw = 0 if math.isnan(ch) else ch - c
        w = abs(f("value") - f("low")) if not math.isnan(f("low")) else 0
        step = cw + w + max(abs(c) * 0.1, 1e-3)
        value = c + step if holds else c - step
        return {"kind": kind, "args": {**a, "value": value, "low": value - w if not math.isnan(f("low")) else None}}
    if kind == "near":
        r, tol = f("reference"), f("tolerance")
        w = (f("high") - f("low")) / 2 if not missing(a.get("low"), a.get("high")) else 0
        value = r if holds else r + 2 * tol + 2 * w + max(abs(r) * 0.1, 1e-3)
        return {"kind": kind, "args": {**a, "value": value, "low": value - w, "high": value + w}}
    if kind == "agrees":
        r, margin = f("reference"), f("margin")
        w = (f("high") - f("low")) / 2 if not missing(a.get("low"), a.get("high")) else 0
        value = r if holds else r + 2 * (w + margin) + max(abs(r) * 0.1, 1e-3)
        return {"kind": kind, "args": {**a, "value": value, "low": value - w, "high": value + w}}
    if kind == "share_holds":
        return {"kind": kind, "args": {**a, "k": a["n"] if holds else 0}}
    if kind == "rates_exceed":
        return {"kind": kind, "args": {**a, "k": a["n"], "k0": 0} if holds else {**a, "k": 0, "k0": a["n0"]}}
    if kind == "weakest":
        return {"kind": kind, "args": {"parts": [_moved(p, holds) for p in a["parts"]]}}
    raise ClaimError(f"a {kind!r} verdict cannot be moved across a rule")


def crossings(rule: Mapping) -> tuple[str, str]:
    """The verdicts a claim's rule gives with its statistic moved to where it holds and to where it fails
    (synthetic input): a rule that can decide gives ("reproduced", "not reproduced")."""
    return evaluate(_moved(rule, True)), evaluate(_moved(rule, False))
