"""What each job of the DAG reads and which code computes it (plumbing: in no code hash).

A job's input files are the artifacts its config entry references (:mod:`.refs`: the plug-ins'
``x-ref`` annotations and what ``x-reads`` says each reference reads); its code is the modules of its
stage and plug-ins (:func:`job_modules`) and its adapter script, hashed by :mod:`.codehash`.
"""
from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
from pathlib import Path

from . import registry
from .codehash import code_hash
from .config import Config
from .equivalence import canonical
from .paths import Paths
from .refs import Ref, analysis_refs, refs
from .values import per_run, slice_hash


def analysis_jobs(cfg: Config, kind: str) -> list[str]:
    """Names of the jobs of one analysis: its entries, or the runs of a per-run analysis."""
    block = cfg.raw["analyses"].get(kind, {})
    return list(block.get("runs", [])) if per_run(kind) else list(block)


def analysis_inputs(cfg: Config, kind: str, name: str, paths: Paths | None = None) -> list[str]:
    return _files(cfg, analysis_refs(cfg.raw, kind, name), paths)


def figure_inputs(cfg: Config, name: str, paths: Paths | None = None) -> list[str]:
    found = refs(cfg.raw, f"figures.{name}", registry.plugin("figure", name).schema, cfg.raw["figures"][name])
    return _files(cfg, list(found), paths)


def _files(cfg: Config, found: list[Ref], paths: Paths | None) -> list[str]:
    paths = paths or cfg.paths
    files: list[str] = []
    for ref in found:
        if ref.target == "dataset":
            files.append(paths.dataset(ref.name))
        elif ref.target == "run":
            for read in ref.reads:
                if read == "dataset":
                    files.append(paths.dataset(cfg.runs[ref.name].dataset))
                elif read.startswith("analysis/"):
                    files.append(paths.analysis(read.split("/", 1)[1], ref.name))
                else:  # trajectory or weights, the run's ancestors' too
                    files += [getattr(paths, read)(r) for r in cfg.lineage(ref.name)]
        else:  # analysis/<kind>: the entry's artifact and/or its runs' artifacts
            kind = ref.target.split("/", 1)[1]
            if "artifact" in ref.reads:
                files.append(paths.analysis(kind, ref.name))
            run_reads = tuple(r for r in ref.reads if r != "artifact")
            if run_reads:
                inner = [Ref(r.path, "run", r.name, run_reads) for r in analysis_refs(cfg.raw, kind, ref.name)
                         if r.target == "run"]
                files += _files(cfg, inner, paths)
    return list(dict.fromkeys(files))


# -- code hashes: the stage's module and the plug-ins it runs, never the plumbing ----------------------

def dataset_modules(cfg: Config, name: str) -> tuple[str, ...]:
    return ("pipeline_lib.stages.dataset", registry.plugin("task", cfg.datasets[name].plugin).module)


def online(cfg: Config, run: str) -> bool:
    """Whether a run's task is online (fresh samples every step: rule train_online, not train)."""
    return bool(registry.plugin("task", cfg.datasets[cfg.runs[run].dataset].plugin).get("ONLINE", False))


def train_runs(cfg: Config, online_runs: bool) -> list[str]:
    """The runs of rule train_online (``online_runs``) or of rule train."""
    return [r for r in cfg.runs if online(cfg, r) == online_runs]


def train_modules(cfg: Config, run: str) -> tuple[str, ...]:
    if online(cfg, run):  # the online trainer samples through the task module
        task = registry.plugin("task", cfg.datasets[cfg.runs[run].dataset].plugin).module
        return ("pipeline_lib.stages.train_online", _model_module(cfg, run), task)
    return ("pipeline_lib.stages.train", _model_module(cfg, run), *_optimizer_module(cfg, run))


def _optimizer_module(cfg: Config, run: str) -> tuple[str, ...]:
    """The optimizer plug-in a run names (none for torch's adam, adamw, sgd)."""
    name = cfg.runs[run].optimizer.name
    return (registry.plugin("optimizer", name).module,) if name in registry.plugins("optimizer") else ()


def analysis_modules(cfg: Config, kind: str, name: str) -> tuple[str, ...]:
    plug = registry.plugin("analysis", kind)
    modules = ["pipeline_lib.stages.analysis", plug.module]
    runs = dict.fromkeys(r.name for r in analysis_refs(cfg.raw, kind, name) if r.target == "run")
    uses = plug.get("USES", [])
    for run in runs:
        if "model" in uses:
            modules.append(_model_module(cfg, run))
        if "task" in uses:
            modules.append(registry.plugin("task", cfg.datasets[cfg.runs[run].dataset].plugin).module)
    return tuple(dict.fromkeys(modules))


def figure_modules(name: str) -> tuple[str, ...]:
    return ("pipeline_lib.stages.figure", registry.plugin("figure", name).module)


CLAIMS_MODULES = ("pipeline_lib.stages.claims",)


def job_modules(cfg: Config) -> dict[str, tuple[str, ...]]:
    """``"<rule> <name>" -> the modules whose closure is the job's code`` for every job of a config
    (an analysis job: ``"<kind> <name>"``)."""
    out = {f"dataset {n}": dataset_modules(cfg, n) for n in cfg.datasets}
    out.update({f"train {r}": train_modules(cfg, r) for r in cfg.runs})
    out.update({f"{kind} {n}": analysis_modules(cfg, kind, n)
                for kind in cfg.raw["analyses"] for n in analysis_jobs(cfg, kind)})
    out.update({f"figure {f}": figure_modules(f) for f in cfg.raw["figures"]})
    out["claims"] = CLAIMS_MODULES
    return out


def job_script(cfg: Config, job: str) -> str:
    """The adapter script (``workflow/scripts/<name>.py``) that runs a job named as :func:`job_modules` names it."""
    rule, _, name = job.partition(" ")
    if rule == "train":
        return "train_online" if online(cfg, name) else "train"
    return rule if rule in ("dataset", "figure", "claims") else "analysis"


def dataset_code(cfg: Config, name: str) -> str:
    return code_hash(*dataset_modules(cfg, name), script="dataset")


def train_code(cfg: Config, run: str) -> str:
    code = code_hash(*train_modules(cfg, run), script=job_script(cfg, f"train {run}"))
    code = canonical(hashlib.sha256(f"{code} {resolved_run(cfg, run)}".encode()).hexdigest()[: len(code)])
    model = cfg.raw["models"][cfg.runs[run].model]
    return _with_user_source(code, model["module"]) if model.get("kind") == "module" else code


def resolved_run(cfg: Config, run: str) -> str:
    """A digest of what the plumbing resolved a run into before it trains, which its config slice (the raw
    entries) does not show: its RunConfig (the seeds of ``seeds: 3``, the sweep's order; a field at its
    dataclass default left out, so a new field reruns nothing), its slots with their optimizer values, and its
    dataset's shape (the task's declared expressions, evaluated). Part of the training job's code hash: an edit of
    the plumbing that changes what a run trains reruns that run, and one that changes nothing reruns nothing."""
    rc = cfg.runs[run]
    return slice_hash({"run": _non_default(rc), "slots": [dict(s, lr_ratio=sorted(s["lr_ratio"].items()))
                                                          for s in rc.slots()],
                       "shape": cfg.dataset_shape(rc.dataset)})


def _non_default(obj):
    """A dataclass as a mapping of its fields that differ from their defaults (nested dataclasses alike)."""
    out = {}
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        default = f.default if f.default is not dataclasses.MISSING else (
            f.default_factory() if f.default_factory is not dataclasses.MISSING else dataclasses.MISSING)
        if value == default:
            continue
        out[f.name] = _non_default(value) if dataclasses.is_dataclass(value) else value
    return out


def _with_user_source(code: str, spec: str) -> str:
    """A run of a user's nn.Module (model kind ``module``) reruns when the module's source changes: the
    ``.py`` files of its folder (the module and the helpers beside it) join the code hash."""
    registry.user_import_path()
    found = importlib.util.find_spec(spec.partition(":")[0])
    h = hashlib.sha256(code.encode())
    if found is not None and found.origin and Path(found.origin).is_file():
        for f in sorted(Path(found.origin).parent.glob("*.py")):
            h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    return canonical(h.hexdigest()[: len(code)])  # a refactor recorded as equivalent reruns no module run either


def analysis_code(cfg: Config, kind: str, name: str) -> str:
    return code_hash(*analysis_modules(cfg, kind, name), script="analysis")


def figure_code(name: str) -> str:
    return code_hash(*figure_modules(name), script="figure")


def claims_code() -> str:
    return code_hash(*CLAIMS_MODULES, script="claims")


def _model_module(cfg: Config, run: str) -> str:
    return registry.plugin("model", cfg.models[cfg.runs[run].model].plugin).module


# every figure's: the figure, its numbers and provenance, its report caption (with the numbers);
# its module may add EXTRA_OUTPUTS
FIGURE_OUTPUTS = (".pdf", ".png", ".json", ".rst")


def figure_outputs(name: str) -> tuple[str, ...]:
    """Extensions a figure writes: FIGURE_OUTPUTS and its module's EXTRA_OUTPUTS."""
    return (*FIGURE_OUTPUTS, *registry.plugin("figure", name).get("EXTRA_OUTPUTS", []))
