"""The plug-in registries: task families, model kinds, analyses and figures, one module each.

A module of ``pipeline_lib/tasks``, ``models``, ``analysis`` or ``figures`` is a plug-in when it
declares ``NAME`` at its top level. Its *declaration* is the set of its upper-case module-level
constants whose values are literals (``NAME``, ``CONFIG``, ``INPUTS``, ``SHAPE``, ...; see the
README's "Add your own experiment"); the registry reads them with ``ast`` and never imports a
plug-in while the DAG is built, so building it needs neither torch nor numpy. ``CONFIG`` is the
JSON-schema fragment of the plug-in's config block, written as YAML; the config machinery assembles
the whole schema from these fragments. A stage imports the plug-in it runs with :func:`load`.

Adding a plug-in is adding its module: no table to edit.
"""
from __future__ import annotations

import ast
import functools
import importlib
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import yaml

from .codehash import parse

PACKAGE_DIR = Path(__file__).resolve().parent

# registry kind -> the package whose modules are its plug-ins
PACKAGES = {"task": "tasks", "model": "models", "analysis": "analysis", "figure": "figures"}


class PluginError(ValueError):
    """A plug-in module's declaration is malformed (names the file)."""


@dataclass(frozen=True)
class Plugin:
    """One plug-in: its registry kind, name, module and declared literals (CONFIG parsed)."""

    kind: str
    name: str
    module: str
    path: Path
    declared: dict = field(repr=False, compare=False)

    @property
    def schema(self) -> dict:
        """The JSON-schema fragment of the plug-in's config block (an object schema)."""
        return self.declared.get("CONFIG") or {}

    def get(self, key: str, default=None):
        return self.declared.get(key, default)


def _declaration(path: Path) -> dict:
    """Upper-case module-level constants of a source file whose values are literals."""
    out = {}
    for node in parse(path.resolve()).body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        for t in targets:
            if isinstance(t, ast.Name) and t.id.isupper() and node.value is not None:
                try:
                    out[t.id] = ast.literal_eval(node.value)
                except ValueError:
                    pass  # not a literal: not part of the declaration
    return out


@functools.lru_cache(maxsize=None)
def plugins(kind: str) -> dict[str, Plugin]:
    """Name -> plug-in of one registry kind ('task', 'model', 'analysis', 'figure'), sorted by name."""
    package = PACKAGES[kind]
    found: dict[str, Plugin] = {}
    for path in sorted((PACKAGE_DIR / package).glob("*.py")):
        if path.name.startswith("_"):
            continue
        declared = _declaration(path)
        if "NAME" not in declared:
            continue  # a helper module of the package, not a plug-in
        name = declared["NAME"]
        if name in found:
            raise PluginError(f"{path}: {kind} {name!r} is also declared by {found[name].path}")
        if isinstance(declared.get("CONFIG"), str):
            try:
                declared["CONFIG"] = yaml.safe_load(declared["CONFIG"]) or {}
            except yaml.YAMLError as exc:
                raise PluginError(f"{path}: CONFIG is not valid YAML: {exc}") from exc
        found[name] = Plugin(kind, name, f"pipeline_lib.{package}.{path.stem}", path, declared)
    return dict(sorted(found.items()))


def plugin(kind: str, name: str) -> Plugin:
    known = plugins(kind)
    if name not in known:
        raise PluginError(f"no {kind} named {name!r}; known: {', '.join(known)}")
    return known[name]


def load(kind: str, name: str) -> ModuleType:
    """Import the module of a plug-in (at run time, in the stage that uses it)."""
    return importlib.import_module(plugin(kind, name).module)
