"""Golden digests: the exact digest of every artifact of the test config, kept per machine.

Floating point is not the same on every machine (the vector width a kernel takes, the BLAS, the thread count and
the library versions move the last bits, and training carries them further), so a digest holds for the machine
that wrote it: ``tests/golden/<fingerprint id>.json`` (:func:`fingerprint`: the CPU, the kernels torch and numpy
dispatch to, their BLAS, the cores, the libraries' versions, the kernel-choosing environment). Each artifact keeps
the code param of the job that wrote it, so a comparison (:func:`compare`) tells numbers that moved under an
unchanged code param (a failure: code computes differently than its label says) from an artifact whose code
changed (stale: not compared until the digests are rewritten).

On a machine without digests of its own, only the *portable* artifacts are compared (:func:`portable`): the
datasets, seeded draws stored as drawn, which every machine's digests hold identical. Whatever is computed from
them, or from no input at all, goes through floating-point kernels whose last bits depend on the CPU: the
``cogo_algebra`` and ``joma_odes`` figures (no inputs, no training) differ between the digests of two AMD EPYC
models at one code param, and on an Intel Xeon of a third model.

``python -m pipeline_lib golden --write`` runs the test config and writes this machine's file (about 3.5 minutes
on 2 cores).
"""
from __future__ import annotations

import hashlib
import json
import os
import platform
from pathlib import Path
from typing import Any

import numpy as np

from ..plumbing.store import read_dataset
from .lock import ROOT

GOLDEN_DIR = ROOT / "tests" / "golden"
# Environment variables that choose a kernel or a thread count: part of the fingerprint when set.
KERNEL_ENV = ("ATEN_CPU_CAPABILITY", "MKL_CBWR", "MKL_ENABLE_INSTRUCTIONS", "MKL_DEBUG_CPU_TYPE",
              "NPY_DISABLE_CPU_FEATURES", "NPY_ENABLE_CPU_FEATURES", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
              "OPENBLAS_NUM_THREADS", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


# -- the machine ------------------------------------------------------------------------------------------------

def _cpu() -> str:
    """Vendor, family, model and name of the first CPU (Linux), else what ``platform`` says."""
    try:
        info = Path("/proc/cpuinfo").read_text().split("\n\n")[0]
    except OSError:
        return platform.processor() or platform.machine()
    fields = {k.strip(): " ".join(v.split()) for k, v in (line.split(":", 1) for line in info.splitlines() if ":" in line)}
    get = lambda k: fields.get(k, "")  # noqa: E731
    return f"{get('vendor_id')} family {get('cpu family')} model {get('model')} ({get('model name')})"


def _numpy_features() -> str:
    """numpy's highest enabled dispatch target (its SIMD loops follow it)."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as feats
    except ImportError:  # numpy < 2
        from numpy.core._multiarray_umath import __cpu_features__ as feats
    on = [k for k in ("AVX512_SPR", "AVX512_ICL", "AVX512_SKX", "AVX2", "SSE42", "ASIMD") if feats.get(k)]
    return on[0] if on else "baseline"


def _torch_blas() -> str:
    import torch

    cfg = torch.__config__.show()
    blas = next((part.split("=", 1)[1] for part in cfg.replace(",", "\n").split() if part.startswith("BLAS_INFO=")), "?")
    mkl = next((line.split("Library Version", 1)[1].split()[0].split("-")[0] for line in cfg.splitlines()
                if "Math Kernel Library Version" in line), "")
    return f"{blas} {mkl}".strip()


def _numpy_blas() -> str:
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return f"{blas.get('name', '?')} {blas.get('version', '')}".strip()
    except Exception:  # noqa: BLE001 - an old numpy without the dict form
        return "?"


def fingerprint() -> dict[str, Any]:
    """What decides this machine's floating-point results: the CPU, the vector width torch and numpy
    dispatch to, their BLAS, the cores (numpy's and scikit-learn's thread count), the versions of the
    libraries that compute, and the environment variables that force a kernel or a thread count."""
    import scipy
    import sklearn
    import torch

    return {"cpu": _cpu(), "machine": platform.machine(), "cores": os.cpu_count(),
            "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(), "torch_blas": _torch_blas(),
            "numpy_simd": _numpy_features(), "numpy_blas": _numpy_blas(),
            "versions": {"python": platform.python_version(), "torch": torch.__version__, "numpy": np.__version__,
                         "scipy": scipy.__version__, "scikit-learn": sklearn.__version__},
            "env": {k: os.environ[k] for k in KERNEL_ENV if k in os.environ}}


def fingerprint_id(fp: dict[str, Any] | None = None) -> str:
    """A short name of a fingerprint: the golden file of its machine is ``<id>.json``."""
    return hashlib.sha256(json.dumps(fp or fingerprint(), sort_keys=True).encode()).hexdigest()[:12]


def golden_path(fp: dict[str, Any] | None = None) -> Path:
    return GOLDEN_DIR / f"{fingerprint_id(fp)}.json"


# -- digests ----------------------------------------------------------------------------------------------------

def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def _array_digest(values: np.ndarray) -> str:
    arr = np.asarray(values)
    if arr.dtype.kind in "biufc":
        return _sha(f"{arr.dtype.str}{arr.shape}".encode() + np.ascontiguousarray(arr).tobytes())
    return _sha(repr(arr.tolist()).encode())


def _stage(rel: str) -> str:
    parts = rel.split("/")
    if parts[0] == "datasets":
        return f"dataset {Path(parts[1]).stem}"
    if parts[0] == "runs":
        return f"train {parts[1]}"
    if parts[0] == "analysis":
        return f"{parts[1]} {Path(parts[2]).stem}"
    if rel == "claims.json":
        return "claims"
    return f"figure {Path(parts[-1]).stem}"


def _inputs(prov_inputs: str) -> list[str]:
    """An artifact's inputs (its provenance's ``inputs_json``) relative to the results folder."""
    return sorted(p["path"].split("results/", 1)[-1] for p in json.loads(prov_inputs or "[]"))


def digest(results: Path) -> dict[str, dict]:
    """``relative path -> {"stage", "code", "inputs", "vars": {name: digest}}`` for every artifact of a results
    folder (a replicate's subfolder excluded): each data variable and coordinate of an HDF5 artifact and its
    attributes other than the run's provenance (``attrs``); a figure sidecar's ``stats``; the ledger's scores
    (``claims.json``: every verdict, estimate and rule record)."""
    results = Path(results)
    out = {}
    files = sorted(p for p in results.rglob("*.h5") if "replication" not in p.relative_to(results).parts)
    ledger = [results / "claims.json"] if (results / "claims.json").exists() else []
    for path in [*files, *sorted((results / "figures").glob("*.json")), *ledger]:
        rel = path.relative_to(results).as_posix()
        if path.suffix == ".h5":
            with read_dataset(path) as ds:
                values = {name: _array_digest(ds[name].values) for name in sorted([*ds.data_vars, *ds.coords])}
                values["attrs"] = _sha(json.dumps(_attrs(ds.attrs), sort_keys=True, default=str).encode())
                prov = dict(ds.attrs)
        else:
            side = json.loads(path.read_text())
            key = "claims" if path.name == "claims.json" else "stats"
            values = {key: _sha(json.dumps(side.get(key), sort_keys=True).encode())}
            prov = side.get("provenance", {})
        out[rel] = {"stage": _stage(rel), "code": str(prov.get("code_hash", "")),
                    "inputs": _inputs(prov.get("inputs_json", "")), "vars": values}
    return out


def portable(digests: dict[str, dict]) -> set[str]:
    """The datasets: the same bits on every machine (``tests/test_golden.py`` checks every kept machine's digests
    agree on them). Nothing computed from them is counted on (see the module's docstring)."""
    return {rel for rel, art in digests.items() if art["stage"].startswith("dataset ")}


def compare(golden: dict[str, dict], current: dict[str, dict], only: set[str] | None = None) -> dict[str, list[str]]:
    """What differs, by kind: ``moved`` (a digest differs while the job's code param is the golden one: a
    failure), ``stale`` (the code param changed: not compared), ``missing`` / ``new`` artifacts; ``same``: the
    artifacts compared and equal. ``only``: the artifacts to compare (default: all)."""
    out: dict[str, list[str]] = {"moved": [], "stale": [], "missing": [], "new": [], "same": []}
    for rel in sorted(set(golden) | set(current)):
        if only is not None and rel not in only:
            continue
        if rel not in current or rel not in golden:
            out["missing" if rel not in current else "new"].append(rel)
            continue
        g, c = golden[rel], current[rel]
        if g["code"] != c["code"]:
            out["stale"].append(f"{rel} (stage {c['stage']})")
            continue
        moved = sorted(v for v in set(g["vars"]) | set(c["vars"]) if g["vars"].get(v) != c["vars"].get(v))
        if moved:
            out["moved"].append(f"{rel} (stage {c['stage']}, code {c['code']}): " + ", ".join(moved[:6]))
        else:
            out["same"].append(rel)
    return out


def load(path: Path) -> dict[str, Any]:
    """A golden file: ``{"fingerprint", "artifacts"}`` (:func:`digest`'s mapping)."""
    doc = json.loads(Path(path).read_text())
    if set(doc) != {"fingerprint", "artifacts"}:
        raise ValueError(f"{path}: not a golden file (rewrite it with `python -m pipeline_lib golden --write`)")
    return doc


def write(results: Path, path: Path | None = None) -> Path:
    """Write the digests of ``results`` with this machine's fingerprint, one artifact a line (a diff names it)."""
    fp = fingerprint()
    path = path or golden_path(fp)
    data = digest(results)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [f"{json.dumps(rel)}: {json.dumps(data[rel], sort_keys=True)}" for rel in sorted(data)]
    path.write_text('{\n"fingerprint": ' + json.dumps(fp, sort_keys=True) + ',\n"artifacts": {\n'
                    + ",\n".join(lines) + "\n}\n}\n")
    return path


def goldens() -> dict[Path, dict[str, Any]]:
    """Every golden file, by path."""
    return {p: load(p) for p in sorted(GOLDEN_DIR.glob("*.json"))}


# provenance that differs between two runs of the same numbers (the code, the time, the inputs' file digests)
_RUN_ATTRS = frozenset({"config_json", "config_hash", "inputs_json", "code_hash", "pipeline_lib_version", "git_commit",
                        "torch_version", "library_versions", "device", "created_at"})


def identical(before: Path, after: Path, only: str = "") -> dict[str, list[str]]:
    """Bit-level comparison of two results folders (a restructure's before and after, the ``lock`` command's HEAD
    and working tree): every artifact of ``before`` (under ``only``, e.g. ``runs``) has the same :func:`digest` in
    ``after`` (each data variable and coordinate, the attributes but the run's own provenance and timings, a
    figure's statistics and verdicts). By kind: ``differ`` (artifact: what differs), ``missing`` (in ``before``
    only), ``same``."""
    a, b = digest(before), digest(after)
    out: dict[str, list[str]] = {"differ": [], "missing": [], "same": []}
    for rel in sorted(r for r in a if r.startswith(only)):
        if rel not in b:
            out["missing"].append(rel)
            continue
        bad = sorted(v for v in {*a[rel]["vars"], *b[rel]["vars"]} if a[rel]["vars"].get(v) != b[rel]["vars"].get(v))
        out["differ" if bad else "same"].append(f"{rel}: {', '.join(bad)}" if bad else rel)
    return out


def _attrs(attrs: dict) -> dict:
    """Attributes as comparable values (arrays as lists), the run's own provenance and its timings (``seconds``,
    ``seconds_*``: how long a job took, not what it computed) left out."""
    return {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in attrs.items()
            if k not in _RUN_ATTRS and k != "seconds" and not k.startswith("seconds_")}
