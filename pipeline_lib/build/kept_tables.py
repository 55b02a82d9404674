"""Tables that a script outside the workflow measured (a diagnostic), kept as JSON beside the page that shows them.

A script writes its table with :func:`keep` (the columns, the rows as printed text, the command that made them,
the machine, torch and the date); ``publish`` fills each ``<!-- kept PATH: begin -->`` ... ``<!-- kept PATH:
end -->`` block of a page under ``docs/`` from the file at ``PATH`` (relative to the repository), so the page
states no number that a kept run did not write. A block whose file is missing says so.
"""
from __future__ import annotations

import datetime
import json
import platform
import re
from pathlib import Path

from .waits import machine

BLOCK = re.compile(r"(<!-- kept ([\w./-]+\.json): begin -->\n)(.*?)(<!-- kept \2: end -->)", re.S)
PAGES = ("docs/diagnostics/*.md",)  # the pages whose kept blocks publish fills


def made_by(command: list[str]) -> dict:
    """What a kept measurement records of its making: the command, the machine, torch, Python and the date."""
    import torch

    return {"command": " ".join(command), "machine": machine(), "torch": torch.__version__,
            "python": platform.python_version(), "date": datetime.date.today().isoformat()}


def keep(path: Path, columns: list[str], rows: list[list[str]], command: list[str], source: str | None = None) -> Path:
    """Write a measured table with what made it to ``path`` (a JSON file, its folder made); ``source``: where a
    table read from files kept earlier (logs) took its numbers, whose runs were not made by this command."""
    if any(len(r) != len(columns) for r in rows):
        raise ValueError(f"{path}: every row needs {len(columns)} cells, one per column {columns}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    record = made_by(command) | ({"source": source} if source else {}) | {"columns": columns, "rows": rows}
    path.write_text(json.dumps(record, indent=1) + "\n")
    return path


def block(root: Path, rel: str) -> str:
    """A kept table as markdown, headed by the command, machine and date that made it."""
    path = Path(root) / rel
    if not path.exists():
        return f"*Not measured: no `{rel}` is kept; the script's `--keep` writes it.*\n"
    kept = json.loads(path.read_text())
    made = (f"read from {kept['source']}, {kept['date']}" if "source" in kept
            else f"on {kept['machine']}, {kept['date']} (torch {kept['torch']}")
    lines = [f"`{kept['command']}` {made}; `{rel}`" + ("" if "source" in kept else ")") + ":", "",
             "| " + " | ".join(kept["columns"]) + " |", "|" + "---|" * len(kept["columns"])]
    lines += ["| " + " | ".join(row) + " |" for row in kept["rows"]]
    return "\n".join(lines) + "\n"


def fill(root: Path, text: str) -> str:
    return BLOCK.sub(lambda m: m.group(1) + block(root, m.group(2)) + m.group(4), text)


def pages(root: Path) -> dict[Path, str]:
    """Every page with kept blocks, as ``publish`` writes it."""
    root = Path(root)
    out = {}
    for pattern in PAGES:
        for page in sorted(root.glob(pattern)):
            text = page.read_text()
            if BLOCK.search(text):
                out[page] = fill(root, text)
    return out
