"""Bad input and code changes: diverging runs finish flagged, corrupt inputs name themselves, a
library change reruns exactly the jobs whose computation it changes, and adding a plug-in reruns
nothing that exists."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
import xarray as xr
import yaml

from conftest import REPO, copy_run
from pipeline_lib.plumbing.config import load_config
from pipeline_lib.plumbing.store import ArtifactError
from pipeline_lib.stages.dataset import build_dataset
from pipeline_lib.stages.train import train_run


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


def _planned(workdir, repo, config="smoke.yaml"):
    return _plan(workdir, repo, config)[0]


def _plan(workdir, repo, config="smoke.yaml") -> tuple[dict[str, int], str]:
    """(rule -> planned jobs, the dry run's text) of a dry run with the library of ``repo``."""
    res = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(repo / "Snakefile"), "-d", str(workdir),
                          "--configfile", str(workdir / config), "-n", "--cores", "1"],
                         capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(repo)), cwd=workdir)
    assert res.returncode == 0, res.stderr[-2000:]
    from test_workflow import planned_jobs
    return planned_jobs(res), res.stdout + res.stderr


# A task family and a figure written as a user would (README, "Add your own experiment").
NEW_TASK = '''"""Parity of the first k bits (a task added in a test)."""
from dataclasses import dataclass

import numpy as np

from . import TaskData

NAME = "parity"
MODELS = ["circuit", "transformer"]
CONFIG = """
required: [T, k, n_train, n_test]
properties:
  T: {description: "Sequence length.", type: integer, minimum: 1}
  k: {description: "The label is the parity of the first k bits.", type: integer, minimum: 1}
  n_train: {description: "Training sequences.", type: integer, minimum: 1}
  n_test: {description: "Test sequences.", type: integer, minimum: 1}
"""
SHAPE = {"n_train": "n_train", "n_test": "n_test", "tokens": "2", "T": "T", "classes": "2"}
CHECKS = [["k", "k <= T", "k={k} exceeds T={T}"]]
PROBE_TARGETS = "['label']"


@dataclass(frozen=True)
class Params:
    T: int
    k: int
    n_train: int
    n_test: int
    seed: int = 0


def generate(params):
    rng = np.random.default_rng(params.seed)
    x = rng.integers(0, 2, size=(params.n_train + params.n_test, params.T))
    y = x[:, : params.k].sum(1) % 2
    n = params.n_train
    return TaskData(x[:n], y[:n], x[n:], y[n:], {"k": params.k}).to_dataset()


def probe_targets(ds, split, n):
    return {"label": ds.y.values[ds.split.values == split][:n]}
'''

NEW_FIGURE = '''"""Final test loss per arm, one dot per seed (a figure added in a test)."""
from dataclasses import dataclass

from ..plumbing.store import read_dataset
from . import style

NAME = "final_loss"
CONFIG = """
description: "Final test loss of each seed, per arm."
required: [arms]
properties:
  arms: {description: "Label -> run.", type: object, minProperties: 1, additionalProperties: {type: string, x-ref: run}}
"""


@dataclass(frozen=True)
class Params:
    arms: tuple


def build(cfg, params, paths, outputs):
    fig, axes = style.figure()
    stats = {}
    for i, (label, run) in enumerate(params.arms):
        loss = read_dataset(paths.trajectory(run), rule="train").test_loss.isel(epoch=-1).values
        axes[0][0].plot([i] * len(loss), loss, "o")
        stats[label] = [float(v) for v in loss]
    stats["summary"] = "; ".join(f"{k}: {len(v)} seeds" for k, v in stats.items())
    return fig, stats
'''


def _append(path, text):
    with open(path, "a") as fh:
        fh.write(text)


def _with(work, name, edit):
    """A copy of the smoke config under ``name`` with ``edit(raw)`` applied."""
    raw = yaml.safe_load((work / "smoke.yaml").read_text())
    edit(raw)
    (work / name).write_text(yaml.safe_dump(raw))
    return name


@pytest.mark.workflow
@pytest.mark.long
def test_comments_plumbing_and_new_plug_ins_rerun_nothing_that_exists(tmp_path, smoke_run):
    """Slow: six dry runs and one real figure job of the real snakemake, each a planning the guarantee is about."""
    repo, work = _copy_repo_and_run(tmp_path, smoke_run)
    # comments and docstrings compute nothing, nor does the plumbing (config machinery, registry, paths,
    # store, lineage): nothing reruns, with both edited in every module, except where a docstring is a report
    # caption (a figure module without workflow/report/<figure>.txt): that figure re-renders its caption
    for path in sorted((repo / "pipeline_lib").rglob("*.py")):
        text = path.read_text()
        if path.parent.name != "figures":
            text = text.replace('"""', '"""Reworded. ', 1) if text.startswith('"""') else text  # module docstring
        text = text.replace('\n    """', '\n    """Reworded. ', 1)  # the first function or class docstring
        path.write_text(text + '\n# a comment\n\n"""A string used as a comment."""\n')
    (repo / "pipeline_lib" / "moved_nowhere.py").write_text("# a new module that nothing imports\n")
    for path in sorted((repo / "pipeline_lib" / "plumbing").glob("*.py")):
        _append(path, "\n_A_CHANGE_TO_THE_PLUMBING = 1\n")
    assert _planned(work, repo) == {}
    # a caption: the figure's module docstring (no caption file) or its caption file, that figure alone
    path = repo / "pipeline_lib/figures/joma_logits.py"
    assert not (repo / "workflow/report/joma_logits.txt").exists()
    path.write_text(path.read_text().replace('"""', '"""Reworded. ', 1))
    assert _planned(work, repo) == {"joma_logits": 1, "claims": 1, "all": 1}
    _restore(repo, "figures/joma_logits.py")
    _append(repo / "workflow/report/fig5_accuracy.txt", "\nA reworded caption.\n")
    assert _planned(work, repo) == {"fig5_accuracy": 1, "claims": 1, "all": 1}
    shutil.copy(REPO / "workflow/report/fig5_accuracy.txt", repo / "workflow/report/fig5_accuracy.txt")
    shutil.rmtree(repo / "pipeline_lib")
    shutil.copytree(REPO / "pipeline_lib", repo / "pipeline_lib", ignore=shutil.ignore_patterns("__pycache__"))
    # a new figure module and its config block: only that figure
    (repo / "pipeline_lib/figures/final_loss.py").write_text(NEW_FIGURE)
    fig_cfg = _with(work, "fig.yaml", lambda r: r["figures"].update(final_loss={"arms": {"scratch": "scratch_p4"}}))
    # (and the claims ledger, whose inputs are every drawn figure's sidecar: seconds, it trains nothing)
    assert _planned(work, repo, fig_cfg) == {"final_loss": 1, "claims": 1, "all": 1}
    built = tmp_path / "built"  # it really builds, captioned by its docstring (in a copy: keep `work` as it is)
    shutil.copytree(work, built)
    res = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(repo / "Snakefile"), "-d", str(built),
                          "--configfile", str(built / fig_cfg), "--cores", "1", "final_loss"],
                         capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(repo)), cwd=built)
    assert res.returncode == 0, res.stderr[-3000:]
    caption = (built / "results/figures/final_loss.rst").read_text()  # its report caption
    assert "one dot per seed" in caption and "**Measured:** scratch: 3 seeds" in caption
    assert _planned(work, repo) == {}  # a module no config uses changes nothing
    # a new task family and a dataset of it: only that dataset
    (repo / "pipeline_lib/tasks/parity.py").write_text(NEW_TASK)
    task_cfg = _with(work, "task.yaml", lambda r: r["datasets"].update(
        parity_T6={"task": "parity", "T": 6, "k": 3, "n_train": 64, "n_test": 32}))
    assert _planned(work, repo, task_cfg) == {"dataset": 1, "all": 1}


@pytest.mark.workflow
@pytest.mark.long
def test_a_module_edit_reruns_exactly_the_jobs_that_compute_with_it(tmp_path, smoke_run):
    """End to end through Snakemake's params: an analysis module's edit reruns its jobs and what reads them; the
    engine's, every run. (Which jobs hold which module, per kind and for every config: tests/test_lock.py.)
    Slow: two dry runs of the real snakemake on a copy of the smoke run."""
    repo, work = _copy_repo_and_run(tmp_path, smoke_run)
    _append(repo / "pipeline_lib/analysis/interpolation.py", "\n_A_CHANGE_TO_THE_INTERPOLATION = 1\n")
    assert _planned(work, repo) == {"interpolation": 4, "fig6_interpolation": 1, "claims": 1, "all": 1}
    _restore(repo, "analysis/interpolation.py")
    _append(repo / "pipeline_lib/engine.py", "\n_A_CHANGE_TO_THE_ENGINE = 1\n")  # training code: every run
    jobs = _planned(work, repo)
    # every run: the 18 epoch-engine runs of the original families (r_matched, the MNIST run, the ResNet, the
    # W_QKV-scaled run and the run on repeated inputs too), the 5 JoMA runs (softmax on two frequency kinds, exp, linear at two step ratios),
    # the 6 modular-addition and GaLore runs, the shortest-path run, the 2 runs of own nn.Modules, the 2 runs of
    # the relation theorems (reversal, chain), and the 2 online runs (the engine's loop); no dataset
    assert jobs["train"] == 34 and jobs["train_online"] == 2 and "dataset" not in jobs


def _restore(repo, *parts):
    """Undo edits of the test above (so that the next edit is judged alone)."""
    for part in parts:
        shutil.copy(REPO / "pipeline_lib" / part, repo / "pipeline_lib" / part)


def _copy_repo_and_run(tmp_path, smoke_run):
    """A copy of the repository (so its library can be edited) and a copy of the finished smoke run
    (modification times kept, so nothing is newer than its outputs)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    for part in ("Snakefile", "workflow", "pipeline_lib", "profiles", "config", "examples"):
        src = REPO / part
        if src.is_symlink():
            os.symlink(os.readlink(src), repo / part)
        elif src.is_dir():
            shutil.copytree(src, repo / part, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, repo / part)
    return repo, copy_run(smoke_run[0], tmp_path / "work")
