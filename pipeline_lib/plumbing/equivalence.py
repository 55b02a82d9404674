"""The record of verified-equivalent refactors: modules whose code computes what their earlier code computed.

A refactor that changes what the code says but not what it computes (a renamed variable, a split
function, a loop written as a comprehension) changes the code hash (:mod:`pipeline_lib.plumbing.codehash`) of
every job that imports it, and so would rerun them. ``python -m pipeline_lib equivalent --since REV --why TEXT``
runs the test config with the code of REV and with the working tree (:mod:`.refactor`) and, only if every
artifact is identical, records each module whose code changed since REV: one entry per module, ``digest`` (what
its code is now), ``stands_for`` (the statements and bindings it hashed as at REV) and ``was`` (its digest at
REV). A module whose code has the recorded digest is hashed as what it stands for, in every closure that holds
it, so the refactor reruns nothing for any config, a user's included. The record is bounded: one entry per
module (a later refactor of the module replaces its entry, keeping what it stands for), and one line per
refactor that some entry still names (``groups``: why, how it was verified, against which commit).

A module with an entry whose code is not the recorded code (edited again, or put back to its code before the
refactor, alone or with the refactor's other modules) hashes as itself plus a mark, so its jobs rerun: its
equivalence was verified only beside the rest of the code of that time (:func:`effective_parts`).

``legacy_hashes.json`` beside the record maps the job hashes of code written before this record existed to the
hashes the results of that time carry (the earlier record, reduced to the hashes today's code produces). It is
frozen: no refactor adds to it, since a recorded module keeps its jobs' hashes what they were.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

RECORD = Path(__file__).resolve().parent / "equivalent_modules.json"
LEGACY = Path(__file__).resolve().parent / "legacy_hashes.json"

Parts = tuple  # (frozenset of statement tokens, tuple of (name, what it binds)): codehash.module_parts


def _missing(path: Path) -> FileNotFoundError:
    return FileNotFoundError(f"the record of verified-equivalent refactors {path} is missing: pipeline_lib was "
                             "installed without its package data; install it from the checkout you run with "
                             "`pip install -e .`")


def read_record(path: Path = RECORD, missing_ok: bool = False) -> dict:
    """The record: ``{"groups": {id: {why, verified, since}}, "modules": {module: entry}}``. The shipped record
    missing (a package installed without its data) stops with what to do, rather than reading as empty: every
    recorded refactor would rerun its jobs."""
    if not path.exists():
        if missing_ok:
            return {"groups": {}, "modules": {}}
        raise _missing(path)
    return json.loads(path.read_text())


@functools.lru_cache(maxsize=None)
def _record() -> dict:
    return read_record()


@functools.lru_cache(maxsize=None)
def _legacy() -> dict[str, str]:
    if not LEGACY.exists():
        raise _missing(LEGACY)
    return json.loads(LEGACY.read_text())["hashes"]


def canonical(code_hash: str, mapping: dict[str, str] | None = None) -> str:
    """The hash that results written before the module record carry for ``code_hash`` (itself for any other)."""
    return (_legacy() if mapping is None else mapping).get(code_hash, code_hash)


def check_record(rec: dict) -> None:
    """Raise ValueError where a record is not one entry per module (digest, was, group, stands_for) naming refactors
    it keeps (why, verified, since: a full commit hash), each kept refactor named by some entry."""
    import re

    hexes = lambda v, n: isinstance(v, str) and re.fullmatch(f"[0-9a-f]{{{n}}}", v)  # noqa: E731
    problems = [] if set(rec) == {"groups", "modules"} else [f"top-level keys {sorted(rec)}"]
    for module, e in rec.get("modules", {}).items():
        if not (hexes(e.get("digest"), 32) and (e.get("was") is None or hexes(e.get("was"), 32))
                and e.get("group") in rec.get("groups", {})
                and set(e.get("stands_for", {})) == {"statements", "bindings"}
                and all(len(b) == 2 for b in e["stands_for"]["bindings"])):
            problems.append(f"entry of {module}")
    for gid, g in rec.get("groups", {}).items():
        if not (str(g.get("why", "")).strip() and str(g.get("verified", "")).strip() and hexes(g.get("since"), 40)):
            problems.append(f"refactor {gid}")
    if set(rec.get("groups", {})) != {e.get("group") for e in rec.get("modules", {}).values()}:
        problems.append("refactors kept that no entry names")
    if problems:
        raise ValueError("the record of verified-equivalent refactors is malformed: " + "; ".join(problems))


def parts_digest(parts: Parts) -> str:
    """A module's code as the hash sees it (its statement tokens and bindings, order-free), as one digest."""
    statements, bindings = parts
    text = "\n".join(sorted(statements)) + "\0" + "\n".join(sorted(f"{n} = {w}" for n, w in bindings))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _stands_for(entry: dict) -> Parts:
    return frozenset(entry["stands_for"]["statements"]), tuple(tuple(b) for b in entry["stands_for"]["bindings"])


def effective_parts(parts: dict[str, Parts], record: dict | None = None) -> dict[str, Parts]:
    """The modules of one closure as the hash takes them: a module whose code has its entry's digest as what the
    entry stands for; a module with an entry but other code as it is, marked as such, so that it never hashes as a
    recorded module would (not even back at its code before the refactor, whose equivalence was verified only
    beside the rest of the code of that time); every other module as it is."""
    modules = (_record() if record is None else record)["modules"]
    out = {}
    for m, p in parts.items():
        e = modules.get(m)
        if e is None:
            out[m] = p
        elif parts_digest(p) == e["digest"]:
            out[m] = _stands_for(e)
        else:
            out[m] = (p[0] | {f"edited after a recorded refactor: {m}"}, p[1])
    return out


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
root, skip = Path(sys.argv[1]), sys.argv[2] == "skip"
sys.path.append(str(root))  # the configs' own nn.Modules (model kind module) live in the checkout
for cfg_path in sys.argv[3:]:
    try:
        cfg = load_config_file(root / cfg_path)
    except Exception as exc:  # an older revision refusing a newer config (a key it lacks): its jobs are all new
        if not skip or type(exc).__name__ != "ConfigError":
            raise
        print(f"skipped {cfg_path}: this revision's code refuses it ({str(exc).splitlines()[-1].strip()})",
              file=sys.stderr)
        continue
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


def job_hashes(package_parent: Path, checkout: Path, configs, skip_refused: bool = False) -> dict[str, str]:
    """``"<config> <job>" -> code param`` for every job of the configs, computed by the ``pipeline_lib``
    under ``package_parent`` (a fresh interpreter, so another revision's package can answer). With
    ``skip_refused`` (for an older revision's code), a config that code refuses as invalid (a key added since)
    has no jobs, and its name is printed; otherwise, and for any other error, the call fails."""
    found = [c for c in configs if (checkout / c).exists()]
    # run in the package's parent: `python -c` puts the working directory first on sys.path
    proc = subprocess.run([sys.executable, "-c", _JOB_HASHES, str(checkout.resolve()),
                           "skip" if skip_refused else "strict", *found], cwd=package_parent,
                          capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(package_parent)})
    if proc.returncode:
        raise RuntimeError(f"computing the code hashes under {package_parent} failed:\n{proc.stderr[-3000:]}")
    for line in proc.stderr.splitlines():
        if line.startswith("skipped "):
            print(f"equivalent: {line}", file=sys.stderr)
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


# Each hashed module's code as the current hash algorithm reads it, in the tree on sys.path: its digest, its parts
# and what it hashes as under that tree's own record (:func:`effective_parts`).
_MODULE_PARTS = r"""
import json
from pipeline_lib.plumbing import codehash, equivalence
record = equivalence.read_record(equivalence.RECORD, missing_ok=True)
found = []  # every module a code hash can hold: the package's less the plumbing, and the adapter scripts
for path in sorted(codehash.PACKAGE_DIR.rglob("*.py")):
    rel = path.relative_to(codehash.PACKAGE_DIR.parent).with_suffix("")
    module = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
    if "__pycache__" not in rel.parts and not codehash.is_plumbing(module):
        found.append((module, path))
found += [(f"workflow.scripts.{p.stem}", p) for p in sorted(codehash.SCRIPTS_DIR.glob("*.py"))]
out = {}
for module, path in found:
    parts = codehash.module_parts(module, path)
    eff = equivalence.effective_parts({module: parts}, record)[module]
    out[module] = {"digest": equivalence.parts_digest(parts), "statements": sorted(eff[0]),
                   "bindings": [list(b) for b in eff[1]]}
print(json.dumps(out))
"""

# what the hash algorithm is made of: copied into an older tree, so that its modules are read as today's code reads
ALGORITHM = ("codehash.py", "astdump.py", "equivalence.py")


def module_table(tree: Path) -> dict[str, dict]:
    """``module -> {digest, statements, bindings}`` for every hashed module of the source tree ``tree`` (a folder
    holding ``pipeline_lib`` and ``workflow/scripts``), read by this checkout's hash algorithm (copied over the
    tree's own, in a copy) under the tree's own record; statements and bindings are what the module hashes as."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        shutil.copytree(tree / "pipeline_lib", work / "pipeline_lib", ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copytree(tree / "workflow" / "scripts", work / "workflow" / "scripts")
        here = Path(__file__).resolve().parent
        if not (work / "pipeline_lib" / "plumbing").is_dir():
            raise RuntimeError(f"{tree} has no pipeline_lib/plumbing package (a revision before the plumbing was one): "
                               "record a refactor against a later commit")
        for name in ALGORITHM:
            shutil.copy2(here / name, work / "pipeline_lib" / "plumbing" / name)
        proc = subprocess.run([sys.executable, "-c", _MODULE_PARTS], cwd=work, capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": str(work), "PIPELINE_LIB_NO_CODE_CACHE": "1"})
    if proc.returncode:
        raise RuntimeError(f"reading the modules of {tree} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout)


def changes(before: dict[str, dict], after: dict[str, dict]) -> tuple[dict[str, dict], list[str]]:
    """The entries a refactor from ``before`` to ``after`` (:func:`module_table`) records, and the modules it
    removed. A module whose code hashes as it did is unchanged; a changed one stands for what it hashed as before
    (nothing, for a module the refactor added: the statements it took from others)."""
    entries = {}
    for module, now in after.items():
        old = before.get(module, {"digest": None, "statements": [], "bindings": []})
        if (sorted(now["statements"]), sorted(map(tuple, now["bindings"]))) == \
                (sorted(old["statements"]), sorted(map(tuple, old["bindings"]))):
            continue
        entries[module] = {"digest": now["digest"], "was": old["digest"],
                           "stands_for": {"statements": old["statements"], "bindings": old["bindings"]}}
    return entries, sorted(set(before) - set(after))


def group_id(since: str, why: str, entries: dict[str, dict]) -> str:
    text = " ".join([since, why, *sorted(f"{m}={e['digest']}" for m, e in entries.items())])
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def record(entries: dict[str, dict], since: str, why: str, verified: str, path: Path = RECORD,
           modules: set[str] | None = None) -> str:
    """Write ``entries`` (:func:`changes`) as one refactor: each replaces its module's entry; the entry of a module
    not in ``modules`` (the tree's modules now, when given: one a refactor removed) and a refactor that no entry
    names any more are dropped. Returns the refactor's id."""
    rec = read_record(path, missing_ok=True)
    gid = group_id(since, why, entries)
    rec["groups"][gid] = {"why": why, "verified": verified, "since": since}
    for module, entry in entries.items():
        rec["modules"][module] = {**entry, "group": gid}
    if modules is not None:
        rec["modules"] = {m: e for m, e in rec["modules"].items() if m in modules}
    named = {e["group"] for e in rec["modules"].values()}
    rec["groups"] = {g: v for g, v in rec["groups"].items() if g in named}
    rec["modules"] = dict(sorted(rec["modules"].items()))
    path.write_text(json.dumps(rec, indent=1) + "\n")
    _record.cache_clear()
    return gid
