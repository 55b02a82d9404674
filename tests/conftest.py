import contextlib
import copy
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest
import yaml

import crossings

# The suite runs more processes than cores (pytest-xdist workers beside the smoke run's jobs): OpenMP threads
# that spin while they wait for work (libgomp's default) then take the cores from the processes that have
# some (a k-means test: 0.5 s alone, 12 s in the suite). Idle threads sleep instead; thread counts, and so
# the numbers, are unchanged. Set before any test imports torch or scikit-learn; the snakemake runs inherit it.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# torch.compile's kernels are cached per machine (under /tmp or ~/.cache); kernels cached under another CPU
# capability were served to a later run and failed. The suite compiles into a folder of its own, made per test
# session (its workers and snakemake runs inherit it) and removed at its end.
if "TORCHINDUCTOR_CACHE_DIR" not in os.environ:
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="pipeline_lib-tests-inductor-")

# Config checks that passed are remembered on disk (pipeline_lib/plumbing/remembered.py): the suite remembers into a
# folder of its own, made per test session (workers and snakemake runs inherit it) and removed at its end.
if "PIPELINE_LIB_CACHE" not in os.environ:
    os.environ["PIPELINE_LIB_CACHE"] = tempfile.mkdtemp(prefix="pipeline_lib-tests-cache-")
REPO = Path(__file__).resolve().parents[1]
crossings.install()  # before any test imports a scoring module
SMOKE = REPO / ".test" / "config" / "config.yaml"
# torch.compile on a CPU builds C++ kernels: tests that compile skip where no compiler is installed
needs_cxx = pytest.mark.skipif(not any(shutil.which(c) for c in (os.environ.get("CXX", ""), "g++", "clang++", "c++") if c),
                               reason="torch.compile needs a C++ compiler on a CPU; none found")


def _needs_smoke(item) -> bool:
    return "smoke_run" in getattr(item, "fixturenames", ())


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Tests by level: a test that reads the smoke run is a workflow test (it needs the real snakemake
    CLI) even where its module does not say so, so ``-m "not workflow"`` never starts the smoke run. The
    tests that do not read it run first (their own snakemake runs, the SLURM jobs' waiting), so that the
    smoke DAG builds meanwhile, and those marked ``long`` first of each kind (here, before pytest-xdist
    hands the order to its workers)."""
    for item in items:
        if _needs_smoke(item) and not item.get_closest_marker("workflow"):
            item.add_marker(pytest.mark.workflow)
    # the longest of each kind first, so that the last test to end is a short one
    items.sort(key=lambda i: (_needs_smoke(i), i.get_closest_marker("long") is None))


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session):
    """Once the selection is final: if a selected test reads the smoke run, start it in the background,
    once per test session: under pytest-xdist the first worker to create the session's folder starts
    it and every worker waits for its exit status file (``smoke_run``)."""
    if not any(_needs_smoke(i) for i in session.items):
        return
    work = _smoke_dir(session.config)
    _SMOKE.update(work=work)
    try:
        work.mkdir()
    except FileExistsError:  # another worker of this session started it
        return
    (work / "config").mkdir()
    shutil.copy(SMOKE, work / "config" / "config.yaml")
    shutil.copy(SMOKE, work / "smoke.yaml")
    shutil.copytree(SMOKE.parents[1] / "data", work / "data")  # the MNIST stand-ins the test config reads
    _side(work, "started").write_text(str(time.time()))
    # the exit status is written once the run has ended (renamed into place: a reader never sees it half);
    # the run is killed if the process that ran the test session dies (a killed or cancelled pytest: its own
    # session's signals do not reach this process group)
    owner = os.getppid() if hasattr(session.config, "workerinput") else os.getpid()
    rc = shlex.quote(str(_side(work, "rc")))
    script = (f'{shlex.join(_snakemake_cmd(work))} > {shlex.quote(str(_side(work, "log")))} 2>&1 & run=$!; '
              f'while kill -0 $run 2>/dev/null; do kill -0 {owner} 2>/dev/null || kill -KILL 0; sleep 1; done; '
              f'wait $run; echo $? > {rc}.tmp && mv {rc}.tmp {rc}')
    proc = subprocess.Popen(["sh", "-c", script], cwd=work, start_new_session=True,
                            env=dict(os.environ, PYTHONPATH=str(REPO)))
    _side(work, "pid").write_text(str(proc.pid))


def pytest_configure(config):
    """One id for the test session, which pytest-xdist hands its workers (``--testrunuid``), and one folder for
    the claims' verdicts its processes see (:mod:`crossings`; the workers, started later, inherit it)."""
    if not hasattr(config, "workerinput"):
        if not getattr(config.option, "testrunuid", None):
            config.option.testrunuid = uuid.uuid4().hex
        os.environ[crossings.ENV] = tempfile.mkdtemp(prefix="pipeline_lib-tests-verdicts-")


def _whole_suite(config) -> bool:
    """The session runs every test (no path below tests/, and none of -k, -m, --lf, --sw, --deselect, --ignore,
    --collect-only, --setup-only or --setup-plan)."""
    o = config.option
    narrowed = ("keyword", "markexpr", "lf", "stepwise", "deselect", "ignore", "ignore_glob", "collectonly",
                "setuponly", "setupplan")
    if any(getattr(o, name, None) for name in narrowed):
        return False
    return all(Path(a).resolve() in (REPO, REPO / "tests") for a in config.args)


def _check_crossings(session) -> None:
    """After the whole suite: every declared claim went both ways across its rule (:mod:`crossings`), or the
    session fails naming those that did not."""
    from pipeline_lib import declarations

    folder = Path(os.environ[crossings.ENV])
    got = crossings.seen(folder) if session.exitstatus == 0 and _whole_suite(session.config) else None
    shutil.rmtree(folder, ignore_errors=True)
    if got is None:
        return
    declared = declarations.declared_claims()
    report = session.config.pluginmanager.get_plugin("terminalreporter")
    gone = crossings.missing(got, declared)
    if gone:
        report.write_sep("=", f"{len(gone)} claims no test moved across their rule both ways", red=True)
        for cid, verdicts in sorted(gone.items()):
            report.write_line(f"{cid}: only {', '.join(verdicts) or 'never scored'}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    report.write_line(f"claims moved across their rule both ways by a planted effect and a null: "
                      f"{len(declared) - len(gone)} of {len(declared)}")


def _smoke_dir(config) -> Path:
    """The session's smoke folder: one name for the controller and every worker of a pytest-xdist run."""
    run_id = getattr(config, "workerinput", {}).get("testrunuid") or config.option.testrunuid
    return Path(tempfile.gettempdir()) / f"smoke-{run_id}"


SIDES = ("started", "pid", "log", "rc.tmp", "rc")  # beside the folder: start time, process, output, exit status


def _side(work: Path, what: str) -> Path:
    return work.parent / f"{work.name}.{what}"


def pytest_sessionfinish(session):
    """Each process keeps the claims' verdicts it saw; the process that ran the session (not an xdist worker:
    others may still read the run) checks them, and stops a smoke run still going (an interrupted session)
    and removes it."""
    crossings.dump(Path(os.environ[crossings.ENV]))
    if hasattr(session.config, "workerinput"):
        return
    try:
        _stop_smoke_run(session)
    finally:
        _check_crossings(session)


def _stop_smoke_run(session) -> None:
    for env, ours in (("TORCHINDUCTOR_CACHE_DIR", "pipeline_lib-tests-inductor-"),
                      ("PIPELINE_LIB_CACHE", "pipeline_lib-tests-cache-")):
        if os.path.basename(os.environ[env]).startswith(ours):
            shutil.rmtree(os.environ[env], ignore_errors=True)  # ours, not a user's own
    work = _smoke_dir(session.config)
    if not work.exists():
        return
    if _side(work, "pid").exists() and not _side(work, "rc").exists():
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.killpg(int(_side(work, "pid").read_text()), signal.SIGKILL)
    shutil.rmtree(work, ignore_errors=True)
    for what in SIDES:
        _side(work, what).unlink(missing_ok=True)


_SMOKE: dict = {}  # this process's view of the session's smoke run (pytest_collection_finish)


def chromium_path() -> str:
    """The browser, installed by `.ci/run` (a test never installs system packages); the test skips without one."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    pytest.skip("no Chromium on this machine (`.ci/run` installs Debian's chromium where it runs as root)")


def load_yaml(path):
    with open(path) as fh:
        return yaml.safe_load(fh)


@pytest.fixture
def smoke_raw():
    """The smoke config as a raw dict (a fresh copy per test)."""
    return copy.deepcopy(load_yaml(SMOKE))


def merged(base: dict, extra: dict) -> dict:
    """``extra`` added to ``base`` as Snakemake adds a --configfile to the default config (mappings merged key
    by key, everything else replaced)."""
    out = dict(base)
    for k, v in extra.items():
        out[k] = merged(base[k], v) if isinstance(v, dict) and isinstance(base.get(k), dict) else v
    return out


def copy_run(src: Path, dst: Path) -> Path:
    """A copy of a finished run (modification times kept, as `cp -a`), without what a snakemake run of another
    test may be writing there at the time (locks, incomplete markers, logs)."""
    shutil.copytree(src, dst, symlinks=True, ignore=shutil.ignore_patterns("locks", "incomplete", "log"))
    return dst


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
    Started at the end of collection (``pytest_collection_finish``); this waits for it (the seconds:
    how long it took)."""
    work = _SMOKE["work"]
    deadline = time.time() + 1800  # ~4.5 min on 2 free cores; slow or busy machines need more
    while not _side(work, "rc").exists():
        if time.time() > deadline:
            pytest.fail(f"the smoke run did not end within 30 min; its log: {_side(work, 'log')}")
        time.sleep(0.5)
    rc = int(_side(work, "rc").read_text())
    assert rc == 0, _side(work, "log").read_text()[-8000:]
    started = float(_side(work, "started").read_text())
    return work, _side(work, "rc").stat().st_mtime - started


def _snakemake_cmd(workdir, *args, repo=REPO) -> list[str]:
    return [sys.executable, "-m", "snakemake", "-s", str(repo / "Snakefile"), "-d", str(workdir), "--cores", "2",
            *args]


def snakemake(workdir, *args, configfile=None, timeout=600, repo=REPO):
    """Run the real snakemake CLI on the Snakefile (and library) of ``repo`` (this repository by default) in
    ``workdir``."""
    cmd = _snakemake_cmd(workdir, *args, repo=repo)
    if configfile is not None:
        cmd += ["--configfile", str(configfile)]
    env = dict(os.environ, PYTHONPATH=str(repo))
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=workdir)
