"""The smoke config through the real snakemake CLI: artifacts, figure, rerun planning, bad input."""
import json
import re
import shutil
import time

import pytest
import xarray as xr
import yaml

from conftest import SMOKE, load_yaml, snakemake
from pipeline_lib.plumbing import registry
from pipeline_lib.plumbing.config import load_config

pytestmark = pytest.mark.workflow


def planned_jobs(result) -> dict[str, int]:
    """Rule -> job count from the 'Job stats' table of a dry run."""
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout + result.stderr
    if "Nothing to be done" in out:
        return {}
    table = out.split("Job stats:")[1].split("Reasons:")[0]
    return {m[1]: int(m[2]) for m in re.finditer(r"^(\w+)\s+(\d+)$", table, re.M) if m[1] != "total"}


def test_smoke_produces_artifacts_and_figure(smoke_run):
    work, seconds = smoke_run
    res = work / "results"
    figures = list(load_yaml(SMOKE)["figures"])  # the test config draws every figure module
    assert set(figures) == set(registry.plugins("figure"))
    for fig in figures:
        for ext in ("pdf", "png"):
            assert (res / "figures" / f"{fig}.{ext}").stat().st_size > 1000, (fig, ext)
        assert json.loads((res / "figures" / f"{fig}.json").read_text())["stats"]["summary"]
    for fig in figures:  # the report caption: the caption text, then the measured numbers
        caption = (res / "figures" / f"{fig}.rst").read_text()
        assert caption.index("**Measured:**") > 100 and "{% raw %}" in caption
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
        for key in ("config_hash", "git_commit", "torch_version", "library_versions", "device", "created_at",
                    "pipeline_lib_version"):
            assert ds.attrs[key]
    with xr.open_dataset(res / "runs" / "curriculum_p2_p4" / "weights.h5", engine="h5netcdf") as w, \
         xr.open_dataset(res / "runs" / "pretrain_p2" / "weights.h5", engine="h5netcdf") as parent:
        assert w.W_E.dims == ("snapshot", "seed", "token", "d_model")
        assert int(w.snapshot[-1]) == 60
        # seed i of the finetune starts from seed i of the parent's final weights
        xr.testing.assert_equal(w.W_E.isel(snapshot=0), parent.W_E.isel(snapshot=-1))
    # Eureka: the table as CSV/Markdown, the stats artifact, the transformer's recordings
    table = (res / "figures" / "eureka_table.md").read_text()
    assert table.count("\n| reasoning |") == 3 and table.count("\n| digits |") == 2
    # reasoning 3 arms, digits 2, the ResNet experiment 2 and the W_QKV one 2 (Softmax in each)
    assert len((res / "figures" / "eureka_table.csv").read_text().splitlines()) == 1 + 9
    with xr.open_dataset(res / "analysis" / "eureka" / "reasoning.h5", engine="h5netcdf") as ek, \
         xr.open_dataset(res / "runs" / "r_ht" / "trajectory.h5", engine="h5netcdf") as tr:
        assert list(ek.arm.values) == ["Softmax", "HT", "NormSoftmax"] and ek.eureka_epoch.dims == ("arm", "seed")
        assert ek.attrs["threshold"] == 0.5
        assert tr.grad_W_Q.dims == ("seed", "epoch", "layer", "head") and tr.attention_hist.sizes["bin"] == 20
        assert float(tr.temperature[0]) == pytest.approx(1 / 3) and tr.attrs["task_chance_without_step1"] > 0.5
        assert tr.attention.sizes["position"] == 5  # CLS + (a, b, c, d)
    with xr.open_dataset(res / "analysis" / "probes" / "r_softmax.h5", engine="h5netcdf") as pr:
        assert list(pr.site.values) == ["attn_out_0", "cls"] and list(pr.target.values) == ["step1"]
    stats = json.loads((res / "figures" / "fig5_accuracy.json").read_text())["stats"]
    assert set(stats) == {"scratch", "curriculum", "scratch, paper code", "summary"} and stats["curriculum"]["seeds"] == 3
    assert "curriculum " in stats["summary"] and "/3 [" in stats["summary"]
    assert stats["curriculum"]["switch_epochs"] == [30]
    # the paper-code run records its attention after each of its first 2 epochs' steps (256 / 64 = 4 per epoch)
    with xr.open_dataset(res / "runs" / "scratch_p4_code" / "trajectory.h5", engine="h5netcdf") as code:
        assert code.step_attention.dims == ("seed", "step", "probe", "position") and code.sizes["step"] == 2 * 4 + 1
        assert float(code.step_epoch[-1]) == 2.0 and "step_attention" not in xr.open_dataset(
            res / "runs" / "scratch_p4" / "trajectory.h5", engine="h5netcdf")


def test_nothing_left_to_do_after_a_run(smoke_run):
    work, _ = smoke_run
    assert planned_jobs(snakemake(work, "-n", configfile=work / "smoke.yaml")) == {}


def test_editing_the_finetune_reruns_only_it_and_its_figure(smoke_run):
    work, _ = smoke_run
    raw = load_yaml(work / "smoke.yaml")
    raw["runs"]["curriculum_p2_p4"]["epochs"] = 35
    edited = work / "edited.yaml"
    edited.write_text(yaml.safe_dump(raw))
    plan = snakemake(work, "-n", configfile=edited)  # keys re-sorted by safe_dump too
    jobs = planned_jobs(plan)
    # the finetune, and what reads it, by the config's references (never a hand list): the analyses whose inputs
    # hold its artifacts, the figures that read it or them, and the claims ledger (it reads the figures' sidecars)
    assert jobs == {"train": 1, **_readers(load_config(raw), "curriculum_p2_p4"), "claims": 1, "all": 1}
    assert jobs["interpolation"] == 3 and {"fig5_accuracy", "probes", "llc"} <= set(jobs)
    assert "wildcards: run=curriculum_p2_p4" in plan.stdout and "run=pretrain_p2" not in plan.stdout


def _readers(cfg, run: str) -> dict[str, int]:
    """Rule -> jobs that read ``run``'s artifacts, directly or through an analysis (the config's references)."""
    from pipeline_lib.plumbing import jobs

    outputs = {cfg.paths.trajectory(run), cfg.paths.weights(run)}
    analyses = [(kind, name) for kind in cfg.raw["analyses"] for name in jobs.analysis_jobs(cfg, kind)]
    reading: set = set()
    while True:  # an analysis may read another's artifact
        new = {a for a in analyses if a not in reading and outputs & set(jobs.analysis_inputs(cfg, *a))}
        if not new:
            break
        reading |= new
        outputs |= {cfg.paths.analysis(*a) for a in new}
    found = {kind: sum(k == kind for k, _ in reading) for kind, _ in reading}
    found.update({fig: 1 for fig in cfg.raw["figures"] if outputs & set(jobs.figure_inputs(cfg, fig))})
    return found


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


def test_interpolation_endpoints_reproduce_the_runs_final_losses(smoke_run):
    work, _ = smoke_run
    res = work / "results"
    interp = xr.open_dataset(res / "analysis/interpolation/scratch_vs_curriculum.h5", engine="h5netcdf")
    assert interp.train_loss.dims == ("seed", "t") and interp.sizes["t"] >= 13
    for run, t in (("scratch_p4", 0.0), ("curriculum_p2_p4", 1.0)):
        traj = xr.open_dataset(res / f"runs/{run}/trajectory.h5", engine="h5netcdf")
        for split in ("train", "test"):
            recorded = traj[f"{split}_loss"].isel(epoch=-1).sel(seed=interp.seed).values
            diff = abs(interp[f"{split}_loss"].sel(t=t).values - recorded).max()
            assert diff <= 1e-5, (run, split, diff)
    assert (interp.barrier_train >= 0).all()


def test_probe_and_param_embed_artifacts(smoke_run):
    work, _ = smoke_run
    res = work / "results"
    probes = xr.open_dataset(res / "analysis/probes/pretrain_p2.h5", engine="h5netcdf")
    assert probes.accuracy.dims == ("seed", "snapshot", "site", "target")
    assert set(probes.site.values) == {"z_A", "mlp_out"}
    assert {"label", "sum_k", "zeros_k", "token_0"} <= set(probes.target.values)
    assert float(probes.accuracy.max()) <= 1.0 and float(probes.accuracy.min()) >= 0.0
    emb = xr.open_dataset(res / "analysis/param_embed/scratch_vs_curriculum.h5", engine="h5netcdf")
    assert emb.tsne.dims == ("seed", "snapshot", "component")
    assert set(emb.arm.values) == {"scratch_p4", "curriculum_p2_p4"}
    assert set(emb.phase.values) == {"scratch_p4", "pretrain_p2", "curriculum_p2_p4"}


def test_changing_fig7_params_replans_only_fig7(smoke_run):
    work, _ = smoke_run
    raw = load_yaml(work / "smoke.yaml")
    raw["figures"]["fig7_param_tsne"]["method"] = "pca"
    edited = work / "fig7.yaml"
    edited.write_text(yaml.safe_dump(raw))
    # the figure, and the claims ledger that reads its sidecar
    assert planned_jobs(snakemake(work, "-n", configfile=edited)) == {"fig7_param_tsne": 1, "claims": 1, "all": 1}
    raw["analyses"]["param_embed"]["scratch_vs_curriculum"]["perplexity"] = 4
    edited.write_text(yaml.safe_dump(raw))
    assert planned_jobs(snakemake(work, "-n", configfile=edited)) == {
        "param_embed": 1, "fig7_param_tsne": 1, "claims": 1, "all": 1}


def test_lineage_reaches_the_datasets_and_flags_tampering(smoke_run, tmp_path):
    import subprocess
    import sys

    work, _ = smoke_run
    copy = tmp_path / "copy"
    shutil.copytree(work / "results", copy / "results")
    cmd = [sys.executable, "-m", "pipeline_lib", "lineage", str(copy / "results/figures/fig6_interpolation.pdf")]
    ok = subprocess.run(cmd, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    for path in ("results/analysis/interpolation/scratch_vs_curriculum.h5", "results/runs/scratch_p4/weights.h5",
                 "results/runs/pretrain_p2/weights.h5", "results/datasets/sma_p4_T12.h5", "results/datasets/sma_p2_T12.h5"):
        assert path in ok.stdout, path
    assert "STALE" not in ok.stdout and "all match their records" in ok.stdout
    rst = subprocess.run([*cmd[:-1], str(copy / "results/figures/fig6_interpolation.rst")], capture_output=True,
                         text=True, cwd=tmp_path)  # a figure's caption file, from another directory
    assert rst.returncode == 0 and "all match their records" in rst.stdout, rst.stdout + rst.stderr
    with open(copy / "results/datasets/sma_p2_T12.h5", "ab") as fh:
        fh.write(b"tampered")
    bad = subprocess.run(cmd, capture_output=True, text=True)
    assert bad.returncode == 1
    stale = [ln for ln in bad.stdout.splitlines() if "[STALE]" in ln]
    assert stale and all("sma_p2_T12.h5" in ln for ln in stale)


def test_adding_a_probed_run_plans_only_its_probe(smoke_run):
    work, _ = smoke_run
    raw = load_yaml(work / "smoke.yaml")
    assert "r_galore" not in raw["analyses"]["probes"]["runs"]
    raw["analyses"]["probes"]["runs"].append("r_galore")  # a run no figure reads the probes of
    edited = work / "probes.yaml"
    edited.write_text(yaml.safe_dump(raw))
    plan = snakemake(work, "-n", configfile=edited)
    assert planned_jobs(plan) == {"probes": 1, "all": 1}
    assert "name=r_galore" in plan.stdout and "name=pretrain_p2" not in plan.stdout


def test_the_atlas_recomputes_each_head_from_the_snapshots_as_the_run_recorded_it(smoke_run):
    """The atlas's heads, recomputed from the weight snapshots, average (last layer, over heads) to the attention
    the run recorded at the same epochs, under Heat Treatment too; without the epochs' temperatures they would not."""
    from pipeline_lib import snapshots
    from pipeline_lib.figures.reading import recorded_attention

    work, _ = smoke_run
    side = json.loads((work / "results" / "figures" / "attention_atlas.json").read_text())["stats"]
    for run in ("r_softmax", "r_ht"):
        heads = side[run]["heads"]
        assert (heads["layers"], heads["heads"]) == (1, 2) and len(heads["snapshot_epochs"]) >= 3, heads
        assert heads["recomputed_minus_recorded"] < 1e-6, (run, heads)
    assert "heads" not in side["curriculum_p2_p4"]  # the circuit model: one query, no heads
    run = work / "results" / "runs" / "r_ht"
    with xr.open_dataset(run / "trajectory.h5", engine="h5netcdf") as traj, \
         xr.open_dataset(run / "weights.h5", engine="h5netcdf") as weights:
        traj, weights = traj.load(), weights.load()
    tau = float(traj.temperature[-1])  # after the schedule, the default temperature
    without = snapshots.head_attention(weights, traj.assign(temperature=traj.temperature * 0 + tau), "r_ht")
    recorded = recorded_attention(traj)
    common = sorted(set(without.epoch.values.tolist()) & set(recorded.epoch.values.tolist()))
    miss = abs(without.isel(layer=-1).mean("head").sel(epoch=common) - recorded.sel(epoch=common)).max()
    assert float(miss) > 1e-3
