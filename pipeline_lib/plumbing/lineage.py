"""Lineage of an artifact: the chain of inputs back to the datasets, each checked against disk.

Every artifact records, in its provenance, the path and sha256 of each input it was made from
(``inputs_json``). Walking those records gives the tree from any artifact (a figure via its JSON
sidecar, an HDF5 file via its attrs) back to the datasets; each recorded hash is compared with the
file on disk, so an input rebuilt or edited after the artifact was made shows as STALE, and a
deleted one as MISSING.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import h5py

from .store import file_hash

FIGURE_SUFFIXES = (".pdf", ".png", ".json", ".rst")  # a figure's files; its provenance: the .json


@dataclass
class Node:
    path: Path
    depth: int
    recorded_sha256: str | None  # what the child recorded (None for the artifact asked about)
    current_sha256: str | None  # the file on disk now (None if missing)
    provenance: dict = field(default_factory=dict)

    @property
    def status(self) -> str:
        if self.current_sha256 is None:
            return "MISSING"
        if self.recorded_sha256 is not None and self.recorded_sha256 != self.current_sha256:
            return "STALE"  # changed on disk since the artifact that used it was made
        return "ok"


def read_provenance(path: Path) -> dict:
    """Provenance of an artifact: figure sidecar JSON, or the attrs of an HDF5 artifact."""
    if path.suffix in FIGURE_SUFFIXES:
        sidecar = path.with_suffix(".json")
        return json.loads(sidecar.read_text())["provenance"]
    with h5py.File(path, "r") as fh:
        return {k: (v.decode() if isinstance(v, bytes) else v.item() if hasattr(v, "item") else v)
                for k, v in fh.attrs.items()}


def root_of(path: Path) -> Path:
    """The working directory the artifact was made in (its recorded input paths are relative to
    it): the nearest folder above it from which its first recorded input exists, else the folder
    holding a ``results`` folder, else the current directory."""
    try:
        inputs = json.loads(read_provenance(path).get("inputs_json", "[]"))
    except (OSError, KeyError, ValueError):
        inputs = []
    first = Path(inputs[0]["path"]) if inputs else None
    if first is not None and not first.is_absolute():
        for parent in path.resolve().parents:
            if (parent / first).exists():
                return parent
    parts = path.resolve().parts
    return Path(*parts[: parts.index("results")]) if "results" in parts else Path.cwd()


def lineage(artifact: str | Path) -> list[Node]:
    """Depth-first list of the artifact and all its recorded ancestors."""
    artifact = Path(artifact)
    root = root_of(artifact)
    nodes: list[Node] = []

    def visit(path: Path, depth: int, recorded: str | None) -> None:
        exists = path.exists() or (path.suffix in FIGURE_SUFFIXES and path.with_suffix(".json").exists())
        current = file_hash(path) if path.exists() else None
        node = Node(path, depth, recorded, current)
        nodes.append(node)
        if not exists:
            return
        try:
            node.provenance = read_provenance(path)
        except (OSError, KeyError, ValueError) as exc:
            node.provenance = {"error": f"cannot read provenance: {exc}"}
            return
        for inp in json.loads(node.provenance.get("inputs_json", "[]")):
            p = Path(inp["path"])
            visit(p if p.is_absolute() else root / p, depth + 1, inp["sha256"])

    visit(artifact, 0, None)
    return nodes


def format_lineage(nodes: list[Node], root: Path | None = None) -> str:
    lines = []
    for n in nodes:
        pad = "  " * n.depth
        prov = n.provenance
        shown = n.path
        if root is not None:
            try:
                shown = n.path.resolve().relative_to(root.resolve())
            except ValueError:
                pass
        lines.append(f"{pad}{shown}  [{n.status}]")
        if n.current_sha256:
            lines.append(f"{pad}  sha256 {n.current_sha256[:16]}"
                         + (f" (recorded {n.recorded_sha256[:16]})" if n.status == "STALE" else ""))
        if "error" in prov:
            lines.append(f"{pad}  {prov['error']}")
        elif prov:
            lines.append(f"{pad}  created {prov.get('created_at')} by pipeline_lib {prov.get('pipeline_lib_version')}"
                         f" at commit {prov.get('git_commit')}, code {prov.get('code_hash')}, torch "
                         f"{prov.get('torch_version')}, device {prov.get('device')}")
            lines.append(f"{pad}  config {prov.get('config_hash')}: {prov.get('config_json')}")
    bad = [n for n in nodes if n.status != "ok"]
    lines.append(f"{len(nodes)} artifacts, " + (f"{len(bad)} not matching their record" if bad else "all match their records"))
    return "\n".join(lines)
