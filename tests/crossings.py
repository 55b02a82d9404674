"""Every declared claim has a test that moves its statistic across its rule both ways: somewhere in the suite its
scoring of test input gives a verdict on the claimed side (a planted effect: "reproduced" or "partial") and "not
reproduced" (a null).

The suite records it as it runs: every ``score_claims`` of the scoring and figure modules is wrapped on import, and
each verdict it returns is kept per claim. Scores of real runs are not test input and are not recorded: the kept
statistics that ``publish`` re-scores (:data:`NOT_TEST_INPUT`). After a run of the whole suite (no selection), the
claims that never went both ways fail the session, by name (:func:`missing`). Under pytest-xdist each worker writes
what it saw to the session's folder (:data:`ENV`), which the controller reads."""
from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import json
import os
import sys
from pathlib import Path

ENV = "PIPELINE_LIB_TEST_VERDICTS"  # the session's folder, set by the controller before its workers start
HOLDS = ("reproduced", "partial")
WRAPPED = ("pipeline_lib.scoring.", "pipeline_lib.figures.")
NOT_TEST_INPUT = ("pipeline_lib/build/publish.py",)  # callers whose scores are of real runs' statistics
_seen: dict[str, set[str]] = {}


def _wrap(module) -> None:
    score = getattr(module, "score_claims", None)
    if not callable(score) or getattr(score, "_recorded", False):
        return

    @functools.wraps(score)
    def score_claims(*args, **kwargs):
        out = score(*args, **kwargs)
        if _from_real_runs():
            return out
        for cid, s in out.items():
            _seen.setdefault(cid, set()).add(str(s.get("verdict")))
        return out

    score_claims._recorded = True
    module.score_claims = score_claims


def _from_real_runs() -> bool:
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename.replace(os.sep, "/").endswith(NOT_TEST_INPUT):
            return True
        frame = frame.f_back
    return False


def _both(verdicts) -> bool:
    return any(v in verdicts for v in HOLDS) and "not reproduced" in verdicts


class _Finder(importlib.abc.MetaPathFinder):
    """Finds the scoring and figure modules as Python does, and wraps their ``score_claims`` once loaded."""

    def find_spec(self, name, path, target=None):
        if not name.startswith(WRAPPED):
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        load = spec.loader.exec_module

        def exec_module(module):
            load(module)
            _wrap(module)

        spec.loader.exec_module = exec_module
        return spec


def install() -> None:
    """Wrap the modules loaded from now on, and those loaded already."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
    for name, module in list(sys.modules.items()):
        if name.startswith(WRAPPED):
            _wrap(module)


def dump(folder: Path) -> None:
    """This process's verdicts, into the session's folder."""
    (folder / f"{os.getpid()}.json").write_text(json.dumps({c: sorted(v) for c, v in _seen.items()}))


def seen(folder: Path) -> dict[str, set[str]]:
    """Claim -> the verdicts (and ``rule: `` crossings) every process of the session saw."""
    out: dict[str, set[str]] = {}
    for path in folder.glob("*.json"):
        for cid, verdicts in json.loads(path.read_text()).items():
            out.setdefault(cid, set()).update(verdicts)
    return out


def missing(got: dict[str, set[str]], declared) -> dict[str, list[str]]:
    """The declared claims that never went both ways (with what they did get)."""
    return {cid: sorted(got.get(cid, ())) for cid in declared if not _both(got.get(cid, set()))}
