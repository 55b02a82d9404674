"""Small helpers every part of the config machinery uses: declared expressions (task shapes, model
constraints, probe offers), seed lists, the canonical JSON and hash of a config slice."""
from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping

from . import registry

_SAFE = {"range": range, "round": round, "min": min, "max": max, "len": len, "int": int, "abs": abs}


def evaluate(expr: str, names: Mapping[str, Any], where: str):
    """Evaluate a plug-in's declared expression over config values (no builtins beyond _SAFE)."""
    try:
        return eval(expr, {"__builtins__": {}, **_SAFE, **names})  # noqa: S307 (declared in our modules)
    except Exception as exc:
        raise registry.PluginError(f"{where}: cannot evaluate {expr!r} with {dict(names)}: {exc}") from exc


def task_shape(raw_dataset: Mapping[str, Any]) -> dict:
    """n_train, n_test, tokens (None for images), T and classes of a dataset entry (its task's SHAPE)."""
    plug = registry.plugin("task", raw_dataset["task"])
    return {k: evaluate(e, raw_dataset, f"{plug.path} SHAPE[{k}]") for k, e in plug.get("SHAPE", {}).items()}


def per_run(analysis: str) -> bool:
    """Whether an analysis runs one job per listed run (its block holds ``runs`` and shared settings)
    rather than one job per named entry."""
    return bool(registry.plugin("analysis", analysis).get("PER_RUN", False))


def slice_hash(obj: Any) -> str:
    """Stable short hash of a JSON-serialisable config slice."""
    return hashlib.sha256(canonical_json(obj).encode()).hexdigest()[:16]


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


def seed_list(seeds) -> tuple[int, ...]:
    return tuple(range(seeds)) if isinstance(seeds, int) else tuple(seeds)
