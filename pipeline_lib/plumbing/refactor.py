"""Verifying a refactor before it is recorded (``python -m pipeline_lib equivalent``): the test config run
with the code of an earlier commit and with the working tree must give identical artifacts."""
from __future__ import annotations

import contextlib
import shutil
import tempfile
from pathlib import Path

from .codehash import closure_modules
from .config import load_config_file, standalone_files
from .equivalence import changes, extract, job_hashes, module_table
from .golden import identical, run_test_config
from .jobs import job_modules, job_script


def verify(since: str, checkout: Path, scratch: Path, progress=print) -> int:
    """Run the test config with the code of commit ``since`` and with the checkout (each from scratch, under
    ``scratch``) and require every artifact identical (:func:`.golden.identical`: data, coordinates, attributes,
    the figures' statistics and verdicts); the number of artifacts compared, or RuntimeError naming what
    differs."""
    old = scratch / "since"
    shutil.rmtree(old, ignore_errors=True)
    old.mkdir(parents=True)
    extract(since, checkout, old, ("Snakefile", "workflow", "pipeline_lib", ".test", "profiles", "examples"))
    if (old / ".test" / "config" / "config.yaml").read_text() != (checkout / ".test/config/config.yaml").read_text():
        raise RuntimeError(f"the test config changed since {since[:12]}: a refactor is compared on one config")
    progress(f"equivalent: the test config with the code of {since[:12]} ...")
    before = run_test_config(old, scratch / "before")
    progress("equivalent: the test config with the working tree ...")
    after = run_test_config(checkout, scratch / "after")
    diff = identical(before, after)
    if diff["differ"] or diff["missing"] or not diff["same"]:
        raise RuntimeError("the refactor moves numbers: " + "; ".join(
            [f"differ: {d}" for d in diff["differ"]] + [f"missing: {m}" for m in diff["missing"]])[:3000])
    return len(diff["same"])


def ran_modules(checkout: Path) -> set[str]:
    """Every module some job of the test config imports (what :func:`verify` runs), with the adapter scripts of its
    jobs. Imported, not necessarily executed: a branch for an option the test config does not set is recorded on
    the test config's word."""
    test = load_config_file(checkout / ".test" / "config" / "config.yaml")
    jobs = job_modules(test)
    ran = {m for mods in jobs.values() for mod in mods for m in closure_modules(mod)}
    return ran | {f"workflow.scripts.{job_script(test, job)}" for job in jobs}


@contextlib.contextmanager
def _code_at(since: str, checkout: Path):
    """A temporary folder holding the package and the workflow of commit ``since``."""
    with tempfile.TemporaryDirectory() as tmp:
        extract(since, checkout, Path(tmp), ("pipeline_lib", "workflow"))
        yield Path(tmp)


def plan(since: str, checkout: Path) -> tuple[dict[str, dict], list[str], list[str], set[str]]:
    """What recording a refactor since commit ``since`` would write: the entries of the changed modules that the
    test config runs (:func:`pipeline_lib.plumbing.equivalence.changes`), the modules the refactor removed, the
    changed modules no job of the test config runs (not recorded: their jobs elsewhere rerun), and every hashed
    module of the checkout."""
    with _code_at(since, checkout) as tree:
        before = module_table(tree)
    after = module_table(checkout)
    entries, removed = changes(before, after)
    ran = ran_modules(checkout)
    uncovered = sorted(m for m in entries if m not in ran)
    return {m: e for m, e in entries.items() if m in ran}, removed, uncovered, set(after)


def shipped_configs(checkout: Path) -> list[str]:
    """The complete configs of the checkout (relative paths): the default, every ``standalone: true`` file of
    ``config/``, and the test config."""
    complete = standalone_files(sorted((checkout / "config").glob("*.yaml")))
    return ["config/config.yaml", *(str(Path(p).relative_to(checkout)) for p in complete), ".test/config/config.yaml"]


def still_rerun(since: str, checkout: Path, configs=None) -> list[str]:
    """The jobs of the configs (default: :func:`shipped_configs`) whose code hash differs from the one the package
    of commit ``since`` gives them: what a recording leaves to rerun (a removed module, a job whose modules
    changed)."""
    configs = shipped_configs(checkout) if configs is None else configs
    with _code_at(since, checkout) as tree:
        before = job_hashes(tree, checkout, configs, skip_refused=True)
    after = job_hashes(checkout, checkout, configs)
    return sorted(job for job in after if job in before and before[job] != after[job])
