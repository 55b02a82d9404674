"""A claim's caveats, written once for every config: a fact of the config (a run's length, learning rate, seed
count) is a placeholder ``{<figure>:<dotted path>}`` into that figure's statistics (the sidecar's ``stats``, the
namespace of a claim's ``reads``), filled from the config's own sidecars when the ledger is written
(:mod:`pipeline_lib.stages.claims`) and checked when the declarations are read
(:func:`pipeline_lib.declarations.declaration_files`). Light: the DAG is built with it imported."""
from __future__ import annotations

import re
from collections.abc import Mapping

from .claims import read_stat

# a caveat's placeholder: {<figure>:<dotted path into its statistics>}
PLACEHOLDER = re.compile(r"\{([A-Za-z0-9_]+):([^{}:]+)\}")
NOT_IN_CONFIG = "(not in this config)"


def fill_caveat(text: str, stats: Mapping[str, Mapping]) -> str:
    """A caveat with each placeholder ``{figure:path}`` replaced by what :func:`read_stat` finds at ``path`` in
    that figure's statistics (figure name -> its sidecar's ``stats``): a whole number in full, another to 4
    significant digits, several different values each once joined by " or " (" / " separates caveats), and
    :data:`NOT_IN_CONFIG` where the figure is not drawn or the path names nothing there."""
    def one(m: re.Match) -> str:
        figure, path = m.groups()
        found = [v for v in read_stat(stats[figure], path) if isinstance(v, (int, float, str)) and
                 not isinstance(v, bool)] if figure in stats else []
        shown = list(dict.fromkeys(v if isinstance(v, str) else str(int(v)) if float(v).is_integer() else f"{v:.4g}"
                                   for v in found))
        return " or ".join(shown) if shown else NOT_IN_CONFIG

    return PLACEHOLDER.sub(one, text)


def check_caveat(text: str, figures: set[str]) -> str:
    """Why a caveat's placeholders are malformed or name no figure ("" when they are fine): braces only as
    ``{figure:path}``."""
    for figure, _ in PLACEHOLDER.findall(text):
        if figure not in figures:
            return f"placeholder names no figure {figure!r}"
    rest = PLACEHOLDER.sub("", text)
    if "{" in rest or "}" in rest:
        return "a brace outside a placeholder {<figure>:<dotted path>}"
    return ""
