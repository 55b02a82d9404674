"""Code hashes for the rules' params: a change to what the code computes reruns what it computes, and
nothing else.

Snakemake reruns a job whose params changed but does not look at the library modules a script
imports, so each rule carries as a param the hash of the ``pipeline_lib`` modules its stage and
plug-ins import, found by parsing ``import`` statements with ``ast`` (nothing is imported while the
DAG is built). The plumbing is left out of every hash (:func:`is_plumbing`): config parsing, the
registry, artifact paths, store I/O, provenance and lineage do not compute any number of an
artifact, and a change to what they pass on (a default) changes the config slice in the rule's params
instead, which reruns the job by itself. So adding a plug-in, which never touches these modules, reruns
nothing that exists. Except what the plumbing does compute: a plumbing module lists such definitions in
its ``COMPUTES`` (the rows and snapshot a stage reads, where a user's module is imported from), and an
import of one hashes as its code (:func:`plumbing_computes`); what the config resolves a run into before it
trains (its seeds, slots, the task's shape) joins its training job's hash as data
(:func:`pipeline_lib.plumbing.jobs.resolved_run`).

What is hashed is what the code computes, not its bytes: each top-level statement's syntax tree
(:func:`canonical_dump`, the same text on Python 3.11, 3.12 and 3.13: no comments, no line numbers, no
formatting) with every docstring and bare string
dropped, as a set over the closure, and every import of a ``pipeline_lib`` name written as what it
binds (the digest of the definition it names). So comments, docstrings, formatting, the order of
definitions and moving a function to another module of the closure (its callers' imports follow it)
rerun nothing; any other edit of the closure (a number, an operator, a name) reruns every job whose
closure holds it. A refactor that changes code but provably not numbers is recorded in
:mod:`pipeline_lib.plumbing.equivalence`, module by module, so that it reruns nothing either.

Hashes and parsed trees are cached per process (a dry run of the default DAG asks for the same few
closures many times), and the hashes also on disk for the same source files (:func:`code_hash`).
"""
from __future__ import annotations

import ast
import atexit
import contextlib
import copy
import functools
import hashlib
import json
import os
import sys
from pathlib import Path

from .astdump import canonical_dump
from .equivalence import canonical, effective_parts

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # pipeline_lib/


def is_plumbing(module: str) -> bool:
    """Whether a module computes no number of an artifact: the package ``pipeline_lib.plumbing`` (config,
    schema and checks, registry, jobs, paths, store, lineage, code hashes, replicate, golden digests),
    the package's ``__init__`` and its command line (see the module docstring)."""
    return module in ("pipeline_lib", "pipeline_lib.__main__") or module.startswith("pipeline_lib.plumbing")


def module_file(module: str) -> Path:
    """Source file of a ``pipeline_lib`` module, e.g. 'pipeline_lib.stages.train'."""
    rel = Path(*module.split(".")[1:])
    pkg = PACKAGE_DIR / rel / "__init__.py"
    return pkg if pkg.exists() else (PACKAGE_DIR / rel).with_suffix(".py")


@functools.lru_cache(maxsize=None)
def parse(path: Path) -> ast.Module:
    """The syntax tree of a source file, parsed once per process (the registry reads it too); the disk
    cache of code hashes names the source tree first (:class:`_DiskCache`)."""
    _DISK._open()
    return ast.parse(path.read_text(), str(path))


@functools.lru_cache(maxsize=None)
def _imports(module: str) -> tuple[str, ...]:
    """``pipeline_lib`` modules one module imports directly (parsed, not imported)."""
    path = module_file(module)
    if not path.exists():
        raise FileNotFoundError(f"code hash: no source for {module} ({path})")
    parts = module.split(".")
    found: list[str] = [".".join(parts[:i]) for i in range(1, len(parts))]  # parent packages run first
    for node in ast.walk(parse(path)):
        if isinstance(node, ast.ImportFrom):
            target = _import_target(module, node)
            if target.split(".")[0] != "pipeline_lib":
                continue
            found.append(target)
            found.extend(f"{target}.{a.name}" for a in node.names  # `from . import style` names a module
                         if module_file(f"{target}.{a.name}").exists())
        elif isinstance(node, ast.Import):
            found.extend(a.name for a in node.names if a.name.split(".")[0] == "pipeline_lib")
    return tuple(dict.fromkeys(found))


@functools.lru_cache(maxsize=None)
def closure_modules(module: str) -> tuple[str, ...]:
    """The module and every ``pipeline_lib`` module it imports, transitively, less the plumbing
    (:func:`is_plumbing`, whose own imports are not followed either)."""
    seen: set[str] = set()
    todo = [module]
    while todo:
        mod = todo.pop()
        if mod in seen or is_plumbing(mod):
            continue
        seen.add(mod)
        todo.extend(_imports(mod))
    return tuple(sorted(seen))


def module_closure(module: str) -> tuple[Path, ...]:
    """Source files of :func:`closure_modules`."""
    return tuple(sorted(module_file(m) for m in closure_modules(module)))


class _Normalise(ast.NodeTransformer):
    """Drops bare string statements; writes each import of a ``pipeline_lib`` name as what it binds (see
    :func:`_binding`), so an import that follows a moved function hashes as before."""

    def __init__(self, module: str):
        self.module = module

    def generic_visit(self, node):
        super().generic_visit(node)
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                kept = [s for s in body if not _is_string(s)]
                setattr(node, field, kept or [ast.Pass()])
        return node

    def visit_Import(self, node):
        found = _import_bindings(self.module, node)
        return node if found is None else [_bind(name, what) for name, what in found]

    visit_ImportFrom = visit_Import


def _import_bindings(module: str, stmt: ast.stmt) -> list[tuple[str, str]] | None:
    """What an import statement of ``module`` binds, name by name (:func:`_binding`), when it imports from
    ``pipeline_lib``; None for any other statement."""
    if isinstance(stmt, ast.ImportFrom):
        target = _import_target(module, stmt)
        if target.split(".")[0] == "pipeline_lib":
            return [(a.asname or a.name, _binding(target, a.name)) for a in stmt.names]
    elif isinstance(stmt, ast.Import) and any(a.name.split(".")[0] == "pipeline_lib" for a in stmt.names):
        return [(a.asname or a.name, _module_binding(a.name)) for a in stmt.names]
    return None


def _is_string(stmt: ast.AST) -> bool:
    """A bare string statement (a docstring, or a string used as a comment): computes nothing."""
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _bind(name: str, what: str) -> ast.stmt:
    return ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())],
                      value=ast.Call(func=ast.Name(id="__binds__", ctx=ast.Load()), args=[ast.Constant(what)],
                                     keywords=[]))


def _import_target(module: str, node: ast.ImportFrom) -> str:
    """The absolute module an ``from ... import`` statement of ``module`` reads."""
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    package = parts if module_file(module).name == "__init__.py" else parts[:-1]
    base = package[: len(package) - node.level + 1]
    return ".".join(base + (node.module.split(".") if node.module else []))


def _binding(module: str, name: str, _seen: frozenset = frozenset()) -> str:
    """What ``from module import name`` binds, independent of the module that holds it: a submodule by
    its name, a definition by the digest of its code, a plumbing name (in no hash) by its place."""
    if is_plumbing(module) or is_plumbing(f"{module}.{name}"):
        if is_plumbing(module) and name in plumbing_computes(module):  # declared to shape numbers: its code
            return "plumbing " + definition_digest(module, name)
        return f"plumbing {name}"  # in no hash, wherever the plumbing keeps it
    if module_file(f"{module}.{name}").exists():
        return f"module {module}.{name}"
    if (module, name) in _seen or not module_file(module).exists():
        return f"name {module}.{name}"
    found = None
    for stmt in parse(module_file(module)).body:  # the last top-level statement that binds the name
        if name in _bound_names(stmt):
            found = stmt
    if found is None:
        return f"name {module}.{name}"
    if isinstance(found, ast.ImportFrom):  # a re-export: follow it
        target = _import_target(module, found)
        alias = next(a for a in found.names if (a.asname or a.name) == name)
        if target.split(".")[0] == "pipeline_lib":
            return _binding(target, alias.name, _seen | {(module, name)})
    return "code " + _digest(_Normalise(module).visit(copy.deepcopy(found)))


@functools.lru_cache(maxsize=None)
def plumbing_computes(module: str) -> tuple[str, ...]:
    """The names a plumbing module declares in its literal ``COMPUTES`` tuple: its definitions that shape a
    number of some artifact (the rows a stage reads, the seeds a run trains), so that they are hashed into
    every job that uses them although the plumbing is hashed nowhere else."""
    path = module_file(module)
    if not path.exists():
        return ()
    for stmt in parse(path).body:
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "COMPUTES" for t in stmt.targets):
            return tuple(ast.literal_eval(stmt.value))
    return ()


@functools.lru_cache(maxsize=None)
def definition_digest(module: str, qualname: str) -> str:
    """``code <digest>`` of one definition of a module (``name`` or ``Class.method``), normalised as every hashed
    statement is; a name the module does not define raises (a declaration naming nothing would hash nothing)."""
    body, found = parse(module_file(module)).body, None
    for part in qualname.split("."):
        found = next((stmt for stmt in body if part in _bound_names(stmt)
                      and not isinstance(stmt, (ast.Import, ast.ImportFrom))), None)
        if found is None:
            raise LookupError(f"code hash: {module} defines no {qualname!r} (declared in its COMPUTES)")
        body = getattr(found, "body", [])
    return "code " + _digest(_Normalise(module).visit(copy.deepcopy(found)))


def _module_binding(module: str) -> str:
    return f"plumbing {module.rsplit('.', 1)[-1]}" if is_plumbing(module) else f"module {module}"


def _bound_names(stmt: ast.stmt) -> set[str]:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in stmt.names}
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(
        stmt, (ast.AnnAssign, ast.AugAssign)) else []
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _digest(node: ast.AST) -> str:
    return hashlib.sha256(canonical_dump(node).encode()).hexdigest()


@functools.lru_cache(maxsize=None)
def module_parts(module: str, path: Path | None = None) -> tuple[frozenset[str], tuple[tuple[str, str], ...]]:
    """A module as the hash sees it: the digests of its top-level statements other than imports of
    ``pipeline_lib`` names and bare strings (normalised, :class:`_Normalise`), and what each top-level
    name it defines or imports from ``pipeline_lib`` binds (:func:`_binding`; a definition: its digest).
    The statements are a set, so reordering definitions reruns nothing, unless their order can change what
    the module computes: where a name is bound twice (the later one wins; an import counts) or a statement
    acts (:func:`_acts`: a call, a loop, an assignment that calls), the digest of the statements and imports in
    source order joins the set."""
    statements, bindings, sequence, bound, acts = set(), [], [], [], False
    for stmt in parse(path or module_file(module)).body:
        if _is_string(stmt):
            continue
        imported = _import_bindings(module, stmt)
        if imported is not None:
            bindings += imported
            bound += [name for name, _ in imported]
            sequence += [f"{name} = {what}" for name, what in imported]
            continue
        digest = _digest(_Normalise(module).visit(copy.deepcopy(stmt)))
        statements.add(digest)
        sequence.append(digest)
        names = _bound_names(stmt)
        bound += names
        bindings += [(name, f"code {digest}") for name in names]
        acts = acts or _acts(stmt)
    if acts or len(bound) != len(set(bound)):  # a statement that acts, or a name bound twice: order counts
        statements.add("order " + hashlib.sha256(" ".join(sequence).encode()).hexdigest())
    return frozenset(statements), tuple(bindings)


# top-level statements whose order does not change what a module computes, as long as each binds names no
# other statement binds: a definition, an import, an assignment that calls nothing (a statement that reads a
# name bound later fails at import, so no working module depends on their order)
_ORDER_FREE = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom, ast.Assign,
               ast.AnnAssign)


def _acts(stmt: ast.stmt) -> bool:
    """Whether a top-level statement may act on what others read: any statement but a definition, an import or
    an assignment, and an assignment whose value calls something (``A = rng.normal()``, ``X = register(...)``).
    A decorator is not counted: the package's (dataclass, caches) register nothing."""
    if not isinstance(stmt, _ORDER_FREE):
        return True
    value = getattr(stmt, "value", None) if isinstance(stmt, (ast.Assign, ast.AnnAssign)) else None
    return value is not None and any(isinstance(n, ast.Call) for n in ast.walk(value))


# The rules' adapter scripts (workflow/scripts/<name>.py): part of each job's code. Snakemake's own check
# of a script (its modification time) is off (profiles/default: rerun-triggers without `code`), so that
# an edit that computes nothing (a comment, an import's new place) reruns nothing here either.
SCRIPTS_DIR = PACKAGE_DIR.parent / "workflow" / "scripts"


@functools.lru_cache(maxsize=None)
def code_hash(*modules: str, script: str | None = None) -> str:
    """:func:`compute_code_hash`, remembered across processes for the same sources (:class:`_DiskCache`):
    every ``snakemake`` start asks for the same closures, which cost most of a second to parse."""
    key = " ".join(modules) + (f" script={script}" if script else "")
    found = _DISK.get(key)
    if found is None:
        found = _DISK.put(key, compute_code_hash(*modules, script=script))
    return found


class _DiskCache:
    """Code hashes by closure, in a JSON file named by a digest of every source file they can depend on
    (the package's and the adapter scripts' Python files with their paths, the equivalence record, the
    Python version, whose syntax trees differ): another source tree is another file, so nothing stale is
    read. The digest is taken before this process parses any source (:func:`parse` opens the cache), and
    taken again before writing: a tree that changed meanwhile writes nothing. Under
    ``$PIPELINE_LIB_CACHE`` (default ``~/.cache/pipeline_lib``); ``PIPELINE_LIB_NO_CODE_CACHE=1`` turns it
    off, and where the folder cannot be read or written nothing is remembered."""

    KEEP = 32  # files (source trees) kept; the oldest go first

    def __init__(self):
        self.path: Path | None = None
        self.opened = False
        self.known: dict[str, str] = {}
        self.new = False

    def _open(self) -> None:
        if self.opened:
            return
        self.opened = True
        if os.environ.get("PIPELINE_LIB_NO_CODE_CACHE"):
            return
        try:
            root = Path(os.environ.get("PIPELINE_LIB_CACHE") or Path.home() / ".cache" / "pipeline_lib")
            self.path = root / "code_hashes" / f"{_tree_digest()}.json"
        except (OSError, RuntimeError):  # an unreadable source file, no home folder: remember nothing
            return
        with contextlib.suppress(OSError, ValueError):
            self.known = json.loads(self.path.read_text())
        atexit.register(self.save)

    def get(self, key: str) -> str | None:
        self._open()
        return self.known.get(key)

    def put(self, key: str, value: str) -> str:
        self.known[key], self.new = value, True
        return value

    def save(self) -> None:
        if not self.new or self.path is None:
            return
        self.new = False
        with contextlib.suppress(OSError, RuntimeError):
            if f"{_tree_digest()}.json" != self.path.name:  # the sources changed while this process ran
                return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(f".{self.path.stem}.{os.getpid()}.{id(self)}.tmp")
            tmp.write_text(json.dumps(self.known, sort_keys=True))
            os.replace(tmp, self.path)
            others = [f for f in self.path.parent.glob("*.json") if f != self.path]
            for old in sorted(others, key=lambda f: f.stat().st_mtime)[: max(0, len(others) - self.KEEP + 1)]:
                old.unlink(missing_ok=True)


def _tree_digest() -> str:
    h = hashlib.sha256(repr((sys.implementation.cache_tag, sys.version_info[:2])).encode())
    files = [*PACKAGE_DIR.rglob("*.py"), *SCRIPTS_DIR.glob("*.py"), *PACKAGE_DIR.rglob("*.json")]
    for f in sorted(f for f in files if f.is_file()):
        h.update(str(f.relative_to(PACKAGE_DIR.parent)).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:32]


_DISK = _DiskCache()


def compute_code_hash(*modules: str, script: str | None = None) -> str:
    """Hash of what the given modules' closures compute (:func:`closure_modules`): the set of their
    normalised top-level statements and of what their names bind (:func:`module_parts`), so neither the
    module that holds a function nor the order of definitions enters it (the order of statements does where
    it can change a result); with ``script``, the rule's adapter script too (:data:`SCRIPTS_DIR`). A module
    recorded as verified-equivalent to its earlier code enters as that code did (:mod:`.equivalence`); a hash
    of code older than the record is written as the results of that time carry it (its frozen legacy map)."""
    names = sorted({m for mod in modules for m in closure_modules(mod)})
    parts = {m: module_parts(m) for m in names}
    if script is not None:
        path = SCRIPTS_DIR / f"{script}.py"
        if not path.exists():
            raise FileNotFoundError(f"code hash: no adapter script {path}")
        parts[f"workflow.scripts.{script}"] = module_parts(f"workflow.scripts.{script}", path)
    parts = effective_parts(parts)  # a module recorded equivalent hashes as what it stands for
    targets: dict[str, set[str]] = {}
    for _, bindings in parts.values():
        for name, what in bindings:
            targets.setdefault(name, set()).add(what)
    tokens = set()
    for m, (statements, bindings) in parts.items():
        tokens |= statements
        # a name that binds one thing in the whole closure needs no module; one that binds several
        # (two functions of one name) keeps the module, so switching an import between them is seen
        tokens |= {f"{name} = {what}" if len(targets[name]) == 1 else f"{m}.{name} = {what}"
                   for name, what in bindings}
    h = hashlib.sha256()
    for token in sorted(tokens):
        h.update(token.encode() + b"\n")
    return canonical(h.hexdigest()[:16])
