"""What every ``snakemake`` call would work out again, worked out once and remembered on disk, each under the
digest of everything it reads (so a change of any of it is worked out anew, never read stale): a passed check of
a ``module`` model, and the code digests of the rerun lock (:func:`pipeline_lib.build.lock.read_source`).

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
removed from it (a few hundred small files per version of the code): delete it at will, it is worked out again.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import sys
import tempfile
from importlib import metadata
from pathlib import Path

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
        return (where / key).read_text()
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
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, where / key)
    except OSError:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


@functools.cache
def _source_digest() -> str:
    h = hashlib.sha256()
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        h.update(str(path.relative_to(PACKAGE_DIR)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def _module_file(spec: str) -> Path | None:
    """The file of the user's module (``package.module:Class``) as its import would find it, without running it."""
    try:
        found = importlib.util.find_spec(spec.partition(":")[0])
    except Exception:  # noqa: BLE001 (a parent package that fails to import: the check itself reports it)
        return None
    origin = getattr(found, "origin", None)
    return Path(origin) if origin and os.path.isfile(origin) else None


def module_check_key(model: dict, shape: dict, run: dict) -> str | None:
    """The digest a passed check of this module model is remembered by; None where it cannot be formed (the
    module's file is not found, torch is not installed): then it is checked every time."""
    path = _module_file(str(model.get("module", "")))
    try:
        torch_version = metadata.version("torch")
    except metadata.PackageNotFoundError:
        return None
    if path is None:
        return None
    what = json.dumps([model, shape, run.get("attention"), torch_version, sys.version, str(path)], sort_keys=True,
                      default=str)
    folder_ = _folder_digest(path)
    if folder_ is None:
        return None
    return hashlib.sha256((what + _source_digest() + folder_).encode()).hexdigest()


def _folder_digest(path: Path) -> str | None:
    """The ``.py`` files beside a module (the module included), or None where one cannot be read."""
    h = hashlib.sha256()
    try:
        for beside in sorted(path.parent.glob("*.py")):
            if beside.is_file():  # not a dangling link (an editor's lock file, e.g. .#net.py)
                h.update(beside.name.encode() + b"\0" + beside.read_bytes() + b"\0")
    except OSError:
        return None
    return h.hexdigest()


_IMPORTED: dict[str, str] = {}  # module -> its folder's digest when a check of this process first imported it


def checks_the_keyed_code(model: dict) -> bool:
    """Whether a check run now runs on the code its key reads: the check imports the module now, or an earlier
    check of this process imported it from the same files (Python keeps a module once imported, so in a long
    session, e.g. a notebook, an edited module is checked as it was first imported: that pass is not kept)."""
    name = str(model.get("module", "")).partition(":")[0]
    path = _module_file(str(model.get("module", "")))
    folder_ = _folder_digest(path) if path is not None else None
    if folder_ is None:
        return False
    if name not in sys.modules:
        _IMPORTED[name] = folder_
        return True
    return _IMPORTED.get(name) == folder_


def passed(key: str | None) -> bool:
    """A check with this key passed before."""
    return recall("passed-checks", key) is not None


def remember(key: str | None) -> None:
    keep("passed-checks", key)
