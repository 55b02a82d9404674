"""Verifying a refactor before it is recorded (``python -m pipeline_lib equivalent``): the test config run
with the code of an earlier commit and with the working tree must give identical artifacts."""
from __future__ import annotations

import shutil
from pathlib import Path

from .codehash import closure_modules
from .config import load_config_file
from .equivalence import extract
from .golden import identical, run_test_config
from .jobs import job_modules


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


def coverage(checkout: Path):
    """``covered("<config> <job>")``: whether every module of the job's code is run by some job of the test
    config (what :func:`verify` runs); a refactor is recorded only for such jobs, the others rerun."""
    test = load_config_file(checkout / ".test" / "config" / "config.yaml")
    ran = {m for mods in job_modules(test).values() for mod in mods for m in closure_modules(mod)}
    configs: dict[str, dict] = {}

    def covered(key: str) -> bool:
        path, job = key.split(" ", 1)
        if path not in configs:
            configs[path] = job_modules(load_config_file(checkout / path))
        mods = configs[path].get(job)
        return mods is not None and all(set(closure_modules(mod)) <= ran for mod in mods)

    return covered
