"""The workflow's own code passes `snakefmt --check` and `snakemake --lint` (STYLE point 10)."""
import re
import subprocess
import sys

import pytest

from conftest import REPO


def test_snakefmt_check():
    pytest.importorskip("snakefmt")
    res = subprocess.run([sys.executable, "-m", "snakefmt", "--check", "Snakefile", "workflow/Snakefile", "workflow/rules"],
                         cwd=REPO, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


# Run snakemake with the scientific stack made unimportable: what a bare Snakemake environment (the
# workflow catalog's linter, CI actions) has. Building the DAG must not need any of it.
BARE = """
import importlib.abc, sys
HEAVY = {"numpy", "torch", "xarray", "h5py", "h5netcdf", "matplotlib", "sklearn", "scipy", "tqdm"}
class Bare(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in HEAVY:
            raise ModuleNotFoundError(f"No module named {name!r} (blocked: a bare Snakemake environment)")
sys.meta_path.insert(0, Bare())
from snakemake.cli import main
sys.argv = ["snakemake", *sys.argv[1:]]
main()
"""


def test_snakemake_lint_has_only_the_single_environment_lint():
    # One environment (pyproject.toml / environment.yml) serves every rule, on purpose: the
    # per-rule conda lint is the only one we accept. Linted as in a bare Snakemake environment.
    res = subprocess.run([sys.executable, "-c", BARE, "--lint", "--cores", "1"], cwd=REPO,
                         capture_output=True, text=True)
    out = res.stdout + res.stderr
    lints = set(re.findall(r"^\s+\* (.+?):\s*$", out, re.M))
    assert lints <= {"Specify a conda environment or container for each rule."}, out
    assert "Lints for" in out or res.returncode == 0


def test_ruff_check_is_clean():
    pytest.importorskip("ruff")
    res = subprocess.run([sys.executable, "-m", "ruff", "check", "."], cwd=REPO, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
