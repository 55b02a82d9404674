"""Stage of every figure: build one figure module's figure, save ``.pdf``/``.png``, a ``.json``
sidecar with the numbers the figure states (``stats``, with a one-line ``summary``) and its
provenance (also embedded in the PNG and PDF metadata), and ``.rst``: its caption for
``snakemake --report`` (the caption text, the measured summary and the provenance)."""
from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

from ..plumbing import registry
from ..plumbing.config import Config
from ..plumbing.jobs import FIGURE_OUTPUTS, figure_inputs, figure_outputs
from ..plumbing.paths import Paths
from ..plumbing.store import atomic_path, provenance
from .figure_layout import collisions


def build_figure(cfg: Config, name: str, paths: Paths | None = None, caption: str | None = None,
                 code: str = "") -> dict:
    """Build figure ``name``; ``caption``: its caption file (``workflow/report/<name>.txt``), else
    the module's docstring is the caption; ``code``: the job's code param, kept in the provenance."""
    module = registry.load("figure", name)
    paths = paths or cfg.paths
    extra = {ext: paths.figure(name, ext) for ext in figure_outputs(name)[len(FIGURE_OUTPUTS):]}
    fig, stats = module.build(cfg, cfg.figures[name], paths, extra)
    stats = json.loads(json.dumps(stats))  # as the sidecar keeps it (JSON keys are strings), which the ledger scores
    attrs = provenance(cfg.figure_slice(name), figure_inputs(cfg, name, paths), device="none", code=code)
    pdf, png, sidecar, rst = (paths.figure(name, ext) for ext in FIGURE_OUTPUTS)
    save_figure(fig, stats, attrs, pdf, png, sidecar)
    with atomic_path(rst) as tmp:
        Path(tmp).write_text(caption_rst(caption_text(name, caption), stats, attrs))
    return stats


def caption_text(name: str, caption: str | None) -> str:
    """A figure's caption: its caption file, else its module's docstring."""
    if caption:
        return Path(caption).read_text()
    return ast.get_docstring(registry.parse(registry.plugin("figure", name).path)) or ""


def _rst_escape(text: str) -> str:
    """Plain text as one reStructuredText paragraph: inline markup escaped, and the leading
    backslash-space (which docutils drops) keeps a start like "- ", "1. " or ".. " from being read
    as a list or a comment."""
    return "\\ " + re.sub(r"([\\*`_|\[\]<>])", r"\\\1", text).replace("::", "\\:\\:")


def caption_rst(caption: str, stats: dict, attrs: dict) -> str:
    """The report caption: the text, the measured numbers and the provenance, as reStructuredText
    kept verbatim by Snakemake's Jinja pass (``{% raw %}``)."""
    paragraphs = [_rst_escape(" ".join(p.split())) for p in re.split(r"\n\s*\n", caption) if p.strip()]
    paragraphs.append("**Measured:** " + _rst_escape(stats.get("summary", "")).removeprefix("\\ "))
    paragraphs.append(_rst_escape(f"config {attrs['config_hash']} · code {attrs['code_hash']} · "
                                  f"commit {attrs['git_commit']} · {attrs['created_at']}"))
    return "{% raw %}\n" + "\n\n".join(paragraphs) + "\n{% endraw %}\n"


def laid_out_box(fig):
    """Lay ``fig`` out once and return its tight bounding box (inches, padded as ``bbox_inches="tight"``
    pads it), with the layout engine then switched off: each ``savefig`` given that box draws the figure
    once, where ``bbox_inches="tight"`` lays it out and draws it twice per file (most of a large figure's
    time, e.g. one panel per run)."""
    import matplotlib as mpl

    fig.draw_without_rendering()
    box = fig.get_tightbbox()
    fig.set_layout_engine("none")
    pad = mpl.rcParams["savefig.pad_inches"]
    return box.padded(pad, pad)


def save_figure(fig, stats: dict, attrs: dict, pdf: str, png: str, sidecar: str) -> None:
    """The figure's files, and a line in the job's log (stderr) on its layout: each text of one panel that runs
    into another panel (:mod:`.figure_layout`)."""
    meta = json.dumps({"stats": stats, "provenance": attrs})
    box = laid_out_box(fig)
    try:
        found = collisions(fig)
    except Exception as exc:  # noqa: BLE001 (a check of the drawing, never a reason to lose the figure)
        print(f"layout of {Path(png).stem}: not checked ({type(exc).__name__}: {exc})", file=sys.stderr)
    else:
        print(f"layout of {Path(png).stem}: {len(fig.axes)} axes, {len(found)} texts running into another panel"
              + "".join(f"\n  {line}" for line in found), file=sys.stderr)
    with atomic_path(pdf) as tmp:
        fig.savefig(tmp, format="pdf", bbox_inches=box, metadata={"Subject": meta[:60000]})
    with atomic_path(png) as tmp:
        fig.savefig(tmp, format="png", dpi=150, bbox_inches=box, metadata={"Description": meta})
    with atomic_path(sidecar) as tmp:
        Path(tmp).write_text(json.dumps({"stats": stats, "provenance": attrs}, indent=2))
