import copy
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
SMOKE = REPO / ".test" / "config" / "config.yaml"


def _needs_smoke(item) -> bool:
    return "smoke_run" in getattr(item, "fixturenames", ())


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Tests by level: a test that reads the smoke run is a workflow test (it needs the real snakemake
    CLI) even where its module does not say so, so ``-m "not workflow"`` never starts the smoke run."""
    for item in items:
        if _needs_smoke(item) and not item.get_closest_marker("workflow"):
            item.add_marker(pytest.mark.workflow)


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session):
    """Once the selection is final: if a selected test reads the smoke run, start it now in the
    background and run the tests that do not read it first (their own snakemake runs, the SLURM
    jobs' waiting), so that the smoke DAG builds meanwhile instead of before them."""
    items = session.items
    if not any(_needs_smoke(i) for i in items):
        return
    items[:] = [i for i in items if not _needs_smoke(i)] + [i for i in items if _needs_smoke(i)]
    work = Path(tempfile.mkdtemp(prefix="smoke-"))
    (work / "config").mkdir()
    shutil.copy(SMOKE, work / "config" / "config.yaml")
    shutil.copy(SMOKE, work / "smoke.yaml")
    log = open(work.parent / f"{work.name}.log", "w+")
    _SMOKE.update(work=work, log=log, t0=time.perf_counter(),
                  proc=subprocess.Popen(_snakemake_cmd(work), stdout=log, stderr=subprocess.STDOUT, cwd=work,
                                        env=dict(os.environ, PYTHONPATH=str(REPO))))


def pytest_sessionfinish(session):
    if "proc" in _SMOKE:
        if _SMOKE["proc"].poll() is None:  # interrupted: stop the background run
            _SMOKE["proc"].kill()
            _SMOKE["proc"].wait()
        _SMOKE["log"].close()
        shutil.rmtree(_SMOKE["work"], ignore_errors=True)
        Path(_SMOKE["log"].name).unlink(missing_ok=True)


_SMOKE: dict = {}  # the background smoke run of this session (pytest_collection_finish)


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
def smoke_run():
    """A finished smoke run, laid out as a checkout's real results would be: the smoke config is the
    working directory's ``config/config.yaml`` (so plain ``snakemake`` runs it, with the same dataset
    and run names as the default config), and also ``smoke.yaml`` for tests that pass it explicitly.
    Started at the end of collection (``pytest_collection_finish``); this waits for it."""
    proc = _SMOKE["proc"]
    try:
        proc.wait(timeout=1800)  # ~1.5 min on 2 free cores; slow or busy machines need more
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    log = _SMOKE["log"]
    log.seek(0)
    assert proc.returncode == 0, log.read()[-8000:]
    return _SMOKE["work"], time.perf_counter() - _SMOKE["t0"]


def _snakemake_cmd(workdir, *args) -> list[str]:
    return [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(workdir), "--cores", "2",
            *args]


def snakemake(workdir, *args, configfile=None, timeout=600):
    """Run the real snakemake CLI on this repository's Snakefile in ``workdir``."""
    cmd = _snakemake_cmd(workdir, *args)
    if configfile is not None:
        cmd += ["--configfile", str(configfile)]
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=workdir)
