"""Claims: what a source states, scored on the numbers the workflow produced.

A claim is *declared* in one YAML file per source under ``pipeline_lib/declarations/`` (``circuits.yaml``,
``eureka.yaml``, ``tian.yaml``; the project's own claims in ``own.yaml``), each a mapping with

- ``id``: unique over the workflow (``<source>.<figure>.<what>``); ``figure``: the figure that scores it,
- ``origin``: ``source`` (the source's own statement), ``authors_code`` (a file its authors released), or, in
  ``own.yaml`` only, ``extension`` (the project's extension of a source's experiment, with ``extends``: the
  source's key or ``none``) or ``diagnostic`` (a check of the workflow itself),
- ``landmark``: where the source states it (section, figure, table, equation; for the talk the slide's title),
- ``quote``: the source's own words that the claim scores (required for ``origin: source``),
- ``reference``: the source's value with its uncertainty as printed ("none printed"; "no source" for the
  project's own),
- ``claim``: the claim in a few words; ``statistic``: what is computed, over which seeds; ``reads``: the
  names it is computed from, as dotted paths into its figure's statistics (the sidecar's ``stats``, where a
  reader finds the numbers; ``*`` for every entry); ``control``: the control or null; ``test``: the rule that
  gives the verdict,
- ``caveats`` (optional): what a reader must know beside the verdict (a rule weaker than the words, a
  comparison that changes more than one thing, wording that differs from the source's). A fact of the config
  (a run's length, learning rate, seed count) is written as a placeholder ``{<figure>:<path>}``, a dotted path
  into that figure's statistics as in ``reads``, filled from this config's sidecars when the ledger is written
  (:mod:`pipeline_lib.caveats`), so an overlay's ledger states its own settings.

Each source file also lists ``results``: every result the source states (landmark, quote, printed value),
with the claims that score it or why none does (the coverage table of the ledger), and ``proxy`` where those
claims test something near the statement rather than the statement (counted apart).

A figure's scoring module (:mod:`pipeline_lib.scoring`) has a function ``score_claims(stats, params) -> {id:
Score}`` that computes its claims from the figure's statistics (the ``stats`` its ``build`` returned, as its
sidecar keeps them); the ``claims`` rule scores every sidecar into the ledger (:mod:`pipeline_lib.stages.claims`).
A declared claim without a score (its figure is not configured, or its inputs are not) is ``not run``. A user's
own figure may still declare its claims in the module, as a literal list ``CLAIMS`` of mappings with the fields
of :data:`PLUGIN_FIELDS` (they count as the project's own, origin ``extension``).

The rule kinds of :mod:`pipeline_lib.claim_rules` (:data:`KINDS`) are the only tests used, so a verdict always means the same thing:
``reproduced`` when the interval (not just the estimate) is on the claimed side, ``partial`` when the estimate
is on it by at least one standard error, ``not reproduced`` otherwise; each verdict records its rule and the
numbers it read, so a test can move any claim's statistic across its rule.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from .claim_rules import (  # noqa: F401  (the rule kinds, re-exported: figure modules call claims.above, ...)
    KINDS,
    VERDICTS,
    ClaimError,
    Verdict,
    above,
    agrees,
    below,
    crossings,
    evaluate,
    exceeds,
    guard,
    missing,
    near,
    printed_margin,
    rates_exceed,
    share_holds,
    weakest,
)

# numpy and scipy are imported where used: the registry checks declarations while the DAG is built.
from .intervals import json_floats, mean_interval, rate  # noqa: F401  (re-exported for the scoring modules)

# a figure module's own CLAIMS (a user's figure): the fields of each mapping
PLUGIN_FIELDS = ("id", "claim", "source", "reference", "statistic", "control", "test")
# a declaration file's claim: required and optional fields
REQUIRED_FIELDS = ("id", "figure", "origin", "landmark", "reference", "claim", "statistic", "control", "test")
OPTIONAL_FIELDS = ("quote", "caveats", "extends", "reads", "not_tested_as_stated")
SOURCE_ORIGINS = ("source", "authors_code")  # a source's file
OWN_ORIGINS = ("extension", "diagnostic")  # own.yaml
SCORE_FIELDS = ("measured", "ci_low", "ci_high", "n_seeds", "control", "verdict", "rule")


def score(measured: float, ci: tuple[float, float] = (math.nan, math.nan), n_seeds: int | None = None,
          control: str = "", verdict: str = "not run") -> dict:
    """One claim's score, as the sidecar and the ledger hold it."""
    if verdict not in VERDICTS:
        raise ClaimError(f"verdict {verdict!r}: allowed {', '.join(VERDICTS)}")
    rule = getattr(verdict, "rule", None)
    return {"measured": _num(measured), "ci_low": _num(ci[0]), "ci_high": _num(ci[1]),
            "n_seeds": None if n_seeds is None else int(n_seeds), "control": control, "verdict": str(verdict),
            "rule": rule}


def not_run(why: str) -> dict:
    """A claim whose inputs this config does not produce; ``why`` says what is missing."""
    return score(math.nan, control=why, verdict="not run")


def _num(x) -> float | None:
    x = float(x) if x is not None else math.nan
    return None if math.isnan(x) else x


# -- intervals ------------------------------------------------------------------------------------------------

def median_interval(values: Iterable[float], level: float = 0.95, n_boot: int = 2000) -> tuple[float, float, float]:
    """(median, low, high): percentile bootstrap of the median over seeds (fixed resampling seed, so the
    ledger is reproducible)."""
    import numpy as np

    v = np.asarray([x for x in values if x is not None], dtype=float)
    v = v[~np.isnan(v)]
    if v.size == 0:
        return math.nan, math.nan, math.nan
    med = float(np.median(v))
    if v.size < 2:
        return med, math.nan, math.nan
    boots = np.median(np.random.default_rng(0).choice(v, size=(n_boot, v.size)), axis=1)
    lo, hi = np.quantile(boots, [0.5 - level / 2, 0.5 + level / 2])
    return med, float(lo), float(hi)


def cluster_rate(successes: Iterable[int], trials: Iterable[int], level: float = 0.95,
                 n_boot: int = 2000) -> tuple[float, float, float]:
    """(share, low, high) of successes pooled over clusters whose trials are not independent of each other (the
    queries of one graph): the share of all trials, with a percentile bootstrap that resamples whole clusters
    (fixed resampling seed, as :func:`median_interval`), widened to the Wilson interval of the pooled trials where
    that is wider (a bootstrap of clusters that all succeed collapses to a point; independent trials are the least
    uncertainty the counts allow). Clusters without trials carry nothing and are left out."""
    import numpy as np

    k, n = np.asarray(list(successes), dtype=float), np.asarray(list(trials), dtype=float)
    if k.shape != n.shape or (k < 0).any() or (k > n).any():
        raise ClaimError(f"cluster_rate: successes {k.tolist()[:8]} must lie in [0, trials] {n.tolist()[:8]}, one "
                         "count per cluster")
    k, n = k[n > 0], n[n > 0]
    if k.size == 0:
        return math.nan, math.nan, math.nan
    share, w_lo, w_hi = rate(int(k.sum()), int(n.sum()))
    if k.size < 2:
        return share, w_lo, w_hi
    pick = np.random.default_rng(0).integers(0, k.size, size=(n_boot, k.size))
    lo, hi = np.quantile(k[pick].sum(1) / n[pick].sum(1), [0.5 - level / 2, 0.5 + level / 2])
    return share, min(float(lo), w_lo), max(float(hi), w_hi)


def rate_exceeds(k: int, n: int, k0: int, n0: int, control_label: str) -> dict:
    """The score of "a share of k/n exceeds the control's k0/n0" (Wilson intervals, :func:`rates_exceed`)."""
    p, lo, hi = rate(k, n)
    return score(p, (lo, hi), n, fmt_rate(control_label, k0, n0), rates_exceed(k, n, k0, n0))


def read_stat(stats: dict, path: str, any_label: bool = False) -> list:
    """The values a claim's ``reads`` path names in its figure's statistics: ``a.b.c`` is ``stats["a"]["b"]["c"]``,
    a ``*`` every entry at that level (a list's items, a mapping's values); [] where the path names nothing. A key
    that itself holds dots (``below_0.05_per_seed``) is matched whole, the longest first. With ``any_label``, a
    level whose key is absent from a mapping of entries (runs, arms, settings under the labels of another
    config) reads every entry that is a mapping, so a config with other labels still checks the statistics' own
    names (the last part of a path is always matched as written)."""
    parts = path.split(".")
    found = []

    def walk(node, i: int) -> None:
        if i == len(parts):
            found.append(node)
            return
        if isinstance(node, dict):
            for j in range(len(parts), i, -1):  # the longest key first
                key = ".".join(parts[i:j])
                if key in node:
                    return walk(node[key], j)
        if parts[i] == "*":
            for v in (node.values() if isinstance(node, dict) else node if isinstance(node, list) else []):
                walk(v, i + 1)
        elif any_label and isinstance(node, dict) and i < len(parts) - 1:  # a label, never the statistic's name
            for v in node.values():
                if isinstance(v, dict):
                    walk(v, i + 1)

    walk(stats, 0)
    return found


def at_best(score: dict) -> list[str]:
    """The note beside a verdict whose rule could not say "reproduced" with these seeds, whatever they measured
    (its statistic moved to the rule's most favourable side: :func:`crossings`)."""
    rule = score.get("rule")
    if not rule or score["verdict"] == "not run":
        return []
    try:
        best = crossings(rule)[0]
    except ClaimError:  # a guard (or a part of one): no statistic decides
        return []
    if best == "reproduced":
        return []
    return [f"at best {best} with {score.get('n_seeds') or 'these'} seeds: even the most favourable numbers this rule "
            "can read at this sample size do not make its interval clear the claimed side"]


def fmt_rate(label: str, k: int, n: int) -> str:
    p, lo, hi = rate(k, n)
    return f"{label} {k}/{n} [{lo:.2f}, {hi:.2f}]"


def fmt_interval(label: str, value: float, low: float, high: float, digits: int = 3) -> str:
    if missing(value):
        return f"{label} -"
    if missing(low, high):
        return f"{label} {value:.{digits}g}"
    return f"{label} {value:.{digits}g} [{low:.{digits}g}, {high:.{digits}g}]"


# -- declarations ---------------------------------------------------------------------------------------------

def check_declared(where: str, claims: list) -> None:
    """A figure module's CLAIMS literal: a list of mappings with exactly :data:`PLUGIN_FIELDS`, non-empty strings."""
    for c in claims:
        if not isinstance(c, Mapping) or set(c) != set(PLUGIN_FIELDS):
            got = sorted(c) if isinstance(c, Mapping) else type(c).__name__
            raise ClaimError(f"{where}: each of CLAIMS must have exactly the fields {', '.join(PLUGIN_FIELDS)}; "
                             f"got {got}")
        bad = [k for k in PLUGIN_FIELDS if not (isinstance(c[k], str) and c[k].strip())]
        if bad:
            raise ClaimError(f"{where}: claim {c.get('id')!r}: {', '.join(bad)} must be non-empty text")


def from_plugin(c: Mapping, figure: str) -> dict:
    """A figure module's CLAIMS entry as a declaration (the project's own: it quotes no source)."""
    return {"id": c["id"], "figure": figure, "origin": "extension", "extends": "none", "landmark": c["source"],
            "reference": c["reference"], "claim": c["claim"], "statistic": c["statistic"], "control": c["control"],
            "test": c["test"]}


def check_declaration_file(where: str, doc, own: bool, figures: set[str]) -> None:
    """A declaration file: ``source`` (key, title), ``claims`` (each with :data:`REQUIRED_FIELDS` as non-empty text,
    an origin allowed for the file, a figure that exists, a quote where the origin is the source) and, for a
    source, ``results`` (each with a landmark and either claims of this workflow or ``not_covered``)."""
    if not isinstance(doc, Mapping) or not isinstance(doc.get("source"), Mapping) or "claims" not in doc:
        raise ClaimError(f"{where}: a declaration file has a 'source' mapping and a 'claims' list")
    for c in doc["claims"]:
        cid = c.get("id") if isinstance(c, Mapping) else None
        if not isinstance(c, Mapping) or set(c) - set(REQUIRED_FIELDS) - set(OPTIONAL_FIELDS):
            raise ClaimError(f"{where}: claim {cid!r}: allowed fields {', '.join(REQUIRED_FIELDS + OPTIONAL_FIELDS)}")
        bad = [k for k in REQUIRED_FIELDS if not (isinstance(c.get(k), str) and c[k].strip())]
        if bad:
            raise ClaimError(f"{where}: claim {cid!r}: {', '.join(bad)} must be non-empty text")
        allowed = OWN_ORIGINS if own else SOURCE_ORIGINS
        if c["origin"] not in allowed:
            raise ClaimError(f"{where}: claim {cid!r}: origin {c['origin']!r}; allowed in this file: {', '.join(allowed)}")
        if c["origin"] == "source" and not (isinstance(c.get("quote"), str) and c["quote"].strip()):
            raise ClaimError(f"{where}: claim {cid!r}: a claim of the source's own quotes its words (quote)")
        if own and "extends" not in c:
            raise ClaimError(f"{where}: claim {cid!r}: say which source it extends (extends: <key> or none)")
        if c["figure"] not in figures:
            raise ClaimError(f"{where}: claim {cid!r}: no figure {c['figure']!r}")
        if "not_tested_as_stated" in c and not (isinstance(c["not_tested_as_stated"], str)
                                                and c["not_tested_as_stated"].strip()):
            raise ClaimError(f"{where}: claim {cid!r}: not_tested_as_stated says why the rule cannot test the words")
        if not all(isinstance(x, str) and x.strip() for x in c.get("caveats", [])):
            raise ClaimError(f"{where}: claim {cid!r}: caveats must be a list of non-empty texts")
        if not (isinstance(c.get("reads"), list) and c["reads"] and all(isinstance(x, str) and x.strip()
                                                                        for x in c["reads"])):
            raise ClaimError(f"{where}: claim {cid!r}: reads must list the names its statistic is computed from, as "
                             "dotted paths into its figure's statistics (the sidecar's 'stats'; '*' for every entry)")
    for r in doc.get("results", []):
        if not isinstance(r, Mapping) or not r.get("landmark") or not (r.get("claims") or r.get("not_covered")):
            raise ClaimError(f"{where}: each result needs a landmark and either claims or not_covered; got {r!r}")


def check_scores(where: str, declared_ids: Iterable[str], scores: Mapping) -> dict:
    """The scores a figure module returned: one per declared claim (missing ones are ``not run``), none
    undeclared, each with the score fields."""
    ids = list(declared_ids)
    extra = sorted(set(scores) - set(ids))
    if extra:
        raise ClaimError(f"{where}: scores for undeclared claims {extra}")
    out = {}
    for cid in ids:
        s = scores.get(cid) or not_run("not scored by this figure's inputs")
        if set(s) != set(SCORE_FIELDS) or s["verdict"] not in VERDICTS:
            raise ClaimError(f"{where}: claim {cid!r}: a score has the fields {', '.join(SCORE_FIELDS)} and a "
                             f"verdict of {', '.join(VERDICTS)}; got {s!r}")
        out[cid] = dict(s)
    return out
