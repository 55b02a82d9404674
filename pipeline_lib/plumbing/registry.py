"""The plug-in registries: task families, model kinds, analyses, figures and optimizers, one module each.

A module of ``pipeline_lib/tasks``, ``models``, ``analysis``, ``figures`` or ``optimizers`` is a plug-in when it
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
import importlib.util
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import yaml

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # pipeline_lib/
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml where PyYAML was built with it: ~10x faster

# registry kind -> the package whose modules are its plug-ins
PACKAGES = {"task": "tasks", "model": "models", "analysis": "analysis", "figure": "figures", "optimizer": "optimizers"}


@functools.lru_cache(maxsize=None)
def parse(path: Path) -> ast.Module:
    """The syntax tree of a source file, parsed once per process."""
    return ast.parse(path.read_text(), str(path))


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


# what each kind of plug-in declares: key -> (required, type of its literal)
DECLARED = {
    "task": {"CONFIG": (True, str), "SHAPE": (True, dict), "MODELS": (False, list), "CHECKS": (False, list),
             "PROBE_TARGETS": (False, str), "ONLINE": (False, bool),
             "EMBED_INPUTS": (False, list)},
    "model": {"CONFIG": (True, str), "TASKS": (False, list), "CHECKS": (False, list), "ARCH": (False, str),
              "SITES": (False, str), "RECORDS": (False, (list, str)), "VALIDATE": (False, bool)},
    "analysis": {"CONFIG": (True, str), "CHECKS": (False, list), "USES": (False, list), "PER_RUN": (False, bool),
                 "RESOURCES": (False, dict)},
    "figure": {"CONFIG": (True, str), "CHECKS": (False, list), "EXTRA_OUTPUTS": (False, list), "PAPER": (False, str),
               "CLAIMS": (False, list)},
    "optimizer": {"CONFIG": (True, str)},
}
SHAPE_KEYS = {"n_train", "n_test", "tokens", "T", "classes"}
READS = {"trajectory", "weights", "dataset", "artifact"}
RESERVED = {"dataset", "train", "train_online", "all"}  # rule names of the machinery


def _declaration(path: Path, kind: str) -> dict:
    """Upper-case module-level constants of a source file whose values are literals; a key of the
    kind's declaration that is not a literal is an error (it would be silently ignored)."""
    out = {}
    try:
        body = parse(path.resolve()).body
    except SyntaxError as exc:
        raise PluginError(f"{path}: cannot be parsed: {exc}") from exc
    for node in body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        for t in targets:
            if isinstance(t, ast.Name) and t.id.isupper() and node.value is not None:
                try:
                    out[t.id] = ast.literal_eval(node.value)
                except ValueError:
                    if t.id == "NAME" or t.id in DECLARED[kind]:
                        raise PluginError(f"{path}: {t.id} must be a literal (it is read without importing the "
                                          f"module)") from None
    return out


def _check_declaration(kind: str, path: Path, declared: dict) -> None:
    """Types of the declared literals, the CONFIG fragment's schema and its x-ref/x-reads values."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    where = f"{path} ({kind} {declared.get('NAME')!r})"
    if not isinstance(declared["NAME"], str) or not declared["NAME"].isidentifier():
        raise PluginError(f"{where}: NAME must be a name of letters, digits and _")
    for key, (required, typ) in DECLARED[kind].items():
        if key not in declared:
            if required:
                raise PluginError(f"{where}: declares no {key}")
        elif key != "CONFIG" and not isinstance(declared[key], typ):  # CONFIG: parsed YAML by now
            names = " or ".join(t.__name__ for t in (typ if isinstance(typ, tuple) else (typ,)))
            raise PluginError(f"{where}: {key} must be a {names}, got {type(declared[key]).__name__}")
    if not isinstance(declared["CONFIG"], dict):
        raise PluginError(f"{where}: CONFIG must be a YAML mapping (a JSON schema of the config block)")
    try:
        Draft202012Validator.check_schema({"type": "object", **declared["CONFIG"]})
    except SchemaError as exc:
        raise PluginError(f"{where}: CONFIG is not a valid JSON schema: {exc.message}") from None
    for check in declared.get("CHECKS", []):
        if not (isinstance(check, list) and len(check) == 3 and all(isinstance(c, str) for c in check)):
            raise PluginError(f"{where}: each of CHECKS must be [key, expression, message], got {check!r}")
    _check_refs_declared(where, declared["CONFIG"])
    if kind == "task" and set(declared["SHAPE"]) != SHAPE_KEYS:
        raise PluginError(f"{where}: SHAPE must give exactly {sorted(SHAPE_KEYS)}")
    if declared.get("PER_RUN") and "x-ref" not in declared["CONFIG"].get("properties", {}).get("runs", {}).get("items", {}):
        raise PluginError(f"{where}: a PER_RUN analysis needs a 'runs' property: an array of items with x-ref: run")


def _check_refs_declared(where: str, schema) -> None:
    if isinstance(schema, dict):
        ref = schema.get("x-ref")
        if ref is not None and not (ref in ("run", "dataset") or str(ref).startswith("analysis/")):
            raise PluginError(f"{where}: x-ref {ref!r}: allowed run, dataset or analysis/<analysis>")
        for read in schema.get("x-reads", []):
            if read not in READS and not str(read).startswith("analysis/"):
                raise PluginError(f"{where}: x-reads {read!r}: allowed {sorted(READS)} or analysis/<analysis>")
        for key in ("oneOf", "anyOf", "allOf", "$ref"):
            if key in schema and "x-ref" in str(schema[key]):
                raise PluginError(f"{where}: x-ref under {key} is not followed; annotate a plain property")
        for sub in schema.values():
            _check_refs_declared(where, sub)
    elif isinstance(schema, list):
        for sub in schema:
            _check_refs_declared(where, sub)


def user_import_path() -> None:
    """Where a user's own module (model kind ``module``, e.g. ``my_package.my_model``) is imported from: the
    working directory first (as ``python`` run there would), then installed packages, then the checkout last
    (``examples.own_models...`` imports from Python run in any folder, as under the workflow, where Snakemake
    searches the Snakefile's folder)."""
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    root = str(PACKAGE_DIR.parent)
    if root not in sys.path:
        sys.path.append(root)


def user_module_files(spec: str) -> list[Path]:
    """The ``.py`` files of a user's module's folder (``'package.module:Class'``: the module and the helpers beside
    it, what its runs rerun for), found as its import would find it (:func:`user_import_path`) without running it;
    none where it is not a file (a dangling link, e.g. an editor's lock file ``.#net.py``, is skipped)."""
    user_import_path()
    found = importlib.util.find_spec(spec.partition(":")[0])
    if found is None or not found.origin or not Path(found.origin).is_file():
        return []
    return [f for f in sorted(Path(found.origin).parent.glob("*.py")) if f.is_file()]


@functools.lru_cache(maxsize=None)
def plugins(kind: str) -> dict[str, Plugin]:
    """Name -> plug-in of one registry kind ('task', 'model', 'analysis', 'figure'), sorted by name; every
    declaration checked (the config's validation reads them all, so a malformed plug-in fails before any job)."""
    found: dict[str, Plugin] = {}
    for path in sorted((PACKAGE_DIR / PACKAGES[kind]).glob("*.py")):
        plug = _read(kind, path)
        if plug is None:
            continue  # a helper module of the package, not a plug-in
        if plug.name in found:
            raise PluginError(f"{path}: {kind} {plug.name!r} is also declared by {found[plug.name].path}")
        _check_declaration(kind, path, plug.declared)
        found[plug.name] = plug
    return dict(sorted(found.items()))


@functools.lru_cache(maxsize=None)
def _read(kind: str, path: Path) -> Plugin | None:
    """The plug-in a module of the package declares (its CONFIG parsed), or None for a helper module; read once
    per process, for the full scan and the look-up alike."""
    if path.name.startswith("_"):
        return None
    declared = _declaration(path, kind)
    if "NAME" not in declared:
        return None
    if not isinstance(declared.get("CONFIG", ""), str):
        raise PluginError(f"{path}: CONFIG must be a string of YAML (the JSON schema of the config block)")
    if isinstance(declared.get("CONFIG"), str):
        try:
            declared["CONFIG"] = yaml.load(declared["CONFIG"], Loader=_YAML_LOADER) or {}
        except yaml.YAMLError:
            try:  # the pure-Python parser's message quotes the offending line
                yaml.safe_load(declared["CONFIG"])
            except yaml.YAMLError as exc:
                raise PluginError(f"{path}: CONFIG is not valid YAML: {exc}") from exc
            raise
    return Plugin(kind, declared["NAME"], f"pipeline_lib.{PACKAGES[kind]}.{path.stem}", path, declared)


def _named(kind: str, name: str) -> Plugin | None:
    """The plug-in in the module named exactly ``<name>.py`` (listed, so that a case-insensitive file system
    does not answer for another spelling), or None."""
    folder = PACKAGE_DIR / PACKAGES[kind]
    return _read(kind, folder / f"{name}.py") if f"{name}.py" in os.listdir(folder) else None


def check_rule_names() -> None:
    """Analyses and figures become rules named after them: no clash with each other or the machinery."""
    analyses, figures = plugins("analysis"), plugins("figure")
    for name in set(analyses) & set(figures) | (set(analyses) | set(figures)) & RESERVED:
        where = analyses.get(name) or figures.get(name)
        raise PluginError(f"{where.path}: the name {name!r} is taken (by another analysis or figure, or a rule of "
                          f"the machinery: {', '.join(sorted(RESERVED))})")


def plugin(kind: str, name: str) -> Plugin:
    """One plug-in by name. A job (a process per job) reads only the module named after it where that module
    declares that name (the config, validated before any job runs, has checked every declaration: see
    :func:`plugins`); otherwise, or where it declares another name, the whole package is read."""
    if kind in PACKAGES and name.isidentifier():
        own = _named(kind, name)
        if own is not None and own.name == name:
            return own
    known = plugins(kind)
    if name not in known:
        raise PluginError(f"no {kind} named {name!r}; known: {', '.join(known)}")
    return known[name]


# Snakemake's report writes each category into a reStructuredText hyperlink target, ``.. _<category>: <link>``,
# appended to the front page and to every caption; the target's name ends at its first colon followed by a space
# (docutils), so "Tian: a" and "Tian: b" would both name "tian" and be reported as duplicates on every page.
_RST_NAME_END = re.compile(r":(\s)")
DEFAULT_CATEGORY = "Other figures"


def report_category(figure: str) -> str:
    """The report category a figure is filed under: its module's ``PAPER``, with each ": " written as " — " so
    that the name survives as one reStructuredText target name (see ``_RST_NAME_END``)."""
    return _RST_NAME_END.sub(r" —\1", plugin("figure", figure).get("PAPER", DEFAULT_CATEGORY))


def check_report_categories(figures) -> None:
    """Two papers whose categories reStructuredText takes for one name (it ignores case and folds whitespace)."""
    from docutils.nodes import fully_normalize_name

    seen: dict[str, tuple[str, str]] = {}
    for fig in figures:
        cat = report_category(fig)
        other = seen.setdefault(fully_normalize_name(cat), (cat, fig))
        if other[0] != cat:
            raise PluginError(f"{plugin('figure', fig).path}: PAPER {cat!r} and {other[0]!r} (figure {other[1]!r}) "
                              "are one name to the report's reStructuredText (case and spacing ignored)")


def load(kind: str, name: str) -> ModuleType:
    """Import the module of a plug-in (at run time, in the stage that uses it)."""
    return importlib.import_module(plugin(kind, name).module)
