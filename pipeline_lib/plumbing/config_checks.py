"""What a JSON schema cannot check: references between entries, and the constraints the plug-ins
declare (``CHECKS``), task/model compatibility (a task's ``MODELS``), finetune shapes. Each returns
a list of sentences naming the config key path; :func:`pipeline_lib.plumbing.config.load_config` raises them.
"""
from __future__ import annotations

from typing import Any, Mapping

from . import registry, remembered
from .refs import Ref, refs
from .values import evaluate, seed_list, task_shape


def references(data: dict) -> list[str]:
    """Runs name existing datasets, models and parents (no cycles)."""
    problems: list[str] = []
    runs = data["runs"]
    for name, run in runs.items():
        for key, pool in (("dataset", "datasets"), ("model", "models")):
            if run[key] not in data[pool]:
                problems.append(f"config key 'runs.{name}.{key}': {run[key]!r} is not a {key}; defined "
                                f"{pool}: {', '.join(data[pool])}")
        parent = run["init_from"]
        if parent is not None and parent not in runs:
            problems.append(f"config key 'runs.{name}.init_from': {parent!r} is not a run; defined runs: {', '.join(runs)}")
    if problems:
        return problems
    for name in runs:  # cycles in init_from
        seen = [name]
        while runs[seen[-1]]["init_from"] is not None:
            nxt = runs[seen[-1]]["init_from"]
            if nxt in seen:
                cycle = " -> ".join([*seen[seen.index(nxt):], nxt])
                return [f"config key 'runs.{name}.init_from' forms a cycle: {cycle}; init_from must point to an earlier run"]
            seen.append(nxt)
    return problems


def entry_references(data: dict) -> list[str]:
    """Analyses and figures name existing entries (their schemas' ``x-ref``), what they read is
    produced, and the runs they reach fit their ``x-requires``."""
    problems: list[str] = []
    for kind, block in data["analyses"].items():
        schema = registry.plugin("analysis", kind).schema
        if registry.plugin("analysis", kind).get("PER_RUN"):
            problems += _check_refs(data, f"analyses.{kind}", "", schema, block, ("weights",))
        else:
            for entry, params in block.items():
                problems += _check_refs(data, f"analyses.{kind}", entry, schema, params, ("weights",))
    for fig, params in data["figures"].items():
        problems += _check_refs(data, "figures", fig, registry.plugin("figure", fig).schema, params, ("trajectory",))
    return problems


def _declared_checks(plug, names: dict, key_prefix: str) -> list[str]:
    """A plug-in's CHECKS: [key, expression that must hold, message: an f-string over the same names]."""
    problems = []
    for key, expr, message in plug.get("CHECKS", []):
        if not evaluate(expr, names, f"{plug.path} CHECKS[{key}]"):
            text = evaluate("f" + repr(message), names, f"{plug.path} CHECKS[{key}] message")
            problems.append(f"config key '{key_prefix}.{key}': {text}")
    return problems


def semantics(data: dict) -> list[str]:
    """Datasets and runs meet their task's and model's CHECKS; each model kind serves its task."""
    problems: list[str] = []
    for name, ds in data["datasets"].items():
        plug = registry.plugin("task", ds["task"])
        problems += _declared_checks(plug, dict(ds, **task_shape(ds)), f"datasets.{name}")
    if problems:
        return problems
    for name, run in data["runs"].items():
        problems += _run_checks(data, name, run)
    return problems


def entry_checks(data: dict) -> list[str]:
    """Analysis entries and figures meet their module's CHECKS."""
    problems: list[str] = []
    helpers = _analysis_helpers(data)
    for kind, block in data["analyses"].items():
        plug = registry.plugin("analysis", kind)
        if plug.get("PER_RUN"):
            for r in block.get("runs", []):
                problems += _declared_checks(plug, {**helpers, **block, "r": r}, f"analyses.{kind}")
        else:
            for entry, params in block.items():
                problems += _declared_checks(plug, {**helpers, **params}, f"analyses.{kind}.{entry}")
    for fig, params in data["figures"].items():
        problems += _declared_checks(registry.plugin("figure", fig), {**helpers, **params}, f"figures.{fig}")
    return problems


def _serves(model_kind: str) -> list[str]:
    """Tasks a model kind serves: those whose MODELS list it, and those its own TASKS list."""
    listed = registry.plugin("model", model_kind).get("TASKS", [])  # ["*"]: every task (e.g. kind module)
    return [t for t, p in registry.plugins("task").items()
            if model_kind in p.get("MODELS", []) or t in listed or "*" in listed]


def _run_checks(data: dict, name: str, run: dict) -> list[str]:
    key = f"runs.{name}"
    ds, model = data["datasets"][run["dataset"]], data["models"][run["model"]]
    kind = registry.plugin("model", model["kind"])
    if ds["task"] not in _serves(model["kind"]):
        kinds = [k for k in registry.plugins("model") if ds["task"] in _serves(k)]
        return [f"config key '{key}.model': model '{run['model']}' (kind {model['kind']}) cannot serve dataset "
                f"'{run['dataset']}' (task {ds['task']}); task {ds['task']} is served by kinds "
                f"{', '.join(kinds) or 'none'}, and kind {model['kind']} serves tasks "
                f"{', '.join(_serves(model['kind'])) or 'none'}"]
    shape = task_shape(ds)
    problems = _declared_checks(kind, {**model, **shape, "run": name, "dataset": run["dataset"]}, f"models.{run['model']}")
    if kind.get("VALIDATE") and not problems:  # checks that must import the plug-in (e.g. a user's nn.Module)
        registry.user_import_path()
        problems += remembered.unless_passed(  # a check that passed with these inputs is not repeated
            model, shape, run, lambda: registry.load("model", model["kind"]).validate(
                model, shape, run, f"models.{run['model']}", f"runs.{name}"))
    if run["n_probe"] > shape["n_test"]:
        problems.append(f"config key '{key}.n_probe': {run['n_probe']} probe sequences but dataset "
                        f"'{run['dataset']}' has {shape['n_test']} test examples; allowed n_probe <= that")
    bs = run["batch_size"]
    if bs != "full" and bs > shape["n_train"]:
        problems.append(f"config key '{key}.batch_size': {bs} exceeds the {shape['n_train']} training examples "
                        f"of dataset '{run['dataset']}'; allowed batch_size <= that or 'full'")
    draws, seeds = ds.get("draws") or 0, run["seeds"]
    n_seeds = seeds if isinstance(seeds, int) else len(seeds)
    if draws and n_seeds > draws:  # the i-th seed trains on draw i
        problems.append(f"config key '{key}.seeds': {n_seeds} seeds but dataset '{run['dataset']}' holds {draws} "
                        f"training draws, one per seed (config key 'datasets.{run['dataset']}.draws'); allowed: at "
                        f"most {draws} seeds, or more draws")
    offered = registry.plugin("task", ds["task"]).get("EMBED_INPUTS", ["test"])
    if run.get("embed_inputs", "test") not in offered:
        problems.append(f"config key '{key}.embed_inputs': task {ds['task']} of dataset '{run['dataset']}' offers "
                        f"{offered}; got {run.get('embed_inputs', 'test')!r}")
    if run["init_from"] is not None:
        problems += _finetune_checks(data, name, run)
    return (problems + _online_checks(data, name, run) + _sweep_checks(data, name, run)
            + _optimizer_checks(name, run))


def _optimizer_checks(name: str, run: dict) -> list[str]:
    """An optimizer plug-in's keys (e.g. galore_adam's rank) only with that optimizer."""
    opt, plugs = run["optimizer"], registry.plugins("optimizer")
    own = set(plugs[opt["name"]].schema.get("properties", {})) if opt["name"] in plugs else set()
    problems = []
    for other, plug in plugs.items():
        for key in sorted(set(plug.schema.get("properties", {})) & set(opt) - own):
            problems.append(f"config key 'runs.{name}.optimizer.{key}' belongs to optimizer {other}; this run's "
                            f"optimizer is {opt['name']}")
    return problems + _schedule_checks(name, run)


def _schedule_checks(name: str, run: dict) -> list[str]:
    """The cosine schedule's keys only with it, a floor at most the rate, and epochs left to decay over."""
    opt, key = run["optimizer"], f"runs.{name}.optimizer"
    if opt.get("schedule", "constant") != "cosine":
        return [f"config key '{key}.{k}' belongs to the cosine schedule; this run's schedule is "
                f"{opt.get('schedule', 'constant')}; allowed: optimizer.schedule: cosine"
                for k in ("min_lr", "warmup_lr", "cooldown_epochs") if k in opt]
    problems = [f"config key '{key}.{k}': {opt[k]} exceeds the learning rate {opt['lr']}; allowed <= lr"
                for k in ("min_lr", "warmup_lr") if opt.get(k, 0.0) > opt["lr"]]
    decay = run["epochs"] - opt.get("cooldown_epochs", 0)
    if decay <= opt["warmup_epochs"]:
        problems.append(f"config key '{key}.cooldown_epochs': {run['epochs']} epochs leave {decay} epochs after the "
                        f"cool-down, not more than the {opt['warmup_epochs']} warm-up epochs; allowed: "
                        "warmup_epochs + cooldown_epochs < epochs")
    return problems


def _online_checks(data: dict, name: str, run: dict) -> list[str]:
    """Online tasks draw fresh batches, so they need an integer batch size and start from scratch;
    their trainer (the engine with fresh samples, pipeline_lib.batches) takes SGD with values per slot."""
    key = f"runs.{name}"
    task = data["datasets"][run["dataset"]]["task"]
    if not _online(data, run):
        return []
    problems = []
    if run["step_attention_epochs"]:
        problems.append(f"config key '{key}.step_attention_epochs': a run of online task {task} trains one step per "
                        "epoch, so record_attention already picks steps; allowed: 0")
    if run["batch_size"] == "full":
        problems.append(f"config key '{key}.batch_size': task {task} draws fresh samples every step, so there is no "
                        "full batch; allowed: an integer")
    if run["init_from"] is not None:
        problems.append(f"config key '{key}.init_from': runs of online task {task} start from their initialisation; "
                        "allowed: null")
    if run["optimizer"]["name"] != "sgd":
        problems.append(f"config key '{key}.optimizer.name': runs of online task {task} are trained by SGD with a "
                        f"learning rate per slot; got {run['optimizer']['name']}; allowed: sgd")
    return problems


def _online(data: dict, run: dict) -> bool:
    """Whether a raw run's task is online (``jobs.online`` for a loaded Config)."""
    return bool(registry.plugin("task", data["datasets"][run["dataset"]]["task"]).get("ONLINE", False))


def _sweep_checks(data: dict, name: str, run: dict) -> list[str]:
    """Sweeps and per-parameter learning rates need an optimizer with a value per slot
    (pipeline_lib.slot_optim); a swept run's slots are not seeds, so it neither finetunes nor is finetuned."""
    key, opt = f"runs.{name}", run["optimizer"]["name"]
    problems = []
    for k, present in (("sweep", "sweep" in run), ("optimizer.lr_ratio", "lr_ratio" in run["optimizer"])):
        if present and opt not in ("adam", "adamw", "sgd"):
            problems.append(f"config key '{key}.{k}': needs a value per slot, which optimizers adam, adamw and sgd take "
                            f"here; optimizer is {opt}")
    names = set(registry.plugin("model", data["models"][run["model"]]["kind"]).get("PARAM_DIMS") or {})
    ratios = set(run["optimizer"].get("lr_ratio", {})) | set(run.get("sweep", {}).get("lr_ratio", {}))
    for k in sorted(ratios - names):
        where = "optimizer.lr_ratio" if k in run["optimizer"].get("lr_ratio", {}) else "sweep.lr_ratio"
        problems.append(f"config key '{key}.{where}.{k}': the model (kind {data['models'][run['model']]['kind']}) "
                        f"has no parameter {k}; allowed: {', '.join(sorted(names))}")
    for k in sorted(set(run["optimizer"].get("no_weight_decay", ())) - names if names else ()):  # else: at training
        problems.append(f"config key '{key}.optimizer.no_weight_decay': the model (kind "
                        f"{data['models'][run['model']]['kind']}) has no parameter {k}; allowed: {', '.join(sorted(names))}")
    if "sweep" not in run:
        return problems
    if "momentum" in run["sweep"] and opt != "sgd":
        problems.append(f"config key '{key}.sweep.momentum': momentum is an sgd value; optimizer is {opt}")
    if run["init_from"] is not None:
        problems.append(f"config key '{key}.sweep': a swept run starts every slot from its initialisation; "
                        f"init_from is {run['init_from']!r}; allowed: null")
    for child, other in data["runs"].items():
        if other.get("init_from") == name:
            problems.append(f"config key 'runs.{child}.init_from': run '{name}' has a sweep (its seed axis holds "
                            "slots, not seeds), so it cannot be finetuned from")
    return problems


def _architecture(data: dict, run: dict) -> tuple:
    """What a finetune must keep: the model kind, its params and its declared ARCH of the data shape."""
    model = data["models"][run["model"]]
    names = {**model, **task_shape(data["datasets"][run["dataset"]])}
    plug = registry.plugin("model", model["kind"])
    arch = evaluate(plug.get("ARCH", "()"), names, f"{plug.path} ARCH")
    return model["kind"], {k: v for k, v in model.items() if k != "kind"}, arch


def _finetune_checks(data: dict, name: str, run: dict) -> list[str]:
    parent = data["runs"][run["init_from"]]
    problems = []
    mine, theirs = _architecture(data, run), _architecture(data, parent)
    if mine != theirs:
        problems.append(f"config key 'runs.{name}.init_from': run '{run['init_from']}' has a different architecture "
                        f"(kind, model params, shapes) = {theirs} vs {mine}; a finetune must keep the parent's shapes")
    missing = sorted(set(seed_list(run["seeds"])) - set(seed_list(parent["seeds"])))
    if missing:
        problems.append(f"config key 'runs.{name}.seeds': seeds {missing} are not trained by init_from run "
                        f"'{run['init_from']}' (seed i starts from seed i); allowed: a subset of its seeds")
    return problems


def _analysis_helpers(data: dict) -> dict[str, Any]:
    """Functions an analysis's CHECKS may call on run names."""
    def run(r):
        return data["runs"][r]

    def model_of(r):
        return data["models"][run(r)["model"]]

    def dataset_of(r):
        return data["datasets"][run(r)["dataset"]]

    def task_offers(r):
        """Probe targets the run's task offers (its PROBE_TARGETS expression)."""
        plug = registry.plugin("task", dataset_of(r)["task"])
        return evaluate(plug.get("PROBE_TARGETS", "[]"), dataset_of(r), f"{plug.path} PROBE_TARGETS")

    def model_offers(r):
        """Internal sites the run's model offers (its SITES expression)."""
        plug = registry.plugin("model", model_of(r)["kind"])
        return evaluate(plug.get("SITES", "[]"), model_of(r), f"{plug.path} SITES")

    return {"run": run, "seeds": lambda r: seed_list(run(r)["seeds"]), "task_offers": task_offers,
            "model_offers": model_offers, "set": set, "sorted": sorted, "all": all, "any": any}


def _check_refs(data: dict, section: str, name: str, schema: Mapping, value: Any, default_reads) -> list[str]:
    problems = []
    for ref in refs(data, f"{section}.{name}" if name else section, schema, value, default_reads):
        if ref.target in ("run", "dataset"):
            pool, what = data[ref.target + "s"], f"a {ref.target}"
        else:
            kind = ref.target.split("/", 1)[1]
            pool, what = data["analyses"].get(kind, {}), f"an entry of analyses.{kind}"
            if registry.plugin("analysis", kind).get("PER_RUN"):
                pool, what = {r: None for r in pool.get("runs", [])}, f"a run of analyses.{kind}.runs"
        if ref.name not in pool:
            problems.append(f"config key '{ref.path}': {ref.name!r} is not {what}; defined: {', '.join(pool) or 'none'}")
            continue
        runs = [ref] if ref.target == "run" else []
        if ref.target.startswith("analysis/"):  # what the figure reads through the entry's runs
            kind = ref.target.split("/", 1)[1]
            run_reads = tuple(r for r in ref.reads if r != "artifact")
            runs = [Ref(r.path, r.target, r.name, run_reads, ref.requires, ref.requires_message)
                    for r in refs(data, f"analyses.{kind}.{ref.name}", registry.plugin("analysis", kind).schema,
                                   pool[ref.name]) if r.target == "run" and r.name in data["runs"]]
        for r in runs:
            problems += _check_run_ref(data, r, f"{section}.{name}" if name else section)
    return problems


def _check_run_ref(data: dict, ref: Ref, reader: str) -> list[str]:
    problems = []
    run = data["runs"][ref.name]
    if "sweep" in run and not _online(data, run):
        problems.append(f"config key '{ref.path}': run {ref.name!r} has a sweep (its artifacts' seed axis holds "
                        f"slots = cell x seed, with a run_seed coordinate), which {reader} does not read; allowed: "
                        "runs without a sweep (swept runs of online tasks are read by their own plug-ins)")
    for read in ref.reads:
        if read.startswith("analysis/"):
            kind = read.split("/", 1)[1]
            if ref.name not in data["analyses"].get(kind, {}).get("runs", []):
                problems.append(f"config key '{ref.path}': run {ref.name!r} is read by {reader} through its "
                                f"{kind} artifact but it is not in analyses.{kind}.runs; add it there")
    if ref.requires:
        from jsonschema import Draft202012Validator

        run = data["runs"][ref.name]
        model = data["models"][run["model"]]
        doc = {"run": run, "model": model, "dataset": data["datasets"][run["dataset"]],
               "records": model_records(model)}
        err = next(iter(Draft202012Validator(ref.requires).iter_errors(doc)), None)
        if err is not None:
            where = ".".join(str(p) for p in err.absolute_path)
            problems.append(f"config key '{ref.path}': run {ref.name!r} {ref.requires_message or 'does not fit'} "
                            f"({where}: {err.message})")
    return problems


def model_records(model: dict) -> list[str]:
    """What runs of a model entry record (its kind's RECORDS: a list, or an expression of the entry)."""
    plug = registry.plugin("model", model["kind"])
    records = plug.get("RECORDS", [])
    return list(evaluate(records, model, f"{plug.path} RECORDS") if isinstance(records, str) else records)

