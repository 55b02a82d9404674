"""`python -m pipeline_lib everything`: every shipped config and the default's replicate, in an order where the
overlays that merge into the default reuse its jobs, each kept as it finishes, a failure said and the rest run."""
import subprocess

import pytest

from conftest import REPO
from pipeline_lib.__main__ import main
from pipeline_lib.build import everything


def test_the_plan_runs_the_default_and_its_replicate_first_then_merged_overlays_then_the_rest():
    steps = everything.plan()
    assert {s.config for s in steps} == {p.relative_to(REPO).as_posix() for p in (REPO / "config").glob("*.yaml")}
    assert [(s.config, s.replicate, s.results) for s in steps[:2]] == [
        ("config/config.yaml", False, "results"), ("config/config.yaml", True, "results/replication")]
    merged = [i for i, s in enumerate(steps) if s.results == "results" and not s.replicate]
    assert merged == [0, *range(2, len(merged) + 1)]  # an overlay that merges into the default runs right after it
    assert steps[-1].snakemake(["--cores", "2"])[3:] == ["--configfile", steps[-1].config, "--cores", "2"]
    assert steps[1].snakemake([])[3:] == ["--config", "replicate=true"]
    only = everything.plan(only=["scan_snap_transition", "config"], replicate=False)
    assert [s.config for s in only] == ["config/config.yaml", "config/scan_snap_transition.yaml"]
    assert "config/cogo_paper.yaml" not in [s.config for s in everything.plan(skip=["cogo_paper"])]
    with pytest.raises(ValueError, match="unknown config.*nope.*the shipped ones are config"):
        everything.plan(skip=["nope"])


def test_a_failed_config_is_said_and_the_others_are_kept(monkeypatch, tmp_path):
    ran, kept, said = [], [], []
    steps = everything.plan(only=["config", "scan_snap_transition"])
    monkeypatch.setattr(subprocess, "run", lambda cmd, cwd: ran.append(cmd) or subprocess.CompletedProcess(
        cmd, 1 if "replicate=true" in cmd else 0))
    monkeypatch.setattr(everything, "keep", lambda results, root, config, rep: kept.append((config, rep)) or "x")
    monkeypatch.setattr(everything, "publish", lambda root: ["published"])
    assert everything.run(steps, ["--cores", "2"], root=tmp_path, say=said.append) == 1
    assert len(ran) == 3 and kept == [("config/config.yaml", False), ("config/scan_snap_transition.yaml", False)]
    assert said.count("published") == 2  # after each config that finished, not once at the end
    assert "config (replicate) failed" in "\n".join(said) and said[-1] == "1 of 3 failed: config (replicate)"

    def unfinished(results, root, config, rep):
        raise FileNotFoundError(f"{results}/figures/x.json: the run of {config} is not finished")
    monkeypatch.setattr(everything, "keep", unfinished)
    said.clear()
    assert everything.run(steps, [], root=tmp_path, say=said.append) == 3  # said, and the others still run
    assert sum("keeping or publishing it failed" in s for s in said) == 2


def test_the_command_line_passes_what_follows_the_dashes_to_snakemake(capsys):
    assert main(["everything", "--only", "own_circuit", "--dry-run", "--", "--profile", "profiles/slurm"]) == 0
    assert capsys.readouterr().out.strip() == ("[1/1] own_circuit: snakemake --configfile config/own_circuit.yaml "
                                               "--profile profiles/slurm")
    assert main(["everything", "--only", "nope", "--dry-run"]) == 2
    assert "unknown config(s) nope" in capsys.readouterr().err
