# Validation, wildcard constraints, target expansion and input functions; nothing else. Nothing
# here names a task, model, analysis or figure: they come from the plug-in registries and the config.
import ast
import copy
import hashlib
import os
import re
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.logging import logger

from pipeline_lib import declarations
from pipeline_lib.build import codes, cost
from pipeline_lib.plumbing import jobs, registry
from pipeline_lib.plumbing.paths import Paths
from pipeline_lib.plumbing.replicate import replicate_config
from pipeline_lib.plumbing.config import (
    ConfigError,
    canonical_json,
    load_config,
    standalone_files,
)

try:
    # A complete config (standalone: true, e.g. config/eureka_paper.yaml) replaces
    # config/config.yaml as --replace-workflow-config would; also in the jobs Snakemake spawns
    # (SLURM), which get the --configfile files and --config but not that flag.
    standalone = standalone_files(workflow.overwrite_configfiles)
    if standalone:
        logger.info(
            f"{', '.join(map(os.path.relpath, standalone))}: a complete config (standalone: "
            "true), replacing config/config.yaml"
        )
        config.clear()
        config.update(copy.deepcopy(workflow.config_settings.overwrite_config))
    CFG = load_config(config)
    if CFG.raw["replicate"] and not CFG.raw["replicate_of"]:
        # the replicate of this config: disjoint seeds, another data draw, <results>/replication
        config.clear()
        config.update(replicate_config(CFG.raw))
        CFG = load_config(config)
    registry.check_report_categories(CFG.raw["figures"])
    # The jobs' config: the validated mapping (defaults filled, device resolved), which their adapter
    # scripts take as it is (config.checked_config) instead of validating it again in every job.
    config.clear()
    config.update(CFG.raw)
except (ConfigError, registry.PluginError) as exc:
    raise WorkflowError(str(exc)) from None

P = CFG.paths
# Training jobs start by priority: the longest chain of training first (seconds measured by the kept runs of
# the same recipe, docs/stats; estimated from their steps and size for the others), so the cores do not end idle
# beside one long job; their datasets just before them. Scheduling only: no output depends on it.
TRAIN_PRIORITY = cost.train_priorities(
    CFG, cost.measured_seconds(Path(workflow.basedir).parent / "docs" / "stats")
)
DATASET_PRIORITY = cost.dataset_priorities(CFG, TRAIN_PRIORITY)
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
        "code": lambda wildcards: codes.job_code(CFG, f"{kind} {wildcards.name}"),
    }


def caption_digest(figure):
    """A digest of the figure's caption text (workflow/report/<figure>.txt, else its module's docstring,
    which the code param leaves out), a param so that a caption edit rebuilds the figure and its caption.
    Not an input: an input's path would change with the checkout's folder, and a moved checkout would
    rebuild every figure.
    """
    path = os.path.join(workflow.basedir, "workflow", "report", f"{figure}.txt")
    if os.path.exists(path):
        with open(path, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest()[:16]
    doc = (
        ast.get_docstring(registry.parse(registry.plugin("figure", figure).path)) or ""
    )
    return hashlib.sha256(doc.encode()).hexdigest()[:16]


def figure_paths(name):
    return [P.figure(name, ext) for ext in jobs.figure_outputs(name)]


def figure_files(name):
    """A figure's outputs; its PNG goes into `snakemake --report` under its paper, with the
    caption the figure job writes (text, measured numbers, provenance), and so does its
    interactive view (an HTML page) where the figure draws one."""

    def flag(view):
        return dict(
            caption=os.path.abspath(P.figure(name, ".rst")),
            category=registry.report_category(name),
            labels={"figure": name, "view": view},
        )

    kinds = {".png": "static", ".html": "interactive"}
    out = []
    for f in figure_paths(name):
        kind = kinds.get(os.path.splitext(f)[1])
        out.append(report(f, **flag(kind)) if kind else f)
    return out


def claims_original():
    """A replicate's claims rule reads the ledger of the results it replicates."""
    if not CFG.raw["replicate_of"]:
        return []
    original = Paths(CFG.raw["replicate_of"]).claims(".csv")
    if not os.path.exists(original):
        raise WorkflowError(
            f"the replicate compares its claims with the original run's ledger {original}, which does not exist: "
            "run the original first (`snakemake --cores all`, the same config without replicate), then "
            "`snakemake --config replicate=true`"
        )
    return original


def claims_own_files():
    """A replicate's own ledger, beside the comparison its claims.csv holds."""
    return (
        [P.claims(f"_own{ext}") for ext in (".csv", ".md")]
        if CFG.raw["replicate_of"]
        else []
    )


def claims_report_files():
    """One table per paper in `snakemake --report`, under "Claims", its caption the table with figure links."""
    papers = sorted({c["paper"] for c in declarations.declared_claims().values()})

    def entry(p):
        flag = dict(
            caption=os.path.abspath(P.claims_paper(p, ".rst")),
            category="Claims",
            subcategory=p,
            labels={"claims": p},
        )
        return report(P.claims_paper(p, ".csv"), **flag)

    return [entry(p) for p in papers]


def all_targets():
    targets = [P.claims(".csv")] if CFG.raw["figures"] else []
    targets += [P.dataset(d) for d in CFG.datasets] + [
        P.trajectory(r) for r in CFG.runs
    ]
    targets += [P.analysis(k, n) for k in ANALYSES for n in jobs.analysis_jobs(CFG, k)]
    for name in CFG.raw["figures"]:
        targets += figure_paths(name)
    return targets
