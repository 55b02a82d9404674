# Validation, wildcard constraints, target expansion and input functions; nothing else. Nothing
# here names a task, model, analysis or figure: they come from the plug-in registries and the config.
import os
import re

from snakemake.exceptions import WorkflowError

from pipeline_lib import jobs, registry
from pipeline_lib.config import ConfigError, canonical_json, load_config
from pipeline_lib.paths import Paths

try:
    CFG = load_config(config)
except (ConfigError, registry.PluginError) as exc:
    raise WorkflowError(str(exc)) from None

P = Paths()
ANALYSES = list(registry.plugins("analysis"))


def names_regex(names):
    return "|".join(re.escape(n) for n in names) or "(?!)"


wildcard_constraints:
    dataset=names_regex(CFG.datasets),
    run=names_regex(CFG.runs),


def train_inputs(wildcards):
    rc = CFG.runs[wildcards.run]
    inputs = {"dataset": P.dataset(rc.dataset)}
    if rc.init_from:
        inputs["init"] = P.weights(rc.init_from)
    return inputs


def analysis_inputs(kind):
    return lambda wildcards: jobs.analysis_inputs(CFG, kind, wildcards.name, P)


def analysis_params(kind):
    return {
        "config": lambda wildcards: canonical_json(
            CFG.analysis_slice(kind, wildcards.name)
        ),
        "code": lambda wildcards: jobs.analysis_code(CFG, kind, wildcards.name),
    }


def figure_files(name):
    return multiext(P.figure(name, ""), *jobs.figure_outputs(name))


def caption(figure):
    return f"{workflow.basedir}/workflow/report/{figure}.txt"


def report_inputs(wildcards):
    return {
        "figures": [
            P.figure(n, ext) for n in CFG.raw["figures"] for ext in (".png", ".json")
        ],
        # captions are part of the workflow's source; a figure without one: its docstring
        "captions": [
            caption(n) for n in CFG.raw["figures"] if os.path.exists(caption(n))
        ],
    }


def all_targets():
    targets = [P.dataset(d) for d in CFG.datasets] + [P.trajectory(r) for r in CFG.runs]
    targets += [P.analysis(k, n) for k in ANALYSES for n in jobs.analysis_jobs(CFG, k)]
    for name in CFG.raw["figures"]:
        targets.extend(figure_files(name))
    if CFG.raw["figures"]:
        targets.append(P.report())
    return targets
