# Validation, wildcard constraints, target expansion and input functions; nothing else.
import re

from snakemake.exceptions import WorkflowError

from pipeline_lib.config import ConfigError, canonical_json, load_config
from pipeline_lib.store import code_hash

try:
    CFG = load_config(config)
except ConfigError as exc:
    raise WorkflowError(str(exc)) from None


def _names(names):
    return "|".join(re.escape(n) for n in names)


wildcard_constraints:
    dataset=_names(CFG.datasets),
    run=_names(CFG.runs),


def run_files(run):
    return {
        "trajectory": f"results/runs/{run}/trajectory.h5",
        "weights": f"results/runs/{run}/weights.h5",
    }


def train_inputs(wildcards):
    rc = CFG.runs[wildcards.run]
    inputs = {"dataset": f"results/datasets/{rc.dataset}.h5"}
    if rc.init_from:
        inputs["init"] = run_files(rc.init_from)["weights"]
    return inputs


def figure_files(name):
    return multiext(f"results/figures/{name}", ".pdf", ".png", ".json")


def fig5_inputs(wildcards):
    runs = {r for _, arm in CFG.figures["fig5_accuracy"].arms for r in CFG.lineage(arm)}
    return {r: run_files(r)["trajectory"] for r in sorted(runs)}


def all_targets():
    targets = [run_files(r)["trajectory"] for r in CFG.runs]
    for name in CFG.figures:
        targets.extend(figure_files(name))
    return targets
