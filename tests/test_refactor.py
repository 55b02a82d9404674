"""Recording a refactor verifies it: the test config with the old code and with the new must give identical
artifacts, strings of the figures' verdicts included (``python -m pipeline_lib equivalent``)."""
import json
import re

import numpy as np
import pytest
import xarray as xr

from conftest import REPO
from pipeline_lib.plumbing import equivalence, golden, refactor
from pipeline_lib.plumbing.store import write_dataset


def _results(root, value=1.0, verdict="reproduced", created="2026-01-01", order=(0, 1)):
    ds = xr.Dataset({"w": (("seed",), np.array([value, 2.0])[list(order)])}, coords={"seed": np.array(order)},
                    attrs={"created_at": created, "task_p": 4, "seconds": len(created) * 1.5})
    write_dataset(ds, root / "runs" / "r" / "weights.h5")
    (root / "figures").mkdir(parents=True, exist_ok=True)
    (root / "figures" / "f.json").write_text(json.dumps(
        {"stats": {"x": [value]}, "claims": {"c": {"verdict": verdict}}, "provenance": {"created_at": created}}))
    return root


def test_identical_reads_data_coordinates_attributes_and_verdicts_not_the_runs_provenance(tmp_path):
    a = _results(tmp_path / "a")
    same = golden.identical(a, _results(tmp_path / "b", created="2027-05-05T1"))  # another day and time taken
    assert not same["differ"] and len(same["same"]) == 2
    assert golden.identical(a, _results(tmp_path / "c", verdict="partial"))["differ"] == ["figures/f.json: claims"]
    swapped = golden.identical(a, _results(tmp_path / "d", order=(1, 0)))["differ"]  # a swapped seed axis
    assert swapped and swapped[0].startswith("runs/r/weights.h5")
    e = _results(tmp_path / "e")
    with xr.open_dataset(e / "runs/r/weights.h5", engine="h5netcdf") as ds:
        ds = ds.load()
    ds.attrs["task_p"] = 5  # an attribute that carries a number
    write_dataset(ds, e / "runs/r/weights.h5")
    assert golden.identical(a, e)["differ"] == ["runs/r/weights.h5: attrs: task_p"]


def test_verify_runs_both_revisions_and_refuses_moved_numbers(tmp_path, monkeypatch):
    runs = []

    def fake_run(repo, work, env=None, cores=2):
        runs.append(repo)
        moved = len(runs) % 2 == 0 and fake_run.move  # the working tree's run
        return _results(work / "results", value=1.5 if moved else 1.0)

    monkeypatch.setattr(refactor, "run_test_config", fake_run)
    head = equivalence.resolve("HEAD", REPO)
    assert re.fullmatch(r"[0-9a-f]{40}", head)
    fake_run.move = False
    assert refactor.verify(head, REPO, tmp_path / "s1", progress=lambda _: None) == 2
    assert runs[0] == tmp_path / "s1" / "since" and runs[1] == REPO  # the old code, extracted; then the checkout
    fake_run.move = True
    with pytest.raises(RuntimeError, match="moves numbers: differ: figures/f.json: stats"):
        refactor.verify(head, REPO, tmp_path / "s2", progress=lambda _: None)
    with pytest.raises(RuntimeError, match="cannot resolve"):
        equivalence.resolve("no-such-revision", REPO)


def test_a_refactor_is_recorded_only_for_modules_the_test_config_runs(monkeypatch):
    ran = refactor.ran_modules(REPO)
    assert {"pipeline_lib.stages.train", "pipeline_lib.engine", "workflow.scripts.train"} <= ran
    assert "pipeline_lib.untested" not in ran and "pipeline_lib.api" not in ran  # results API: no job imports it

    def table(parts):  # module -> what it hashes as
        return {m: {"digest": f"{m}:{v}", "statements": [v], "bindings": []} for m, v in parts.items()}

    before = table({"pipeline_lib.engine": "a", "pipeline_lib.untested": "b", "pipeline_lib.gone": "c",
                    "pipeline_lib.losses": "d"})
    after = table({"pipeline_lib.engine": "a2", "pipeline_lib.untested": "b2", "pipeline_lib.losses": "d",
                   "pipeline_lib.stages.train": "new"})
    tables = iter([before, after])
    monkeypatch.setattr(refactor, "module_table", lambda tree: next(tables))
    entries, removed, uncovered, modules = refactor.plan(equivalence.resolve("HEAD", REPO), REPO)
    assert modules == set(after)
    assert set(entries) == {"pipeline_lib.engine", "pipeline_lib.stages.train"}  # losses unchanged
    assert entries["pipeline_lib.engine"] == {"digest": "pipeline_lib.engine:a2", "was": "pipeline_lib.engine:a",
                                              "stands_for": {"statements": ["a"], "bindings": []}}
    assert entries["pipeline_lib.stages.train"]["stands_for"] == {"statements": [], "bindings": []}  # a new module
    assert removed == ["pipeline_lib.gone"] and uncovered == ["pipeline_lib.untested"]


def test_the_shipped_configs_are_the_complete_ones():
    shipped = refactor.shipped_configs(REPO)
    assert shipped[0] == "config/config.yaml" and shipped[-1] == ".test/config/config.yaml"
    assert "config/eureka_long.yaml" in shipped and "config/scan_snap_transition.yaml" in shipped
    assert "config/eureka_table1.yaml" not in shipped  # merged into the default, not complete


def test_recording_keeps_one_entry_per_module_and_only_the_refactors_it_names(tmp_path):
    path = tmp_path / "record.json"
    entry = lambda d: {"digest": d, "was": None, "stands_for": {"statements": [], "bindings": []}}  # noqa: E731
    first = equivalence.record({"m.a": entry("1" * 32), "m.b": entry("2" * 32)}, "a" * 40, "one", "ran", path=path)
    second = equivalence.record({"m.a": entry("3" * 32)}, "b" * 40, "two", "ran", path=path)
    rec = equivalence.read_record(path)
    assert rec["modules"]["m.a"]["digest"] == "3" * 32 and rec["modules"]["m.a"]["group"] == second
    assert set(rec["groups"]) == {first, second}
    equivalence.record({"m.b": entry("4" * 32)}, "c" * 40, "three", "ran", path=path)
    assert first not in equivalence.read_record(path)["groups"]  # no entry names the first refactor any more
    assert len(equivalence.read_record(path)["modules"]) == 2
    equivalence.check_record(equivalence.read_record(path))
    equivalence.record({"m.c": entry("5" * 32)}, "d" * 40, "four", "ran", path=path, modules={"m.b", "m.c"})
    assert set(equivalence.read_record(path)["modules"]) == {"m.b", "m.c"}  # m.a was removed from the tree
    assert second not in equivalence.read_record(path)["groups"]
    same = equivalence.group_id("d" * 40, "four", {"m.a": entry("6" * 32)})
    assert same != equivalence.group_id("d" * 40, "four", {"m.c": entry("5" * 32)})  # same words, other refactor


def test_an_old_revision_without_the_plumbing_package_is_refused(tmp_path):
    (tmp_path / "pipeline_lib").mkdir()
    (tmp_path / "workflow" / "scripts").mkdir(parents=True)
    with pytest.raises(RuntimeError, match="no pipeline_lib/plumbing package"):
        equivalence.module_table(tmp_path)


def test_a_config_an_older_revision_refuses_has_no_jobs_to_rerun(tmp_path, capsys):
    # a config using a key that a revision's code does not know (e.g. an option added since) is new there: with
    # skip_refused (the older revision's side) it has no jobs, its name is printed and the others are computed;
    # without it (the current code's side) the refusal is an error, not a silent skip
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "newer.yaml").write_text(
        (REPO / "config" / "shortest_path_long.yaml").read_text().replace("mlp_ratio: 4}", "mlp_ratio: 4, newer_key: 1}"))
    (tmp_path / "config" / "same.yaml").write_text((REPO / "config" / "shortest_path_long.yaml").read_text())
    configs = ["config/newer.yaml", "config/same.yaml"]
    hashes = equivalence.job_hashes(REPO, tmp_path, configs, skip_refused=True)
    assert hashes and all(job.startswith("config/same.yaml ") for job in hashes)
    assert "config/same.yaml train shortest_path_long" in hashes
    assert "skipped config/newer.yaml" in capsys.readouterr().err
    with pytest.raises(RuntimeError, match="newer_key"):
        equivalence.job_hashes(REPO, tmp_path, configs)
