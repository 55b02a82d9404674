"""The smoke config through the real snakemake CLI: artifacts, figure, rerun planning, bad input."""
import json
import re
import shutil
import time

import pytest
import xarray as xr
import yaml

from conftest import SMOKE, load_yaml, snakemake

pytestmark = pytest.mark.workflow


def planned_jobs(result) -> dict[str, int]:
    """Rule -> job count from the 'Job stats' table of a dry run."""
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout + result.stderr
    if "Nothing to be done" in out:
        return {}
    table = out.split("Job stats:")[1].split("Reasons:")[0]
    return {m[1]: int(m[2]) for m in re.finditer(r"^(\w+)\s+(\d+)$", table, re.M) if m[1] != "total"}


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    work = tmp_path_factory.mktemp("smoke")
    shutil.copy(SMOKE, work / "smoke.yaml")
    t0 = time.perf_counter()
    result = snakemake(work, configfile=work / "smoke.yaml")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    return work, time.perf_counter() - t0


def test_smoke_produces_artifacts_and_figure(smoke_run):
    work, seconds = smoke_run
    res = work / "results"
    for f in ("fig5_accuracy.pdf", "fig5_accuracy.png", "fig5_accuracy.json"):
        assert (res / "figures" / f).stat().st_size > 1000
    for run in ("scratch_p4", "pretrain_p2", "curriculum_p2_p4"):
        assert (res / "logs" / "train" / f"{run}.log").read_text().count("epoch") > 1
    with xr.open_dataset(res / "runs" / "curriculum_p2_p4" / "trajectory.h5", engine="h5netcdf") as ds:
        for v in ("train_loss", "test_loss", "train_acc", "test_acc"):
            assert ds[v].dims == ("seed", "epoch")
        assert ds.attention.dims == ("seed", "epoch", "probe", "position")
        # the finetune continues the pretraining's epoch count (30 epochs of pretrain_p2)
        assert int(ds.epoch[0]) == 30 and int(ds.epoch[-1]) == 60
        recorded = ds.attention.sel(epoch=ds.attention_recorded)
        assert float(abs(recorded.sum("position") - 1).max()) < 1e-5
        inputs = json.loads(ds.attrs["inputs_json"])
        assert [i["path"] for i in inputs] == ["results/datasets/sma_p4_T12.h5",
                                               "results/runs/pretrain_p2/weights.h5"]
        assert json.loads(ds.attrs["config_json"])["run"]["init_from"] == "pretrain_p2"
        for key in ("config_hash", "git_commit", "torch_version", "device", "created_at", "pipeline_lib_version"):
            assert ds.attrs[key]
    with xr.open_dataset(res / "runs" / "curriculum_p2_p4" / "weights.h5", engine="h5netcdf") as w, \
         xr.open_dataset(res / "runs" / "pretrain_p2" / "weights.h5", engine="h5netcdf") as parent:
        assert w.W_E.dims == ("snapshot", "seed", "token", "d_model")
        assert int(w.snapshot[-1]) == 60
        # seed i of the finetune starts from seed i of the parent's final weights
        xr.testing.assert_equal(w.W_E.isel(snapshot=0), parent.W_E.isel(snapshot=-1))
    stats = json.loads((res / "figures" / "fig5_accuracy.json").read_text())["stats"]
    assert set(stats) == {"scratch", "curriculum"} and stats["curriculum"]["seeds"] == 3
    assert stats["curriculum"]["switch_epochs"] == [30]


def test_nothing_left_to_do_after_a_run(smoke_run):
    work, _ = smoke_run
    assert planned_jobs(snakemake(work, "-n", configfile=work / "smoke.yaml")) == {}


def test_editing_the_finetune_reruns_only_it_and_its_figure(smoke_run):
    work, _ = smoke_run
    raw = load_yaml(work / "smoke.yaml")
    raw["runs"]["curriculum_p2_p4"]["epochs"] = 35
    edited = work / "edited.yaml"
    edited.write_text(yaml.safe_dump(raw))
    jobs = planned_jobs(snakemake(work, "-n", configfile=edited))  # keys re-sorted by safe_dump too
    assert jobs == {"train": 1, "fig5_accuracy": 1, "all": 1}
    out = snakemake(work, "-n", configfile=edited).stdout
    assert "wildcards: run=curriculum_p2_p4" in out and "run=pretrain_p2" not in out


def test_figure_target_by_name_rebuilds_only_that_figure(smoke_run):
    work, _ = smoke_run
    res = snakemake(work, "fig5_accuracy", "--forcerun", "fig5_accuracy", "-n", configfile=work / "smoke.yaml")
    assert planned_jobs(res) == {"fig5_accuracy": 1}


def test_invalid_config_fails_before_any_job_naming_the_key(tmp_path):
    raw = load_yaml(SMOKE)
    raw["runs"]["scratch_p4"]["lr"] = 0.1
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(raw))
    t0 = time.perf_counter()
    res = snakemake(tmp_path, configfile=bad)
    assert res.returncode != 0
    assert "runs.scratch_p4.lr" in res.stderr + res.stdout
    assert not (tmp_path / "results").exists()
    assert time.perf_counter() - t0 < 30  # includes the interpreter and snakemake start-up
