"""Stage `report`: one self-contained HTML page with every figure, its caption and measured numbers.

Captions come from ``workflow/report/<figure>.txt`` (what the figure shows) or, where a figure has no
such file, from its module's docstring; the measured numbers
from the figure's ``.json`` sidecar (``stats.summary``); provenance (config hash, commit, time) too.
"""
from __future__ import annotations

import ast
import base64
import datetime as _dt
import html
import json
from pathlib import Path

from .. import registry
from ..codehash import parse
from ..store import atomic_path


def caption_text(name: str, caption: str | None) -> str:
    """A figure's caption: its caption file, else its module's docstring."""
    if caption:
        return Path(caption).read_text()
    return ast.get_docstring(parse(registry.plugin("figure", name).path)) or ""


def build_report(figures: list[tuple[str, str, str, str]], out_html: str, title: str = "Training dynamics") -> None:
    """``figures``: (name, png path, sidecar json path, caption text path or None) in display order."""
    sections = []
    for name, png, sidecar, caption in figures:
        side = json.loads(Path(sidecar).read_text())
        prov = side["provenance"]
        img = base64.b64encode(Path(png).read_bytes()).decode()
        text = "".join(f"<p>{html.escape(par.strip())}</p>" for par in caption_text(name, caption).split("\n\n") if par.strip())
        sections.append(
            f'<section id="{name}"><h2>{html.escape(name)}</h2>'
            f'<img src="data:image/png;base64,{img}" alt="{html.escape(name)}">{text}'
            f'<p class="measured"><b>Measured:</b> {html.escape(side["stats"].get("summary", ""))}</p>'
            f'<p class="prov">config {prov["config_hash"]} · code {prov["code_hash"]} · commit {prov["git_commit"]}'
            f' · {prov["created_at"]} · files: {name}.pdf, {name}.png, {name}.json</p></section>')
    toc = " · ".join(f'<a href="#{n}">{n}</a>' for n, *_ in figures)
    page = f"""<!doctype html><html><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>body{{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}}
img{{max-width:100%;border:1px solid #ddd}} .measured{{background:#f4f4f4;padding:.5em}}
.prov{{color:#777;font-size:.8em}} section{{margin-bottom:3em}}</style></head><body>
<h1>{html.escape(title)}</h1><p>Generated {_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}.
{toc}</p>{"".join(sections)}</body></html>"""
    with atomic_path(out_html) as tmp:
        Path(tmp).write_text(page)
