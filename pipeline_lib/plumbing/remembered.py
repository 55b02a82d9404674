"""What every ``snakemake`` call would work out again, worked out once and remembered on disk, each under the
digest of everything it reads (so a change of any of it is worked out anew, never read stale): a passed check of
a ``module`` model, the code digests of the rerun lock (:func:`pipeline_lib.build.lock.read_source`), the config's
schema assembled from the plug-ins' declarations (:func:`pipeline_lib.plumbing.config_schema.schema`) and the
interactive views' JavaScript (:func:`pipeline_lib.figures.views._bundle`, about 0.9 MB per vl_convert version).

A model of kind ``module`` is checked when the config is read: the user's class is imported, built and run on
two examples (:func:`pipeline_lib.models.module.validate`), which imports torch, about 1.5 s of a 4 s
``snakemake -n``. A check that passed is remembered as an empty file named by the digest of everything it
reads: the model's and run's config, the data's shape, the source of ``pipeline_lib`` and of the ``.py`` files of
the user's module's folder (the module and the helpers beside it, what a run reruns for), and the versions of
torch and Python. Any change of these checks again; a failed check is never remembered. A change in a module
outside that folder is not in the digest: the training job builds the model anyway, and names the config key
where it fails.

The folder: ``$PIPELINE_LIB_CACHE``, else ``$XDG_CACHE_HOME/pipeline_lib`` (``~/.cache/pipeline_lib``);
``PIPELINE_LIB_CACHE=off`` remembers nothing, and a folder that cannot be written is not used. Nothing is ever
removed from it (a few hundred small files and an 80 KB schema per version of the code): delete it at will, it is
worked out again.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Callable

from . import registry

ENV = "PIPELINE_LIB_CACHE"
PACKAGE_DIR = Path(__file__).resolve().parents[1]  # pipeline_lib/


def folder(kind: str) -> Path | None:
    """Where one kind of thing is remembered; None where nothing is (``PIPELINE_LIB_CACHE=off``)."""
    where = os.environ.get(ENV, "")
    if where == "off":
        return None
    base = Path(where) if where else Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pipeline_lib"
    return base / kind


def recall(kind: str, key: str | None) -> str | None:
    """The text remembered under ``key``, or None."""
    where = folder(kind)
    if key is None or where is None:
        return None
    try:
        return (where / key).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def keep(kind: str, key: str | None, text: str = "") -> None:
    """Remember ``text`` under ``key`` (written whole or not at all; a folder that cannot be written: not kept)."""
    where = folder(kind)
    if key is None or where is None:
        return
    tmp = None
    try:
        where.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=where, prefix=f".{key[:16]}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, where / key)
    except (OSError, ValueError):  # ValueError: a text the encoding cannot write
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


def code_key(*parts: bytes) -> str:
    """A key for what is worked out from ``pipeline_lib``'s source and ``parts`` alone (e.g. the config schema)."""
    h = hashlib.sha256(_source_digest().encode())
    for part in parts:
        h.update(b"\0" + part)
    return h.hexdigest()


@functools.cache
def _source_digest() -> str:
    h = hashlib.sha256()
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        h.update(str(path.relative_to(PACKAGE_DIR)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def unless_passed(model: dict, shape: dict, run: dict, check: Callable[[], list[str]]) -> list[str]:
    """The problems ``check()`` finds with a module model, or none where it passed before with the same inputs. A
    pass is remembered only where the check ran on the code its key read: it imported the module now, or an
    earlier check of this process imported it from the same files (Python keeps a module once imported, so in a
    long session, e.g. a notebook, an edited module is checked as it was first imported: that pass is not kept)."""
    name = str(model.get("module", "")).partition(":")[0]
    code = _module_code(model)
    key = _check_key(model, shape, run, code)
    if key is None:
        return check()
    if recall("passed-checks", key) is not None:
        return []
    if name not in sys.modules:  # this check imports it
        _IMPORTED[name] = code
    found = check()
    if not found and _IMPORTED.get(name) == code:
        keep("passed-checks", key)
    return found


_IMPORTED: dict[str, str] = {}  # module -> its files' digest when a check of this process imported it


def _module_code(model: dict) -> str | None:
    """The digest of the ``.py`` files of the user's module's folder; None where they are not found or read."""
    try:
        files = registry.user_module_files(str(model.get("module", "")))
        h = hashlib.sha256()
        for f in files:
            h.update(str(f).encode() + b"\0" + f.read_bytes() + b"\0")
    except Exception:  # noqa: BLE001 (a parent package that fails to import: the check itself reports it)
        return None
    return h.hexdigest() if files else None


def _check_key(model: dict, shape: dict, run: dict, code: str | None) -> str | None:
    """The digest a passed check is remembered by; None (checked every time) without the module's code or torch."""
    try:
        torch_version = metadata.version("torch")
    except metadata.PackageNotFoundError:
        return None
    if code is None:
        return None
    what = json.dumps([model, shape, run.get("attention"), torch_version, sys.version], sort_keys=True, default=str)
    return hashlib.sha256((what + _source_digest() + code).encode()).hexdigest()
