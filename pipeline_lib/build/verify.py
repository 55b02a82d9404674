"""``python -m pipeline_lib lock``: record the hashed code's new state in the lock file, verified first.

Every module whose code is not the locked code (:meth:`.lock.Code.unlocked`) is recorded in one of three ways:

- a **refactor** (the default): the test config runs with the code of ``HEAD`` (once per commit and test config,
  kept under ``.test/lock/``) and then, on a copy of those results, with the working tree, which reruns exactly the
  jobs whose code changed and what reads them. Only if every artifact is identical (data, coordinates, attributes,
  the figures' statistics and verdicts: :func:`.golden.identical`) does each changed module keep its label, so
  its jobs rerun nowhere, in any config. A module the refactor created is labelled ``-`` (it adds nothing to its
  jobs' code until it changes); a module it removed is dropped (its jobs rerun).
- an **intended change of numbers** (``--new-numbers``): no run; each changed or new module is labelled by its own
  digest, so its jobs rerun everywhere.
- a **new module** alone (no existing module changed): labelled by its digest, nothing to verify (no existing job
  holds it).

Verification needs ``HEAD`` locked (its code is what its lock file's labels stand for) and every changed module
imported by some job of the test config (``.test/config/config.yaml``): a module only other configs import is
refused, naming it, since nothing would have run it.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from ..plumbing.config import load_config_file
from .codes import job_code_or_none, job_modules, job_script
from .golden import identical
from .lock import FRESH, LOCK, ROOT, Code, write_lock


class LockError(RuntimeError):
    """The change cannot be recorded as asked; the message says why and what to do."""


def test_config_modules(root: Path = ROOT, code: Code | None = None) -> set[str]:
    """Every hashed module some job of the test config imports, with its jobs' adapter scripts."""
    code = code or Code(root)
    cfg = load_config_file(root / ".test" / "config" / "config.yaml")
    jobs = job_modules(cfg)
    ran = {m for mods in jobs.values() for mod in mods for m in code.closure(mod)}
    return ran | {f"workflow.scripts.{job_script(cfg, job)}" for job in jobs}


def run_test_config(code_root: Path, work: Path, config_root: Path = ROOT, cores: int = 2) -> Path:
    """Run the test config of ``config_root`` with the Snakefile and package of ``code_root`` in ``work`` (created
    with the config and data where new; continued where it holds a run); its results folder."""
    code_root, work = Path(code_root).resolve(), Path(work).resolve()
    if not (work / "config" / "config.yaml").exists():
        (work / "config").mkdir(parents=True, exist_ok=True)
        shutil.copy(config_root / ".test" / "config" / "config.yaml", work / "config" / "config.yaml")
        shutil.copytree(config_root / ".test" / "data", work / "data", dirs_exist_ok=True)
    cmd = [sys.executable, "-m", "snakemake", "-s", str(code_root / "Snakefile"), "-d", str(work), "--cores", str(cores)]
    log = work.with_name(work.name + ".log")
    with open(log, "w") as fh:
        res = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, cwd=work,
                             env=dict(os.environ, PYTHONPATH=str(code_root)))
    if res.returncode:
        raise LockError(f"the test config failed with the code of {code_root} (log: {log})")
    return work / "results"


def _git(root: Path, *args: str) -> str:
    res = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
    if res.returncode:
        raise LockError(f"git {' '.join(args)}: {res.stderr.strip()}")
    return res.stdout.strip()


def _head_tree(root: Path, dest: Path) -> Path:
    """The code of ``HEAD`` in ``dest`` (extracted once), refused unless ``HEAD`` is locked."""
    if not dest.exists():
        archive = subprocess.run(["git", "archive", "HEAD", "Snakefile", "workflow", "pipeline_lib", "examples"],
                                 cwd=root, capture_output=True)
        if archive.returncode:
            raise LockError(f"git archive HEAD: {archive.stderr.decode().strip()}")
        part = dest.with_name(dest.name + ".part")
        shutil.rmtree(part, ignore_errors=True)
        part.mkdir(parents=True)
        subprocess.run(["tar", "-x", "-C", str(part)], input=archive.stdout, check=True)
        part.rename(dest)  # whole or absent: an interrupted extraction is redone
    if not (dest / LOCK).exists():
        raise LockError("HEAD has no lock file, so no verified state to compare with: record the change with "
                        "`python -m pipeline_lib lock --new-numbers`")
    unlocked = Code(dest).unlocked()
    if unlocked:
        raise LockError(f"HEAD's code is not its locked code ({', '.join(unlocked[:5])}): its labels stand for other "
                        "code, so nothing can be verified against it; check out a locked commit, or record the change "
                        "with `python -m pipeline_lib lock --new-numbers`")
    return dest


def head_run(root: Path, scratch: Path, progress=print) -> Path:
    """A finished run of the working tree's test config with ``HEAD``'s code, made once per commit and config."""
    head = _git(root, "rev-parse", "HEAD")
    config = hashlib.sha256((root / ".test" / "config" / "config.yaml").read_bytes()).hexdigest()[:12]
    base = scratch / f"head-{head[:12]}-{config}"
    tree = _head_tree(root, scratch / f"code-{head[:12]}")
    if not (base / "done").exists():
        shutil.rmtree(base, ignore_errors=True)
        progress(f"lock: the test config with the code of HEAD ({head[:12]}), kept for later runs ...")
        t0 = time.time()
        run_test_config(tree, base / "work", root)
        (base / "done").write_text(f"{time.time() - t0:.0f} s\n")
    return base / "work"


def verify(root: Path, base: Path, after: Path, progress=print) -> int:
    """The working tree on a copy of ``base`` (a finished run of the test config with ``HEAD``'s code): it reruns
    the jobs whose code changed and what reads them; the number of artifacts compared, all identical, or
    LockError naming what differs."""
    shutil.rmtree(after, ignore_errors=True)
    shutil.copytree(base, after, symlinks=True)  # modification times kept: only changed code reruns
    progress("lock: the test config with the working tree, rerunning the jobs whose code changed ...")
    run_test_config(root, after, root)
    diff = identical(base / "results", after / "results")
    if diff["differ"] or diff["missing"] or not diff["same"]:
        raise LockError("the change moves numbers, so it is not a refactor: " + "; ".join(
            [f"differ: {d}" for d in diff["differ"]] + [f"missing: {m}" for m in diff["missing"]])[:3000]
            + "\nIf intended, record it with `python -m pipeline_lib lock --new-numbers`.")
    return len(diff["same"])


def _names(modules: list[str], shown: int = 8) -> str:
    return ", ".join(modules[:shown]) + (f" and {len(modules) - shown} more" if len(modules) > shown else "")


def lock(root: Path = ROOT, new_numbers: bool = False, scratch: Path | None = None, progress=print,
         base: Path | None = None) -> list[str]:
    """Record every unlocked module (see the module docstring); the lines that say what was recorded. ``base``: a
    finished run of the test config with ``HEAD``'s code (default: made under ``scratch``, :func:`head_run`)."""
    root = Path(root)
    scratch = Path(scratch or root / ".test" / "lock")
    code = Code(root, missing_ok=True)
    todo = code.unlocked()
    if not todo:
        return [f"{root / LOCK}: up to date ({len(code.files)} modules)"]
    changed = [m for m in todo if m in code.locked and m in code.files]
    added = [m for m in todo if m not in code.locked]
    gone = [m for m in todo if m not in code.files]
    entries = {m: v for m, v in code.locked.items() if m not in gone}
    said, verified_refactor = [], False
    if changed and not new_numbers:
        uncovered = sorted(set(changed) - test_config_modules(root, code))
        if uncovered:
            raise LockError(f"no job of the test config imports {', '.join(uncovered)}, so a run cannot verify "
                            "the change: add a job that does to .test/config/config.yaml, or record it with "
                            "`python -m pipeline_lib lock --new-numbers` (its jobs rerun)")
        n = verify(root, base or head_run(root, scratch, progress), scratch / "working-tree", progress)
        said.append(f"verified: {n} artifacts of the test config identical with HEAD's code and the working tree")
        entries.update({m: (code.digest(m), code.locked[m][1]) for m in changed})
        entries.update({m: (code.digest(m), FRESH) for m in added})
        said.append(f"refactor: {len(changed)} module(s) keep their labels ({_names(changed)})")
        if added:
            said.append(f"new in the refactor, labelled {FRESH}: {_names(added)}")
        verified_refactor = True
    else:
        entries.update({m: (code.digest(m), code.digest(m)) for m in changed + added})
        if changed:
            said.append(f"new numbers: {len(changed)} module(s) take new labels, their jobs rerun: {_names(changed)}")
        if added:
            said.append(f"new: {_names(added)}")
        if changed:
            said.append("then refresh this machine's golden digests: `python -m pipeline_lib golden --write`")
    if gone:
        said.append(f"removed (their jobs rerun): {_names(gone)}")
    path = write_lock(entries, root)
    said.append(f"wrote {path}")
    if verified_refactor:
        said += _after_refactor(root, scratch)
    return said


def _after_refactor(root: Path, scratch: Path) -> list[str]:
    """What a verified refactor changed beyond the labels: the test config's jobs whose closure changed (a module
    left or joined it: they rerun once, with the same numbers) and the kept statistics restamped
    (:func:`.publish.restamp`)."""
    from .publish import restamp

    try:
        before = Code(_head_tree(root, scratch / f"code-{_git(root, 'rev-parse', 'HEAD')[:12]}"))
    except LockError as e:  # not a git checkout: HEAD's code is not at hand
        return [f"jobs whose closure changed and kept statistics to restamp not computed ({e})"]
    after = Code(root)
    cfg = load_config_file(root / ".test" / "config" / "config.yaml")
    rerun = sorted(j for j in job_modules(cfg) if job_code_or_none(cfg, j, before) != job_code_or_none(cfg, j, after))
    said = [f"{len(rerun)} job(s) of the test config rerun once, as their modules' closure changed: {_names(rerun)}"
            if rerun else "nothing reruns"]
    return said + restamp(root, before, after, set(cfg.raw["figures"]))
