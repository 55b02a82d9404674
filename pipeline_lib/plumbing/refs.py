"""References between config entries, read from the plug-ins' schema fragments.

References between config entries are the ``x-ref`` annotations of the plug-ins' schema fragments:
``x-ref: run`` (the job reads the run's trajectory, its ancestors' too, unless ``x-reads`` says
otherwise: any of ``trajectory``, ``weights``, ``dataset``, ``analysis/<kind>`` for a per-run
analysis's artifact of the run), ``x-ref: dataset``, and ``x-ref: analysis/<kind>`` (an entry of
``analyses.<kind>``: its ``artifact`` by default, or with ``x-reads`` what it names for the runs
that entry references). ``x-requires`` is a JSON schema each referenced run must satisfy (checked in
``config_checks``). ``x-all-runs: true`` on a property lets its value ``all`` reference every run of the
config (so a run added to the config is read without being listed).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Mapping

from . import registry


@dataclass(frozen=True)
class Ref:
    path: str  # config key path of the reference
    target: str  # 'run', 'dataset' or 'analysis/<kind>'
    name: str
    reads: tuple[str, ...]
    requires: Mapping[str, Any] | None = None
    requires_message: str = ""


def reads(schema: Mapping, target: str, default_reads: tuple[str, ...] = ("trajectory",)) -> tuple[str, ...]:
    if "x-reads" in schema:
        return tuple(schema["x-reads"])
    return default_reads if target == "run" else ("artifact",) if target.startswith("analysis/") else ()


def refs(raw: Mapping, path: str, schema: Mapping, value: Any, default_reads=("trajectory",)) -> Iterator[Ref]:
    """Every reference in ``value`` that its schema marks with ``x-ref``, with its key path."""
    if not isinstance(schema, Mapping) or value is None:
        return
    if schema.get("x-all-runs") and value == "all":  # every run of the config (e.g. the run_curves figure)
        for name in raw.get("runs", {}):
            yield Ref(path, "run", name, reads(schema, "run", default_reads))
        return
    if "x-ref" in schema and isinstance(value, str):
        yield Ref(path, schema["x-ref"], value, reads(schema, schema["x-ref"], default_reads),
                   schema.get("x-requires"), schema.get("x-requires-message", ""))
        return
    if isinstance(value, Mapping):
        props = schema.get("properties", {})
        for k, v in value.items():
            sub = props.get(k, schema.get("additionalProperties"))
            yield from refs(raw, f"{path}.{k}", sub, v, default_reads)
    elif isinstance(value, list):
        for v in value:
            yield from refs(raw, path, schema.get("items"), v, default_reads)


def analysis_refs(raw: Mapping, kind: str, name: str) -> list[Ref]:
    plug = registry.plugin("analysis", kind)
    if plug.get("PER_RUN"):
        return [Ref(f"analyses.{kind}.runs", "run", name, reads(plug.schema["properties"]["runs"]["items"], "run",
                                                                  ("weights",)))]
    return list(refs(raw, f"analyses.{kind}.{name}", plug.schema, raw["analyses"][kind][name], ("weights",)))


def reached_entries(raw: Mapping, figure: str) -> dict[tuple[str, str], Any]:
    """(analysis, entry) -> config block of every analysis entry a figure references."""
    found = refs(raw, f"figures.{figure}", registry.plugin("figure", figure).schema, raw["figures"][figure])
    out = {}
    for ref in found:
        if ref.target.startswith("analysis/"):
            kind = ref.target.split("/", 1)[1]
            if not registry.plugin("analysis", kind).get("PER_RUN"):
                out[(kind, ref.name)] = raw["analyses"][kind][ref.name]
    return out
