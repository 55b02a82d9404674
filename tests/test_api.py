"""The notebook API (pipeline_lib.api) on the test config's smoke run: a curriculum's phases joined along one
epoch axis, a model rebuilt at a snapshot reproduces the recorded accuracy, the runs table, and the example
notebook runs top to bottom."""
import json
import subprocess
import sys

import matplotlib
import numpy as np
import pytest
import torch

import pipeline_lib as pl
from conftest import REPO
from pipeline_lib import api

pytestmark = pytest.mark.workflow


def test_open_run_joins_a_curriculum_with_the_run_it_starts_from(smoke_run):
    work, _ = smoke_run
    res = work / "results"
    child = pl.open_run("curriculum_p2_p4", results=res, phases=False)
    parent = pl.open_run("pretrain_p2", results=res)
    joined = pl.open_run("curriculum_p2_p4", results=res)
    start = int(child.epoch[0])
    assert joined.attrs["phases"] == "pretrain_p2, curriculum_p2_p4"
    np.testing.assert_array_equal(joined.epoch, np.concatenate([parent.epoch[parent.epoch < start], child.epoch]))
    assert set(joined.phase.sel(epoch=joined.epoch < start).values) == {"pretrain_p2"}
    assert set(joined.phase.sel(epoch=joined.epoch >= start).values) == {"curriculum_p2_p4"}
    np.testing.assert_array_equal(joined.test_acc.sel(epoch=child.epoch), child.test_acc)
    np.testing.assert_array_equal(joined.test_acc.sel(epoch=parent.epoch[parent.epoch < start], seed=child.seed),
                                  parent.test_acc.sel(epoch=parent.epoch < start, seed=child.seed))


def test_model_at_reproduces_the_recorded_test_accuracy(smoke_run):
    from pipeline_lib.plumbing.store import read_dataset

    work, _ = smoke_run
    res = work / "results"
    traj = pl.open_run("scratch_p4", results=res, phases=False)
    ds = read_dataset(res / "datasets" / f"{traj.attrs['dataset']}.h5")
    test = ds.split.values == "test"
    x, y = torch.as_tensor(ds.x.values[test]), torch.as_tensor(ds.y.values[test])
    for seed in traj.seed.values:
        model = pl.model_at("scratch_p4", seed=int(seed), results=res)
        with torch.no_grad():
            acc = float((model(x).argmax(-1)[0] == y).float().mean())
        assert acc == pytest.approx(float(traj.test_acc.sel(seed=seed).isel(epoch=-1)), abs=1e-6)
    with pytest.raises(KeyError, match="recorded no weights at epoch 99999"):
        pl.model_at("scratch_p4", epoch=99999, results=res)


def test_runs_lists_every_run_with_its_final_metrics_also_on_the_command_line(smoke_run):
    work, _ = smoke_run
    res = work / "results"
    rows = pl.runs(res)
    assert {r["run"] for r in rows} == {p.name for p in (res / "runs").iterdir() if (p / "trajectory.h5").exists()}
    row = next(r for r in rows if r["run"] == "scratch_p4")
    traj = pl.open_run("scratch_p4", results=res, phases=False)
    assert row["test_acc"] == pytest.approx(float(traj.test_acc.isel(epoch=-1).median()))
    out = subprocess.run([sys.executable, "-m", "pipeline_lib", "runs", str(res), "--json"], capture_output=True,
                         text=True, check=True).stdout
    assert json.loads(out) == rows
    assert api.format_runs(rows).splitlines()[0].split()[:3] == ["run", "model", "dataset"]


def test_the_example_notebook_runs_on_the_test_configs_results(smoke_run):
    work, _ = smoke_run
    nb = json.loads((REPO / "examples" / "results.ipynb").read_text())
    code = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    assert 'RESULTS = "results"' in code[0]
    matplotlib.use("Agg")  # no display in the test session
    scope: dict = {}
    exec(code[0].replace('RESULTS = "results"', f"RESULTS = {str(work / 'results')!r}", 1), scope)  # noqa: S102
    for cell in code[1:]:
        exec(cell, scope)  # noqa: S102
    assert scope["name"] == "curriculum_p2_p4" and scope["model"].S == 1  # the first finetuned run, by name
