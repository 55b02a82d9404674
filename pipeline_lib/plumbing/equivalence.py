"""The record of verified-equivalent refactors: code hashes that compute what an earlier hash computed.

A refactor that changes what the code says but not what it computes (a renamed variable, a split
function, a loop written as a comprehension) changes the code hash (:mod:`pipeline_lib.plumbing.codehash`) of
every job that imports it, and so would rerun them. Once the golden runs show that the refactor moves
no number (``tests/test_golden.py``: every artifact of the test config against its stored digests),
``python -m pipeline_lib equivalent --since REV --why TEXT`` records, for every job of every shipped
config whose code hash changed since the revision REV, the new hash as the same as the old one;
:func:`canonical` maps a recorded hash to the oldest hash of its chain, and the rules' params carry
that one, so the refactor reruns nothing.

The record (``verified_equivalent.json`` beside this module) holds groups, each one refactor:
``{"why": ..., "verified": ..., "since": REV, "hashes": {new: old, ...}}``. A hash is recorded at
most once and the chains have no cycle (``tests/test_golden.py`` checks both).
"""
from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

RECORD = Path(__file__).resolve().parent / "verified_equivalent.json"

# The shipped configs whose jobs' code hashes a refactor records (relative to the checkout): every complete one
# (the overlays that join the default, e.g. eureka_table1.yaml, run the default's plug-ins). A training job's hash
# holds its run's resolved values beside its closure's hash (jobs.train_code), so a refactor of the closure reruns
# no run of any config, but a change of what the hash holds is recorded run by run, for these configs only.
SHIPPED_CONFIGS = ("config/config.yaml", "config/eureka_paper.yaml", "config/cogo_paper.yaml",
                   "config/shortest_path_paper.yaml", "config/eureka_long.yaml", "config/own_circuit.yaml",
                   "config/shortest_path_long.yaml", ".test/config/config.yaml")


def read_record(path: Path = RECORD, missing_ok: bool = False) -> list[dict]:
    """The record's groups. The shipped record missing (a package installed without its data) stops with what to
    do, rather than reading as empty: every recorded refactor would rerun its jobs."""
    if not path.exists():
        if missing_ok:
            return []
        raise FileNotFoundError(f"the record of verified-equivalent refactors {path} is missing: pipeline_lib was "
                                "installed without its package data; install it from the checkout you run with "
                                "`pip install -e .`")
    return json.loads(path.read_text())["refactors"]


@functools.lru_cache(maxsize=None)
def _mapping() -> dict[str, str]:
    out: dict[str, str] = {}
    for group in read_record():
        out.update(group["hashes"])
    return out


def canonical(code_hash: str, mapping: dict[str, str] | None = None) -> str:
    """The oldest hash that ``code_hash`` is recorded equivalent to (itself when none)."""
    mapping = _mapping() if mapping is None else mapping
    seen = {code_hash}
    while code_hash in mapping:
        code_hash = mapping[code_hash]
        if code_hash in seen:
            raise ValueError(f"{RECORD.name}: the recorded equivalences have a cycle through {code_hash}")
        seen.add(code_hash)
    return code_hash


# What each job's code param is, computed by the package on sys.path (the checkout's, or a revision's):
# only functions every revision since the code hash was introduced has (in either layout).
_JOB_HASHES = r"""
import json, sys
from pathlib import Path
try:
    from pipeline_lib.plumbing import jobs
    from pipeline_lib.plumbing.codehash import code_hash
    from pipeline_lib.plumbing.config import load_config_file
except ImportError:  # a revision before the plumbing became a package
    from pipeline_lib import jobs
    from pipeline_lib.codehash import code_hash
    from pipeline_lib.config import load_config_file
out = {}
root = Path(sys.argv[1])
sys.path.append(str(root))  # the configs' own nn.Modules (model kind module) live in the checkout
for cfg_path in sys.argv[2:]:
    cfg = load_config_file(root / cfg_path)
    put = lambda job, h: out.setdefault(f"{cfg_path} {job}", h)
    for name in cfg.datasets:
        put(f"dataset {name}", jobs.dataset_code(cfg, name))
    for run in cfg.runs:
        put(f"train {run}", jobs.train_code(cfg, run))
    for kind in cfg.raw["analyses"]:
        for name in jobs.analysis_jobs(cfg, kind):
            put(f"{kind} {name}", jobs.analysis_code(cfg, kind, name))
    for fig in cfg.raw["figures"]:
        put(f"figure {fig}", jobs.figure_code(fig))
    put("claims", jobs.claims_code() if hasattr(jobs, "claims_code") else code_hash("pipeline_lib.stages.claims"))
print(json.dumps(out))
"""


def job_hashes(package_parent: Path, checkout: Path, configs=SHIPPED_CONFIGS) -> dict[str, str]:
    """``"<config> <job>" -> code param`` for every job of the configs, computed by the ``pipeline_lib``
    under ``package_parent`` (a fresh interpreter, so another revision's package can answer)."""
    found = [c for c in configs if (checkout / c).exists()]
    # run in the package's parent: `python -c` puts the working directory first on sys.path
    proc = subprocess.run([sys.executable, "-c", _JOB_HASHES, str(checkout.resolve()), *found], cwd=package_parent,
                          capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(package_parent)})
    if proc.returncode:
        raise RuntimeError(f"computing the code hashes under {package_parent} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout)


def resolve(rev: str, checkout: Path) -> str:
    """The full commit hash a git revision names (a record must not depend on what ``HEAD`` meant that day)."""
    res = subprocess.run(["git", "rev-parse", "--verify", f"{rev}^{{commit}}"], cwd=checkout, capture_output=True,
                         text=True)
    if res.returncode:
        raise RuntimeError(f"git cannot resolve {rev!r} to a commit: {res.stderr.strip()}")
    return res.stdout.strip()


def extract(rev: str, checkout: Path, dest: Path, parts: tuple[str, ...]) -> None:
    archive = subprocess.run(["git", "archive", rev, *parts], cwd=checkout, capture_output=True)
    if archive.returncode:
        raise RuntimeError(f"git archive {rev}: {archive.stderr.decode().strip()}")
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)


def changed_pairs(since: str, checkout: Path, covered=None) -> dict[str, str]:
    """Every job's code hash (of every shipped config) that differs from its hash at commit ``since`` and is not
    recorded yet, new -> old, for the jobs whose code the test config runs (``covered(job)``: every module of the
    job's closure is in some job of the test config, which is what the verification runs; the others rerun)."""
    with tempfile.TemporaryDirectory() as tmp:
        extract(since, checkout, Path(tmp), ("pipeline_lib", "workflow"))
        before = job_hashes(Path(tmp), checkout)
    after = job_hashes(checkout, checkout)
    known = _mapping()
    pairs: dict[str, str] = {}
    for job in after:
        new, old = after[job], before.get(job)
        if old is None or new == old or new in known or (covered is not None and not covered(job)):
            continue
        if pairs.setdefault(new, old) != old:
            raise RuntimeError(f"code hash {new} ({job}) was two hashes at {since}: {old}, {pairs[new]}")
    return pairs


def record(since: str, why: str, verified: str, checkout: Path, path: Path = RECORD,
           pairs: dict[str, str] | None = None) -> dict[str, str]:
    """Record every job's code hash that changed since commit ``since`` (:func:`changed_pairs`, or ``pairs``) as
    equivalent to its hash there; returns the new pairs (none: nothing is written)."""
    pairs = changed_pairs(since, checkout) if pairs is None else pairs
    if pairs:
        groups = read_record(path, missing_ok=True)
        groups.append({"why": why, "verified": verified, "since": since, "hashes": dict(sorted(pairs.items()))})
        path.write_text(json.dumps({"refactors": groups}, indent=1) + "\n")
        _mapping.cache_clear()
    return pairs
