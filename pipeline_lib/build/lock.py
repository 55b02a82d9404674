"""What a job's code is: the hashed modules it imports, each by its label in the lock file.

The hashed code is every module of ``pipeline_lib`` except the package's ``__init__`` and ``__main__``, the
run-time layer ``pipeline_lib.plumbing`` and this wing (a package boundary: nothing there computes a number of an
artifact), plus the rules' adapter scripts ``workflow/scripts/*.py``. Four notions, no more:

- **digest**: a module's syntax tree without docstrings and bare strings (:func:`digest_text`), the same text on
  every Python the package supports (:mod:`.astdump`). Comments, docstrings and formatting do not enter it.
- **lock file** (``pipeline_lib/code.lock``): one line per hashed module, ``module digest label``, written only by
  ``python -m pipeline_lib lock`` (:mod:`.verify`).
- **label**: what a module's jobs hash it as. Code with the digest the lock records has the lock's label: the
  digest of the code that first computed those numbers, kept through every verified refactor. Any other code is
  ``unlocked-<digest>``, a label the lock never holds, so its jobs rerun (and once more when it is locked), a module
  put back to its code before a refactor included. A module a verified refactor created is labelled ``-``: it adds
  nothing to its jobs' code until it changes.
- **job code** (:meth:`Code.job_code`): the labels of the job's modules, their imports followed transitively up to
  the boundary, with its adapter script's and any data the job is resolved from (:mod:`.codes`).
"""
from __future__ import annotations

import ast
import functools
import hashlib
import json
import sys
from pathlib import Path

from ..plumbing import remembered
from .astdump import canonical_dump

ROOT = Path(__file__).resolve().parents[2]  # the checkout: pipeline_lib/ and workflow/ below it
LOCK = Path("pipeline_lib") / "code.lock"
UNLOCKED = "unlocked-"
FRESH = "-"  # the label of a module a verified refactor created: it adds nothing to its jobs' code
_NOT_HASHED = ("pipeline_lib", "pipeline_lib.__main__")
_BOUNDARY = ("pipeline_lib.plumbing", "pipeline_lib.build")


def is_hashed(module: str) -> bool:
    """Whether a ``pipeline_lib`` module (or an adapter script, ``workflow.scripts.<name>``) is hashed code."""
    if module.startswith("workflow.scripts."):
        return True
    return (module.split(".")[0] == "pipeline_lib" and module not in _NOT_HASHED
            and not any(module == b or module.startswith(b + ".") for b in _BOUNDARY))


def hashed_modules(root: Path = ROOT) -> dict[str, Path]:
    """Every hashed module of a checkout, by name (:func:`is_hashed`)."""
    out = {}
    for path in [*sorted((root / "pipeline_lib").rglob("*.py")), *sorted((root / "workflow" / "scripts").glob("*.py"))]:
        rel = path.relative_to(root).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        module = ".".join(parts)
        if "__pycache__" not in parts and is_hashed(module):
            out[module] = path
    return out


def _is_string(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _statements(body: list) -> list:
    """Every statement of a block, nested blocks included; bare strings (docstrings, strings used as comments)
    are removed from each block on the way, since they compute nothing."""
    out = []
    body[:] = [s for s in body if not _is_string(s)] or [ast.Pass()]
    for stmt in body:
        out.append(stmt)
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            for sub in getattr(stmt, field, None) or []:
                if isinstance(sub, ast.stmt):
                    out += _statements(getattr(stmt, field))
                    break
                out += _statements(sub.body)  # an except handler's or a match case's block
    return out


@functools.lru_cache(maxsize=1024)
def read_source(text: str, name: str = "<source>") -> tuple[str, tuple]:
    """A module's digest (its syntax tree without bare strings, as version-independent text) and its import
    statements as ``(level, module, names)``, from one parse; remembered on disk under the digest of the text and
    of the code that reads it (:mod:`pipeline_lib.plumbing.remembered`: every ``snakemake`` call reads every
    hashed module)."""
    key = hashlib.sha256((_reader_digest() + text).encode()).hexdigest()
    kept = remembered.recall("source-digests", key)
    if kept is not None:
        try:
            digest_, imports = json.loads(kept)
            return digest_, tuple((level, module, tuple(names)) for level, module, names in imports)
        except (ValueError, TypeError):  # a damaged file (e.g. cut short by a crash): worked out again below
            pass
    tree = ast.parse(text, name)
    imports = tuple((s.level, s.module, tuple(a.name for a in s.names)) if isinstance(s, ast.ImportFrom)
                    else (None, None, tuple(a.name for a in s.names))
                    for s in _statements(tree.body) if isinstance(s, (ast.Import, ast.ImportFrom)))
    out = hashlib.sha256(canonical_dump(tree).encode()).hexdigest()[:16], imports
    remembered.keep("source-digests", key, json.dumps(out))
    return out


@functools.cache
def _reader_digest() -> str:
    """The code that turns a text into its digest and imports (this module and :mod:`.astdump`), and the Python
    that parses it."""
    here = Path(__file__).resolve().parent
    code = (here / "lock.py").read_bytes() + (here / "astdump.py").read_bytes() + sys.version.encode()
    return hashlib.sha256(code).hexdigest()


def digest_text(text: str, name: str = "<source>") -> str:
    return read_source(text, name)[0]


def digest(path: Path) -> str:
    return digest_text(Path(path).read_text(), str(path))


def read_lock(root: Path = ROOT, missing_ok: bool = False) -> dict[str, tuple[str, str]]:
    """``module -> (digest, label)`` of the lock file; a missing file is an error saying what to do (read as empty,
    it would rerun every job), unless ``missing_ok`` (the ``lock`` command, which writes it)."""
    path = root / LOCK
    if not path.exists() and missing_ok:
        return {}
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: pipeline_lib was installed without its package data; install it "
                                "from the checkout you run with `pip install -e .`")
    out = {}
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if line.strip() and not line.startswith("#"):
            fields = line.split()
            if len(fields) != 3:
                raise ValueError(f"{path}:{n}: expected 'module digest label', got {line!r}; rewrite it with "
                                 "`python -m pipeline_lib lock`")
            out[fields[0]] = (fields[1], fields[2])
    return out


LOCK_HEAD = ("# The verified state of the hashed code: module, digest of its code, label its jobs hash it as.\n"
             "# Written by `python -m pipeline_lib lock` only (docs/design.md, \"Changing the code\").\n")


def write_lock(entries: dict[str, tuple[str, str]], root: Path = ROOT) -> Path:
    width = max(map(len, entries), default=0)
    lines = [f"{m:<{width}} {d} {label}" for m, (d, label) in sorted(entries.items())]
    path = root / LOCK
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(LOCK_HEAD + "\n".join(lines) + "\n")
    tmp.replace(path)  # an interrupted write leaves the old lock file whole
    return path


class Code:
    """The hashed code of one checkout as its jobs see it: digests, labels, imports and closures, each read once."""

    def __init__(self, root: Path = ROOT, missing_ok: bool = False):
        self.root = Path(root)
        self.locked = read_lock(self.root, missing_ok)

    @functools.cached_property
    def files(self) -> dict[str, Path]:
        return hashed_modules(self.root)

    @functools.cache
    def digest(self, module: str) -> str:
        if module not in self.files:
            raise FileNotFoundError(f"code hash: no source for {module} under {self.root}")
        return digest(self.files[module])

    @functools.cache
    def label(self, module: str) -> str:
        """The lock's label where the module's code has the locked digest; else ``unlocked-<digest>``."""
        now = self.digest(module)
        digest_locked, label = self.locked.get(module, (None, None))
        return label if now == digest_locked else UNLOCKED + now

    def unlocked(self) -> list[str]:
        """The modules whose code is not the locked code (changed, new or gone): what `lock` has to record."""
        gone = [m for m in self.locked if m not in self.files]
        return sorted([m for m in self.files if self.label(m).startswith(UNLOCKED)] + gone)

    @functools.cache
    def imports(self, module: str) -> tuple[str, ...]:
        """The hashed modules one module imports directly (parsed, not imported), its parent packages included."""
        parts = module.split(".")
        found = [".".join(parts[:i]) for i in range(1, len(parts))]  # parent packages run first
        path = self.files[module]
        package = parts if path.name == "__init__.py" else parts[:-1]
        for level, name, names in read_source(path.read_text(), str(path))[1]:
            if level is None:  # import a.b
                found += names
                continue
            base = package[: len(package) - level + 1] if level else []
            target = ".".join(base + (name.split(".") if name else []))
            found.append(target)
            found += [f"{target}.{n}" for n in names]  # `from . import style` names a module
        return tuple(m for m in dict.fromkeys(found) if m in self.files)

    @functools.cache
    def closure(self, module: str) -> tuple[str, ...]:
        """The module and every hashed module it imports, transitively (the boundary's imports are not followed)."""
        seen, todo = set(), [module]
        while todo:
            mod = todo.pop()
            if mod not in seen and is_hashed(mod):
                seen.add(mod)
                todo.extend(self.imports(mod))
        return tuple(sorted(seen))

    def job_code(self, *modules: str, script: str | None = None, data: str = "") -> str:
        """A job's code param: the labels of its modules' closures, its adapter script's, and ``data`` (what the job
        is resolved from beyond its config slice, :mod:`.codes`)."""
        names = {m for mod in modules for m in self.closure(mod)}
        if script is not None:
            names.add(f"workflow.scripts.{script}")
        lines = sorted(f"{m} {self.label(m)}" for m in names if self.label(m) != FRESH)
        return hashlib.sha256("\n".join([*lines, data]).encode()).hexdigest()[:16]


@functools.cache
def checkout() -> Code:
    """The checkout's code, read once per process (a DAG build asks for every job's code)."""
    return Code(ROOT)
