"""Stage of every figure: build one figure module's figure, save ``.pdf``/``.png`` and a ``.json``
sidecar with the numbers the figure states (``stats``, with a one-line ``summary`` the report
quotes) and its provenance, also embedded in the PNG and PDF metadata."""
from __future__ import annotations

import json
from pathlib import Path

from .. import registry
from ..config import Config
from ..jobs import FIGURE_OUTPUTS, figure_code, figure_inputs, figure_outputs
from ..paths import Paths
from ..store import atomic_path, provenance

def build_figure(cfg: Config, name: str, paths: Paths = Paths()) -> dict:
    module = registry.load("figure", name)
    extra = {ext: paths.figure(name, ext) for ext in figure_outputs(name)[len(FIGURE_OUTPUTS):]}
    fig, stats = module.build(cfg, cfg.figures[name], paths, extra)
    attrs = provenance(cfg.figure_slice(name), figure_inputs(cfg, name, paths), device="none", code=figure_code(name))
    save_figure(fig, stats, attrs, *(paths.figure(name, ext) for ext in FIGURE_OUTPUTS))
    return stats


def save_figure(fig, stats: dict, attrs: dict, pdf: str, png: str, sidecar: str) -> None:
    meta = json.dumps({"stats": stats, "provenance": attrs})
    with atomic_path(pdf) as tmp:
        fig.savefig(tmp, format="pdf", bbox_inches="tight", metadata={"Subject": meta[:60000]})
    with atomic_path(png) as tmp:
        fig.savefig(tmp, format="png", dpi=150, bbox_inches="tight", metadata={"Description": meta})
    with atomic_path(sidecar) as tmp:
        Path(tmp).write_text(json.dumps({"stats": stats, "provenance": attrs}, indent=2))
