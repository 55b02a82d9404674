"""Bad input and code changes: diverging runs finish flagged, corrupt inputs name themselves, and a
library change reruns exactly the rules whose stage imports the changed module."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
import xarray as xr

from conftest import REPO, SMOKE
from pipeline_lib.config import load_config
from pipeline_lib.stages.dataset import build_dataset
from pipeline_lib.stages.train import train_run
from pipeline_lib.store import ArtifactError


def test_absurd_learning_rate_finishes_with_diverged_seeds_flagged(smoke_raw, tmp_path):
    smoke_raw["runs"]["scratch_p4"].update(epochs=30, optimizer={"name": "sgd", "lr": 1000.0})
    cfg = load_config(smoke_raw)
    build_dataset(cfg, "sma_p4_T12", str(tmp_path / "d.h5"))
    train_run(cfg, "scratch_p4", str(tmp_path / "d.h5"), str(tmp_path / "t.h5"), str(tmp_path / "w.h5"))
    traj = xr.open_dataset(tmp_path / "t.h5", engine="h5netcdf")
    assert traj.diverged.all() and (traj.diverged_epoch > 0).all()
    for s in traj.seed.values:  # finite before divergence, NaN from then on
        e = int(traj.diverged_epoch.sel(seed=s))
        loss = traj.train_loss.sel(seed=s)
        assert np.isfinite(loss.sel(epoch=slice(0, e - 1))).all() and np.isnan(loss.sel(epoch=slice(e, None))).all()
    weights = xr.open_dataset(tmp_path / "w.h5", engine="h5netcdf")
    assert int(weights.snapshot[-1]) == 30  # the run finished and wrote its final snapshot


def test_truncated_dataset_makes_training_fail_naming_the_file(smoke_raw, tmp_path):
    cfg = load_config(smoke_raw)
    path = tmp_path / "d.h5"
    build_dataset(cfg, "sma_p4_T12", str(path))
    path.write_bytes(path.read_bytes()[:2000])
    with pytest.raises(ArtifactError, match=r"d\.h5.*snakemake --forcerun dataset"):
        train_run(cfg, "scratch_p4", str(path), str(tmp_path / "t.h5"), str(tmp_path / "w.h5"))
    assert not (tmp_path / "t.h5").exists()


def _planned(workdir, repo):
    res = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(repo / "Snakefile"), "-d", str(workdir),
                          "--configfile", str(workdir / "smoke.yaml"), "-n", "--cores", "1"],
                         capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(repo)), cwd=workdir)
    assert res.returncode == 0, res.stderr[-2000:]
    from test_workflow import planned_jobs
    return planned_jobs(res)


@pytest.mark.workflow
def test_library_change_reruns_exactly_the_rules_that_import_it(tmp_path):
    repo, work = _copy_repo_and_run(tmp_path)
    assert _planned(work, repo) == {}
    with open(repo / "pipeline_lib/figures/fig7.py", "a") as fh:
        fh.write("\n# a change to Fig. 7's plotting code\n")
    assert _planned(work, repo) == {"fig7_param_tsne": 1, "report": 1, "all": 1}
    with open(repo / "pipeline_lib/analysis/interpolate.py", "a") as fh:
        fh.write("\n# a change to the interpolation analysis\n")
    assert _planned(work, repo) == {"interpolate": 1, "fig6_interpolation": 1, "fig7_param_tsne": 1,
                                    "report": 1, "all": 1}
    # each model family lives in its own module and rules hash the module of their run's kind:
    # the 5 transformer/ViT runs and what reads them rerun; no circuit run, no dataset
    with open(repo / "pipeline_lib/models/transformer.py", "a") as fh:
        fh.write("\n# a change to the transformer\n")
    jobs = _planned(work, repo)
    assert jobs["train"] == 5 and jobs["probe"] == 3 and jobs["eureka_stats"] == 2 and "dataset" not in jobs
    assert "fig5_accuracy" not in jobs
    with open(repo / "pipeline_lib/models/circuit.py", "a") as fh:  # and the other way round
        fh.write("\n# a change to the circuit model\n")
    jobs = _planned(work, repo)
    assert jobs["train"] == 10 and jobs["interpolate"] == 1 and "dataset" not in jobs
    with open(repo / "pipeline_lib/tasks/eureka.py", "a") as fh:
        fh.write("\n# a change to the Eureka task generators\n")
    assert _planned(work, repo)["dataset"] == 2  # the two Eureka datasets, not the circuit ones
    with open(repo / "pipeline_lib/engine.py", "a") as fh:  # training code: every run and downstream
        fh.write("\n# a change to the engine\n")
    jobs = _planned(work, repo)
    assert jobs["train"] == 10 and jobs["dataset"] == 2


def _copy_repo_and_run(tmp_path):
    """A copy of the repository (so its library can be edited) and a finished smoke run with it."""
    repo = tmp_path / "repo"
    repo.mkdir()
    for part in ("Snakefile", "workflow", "pipeline_lib", "profiles", "config"):
        src = REPO / part
        if src.is_symlink():
            os.symlink(os.readlink(src), repo / part)
        elif src.is_dir():
            shutil.copytree(src, repo / part, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(src, repo / part)
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(SMOKE, work / "smoke.yaml")
    res = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(repo / "Snakefile"), "-d", str(work),
                          "--configfile", str(work / "smoke.yaml"), "--cores", "2"],
                         capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(repo)), cwd=work)
    # (cwd matters: `python -m` puts the working directory first on sys.path)
    assert res.returncode == 0, res.stderr[-3000:]
    return repo, work
