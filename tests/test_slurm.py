"""The smoke DAG through the SLURM profile on a real one-node SLURM cluster (fake GPU).

Starts the cluster with ../shared/recipes/local-slurm-up.sh (root and apt needed; skipped with the
reason otherwise) unless one already answers, and stops what it started. The executor plugin is
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
    if _cluster_answers():
        yield "already running"
        return
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        pytest.skip("SLURM test skipped: installing slurm-wlm needs root and apt-get, not available here")
    if not (RECIPES / "local-slurm-up.sh").exists():
        pytest.skip(f"SLURM test skipped: {RECIPES / 'local-slurm-up.sh'} not found (../shared missing)")
    up = subprocess.run(["bash", str(RECIPES / "local-slurm-up.sh")], capture_output=True, text=True,
                        timeout=600, env=dict(os.environ, FAKE_GPUS="1"))
    try:
        assert up.returncode == 0, up.stdout[-2000:] + up.stderr[-2000:]
        yield "started"
    finally:
        subprocess.run(["bash", str(RECIPES / "local-slurm-down.sh")], capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def plugin_dir(tmp_path_factory):
    target = tmp_path_factory.mktemp("slurm-plugin")
    res = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), *PLUGINS],
                         capture_output=True, text=True, timeout=300)
    if res.returncode != 0:
        pytest.fail("cannot install the SLURM executor plugin: " + res.stderr[-2000:])
    return target


def test_smoke_dag_on_slurm_with_gpu_requests(slurm_cluster, plugin_dir, tmp_path):
    shutil.copy(SMOKE, tmp_path / "smoke.yaml")
    cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(tmp_path),
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
    for fig in ("fig2_attention_graph", "fig4_embeddings", "fig5_accuracy", "fig6_interpolation", "fig7_param_tsne"):
        assert (tmp_path / "results" / "figures" / f"{fig}.pdf").exists(), fig
    submitted = re.findall(r"submitted with SLURM jobid (\d+) \(log: \S*/slurm_logs/rule_(\w+)/", out)
    rules = {rule for _, rule in submitted}
    assert {"dataset", "train", "probes", "interpolation", "fig5_accuracy"} <= rules, rules
    for jobid, rule in submitted:
        info = subprocess.run(["scontrol", "show", "job", jobid], capture_output=True, text=True).stdout
        if not info:  # already purged from the controller (MinJobAge): nothing to check
            continue
        asks_gpu = "gpu" in "".join(re.findall(r"(?:TresPerJob|TresPerNode|Gres)=(\S+)", info))
        assert asks_gpu == (rule == "train"), (rule, jobid, info)
