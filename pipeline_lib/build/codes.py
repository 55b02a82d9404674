"""Each job's code param (a rule's ``code``): the modules of its stage and plug-ins, hashed by their labels
(:class:`.lock.Code`), so that Snakemake reruns exactly the jobs whose code changed.

A training job also hashes what the run-time layer resolved its run into (:func:`resolved_run`: its seeds, sweep
slots and the task's shape), which its config slice does not show; a run of a user's own ``nn.Module`` hashes that
module's folder (:func:`user_source`).
"""
from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

from ..plumbing import registry
from ..plumbing.config import Config
from ..plumbing.jobs import analysis_jobs, online
from ..plumbing.refs import analysis_refs
from ..plumbing.values import slice_hash
from .lock import Code, checkout, digest_text


def dataset_modules(cfg: Config, name: str) -> tuple[str, ...]:
    return ("pipeline_lib.stages.dataset", registry.plugin("task", cfg.datasets[name].plugin).module)


def train_modules(cfg: Config, run: str) -> tuple[str, ...]:
    if online(cfg, run):  # the online trainer samples through the task module
        task = registry.plugin("task", cfg.datasets[cfg.runs[run].dataset].plugin).module
        return ("pipeline_lib.stages.train_online", _model_module(cfg, run), task)
    name = cfg.runs[run].optimizer.name  # an optimizer plug-in (none for torch's adam, adamw, sgd)
    optimizer = (registry.plugin("optimizer", name).module,) if name in registry.plugins("optimizer") else ()
    return ("pipeline_lib.stages.train", _model_module(cfg, run), *optimizer)


def analysis_modules(cfg: Config, kind: str, name: str) -> tuple[str, ...]:
    plug = registry.plugin("analysis", kind)
    modules = ["pipeline_lib.stages.analysis", plug.module]
    uses = plug.get("USES", [])
    for run in dict.fromkeys(r.name for r in analysis_refs(cfg.raw, kind, name) if r.target == "run"):
        if "model" in uses:
            modules.append(_model_module(cfg, run))
        if "task" in uses:
            modules.append(registry.plugin("task", cfg.datasets[cfg.runs[run].dataset].plugin).module)
    return tuple(dict.fromkeys(modules))


def figure_modules(name: str) -> tuple[str, ...]:
    return ("pipeline_lib.stages.figure", registry.plugin("figure", name).module)


def claims_modules(cfg: Config) -> tuple[str, ...]:
    """The ledger job's modules: the ledger and the module that scores each drawn figure's claims."""
    from ..scoring import module_name

    return ("pipeline_lib.stages.claims", *dict.fromkeys(module_name(f) for f in cfg.raw["figures"]))


def modules_of(cfg: Config, job: str) -> tuple[str, ...]:
    """The modules whose closures are a job's code, the job named ``"<rule> <name>"`` (an analysis job:
    ``"<kind> <name>"``; the ledger: ``"claims"``)."""
    rule, _, name = job.partition(" ")
    if rule == "dataset":
        return dataset_modules(cfg, name)
    if rule == "train":
        return train_modules(cfg, name)
    if rule == "figure":
        return figure_modules(name)
    return claims_modules(cfg) if rule == "claims" else analysis_modules(cfg, rule, name)


def job_modules(cfg: Config) -> dict[str, tuple[str, ...]]:
    """Every job of a config with its modules (:func:`modules_of`)."""
    jobs = [*(f"dataset {n}" for n in cfg.datasets), *(f"train {r}" for r in cfg.runs),
            *(f"{kind} {n}" for kind in cfg.raw["analyses"] for n in analysis_jobs(cfg, kind)),
            *(f"figure {f}" for f in cfg.raw["figures"]), "claims"]
    return {job: modules_of(cfg, job) for job in jobs}


def job_script(cfg: Config, job: str) -> str:
    """The adapter script (``workflow/scripts/<name>.py``) of a job named as :func:`job_modules` names it."""
    rule, _, name = job.partition(" ")
    if rule == "train":
        return "train_online" if online(cfg, name) else "train"
    return rule if rule in ("dataset", "figure", "claims") else "analysis"


def job_code(cfg: Config, job: str, code: Code | None = None) -> str:
    """The code param of one job of :func:`job_modules` (the checkout's code unless ``code`` is given)."""
    code = code or checkout()
    rule, _, name = job.partition(" ")
    modules = modules_of(cfg, job)
    data = ""
    if rule == "train":
        data = resolved_run(cfg, name)
        model = cfg.raw["models"][cfg.runs[name].model]
        if model.get("kind") == "module":
            data += " " + user_source(model["module"])
    return code.job_code(*modules, script=job_script(cfg, job), data=data)


def job_code_or_none(cfg: Config, job: str, code: Code) -> str | None:
    """:func:`job_code` under ``code``, or None where ``code`` lacks one of the job's modules (code from before
    a refactor created it)."""
    try:
        return job_code(cfg, job, code)
    except KeyError:
        return None


def job_codes(cfg: Config, code: Code | None = None) -> dict[str, str]:
    """Every job of a config with its code param."""
    return {job: job_code(cfg, job, code) for job in job_modules(cfg)}


def resolved_run(cfg: Config, run: str) -> str:
    """A digest of what the run-time layer resolved a run into before it trains, which its config slice (the raw
    entries) does not show: its RunConfig (the seeds of ``seeds: 3``, the sweep's order; a field at its dataclass
    default left out, so a new field reruns nothing), its slots with their optimizer values, and its dataset's shape
    (the task's declared expressions, evaluated). An edit of the resolution that changes what a run trains reruns
    that run; one that resolves the same values reruns nothing."""
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


def user_source(spec: str) -> str:
    """A digest of a user's own module (model kind ``module``, ``'package.module:Class'``): the digests of the
    ``.py`` files of its folder (the module and the helpers beside it), so that its runs rerun when they change
    and not for a comment."""
    h = hashlib.sha256()
    for f in registry.user_module_files(spec):
        h.update(f"{f.name} {_source_digest(f)}\n".encode())
    return h.hexdigest()[:16]


def _source_digest(path: Path) -> str:
    text = path.read_text()
    try:
        return digest_text(text, str(path))
    except SyntaxError:  # not ours to judge: any change of its bytes counts
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def _model_module(cfg: Config, run: str) -> str:
    return registry.plugin("model", cfg.models[cfg.runs[run].model].plugin).module
