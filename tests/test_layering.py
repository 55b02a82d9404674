"""Snakemake conventions: the test config never touches real results, paper-scale configs write
under their own folder, --configfile merges (--replace-workflow-config replaces), nested --config
overrides work, and device auto plans no rerun against the device it resolves to."""
import shutil

import pytest
import xarray as xr
import yaml
from test_workflow import planned_jobs

from conftest import REPO, SMOKE, copy_run, hash_tree, snakemake
from pipeline_lib.plumbing.device import resolve_device_setting

pytestmark = pytest.mark.workflow


def test_the_test_config_never_touches_the_real_results(smoke_run, tmp_path):
    """The default DAG in miniature ran in `work` (its results/ are the 'real' ones, with the same
    dataset and run names as the test config); then the test config runs as the README says,
    `snakemake --directory .test`: it plans every output under .test/, and building one of them
    leaves every real file byte-identical."""
    work = copy_run(smoke_run[0], tmp_path / "work")  # the shared run stays as it is for the other tests
    before = hash_tree(work / "results")
    assert len(before) > 100
    (work / ".test" / "config").mkdir(parents=True)
    shutil.copy(SMOKE, work / ".test" / "config" / "config.yaml")
    planned = _planned_outputs(snakemake(work / ".test", "-n"))
    assert len(planned) > 100 and all(f.startswith("results/") for f in planned), planned[:5]
    res = snakemake(work / ".test", "results/datasets/sma_p4_T12.h5")
    assert res.returncode == 0, res.stderr[-3000:]
    assert (work / ".test" / "results" / "datasets" / "sma_p4_T12.h5").stat().st_size > 1000
    assert hash_tree(work / "results") == before


def _planned_outputs(res) -> list[str]:
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-3000:]
    lines = [ln.split(":", 1)[1].strip() for ln in out.splitlines() if ln.strip().startswith("output:")]
    return [f for ln in lines for f in ln.split(", ")]


def test_paper_config_replaces_the_default_and_writes_under_its_own_folder(smoke_run, tmp_path):
    work, _ = smoke_run
    paper = REPO / "config" / "eureka_paper.yaml"
    # standalone: true -> it replaces config/config.yaml with or without --replace-workflow-config
    # (the jobs Snakemake spawns on a cluster are not given that flag)
    for extra in ((), ("--replace-workflow-config",)):
        files = _planned_outputs(snakemake(work, "-n", *extra, configfile=paper))
        assert len(files) > 50 and all(f.startswith("results/eureka_paper/") for f in files), files[:5]
        assert not any("scratch_p4" in f or "fig5_accuracy" in f for f in files)  # nothing of the default's
    # a file given after it is merged into it, as usual
    more = tmp_path / "more.yaml"
    more.write_text("results: results/eureka_paper_more\n")
    files = _planned_outputs(snakemake(work, "-n", "--configfile", str(paper), str(more)))
    assert files and all(f.startswith("results/eureka_paper_more/") for f in files)


def test_configfile_merges_into_the_default_and_replace_replaces(smoke_run, tmp_path):
    work, _ = smoke_run
    only_device = tmp_path / "cpu.yaml"
    only_device.write_text("device: cpu\n")
    assert planned_jobs(snakemake(work, "-n", configfile=only_device)) == {}
    extra = tmp_path / "extra.yaml"
    extra.write_text(yaml.safe_dump({"runs": {"scratch_extra": {"dataset": "sma_p4_T12", "model": "circuit_d32",
                                                                 "epochs": 5, "seeds": 2}}}))
    # the new run, and every run's curves (and the ledger, which reads every figure's sidecar)
    assert planned_jobs(snakemake(work, "-n", configfile=extra)) == {"train": 1, "run_curves": 1, "claims": 1, "all": 1}
    replaced = snakemake(work, "-n", "--replace-workflow-config", configfile=only_device)
    assert replaced.returncode != 0 and "missing a required key" in replaced.stdout + replaced.stderr


def test_nested_config_overrides_of_numbers_and_lists(smoke_run):
    work, _ = smoke_run
    res = snakemake(work, "-n", "--config", "runs={scratch_p4: {epochs: 5, optimizer: {betas: [0.8, 0.99]}}}")
    jobs = planned_jobs(res)
    assert jobs["train"] == 1 and "dataset" not in jobs
    assert "wildcards: run=scratch_p4" in res.stdout
    bad = snakemake(work, "-n", "--config", "runs={scratch_p4: {epochs: five}}")
    said = bad.stdout + bad.stderr
    assert bad.returncode != 0 and "runs.scratch_p4.epochs" in said and "integer" in said


@pytest.mark.skipif(resolve_device_setting("auto") != "cpu", reason="a CUDA device is visible")
def test_device_auto_on_a_cpu_machine_plans_no_rerun_and_artifacts_name_the_device(smoke_run):
    work, _ = smoke_run  # trained with device: cpu
    assert planned_jobs(snakemake(work, "-n", "--config", "device=auto")) == {}
    with xr.open_dataset(work / "results/runs/scratch_p4/trajectory.h5", engine="h5netcdf") as ds:
        assert ds.attrs["device"] == "cpu"
