"""Golden runs: the digests of every artifact of a results folder, and what moved between two of them.

A digest is, per data variable of each HDF5 artifact (datasets, trajectories, weights, analyses) and per
numeric leaf of each figure's sidecar, four numbers: the size, the mean, the mean absolute value and the
root mean square. With the artifact it keeps the stage that wrote it and that stage's code hash (from
the provenance), so a comparison can say which stage moved and whether its code changed.

``tests/test_golden.py`` compares the test config's smoke run to ``tests/golden/test_config.json``:
numbers that moved under a recorded-equivalent or unchanged code hash fail the suite, naming the stage;
a changed code hash with unmoved numbers asks for a record (:mod:`pipeline_lib.plumbing.equivalence`); an
intended change of numbers rewrites the digests (``python -m pipeline_lib golden --write``).
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from .store import read_dataset

# Agreement of two digests: |a - b| <= RTOL * max(|a|, |b|) + ATOL_SCALE * (the variable's mean |x|).
# 1e-4: the test config's runs are short (a few epochs), so a bit-level difference of one machine's
# kernels stays far below it, while a change of any hyperparameter or formula moves some statistic of
# some artifact past it.
RTOL = 1e-4
ATOL_SCALE = 1e-6


def _stats(values: np.ndarray) -> list[float]:
    x = np.asarray(values, dtype=np.float64).ravel()
    x = x[np.isfinite(x)]
    if x.size == 0:
        return [0, 0.0, 0.0, 0.0]
    return [int(x.size), float(x.mean()), float(np.abs(x).mean()), float(np.sqrt((x * x).mean()))]


def _stage(rel: str) -> str:
    parts = rel.split("/")
    if parts[0] == "datasets":
        return f"dataset {Path(parts[1]).stem}"
    if parts[0] == "runs":
        return f"train {parts[1]}"
    if parts[0] == "analysis":
        return f"{parts[1]} {Path(parts[2]).stem}"
    return f"figure {Path(parts[-1]).stem}"


def _h5_digest(path: Path) -> tuple[dict[str, list[float]], str]:
    with read_dataset(path) as ds:
        out = {}
        for name in sorted([*ds.data_vars, *ds.coords]):
            arr = ds[name].values
            if arr.dtype.kind in "biuf":
                out[name] = _stats(arr)
        code = str(ds.attrs.get("code_hash", ""))
    return out, code


def _leaves(node: Any, prefix: str, out: dict[str, list]) -> None:
    if isinstance(node, dict):
        for k, v in node.items():
            if k != "provenance":
                _leaves(v, f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(node, list) and node and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                  or v is None for v in node):
        out.setdefault(prefix, []).extend(np.nan if v is None else v for v in node)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            _leaves(v, f"{prefix}[{i}]", out)
    elif isinstance(node, (int, float)) and not isinstance(node, bool):
        out.setdefault(prefix, []).append(node)


def _json_digest(path: Path) -> tuple[dict[str, list[float]], str]:
    side = json.loads(path.read_text())
    leaves: dict[str, list] = {}
    _leaves(side, "", leaves)
    return {k: _stats(np.array(v, dtype=np.float64)) for k, v in sorted(leaves.items())}, \
        side.get("provenance", {}).get("code_hash", "")


def digest(results: Path) -> dict[str, dict]:
    """``relative path -> {"stage", "code", "vars": {name: [size, mean, mean |x|, rms]}}`` for every
    artifact of a results folder (a replicate's subfolder excluded)."""
    results = Path(results)
    out = {}
    files = sorted(p for p in results.rglob("*.h5") if "replication" not in p.relative_to(results).parts)
    files += sorted((results / "figures").glob("*.json"))
    for path in files:
        rel = path.relative_to(results).as_posix()
        values, code = (_h5_digest if path.suffix == ".h5" else _json_digest)(path)
        out[rel] = {"stage": _stage(rel), "code": code, "vars": values}
    return out


def _close(a: list[float], b: list[float]) -> bool:
    if a[0] != b[0]:
        return False
    scale = ATOL_SCALE * max(abs(a[2]), abs(b[2]))
    return all(math.isclose(x, y, rel_tol=RTOL, abs_tol=scale) for x, y in zip(a[1:], b[1:]))


def compare(golden: dict[str, dict], current: dict[str, dict]) -> dict[str, list[str]]:
    """What differs, by kind: ``moved`` (numbers moved, code hash the same: a failure), ``changed``
    (code hash and numbers both changed: digests to rewrite if intended), ``unmoved`` (code hash changed,
    numbers did not: a refactor to record as equivalent), ``missing`` / ``new`` artifacts."""
    out: dict[str, list[str]] = {"moved": [], "changed": [], "unmoved": [], "missing": [], "new": []}
    for rel in sorted(set(golden) | set(current)):
        if rel not in current:
            out["missing"].append(f"{rel} ({golden[rel]['stage']})")
            continue
        if rel not in golden:
            out["new"].append(f"{rel} ({current[rel]['stage']})")
            continue
        g, c = golden[rel], current[rel]
        moved = sorted(v for v in set(g["vars"]) | set(c["vars"])
                       if v not in g["vars"] or v not in c["vars"] or not _close(g["vars"][v], c["vars"][v]))
        line = f"{rel} (stage {c['stage']}): " + (", ".join(moved[:5]) + (" ..." if len(moved) > 5 else "")
                                                    if moved else "no number moved")
        if g["code"] == c["code"]:
            if moved:
                out["moved"].append(line)
        elif moved:
            out["changed"].append(line)
        else:
            out["unmoved"].append(line)
    return out


def identical(before: Path, after: Path, only: str = "") -> dict[str, list[str]]:
    """Bit-level comparison of two results folders (a restructure's before and after): every data
    variable and coordinate of every HDF5 artifact present in ``before`` (under ``only``, e.g.
    ``runs``) must be equal in ``after``, NaN where NaN. By kind: ``differ`` (artifact: variables),
    ``missing`` (in ``before`` only), ``same`` (artifacts equal)."""
    before, after = Path(before), Path(after)
    out: dict[str, list[str]] = {"differ": [], "missing": [], "same": []}
    for path in sorted((before / only).rglob("*.h5")):
        rel = path.relative_to(before).as_posix()
        if not (after / rel).exists():
            out["missing"].append(rel)
            continue
        with read_dataset(path) as a, read_dataset(after / rel) as b:
            names = sorted({*a.data_vars, *a.coords} | {*b.data_vars, *b.coords})
            bad = [n for n in names if n not in a or n not in b
                   or not np.array_equal(a[n].values, b[n].values, equal_nan=a[n].dtype.kind in "fc")]
        out["differ" if bad else "same"].append(f"{rel}: {', '.join(bad)}" if bad else rel)
    return out


def write(results: Path, path: Path) -> int:
    data = digest(results)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [f"{json.dumps(rel)}: {json.dumps(data[rel], sort_keys=True)}" for rel in sorted(data)]
    path.write_text("{\n" + ",\n".join(lines) + "\n}\n")  # one artifact a line: a diff names it
    return len(data)
