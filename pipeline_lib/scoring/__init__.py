"""Scoring, one module per figure that has claims (``<figure name>.py``), apart from the figure modules:
``score_claims(stats, params) -> {id: score}`` computes the figure's declared claims from its statistics (the
``stats`` its ``build`` returned, as its sidecar and ``docs/stats`` keep them).

The ledger job scores every figure's claims (:func:`score_figure`) and ``python -m pipeline_lib publish`` re-scores
the kept statistics with the same call. Kept apart so that a change of a rule reruns the ledger job alone (seconds)
and re-publishes every config from its kept statistics, while the figure job, whose code is its figure module, is
not touched: a scoring module may import its figure module's constants, a figure module never imports scoring.
A user's own figure may keep its ``score_claims`` in its figure module instead (one file; a change of its rule
then reruns its figure too)."""
from __future__ import annotations

import importlib.util

from ..claims import check_scores
from ..declarations import figure_claims
from ..plumbing import registry


def module_name(figure: str) -> str:
    """The module that scores ``figure``'s claims: ``pipeline_lib.scoring.<figure>`` where it exists, else the
    figure's own module."""
    spec = importlib.util.find_spec(f"{__name__}.{figure}")
    return spec.name if spec is not None else registry.plugin("figure", figure).module


def score_figure(figure: str, stats: dict, params) -> dict:
    """``figure``'s declared claims scored on its statistics (checked against the declarations); {} where it
    declares none."""
    declared = figure_claims(figure)
    if not declared:
        return {}
    name = module_name(figure)
    module = (importlib.import_module(name) if name.startswith(f"{__name__}.")
              else registry.load("figure", figure))
    return check_scores(f"figure {figure!r} ({name})", declared, module.score_claims(stats, params))
