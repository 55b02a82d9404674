# Validation, wildcard constraints, target expansion and input functions; nothing else.
import re

from snakemake.exceptions import WorkflowError

from pipeline_lib.config import ConfigError, canonical_json, load_config
from pipeline_lib.stages.kinds import DATASET_STAGES, MODEL_MODULES
from pipeline_lib.store import code_hash

try:
    CFG = load_config(config)
except ConfigError as exc:
    raise WorkflowError(str(exc)) from None


def _names(names):
    return "|".join(re.escape(n) for n in names) or "(?!)"


wildcard_constraints:
    dataset=_names(CFG.datasets),
    run=_names(CFG.runs),
    probe_run=_names(CFG.probes.runs),
    interp=_names(CFG.interpolation),
    embed=_names(CFG.param_embed),
    experiment=_names(CFG.eureka),


def run_files(run):
    return {
        "trajectory": f"results/runs/{run}/trajectory.h5",
        "weights": f"results/runs/{run}/weights.h5",
    }


def dataset_file(name):
    return f"results/datasets/{name}.h5"


def interpolation_file(name):
    return f"results/analysis/interpolation/{name}.h5"


def param_embed_file(name):
    return f"results/analysis/param_embed/{name}.h5"


def eureka_file(name):
    return f"results/analysis/eureka/{name}.h5"


def probe_file(run):
    return f"results/analysis/probes/{run}.h5"


def dataset_code(wildcards):
    """Code hash of the stage that generates this dataset's task."""
    return code_hash(DATASET_STAGES[CFG.datasets[wildcards.dataset].task])


def model_code(stage, run):
    """Code hash of a stage that builds a run's model: the stage and the model's own module."""
    return code_hash(stage) + code_hash(
        MODEL_MODULES[CFG.models[CFG.runs[run].model].kind]
    )


def train_inputs(wildcards):
    rc = CFG.runs[wildcards.run]
    inputs = {"dataset": dataset_file(rc.dataset)}
    if rc.init_from:
        inputs["init"] = run_files(rc.init_from)["weights"]
    return inputs


def interpolate_inputs(wildcards):
    ic = CFG.interpolation[wildcards.interp]
    return {
        "a": run_files(ic.a)["weights"],
        "b": run_files(ic.b)["weights"],
        "dataset": dataset_file(ic.dataset),
    }


def probe_inputs(wildcards):
    rc = CFG.runs[wildcards.probe_run]
    return {
        "weights": run_files(wildcards.probe_run)["weights"],
        "dataset": dataset_file(rc.dataset),
    }


def param_embed_inputs(wildcards):
    pe = CFG.param_embed[wildcards.embed]
    runs = sorted({a for r in pe.runs for a in CFG.lineage(r)})
    return {r: run_files(r)["weights"] for r in runs}


def eureka_inputs(wildcards):
    ec = CFG.eureka[wildcards.experiment]
    return {run: run_files(run)["trajectory"] for _, run in ec.arms}


def analysis_files():
    files = [interpolation_file(n) for n in CFG.interpolation]
    files += [probe_file(r) for r in CFG.probes.runs]
    files += [param_embed_file(n) for n in CFG.param_embed]
    files += [eureka_file(n) for n in CFG.eureka]
    return files


def figure_files(name):
    # eureka_table also writes the table as CSV and Markdown
    extra = (".csv", ".md") if name == "eureka_table" else ()
    return multiext(f"results/figures/{name}", ".pdf", ".png", ".json", *extra)


def figure_inputs(name):
    def inputs(wildcards):
        files = {r: run_files(r)["trajectory"] for r in CFG.figure_runs(name)}
        fc = CFG.figures[name]
        if hasattr(fc, "interpolation"):
            files["interpolation"] = interpolation_file(fc.interpolation)
        if hasattr(fc, "param_embed"):
            files["param_embed"] = param_embed_file(fc.param_embed)
        for exp in getattr(fc, "experiments", ()):
            if name == "eureka_table":
                files[f"eureka_{exp}"] = eureka_file(exp)
            if name == "eureka_probes":
                files.update(
                    {f"probe_{r}": probe_file(r) for _, r in CFG.eureka[exp].arms}
                )
        return files

    return inputs


def report_inputs(wildcards):
    return {
        "figures": [
            f"results/figures/{n}.{ext}" for n in CFG.figures for ext in ("png", "json")
        ],
        # captions are part of the workflow's source, not of the working directory
        "captions": [
            f"{workflow.basedir}/workflow/report/{n}.txt" for n in CFG.figures
        ],
    }


def all_targets():
    targets = [run_files(r)["trajectory"] for r in CFG.runs] + analysis_files()
    for name in CFG.figures:
        targets.extend(figure_files(name))
    if CFG.figures:
        targets.append("results/report.html")
    return targets
