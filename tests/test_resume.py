"""Interruption: a killed training job resumes from its checkpoint and ends bit-identical; identical
config, seeds and threads give identical artifacts."""
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import xarray as xr
import yaml

from conftest import REPO, SMOKE, load_yaml, snakemake

pytestmark = pytest.mark.workflow


EVERY = 25  # checkpoint (and log) interval of the killed run


def _one_run_config(path, epochs=300):
    """The smoke config's scratch_p4 alone, long enough (~20 ms an epoch) to be killed mid-run."""
    raw = load_yaml(SMOKE)
    run = raw["runs"]["scratch_p4"]
    run.update(epochs=epochs, checkpoint_every=EVERY, log_every=EVERY)
    raw["runs"] = {"scratch_p4": run}
    raw["datasets"] = {run["dataset"]: raw["datasets"][run["dataset"]]}  # the default target builds every dataset
    raw["models"] = {run["model"]: raw["models"][run["model"]]}
    raw["figures"], raw["analyses"] = {}, {}
    path.write_text(yaml.safe_dump(raw))
    return path


def _values(path):
    with xr.open_dataset(path, engine="h5netcdf") as ds:
        return {k: v.values for k, v in ds.load().variables.items()}


@pytest.mark.long
def test_sigkill_mid_training_then_rerun_equals_uninterrupted(tmp_path):
    """Slow: a real training job killed mid-run, resumed, and a clean run to compare with."""
    killed, clean = tmp_path / "killed", tmp_path / "clean"
    killed.mkdir(), clean.mkdir()
    cfg_k, cfg_c = _one_run_config(killed / "c.yaml"), _one_run_config(clean / "c.yaml")
    ckpt = killed / "results/runs/scratch_p4/resume/checkpoint.pt"
    out = killed / "results/runs/scratch_p4/trajectory.h5"
    cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(killed), "--cores", "1",
           "--configfile", str(cfg_k)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                            env=dict(os.environ, PYTHONPATH=str(REPO)))
    deadline = time.time() + 120
    while not ckpt.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert ckpt.exists(), "no checkpoint appeared"
    time.sleep(0.3)
    os.killpg(proc.pid, signal.SIGKILL)  # snakemake and its training job, mid-run
    proc.wait()
    assert not out.exists()  # nothing half-written at the output path
    # killing snakemake itself leaves its lock: the documented recovery is --unlock, then rerun
    assert snakemake(killed, "--unlock", configfile=cfg_k).returncode == 0
    rerun = snakemake(killed, configfile=cfg_k)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    log = (killed / "results/logs/train/scratch_p4.log").read_text()
    assert "found resume checkpoint" in log
    first_logged = int(re.findall(r"epoch (\d+): train_loss", log)[0])
    assert first_logged >= EVERY  # resumed, not restarted from epoch 0
    assert not ckpt.exists()  # removed once the artifacts are complete
    res = snakemake(clean, configfile=cfg_c)
    assert res.returncode == 0, res.stderr[-3000:]
    for name in ("trajectory.h5", "weights.h5"):
        a = _values(killed / "results/runs/scratch_p4" / name)
        b = _values(clean / "results/runs/scratch_p4" / name)
        assert a.keys() == b.keys()
        for k in a:
            np.testing.assert_array_equal(a[k], b[k], err_msg=f"{name}:{k}")


def test_same_config_same_artifacts(tmp_path, smoke_raw):
    """Two runs of the same config, seeds and threads: identical values (only timestamps differ)."""
    from pipeline_lib.plumbing.config import load_config
    from pipeline_lib.stages.dataset import build_dataset
    from pipeline_lib.stages.train import train_run

    smoke_raw["runs"]["scratch_p4"]["batch_size"] = 32
    cfg = load_config(smoke_raw)
    results = []
    for i in range(2):
        d = tmp_path / str(i)
        build_dataset(cfg, "sma_p4_T12", str(d / "data.h5"))
        train_run(cfg, "scratch_p4", str(d / "data.h5"), str(d / "traj.h5"), str(d / "w.h5"), threads=1)
        results.append([xr.open_dataset(d / f, engine="h5netcdf").load() for f in ("data.h5", "traj.h5", "w.h5")])
    for a, b in zip(*results):
        xr.testing.assert_equal(a, b)
        drop = {"created_at", "inputs_json"}  # inputs_json holds the (different) tmp paths
        assert {k: v for k, v in a.attrs.items() if k not in drop} == {k: v for k, v in b.attrs.items() if k not in drop}
