"""The machine a golden digest was written on, and the reruns that measure its cross-machine spread.

:func:`fingerprint` says what decides this machine's floating-point results; :data:`PERTURBATIONS` are the
settings under which ``python -m pipeline_lib golden --write --measure`` reruns the test config on the writing
machine (:func:`measure`), forcing its kernels elsewhere, so that :mod:`.golden` can store how far each variable
moves (its spread) beside its digest.
"""
from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

# Environment variables that choose a kernel or a thread count: part of the fingerprint when set.
KERNEL_ENV = ("ATEN_CPU_CAPABILITY", "MKL_CBWR", "MKL_ENABLE_INSTRUCTIONS", "MKL_DEBUG_CPU_TYPE",
              "NPY_DISABLE_CPU_FEATURES", "NPY_ENABLE_CPU_FEATURES", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
              "OPENBLAS_NUM_THREADS", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
# numpy's AVX-512 dispatch targets (the ones absent on a CPU are dropped before a perturbation disables them)
_NUMPY_AVX512 = ("AVX512F", "AVX512CD", "AVX512_SKX", "AVX512_CLX", "AVX512_CNL", "AVX512_ICL", "AVX512_SPR",
                 "X86_V4")
# How the writing machine's kernels are forced elsewhere to measure each variable's spread: a name, the
# environment it sets and the cores (and so the threads) the run gets.
PERTURBATIONS: tuple[tuple[str, dict[str, str], int], ...] = (
    ("torch_avx2", {"ATEN_CPU_CAPABILITY": "avx2"}, 2),
    ("torch_default", {"ATEN_CPU_CAPABILITY": "default"}, 2),
    ("numpy_no_avx512", {"NPY_DISABLE_CPU_FEATURES": "<avx512>"}, 2),
    ("mkl_compatible", {"MKL_CBWR": "COMPATIBLE"}, 2),
    ("mkl_avx2", {"MKL_CBWR": "AVX2"}, 2),
    ("one_thread", {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}, 1),
)


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


def _numpy_cpu_features() -> dict[str, bool]:
    """numpy's CPU features (name -> enabled), as its SIMD dispatch sees them."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as feats
    except ImportError:  # numpy < 2
        from numpy.core._multiarray_umath import __cpu_features__ as feats
    return feats


def _numpy_features() -> str:
    """numpy's highest enabled dispatch target (its SIMD loops follow it)."""
    feats = _numpy_cpu_features()
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


def fingerprint_diff(written: dict[str, Any], here: dict[str, Any]) -> list[str]:
    """``key: written -> here`` for every field of two fingerprints that differs (nested fields dotted)."""
    out = []
    for key in sorted(set(written) | set(here)):
        a, b = written.get(key), here.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            out += [f"{key}.{line}" for line in fingerprint_diff(a, b)]
        elif a != b:
            out.append(f"{key}: {a!r} -> {b!r}")
    return out


# -- measuring the spread ---------------------------------------------------------------------------------------

def perturbation_env(env: dict[str, str]) -> dict[str, str]:
    """A perturbation's environment on this machine (``<avx512>``: numpy's AVX-512 targets this CPU has)."""
    out = dict(env)
    if out.get("NPY_DISABLE_CPU_FEATURES") == "<avx512>":
        feats = _numpy_cpu_features()
        out["NPY_DISABLE_CPU_FEATURES"] = " ".join(f for f in _NUMPY_AVX512 if feats.get(f))
    return out


def run_test_config(repo: Path, work: Path, env: dict[str, str] | None = None, cores: int = 2) -> Path:
    """Run the test config (``<repo>/.test``) from scratch in ``work`` with ``env`` added; its results."""
    repo, work = Path(repo).resolve(), Path(work).resolve()
    if work.exists():
        shutil.rmtree(work)
    (work / "config").mkdir(parents=True)
    shutil.copy(repo / ".test" / "config" / "config.yaml", work / "config" / "config.yaml")
    shutil.copytree(repo / ".test" / "data", work / "data")
    cmd = [sys.executable, "-m", "snakemake", "-s", str(repo / "Snakefile"), "-d", str(work), "--cores", str(cores)]
    with open(work.with_suffix(".log"), "w") as log:
        res = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=work,
                             env=dict(os.environ, PYTHONPATH=str(repo), **(env or {})))
    if res.returncode:
        raise RuntimeError(f"the test config failed in {work} (log: {work.with_suffix('.log')})")
    return work / "results"


def measure(repo: Path, scratch: Path, progress=print) -> dict[str, Path]:
    """Rerun the test config once per :data:`PERTURBATIONS` under ``scratch``; name -> its results."""
    out = {}
    for name, env, cores in PERTURBATIONS:
        progress(f"golden: the test config under {name} ({env}, {cores} cores) ...")
        out[name] = run_test_config(repo, scratch / name, perturbation_env(env), cores)
    return out
