"""The workflow's own code passes `snakefmt --check` and `snakemake --lint` (STYLE point 10)."""
import re
import subprocess
import sys

import pytest

from conftest import REPO


def test_snakefmt_check():
    pytest.importorskip("snakefmt")
    res = subprocess.run([sys.executable, "-m", "snakefmt", "--check", "Snakefile", "workflow/rules"],
                         cwd=REPO, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


def test_snakemake_lint_has_only_the_single_environment_lint():
    # One environment (pyproject.toml / environment.yml) serves every rule, on purpose: the
    # per-rule conda lint is the only one we accept.
    res = subprocess.run([sys.executable, "-m", "snakemake", "--lint", "--cores", "1"], cwd=REPO,
                         capture_output=True, text=True)
    out = res.stdout + res.stderr
    lints = set(re.findall(r"^\s+\* (.+?):\s*$", out, re.M))
    assert lints <= {"Specify a conda environment or container for each rule."}, out
    assert "Lints for" in out or res.returncode == 0
