import copy
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
SMOKE = REPO / "config" / "smoke.yaml"


def load_yaml(path):
    with open(path) as fh:
        return yaml.safe_load(fh)


@pytest.fixture
def smoke_raw():
    """The smoke config as a raw dict (a fresh copy per test)."""
    return copy.deepcopy(load_yaml(SMOKE))


def snakemake(workdir, *args, configfile=None, timeout=600):
    """Run the real snakemake CLI on this repository's Snakefile in ``workdir``."""
    cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(workdir),
           "--cores", "2", *args]
    if configfile is not None:
        cmd += ["--configfile", str(configfile)]
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=workdir)
