"""Code hashes for the rules' params: a change to the code that computes an output reruns that output.

Snakemake reruns a job whose params changed but does not look at the library modules a script
imports, so each rule carries as a param the hash of the ``pipeline_lib`` modules its stage and
plug-ins import, found by parsing ``import`` statements with ``ast`` (nothing is imported while the
DAG is built). The plumbing is left out of every hash (:data:`PLUMBING`): config parsing, the
registry, artifact paths, store I/O, provenance and lineage do not compute any number of an
artifact, and a change to what they pass on (a default, a resolved value) changes the config slice
in the rule's params instead, which reruns the job by itself. So adding a plug-in, which never
touches these modules, reruns nothing that exists.

Hashes and parsed imports are cached per process: a dry run of the default DAG asks for the same
few closures many times.
"""
from __future__ import annotations

import ast
import functools
import hashlib
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent

# Modules that never compute a number of an artifact (see the module docstring).
PLUMBING = frozenset({
    "pipeline_lib", "pipeline_lib.config", "pipeline_lib.registry", "pipeline_lib.paths",
    "pipeline_lib.config_checks", "pipeline_lib.config_schema", "pipeline_lib.jobs", "pipeline_lib.store", "pipeline_lib.lineage", "pipeline_lib.codehash", "pipeline_lib.__main__",
    "pipeline_lib.replicate",
})


def module_file(module: str) -> Path:
    """Source file of a ``pipeline_lib`` module, e.g. 'pipeline_lib.stages.train'."""
    rel = Path(*module.split(".")[1:])
    pkg = PACKAGE_DIR / rel / "__init__.py"
    return pkg if pkg.exists() else (PACKAGE_DIR / rel).with_suffix(".py")


@functools.lru_cache(maxsize=None)
def parse(path: Path) -> ast.Module:
    """The syntax tree of a source file, parsed once per process (the registry reads it too)."""
    return ast.parse(path.read_text(), str(path))


@functools.lru_cache(maxsize=None)
def _imports(module: str) -> tuple[str, ...]:
    """``pipeline_lib`` modules one module imports directly (parsed, not imported)."""
    path = module_file(module)
    if not path.exists():
        raise FileNotFoundError(f"code hash: no source for {module} ({path})")
    parts = module.split(".")
    package = parts if path.name == "__init__.py" else parts[:-1]
    found: list[str] = [".".join(parts[:i]) for i in range(1, len(parts))]  # parent packages run first
    for node in ast.walk(parse(path)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + (node.module.split(".") if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "pipeline_lib":
                continue
            found.append(target)
            found.extend(f"{target}.{a.name}" for a in node.names  # `from . import style` names a module
                         if module_file(f"{target}.{a.name}").exists())
        elif isinstance(node, ast.Import):
            found.extend(a.name for a in node.names if a.name.split(".")[0] == "pipeline_lib")
    return tuple(dict.fromkeys(found))


@functools.lru_cache(maxsize=None)
def module_closure(module: str) -> tuple[Path, ...]:
    """Source files of the module and every ``pipeline_lib`` module it imports, transitively, less
    the :data:`PLUMBING` (whose own imports are not followed either)."""
    seen: set[str] = set()
    todo = [module]
    while todo:
        mod = todo.pop()
        if mod in seen or mod in PLUMBING:
            continue
        seen.add(mod)
        todo.extend(_imports(mod))
    return tuple(sorted(module_file(m) for m in seen))


@functools.lru_cache(maxsize=None)
def code_hash(*modules: str) -> str:
    """Hash of the source of the given modules' closures (see :func:`module_closure`)."""
    files = sorted({f for m in modules for f in module_closure(m)})
    h = hashlib.sha256()
    for f in files:
        h.update(str(f.relative_to(PACKAGE_DIR)).encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:16]
