import copy
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
SMOKE = REPO / ".test" / "config" / "config.yaml"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Tests by level: a test that reads the smoke run is a workflow test (it needs the real snakemake
    CLI) even where its module does not say so, so ``-m "not workflow"`` never starts the smoke run."""
    for item in items:
        if "smoke_run" in getattr(item, "fixturenames", ()) and not item.get_closest_marker("workflow"):
            item.add_marker(pytest.mark.workflow)


def load_yaml(path):
    with open(path) as fh:
        return yaml.safe_load(fh)


@pytest.fixture
def smoke_raw():
    """The smoke config as a raw dict (a fresh copy per test)."""
    return copy.deepcopy(load_yaml(SMOKE))


def hash_tree(root: Path) -> dict[str, str]:
    """sha256 of every file under ``root`` (relative path -> hex digest)."""
    import hashlib

    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(Path(root).rglob("*")) if p.is_file()}


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory):
    """A finished smoke run, laid out as a checkout's real results would be: the smoke config is the
    working directory's ``config/config.yaml`` (so plain ``snakemake`` runs it, with the same dataset
    and run names as the default config), and also ``smoke.yaml`` for tests that pass it explicitly."""
    import time

    work = tmp_path_factory.mktemp("smoke")
    (work / "config").mkdir()
    shutil.copy(SMOKE, work / "config" / "config.yaml")
    shutil.copy(SMOKE, work / "smoke.yaml")
    t0 = time.perf_counter()
    result = snakemake(work, timeout=1800)  # ~1.5 min on 2 free cores; slow or busy machines need more
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    return work, time.perf_counter() - t0


def snakemake(workdir, *args, configfile=None, timeout=600):
    """Run the real snakemake CLI on this repository's Snakefile in ``workdir``."""
    cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(workdir),
           "--cores", "2", *args]
    if configfile is not None:
        cmd += ["--configfile", str(configfile)]
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=workdir)
