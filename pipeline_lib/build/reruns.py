"""Reruns: a config's seeds run again on other machines (another CPU or library build), each kept beside the
config's own statistics in ``docs/stats`` (``<config>-rerun.json``, ``<config>-rerun-2.json``, ...), so that a
verdict one machine's rounding decides is marked undecided rather than replaced by that machine's.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

RERUN = "-rerun"  # a kept file's suffix: the same config and seeds run again on another machine


def rerun_of(name: str) -> str | None:
    """The kept run that a kept file's name (its stem) runs again, or None: ``<base>-rerun`` and
    ``<base>-rerun-<n>`` (a config's seeds run again on several machines, one file each) are reruns of ``<base>``."""
    found = re.fullmatch(rf"(.+){RERUN}(?:-\d+)?", name)
    return found.group(1) if found else None


def reruns_of(names, name: str) -> list[str]:
    """The names among ``names`` (kept files' stems) that rerun ``name``, in the order they were kept
    (``-rerun``, ``-rerun-2``, ...)."""
    return sorted((n for n in names if rerun_of(n) == name), key=lambda n: (len(n), n))


def kept_reruns(folder: Path, name: str) -> list[tuple[Path, str | None]]:
    """The reruns of the kept run ``name`` kept in ``folder``, in the order they were kept, each with the machine
    it records."""
    folder = Path(folder)
    stems = reruns_of((p.stem for p in folder.glob(f"{name}{RERUN}*.json")), name)
    return [(folder / f"{stem}.json", json.loads((folder / f"{stem}.json").read_text()).get("machine"))
            for stem in stems]


def rerun_path(folder: Path, name: str, here: str) -> Path:
    """Where a rerun of the kept run ``name`` made on the machine ``here`` is kept in ``folder``: the rerun file
    that already holds that machine's run, else the first free one (``<name>-rerun.json``, then ``-rerun-2``,
    ...), so that a rerun on a third machine is kept beside the others instead of replacing their numbers."""
    kept = kept_reruns(folder, name)
    for path, made_on in kept:
        if made_on == here:
            return path
    taken = {path.stem for path, _ in kept}
    return Path(folder) / (next(f"{name}{RERUN}{t}" for t in ("", *(f"-{i}" for i in range(2, len(taken) + 3)))
                                if f"{name}{RERUN}{t}" not in taken) + ".json")
