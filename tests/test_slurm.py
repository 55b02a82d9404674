"""Part of the smoke DAG through the SLURM profile on a real one-node SLURM cluster (fake GPU).

Needs a cluster that answers (``.ci/run`` starts one with ../shared/recipes/local-slurm-up.sh where it
runs as root with apt-get; a test never installs system packages): skipped with the reason otherwise.
The targets are Fig. 5 (its scratch arm), a probe and an interpolation (two seeds of that run): every kind
of job (dataset, train with its GPU request, per-run and pairwise analyses, a figure) on the one run they share. The executor plugin is
installed into a private folder that only this test's snakemake sees on PYTHONPATH: the plugin
probes sacct/squeue on import, which slows every other snakemake start once the daemons are gone.
"""
import os
import re
import shutil
import subprocess
import sys
import time

import pytest
import yaml

from conftest import REPO, SMOKE

pytestmark = pytest.mark.workflow
RECIPES = REPO.parent / "shared" / "recipes"
PLUGINS = ["snakemake-executor-plugin-slurm>=2.8,<3", "snakemake-executor-plugin-slurm-jobstep>=0.6,<1",
           "throttler>=1.2.2,<2"]


def _cluster_answers() -> bool:
    if shutil.which("scontrol") is None:
        return False
    res = subprocess.run(["scontrol", "ping"], capture_output=True, text=True, timeout=20)
    return "UP" in res.stdout and subprocess.run(["sinfo", "-h"], capture_output=True).returncode == 0


@pytest.fixture(scope="module")
def slurm_cluster():
    if not _cluster_answers():
        how = (f"FAKE_GPUS=1 bash {RECIPES / 'local-slurm-up.sh'}" if (RECIPES / "local-slurm-up.sh").exists()
               else "a one-node cluster")
        pytest.skip(f"SLURM test skipped: no SLURM cluster answers `scontrol ping` (start one: {how})")
    return "running"


@pytest.fixture(scope="module")
def plugin_dir(tmp_path_factory):
    target = tmp_path_factory.mktemp("slurm-plugin")
    res = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), *PLUGINS],
                         capture_output=True, text=True, timeout=300)
    if res.returncode != 0:
        pytest.fail("cannot install the SLURM executor plugin: " + res.stderr[-2000:])
    return target


@pytest.mark.long
def test_smoke_dag_on_slurm_with_gpu_requests(slurm_cluster, plugin_dir, tmp_path):
    """Slow: five jobs submitted to a real SLURM controller, each waiting for its scheduling."""
    raw = yaml.safe_load(SMOKE.read_text())
    raw["figures"]["fig5_accuracy"]["arms"] = {"scratch": "scratch_p4"}  # one run: five jobs in all
    (tmp_path / "smoke.yaml").write_text(yaml.safe_dump(raw))
    # the targets come first: `--default-resources` takes every word after it up to the next flag
    cmd = [sys.executable, "-m", "snakemake", "fig5_accuracy", "results/analysis/probes/scratch_p4.h5",
           "results/analysis/interpolation/scratch_vs_scratch.h5",
           "-s", str(REPO / "Snakefile"), "-d", str(tmp_path),
           "--profile", str(REPO / "profiles" / "slurm"), "--configfile", str(tmp_path / "smoke.yaml"),
           # overlay for a local cluster without accounting: status via squeue, quick first check,
           # small memory requests
           "--slurm-status-command", "squeue", "--slurm-init-seconds-before-status-checks", "5",
           "--default-resources", "mem_mb=500", "runtime=10"]
    t0 = time.time()
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=1500,
                         env=dict(os.environ, PYTHONPATH=f"{plugin_dir}{os.pathsep}{REPO}"))
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-5000:]
    print(f"SLURM smoke DAG: {time.time() - t0:.0f} s")
    assert (tmp_path / "results" / "figures" / "fig5_accuracy.pdf").exists()
    submitted = re.findall(r"submitted with SLURM jobid (\d+) \(log: \S*/slurm_logs/rule_(\w+)/", out)
    rules = {rule for _, rule in submitted}
    assert {"dataset", "train", "probes", "interpolation", "fig5_accuracy"} <= rules, rules
    for jobid, rule in submitted:
        info = subprocess.run(["scontrol", "show", "job", jobid], capture_output=True, text=True).stdout
        if not info:  # already purged from the controller (MinJobAge): nothing to check
            continue
        asks_gpu = "gpu" in "".join(re.findall(r"(?:TresPerJob|TresPerNode|Gres)=(\S+)", info))
        assert asks_gpu == (rule == "train"), (rule, jobid, info)
