"""Tables that a script outside the workflow measured (a diagnostic), kept as JSON beside the page that shows them.

A script writes its table with :func:`keep` (the columns, the rows as printed text, the command that made them,
the machine, its cores, torch and the date); ``publish`` fills each ``<!-- kept PATH: begin -->`` ...
``<!-- kept PATH: end -->`` block of ``docs/diagnostics/*.md`` from the file at ``PATH`` (relative to the
repository), so the page states no number that a kept run did not write. A block whose file is missing says so;
a marker without its pair stops ``publish`` naming the page (:func:`fill_blocks`, shared with the benchmark's
page). A table read from files kept earlier (a run's logs) names them as its ``source`` instead of the machine
that read them, and no date: reading them again writes the same file.
"""
from __future__ import annotations

import datetime
import json
import platform
import re
import shlex
from collections.abc import Callable
from pathlib import Path

from .waits import cores, machine

PAGES = ("docs/diagnostics/*.md",)  # the pages whose kept blocks publish fills


def made_by(command: list[str]) -> dict:
    """What a kept measurement records of its making: the command, the machine and its cores, torch, Python and
    the date."""
    import torch

    return {"command": shlex.join(command), "machine": machine(), "cores": cores(),
            "torch": torch.__version__, "python": platform.python_version(),
            "date": datetime.date.today().isoformat()}


def made_on(kept: dict) -> str:
    """Where and when a kept measurement ran, as the pages say it."""
    count = f" ({kept['cores']} cores)" if kept.get("cores") else ""
    return f"on {kept['machine']}{count}, {kept['date']} (torch {kept['torch']})"


def not_kept(rel: str, how: str) -> str:
    return f"*Not measured: no `{rel}` is kept. {how}*\n"


def fill_blocks(text: str, kind: str, render: Callable[[str], str], where: str) -> str:
    """``text`` with each ``<!-- KIND NAME: begin -->`` ... ``<!-- KIND NAME: end -->`` block's body replaced by
    ``render(NAME)``; a marker of that kind outside such a pair (a typo, an unclosed block) raises, naming
    ``where``, rather than leaving what the block held."""
    block = re.compile(rf"(<!-- {kind} ([\w./-]+): begin -->\n)(.*?)(<!-- {kind} \2: end -->)", re.S)
    stray = re.findall(rf"<!-- {kind} .*?-->", block.sub("", text))
    if stray:
        raise ValueError(f"{where}: {stray[0]!r} is not one half of a '<!-- {kind} NAME: begin -->' ... "
                         f"'<!-- {kind} NAME: end -->' pair")
    return block.sub(lambda m: m.group(1) + render(m.group(2)) + m.group(4), text)


def keep(path: Path, columns: list[str], rows: list[list[str]], command: list[str], source: str | None = None,
         extra: dict | None = None) -> Path:
    """Write a measured table with what made it to ``path`` (a JSON file, its folder made); ``source``: where a
    table read from files kept earlier (logs) took its numbers, whose runs were not made by this command;
    ``extra``: further fields kept beside the table (e.g. the per-seed values a later diagnostic compares with)."""
    if any(len(r) != len(columns) for r in rows):
        raise ValueError(f"{path}: every row needs {len(columns)} cells, one per column {columns}")
    made = {"command": shlex.join(command), "source": source} if source else made_by(command)
    return write(path, made | {"columns": columns, "rows": rows} | (extra or {}))


def write(path: Path, record: dict) -> Path:
    """A kept record as ``path`` (JSON, its folder made), as both the diagnostics and the benchmark keep theirs."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1) + "\n")
    return path


def block(root: Path, rel: str) -> str:
    """A kept table as markdown, headed by the command and where it ran (or what it read)."""
    path = Path(root) / rel
    if not path.exists():
        return not_kept(rel, "The script's `--keep` writes it.")
    kept = json.loads(path.read_text())
    made = f"read from {kept['source']}" if kept.get("source") else made_on(kept)
    lines = [f"`{kept['command']}` {made}; `{rel}`:", "",
             "| " + " | ".join(kept["columns"]) + " |", "|" + "---|" * len(kept["columns"])]
    lines += ["| " + " | ".join(row) + " |" for row in kept["rows"]]
    return "\n".join(lines) + "\n"


def pages(root: Path) -> dict[Path, str]:
    """Every page with kept blocks, as ``publish`` writes it."""
    root = Path(root)
    out = {}
    for pattern in PAGES:
        for page in sorted(root.glob(pattern)):
            text = page.read_text()
            if "<!-- kept " in text:
                out[page] = fill_blocks(text, "kept", lambda rel: block(root, rel), str(page.relative_to(root)))
    return out
