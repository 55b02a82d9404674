"""The configuration machinery: schema assembly, validation, defaults, references, run specs.

``load_config(raw)`` validates a raw dict (``config/config.yaml``) against the schema (``config_schema``), fills
its defaults, checks what a schema cannot express (``config_checks``) and returns a frozen :class:`Config`; every
failure raises :class:`ConfigError` naming the key path and what is allowed. The run-time layer: no number is
computed here (the dataclasses are plain data; what their values mean lives in ``attention`` and ``engine``).

Nothing here knows a task, model, analysis or figure by name: the schema is ``workflow/schemas/config.schema.yaml``
plus each plug-in's ``CONFIG`` fragment, references are the fragments' ``x-ref`` annotations, task shapes, model
constraints and probe offers the plug-ins' declared expressions. No plug-in, torch or numpy is imported to check a
config (well under a second), so the DAG is built from declarations alone.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Mapping

import yaml

from . import config_checks, registry
from .config_schema import validate_raw
from .device import resolve_device_setting
from .errors import ConfigError, fail
from .paths import Paths
from .refs import reached_entries
from .values import canonical_json, evaluate, per_run, seed_list, slice_hash, task_shape  # noqa: F401  (re-exported)

# -- what every run has (the plug-ins' blocks are their own dataclasses) ---------------------------

SCALAR_SWEEPS = ("lr", "weight_decay", "momentum")  # optimizer values a sweep may list (besides lr_ratio)


@dataclass(frozen=True)
class AttentionConfig:
    """A run's attention normalisation (its meaning: ``pipeline_lib.attention``)."""

    variant: str = "softmax"
    tau: float | str = "sqrt_d"
    schedule: str = "none"


@dataclass(frozen=True)
class OptimizerConfig:
    name: str = "adam"
    lr: float = 1e-3
    weight_decay: float = 0.0
    betas: tuple[float, float] = (0.9, 0.999)
    momentum: float = 0.0
    warmup_epochs: int = 0
    schedule: str = "constant"  # constant | cosine (pipeline_lib.lr_schedule)
    min_lr: float = 0.0  # the cosine schedule's floor
    warmup_lr: float = 0.0  # the cosine schedule's first warm-up rate
    cooldown_epochs: int = 0  # the cosine schedule's last epochs, held at min_lr
    no_weight_decay: tuple[str, ...] = ()  # parameters trained without weight decay
    lr_ratio: tuple[tuple[str, float], ...] = ()  # parameter name -> multiple of lr (pipeline_lib.slot_optim)
    options: tuple[tuple[str, Any], ...] = ()  # an optimizer plug-in's own keys (e.g. galore_adam's rank)


@dataclass(frozen=True)
class ScheduleConfig:
    """A recording schedule (the epochs it picks: ``engine.recorded_epochs``)."""

    dense_until: int = 100
    log_points: int = 50
    every: int = 500


@dataclass(frozen=True)
class RunConfig:
    name: str
    dataset: str
    model: str
    epochs: int
    seeds: tuple[int, ...]
    batch_size: int | str = "full"
    init_from: str | None = None
    optimizer: OptimizerConfig = field(default_factory=OptimizerConfig)
    attention: AttentionConfig = field(default_factory=AttentionConfig)
    n_probe: int = 8
    n_stats: int = 256
    n_embed: int = 0
    embed_inputs: str = "test"  # which inputs n_embed records: the test set's, or a set the task offers
    record_attention: ScheduleConfig = field(default_factory=ScheduleConfig)
    record_weights: ScheduleConfig = field(default_factory=ScheduleConfig)
    step_attention_epochs: int = 0
    log_every: int = 500
    checkpoint_every: int = 500
    label_smoothing: float = 0.0  # of the training objective's cross-entropy (metrics stay unsmoothed)
    # ('lr', (...)), ('lr_ratio.<param>', (...)), ('weight_decay', (...)), ('momentum', (...)): a grid of slots
    sweep: tuple[tuple[str, Any], ...] = ()

    def slots(self) -> list[dict]:
        """One entry per trained slot, cell-major: run_seed, lr, lr_ratio (param -> multiple),
        weight_decay and momentum. Without a sweep the slots are the seeds."""
        import itertools

        keys = [k for k, _ in self.sweep]
        cells = [dict(zip(keys, combo)) for combo in itertools.product(*(v for _, v in self.sweep))] or [{}]
        out = []
        for cell in cells:
            ratio = dict(self.optimizer.lr_ratio, **{k.split(".", 1)[1]: v for k, v in cell.items()
                                                     if k.startswith("lr_ratio.")})
            values = {k: cell.get(k, getattr(self.optimizer, k)) for k in SCALAR_SWEEPS}
            out += [{"run_seed": s, **values, "lr_ratio": ratio} for s in self.seeds]
        return out


@dataclass(frozen=True)
class TrainingPlan:
    """What the engine's loop needs of a run, resolved once (:attr:`RunSpec.plan`; in tests
    :meth:`of` a RunConfig): the slots it trains, each with its seed (initialisation and data order)
    and optimizer values, the optimizer, batches, and what to record and log. Plain data: what the
    values mean is the engine's (``pipeline_lib.engine``, ``recording``, ``slot_optim``)."""

    name: str
    epochs: int
    slots: tuple[dict, ...]  # RunConfig.slots(): cell x seed, cell-major
    optimizer: OptimizerConfig
    sweep: tuple[tuple[str, Any], ...]
    batch_size: int | str
    attention: AttentionConfig
    record_attention: ScheduleConfig
    record_weights: ScheduleConfig
    step_attention_epochs: int
    log_every: int
    label_smoothing: float = 0.0
    per_slot: bool = False  # an optimizer with a value per slot even without a sweep (a stage's choice)
    optimizer_module: str | None = None  # the optimizer plug-in's module, None for torch's adam, adamw, sgd

    @property
    def seeds(self) -> list[int]:
        """The seed of every slot: the run's seeds, once per sweep cell."""
        return [s["run_seed"] for s in self.slots]

    @classmethod
    def of(cls, run: RunConfig, slots: tuple[dict, ...] | None = None, per_slot: bool = False) -> "TrainingPlan":
        name = run.optimizer.name  # a plug-in's module: the engine imports it, nothing below looks it up
        return cls(per_slot=per_slot, name=run.name, epochs=run.epochs, slots=tuple(run.slots()) if slots is None else slots,
                   optimizer=run.optimizer, sweep=run.sweep, batch_size=run.batch_size, attention=run.attention,
                   record_attention=run.record_attention, record_weights=run.record_weights,
                   step_attention_epochs=run.step_attention_epochs, log_every=run.log_every,
                   label_smoothing=run.label_smoothing,
                   optimizer_module=registry.plugin("optimizer", name).module
                   if name in registry.plugins("optimizer") else None)


@dataclass(frozen=True)
class Entry:
    """A dataset or model entry: its plug-in (task family or model kind) and that plug-in's params."""

    name: str
    plugin: str
    params: Mapping[str, Any]


@dataclass(frozen=True)
class RunSpec:
    """Everything about one run, resolved once and passed down (stage -> engine, analyses)."""

    name: str
    run: RunConfig
    model_kind: str
    model: Mapping[str, Any]  # the model entry's params
    dataset: str
    task: str
    shape: Mapping[str, Any]  # n_train, n_test, tokens (None: images), T, classes
    start_epoch: int
    lineage: tuple[str, ...]  # ancestors first, this run last
    device: str

    @property
    def seeds(self) -> tuple[int, ...]:
        return self.run.seeds

    @property
    def attention(self) -> AttentionConfig:
        return self.run.attention

    @functools.cached_property
    def slots(self) -> tuple[dict, ...]:
        """The trained slots (``RunConfig.slots``: cell x seed, cell-major), expanded once."""
        return tuple(self.run.slots())

    @property
    def slot_seeds(self) -> list[int]:
        """The seed of every slot (initialisation and data order): the run's seeds, once per sweep cell."""
        return self.plan.seeds

    @functools.cached_property
    def plan(self) -> TrainingPlan:
        """What the engine's loop needs of this run (:class:`TrainingPlan`), its slots expanded once."""
        return TrainingPlan.of(self.run, self.slots)

    @functools.cached_property
    def model_module(self):  # the model kind's plug-in, looked up (and imported) once, by the running stage
        return registry.load("model", self.model_kind)

    @functools.cached_property
    def model_params(self):  # the model kind's Params of the model entry, converted once
        return to_params(self.model_module.Params, self.model)


def to_params(cls, raw: Mapping[str, Any]):
    """A plug-in's ``Params`` dataclass from its validated block: mappings (label -> run) become
    tuples of pairs and lists tuples; keys the dataclass does not have are an error."""
    names = {f.name for f in fields(cls)}
    unknown = set(raw) - names
    if unknown:
        raise TypeError(f"{cls.__module__}.{cls.__name__} has no field(s) {sorted(unknown)}")
    return cls(**{k: tuple(v.items()) if isinstance(v, dict) else tuple(v) if isinstance(v, list) else v
                  for k, v in raw.items()})


# --------------------------------------------------------------------------------------------------
# the frozen config


@dataclass(frozen=True)
class Config:
    device: str
    runs: Mapping[str, RunConfig]
    datasets: Mapping[str, Entry]
    models: Mapping[str, Entry]
    raw: Mapping[str, Any] = field(repr=False, compare=False, default_factory=dict)

    # -- lineage --------------------------------------------------------------------------------
    def lineage(self, run: str) -> list[str]:
        """The run and its init_from ancestors, oldest first."""
        chain = [run]
        while self.runs[chain[0]].init_from is not None:
            chain.insert(0, self.runs[chain[0]].init_from)
        return chain

    def start_epoch(self, run: str) -> int:
        """Global epoch at which a run starts: the summed epochs of its ancestors."""
        return sum(self.runs[r].epochs for r in self.lineage(run)[:-1])

    def dataset_shape(self, name: str) -> dict:
        return task_shape(self.raw["datasets"][name])

    @property
    def paths(self):
        """Where this config's artifacts live (config key ``results``)."""
        return Paths(self.raw.get("results", "results"))

    def run_spec(self, run: str) -> RunSpec:
        rc = self.runs[run]
        model = self.models[rc.model]
        return RunSpec(name=run, run=rc, model_kind=model.plugin, model=model.params, dataset=rc.dataset,
                       task=self.datasets[rc.dataset].plugin, shape=self.dataset_shape(rc.dataset),
                       start_epoch=self.start_epoch(run), lineage=tuple(self.lineage(run)), device=self.device)

    # -- plug-in params (the plug-in module is imported on first use, in the stage) -----------------
    @functools.cached_property
    def analyses(self) -> Mapping[str, Any]:
        """kind -> name -> that analysis's Params (a per-run analysis: kind -> its Params)."""
        return _LazyParams(self.raw["analyses"], _analysis_params)

    @functools.cached_property
    def figures(self) -> Mapping[str, Any]:
        """figure name -> its Params."""
        return _LazyParams(self.raw["figures"], lambda name, b: to_params(registry.load("figure", name).Params, b))

    def params(self, kind: str, name: str, entry: str | None = None):
        """The Params of a dataset's task, a model, an analysis entry or a figure."""
        if kind in ("task", "model"):
            e = (self.datasets if kind == "task" else self.models)[name]
            return to_params(registry.load(kind, e.plugin).Params, e.params)
        if kind == "analysis":
            return self.analyses[name] if per_run(name) else self.analyses[name][entry]
        return self.figures[name]

    # -- the config slices a job's params and provenance hold --------------------------------------
    def run_slice(self, run: str) -> dict:
        rc = self.runs[run]
        return {"run": self.raw["runs"][run], "run_name": run, "model": self.raw["models"][rc.model],
                "dataset": self.raw["datasets"][rc.dataset], "device": self.device,
                "start_epoch": self.start_epoch(run)}

    def dataset_slice(self, name: str) -> dict:
        return {"dataset_name": name, "dataset": self.raw["datasets"][name]}

    def figure_slice(self, name: str) -> dict:
        """A figure's params and the config of the analysis entries it reads through (e.g. the arms
        and threshold of a Eureka experiment), so that changing those reruns the figure."""
        return {"figure": name, "params": self.raw["figures"][name],
                "reads_through": {f"{k}.{n}": v for (k, n), v in reached_entries(self.raw, name).items()}}

    def analysis_slice(self, kind: str, name: str) -> dict:
        """Config of one analysis job. A per-run analysis's slice holds its shared settings, not the
        list of runs (adding a run to it must not rerun the others)."""
        block = self.raw["analyses"][kind]
        if per_run(kind):
            return {"analysis": kind, "run": name, "params": {k: v for k, v in block.items() if k != "runs"}}
        return {"analysis": kind, "name": name, "params": block[name]}



class _LazyParams(Mapping):
    """name -> ``convert(name, block)`` of a raw mapping, converted on first access (importing the
    plug-in module then, in the stage that needs it, never while the DAG is built)."""

    def __init__(self, raw: Mapping[str, Any], convert):
        self._raw, self._convert, self._cache = raw, convert, {}

    def __getitem__(self, key):
        if key not in self._cache:
            self._cache[key] = self._convert(key, self._raw[key])
        return self._cache[key]

    def __iter__(self):
        return iter(self._raw)

    def __len__(self):
        return len(self._raw)


def _analysis_params(kind: str, block: Mapping[str, Any]):
    if per_run(kind):
        return to_params(registry.load("analysis", kind).Params, block)
    return _LazyParams(block, lambda _, entry: to_params(registry.load("analysis", kind).Params, entry))


def load_config(raw: Mapping[str, Any]) -> Config:
    """Validate a raw config mapping and return the frozen :class:`Config` (raises ConfigError, or
    registry.PluginError naming the file of a malformed plug-in)."""
    data = with_global_seeds(validate_raw(raw))
    for check in (config_checks.references, config_checks.semantics, config_checks.entry_references,
                  config_checks.entry_checks):
        fail(check(data))
    data["device"] = resolve_device_setting(data["device"])
    return checked_config(data)


def with_global_seeds(data: dict) -> dict:
    """A validated mapping with its top-level ``seeds`` (if set) as the seed count of every run whose
    ``seeds`` is a count; runs with an explicit list of seeds keep it."""
    n = data.get("seeds")
    if n is not None:
        for run in data["runs"].values():
            if isinstance(run.get("seeds"), int):
                run["seeds"] = n
    return data


def checked_config(data: Mapping[str, Any]) -> Config:
    """The :class:`Config` of a mapping that :func:`load_config` has validated (its ``Config.raw``: defaults
    filled, device resolved), without validating it again. The Snakefile validates once and hands its jobs
    that mapping as their ``config``, so a job's adapter script builds its Config in milliseconds."""
    runs = {}
    for n, r in data["runs"].items():
        base_keys = {f.name for f in fields(OptimizerConfig)}
        opt = {k: v for k, v in r["optimizer"].items() if k in base_keys}
        opt.update(betas=tuple(r["optimizer"]["betas"]), no_weight_decay=tuple(r["optimizer"].get("no_weight_decay", ())),
                   lr_ratio=tuple(sorted(r["optimizer"].get("lr_ratio", {}).items())),
                   options=tuple(sorted((k, v) for k, v in r["optimizer"].items() if k not in base_keys)))
        sweep = r.get("sweep", {})
        sweep = tuple(([("lr", tuple(sweep["lr"]))] if "lr" in sweep else [])
                      + [(f"lr_ratio.{k}", tuple(v)) for k, v in sorted(sweep.get("lr_ratio", {}).items())]
                      + [(k, tuple(sweep[k])) for k in SCALAR_SWEEPS[1:] if k in sweep])
        runs[n] = RunConfig(
            name=n, dataset=r["dataset"], model=r["model"], epochs=r["epochs"],
            seeds=seed_list(r["seeds"]), batch_size=r["batch_size"], init_from=r["init_from"],
            optimizer=OptimizerConfig(**opt), attention=AttentionConfig(**r["attention"]),
            n_probe=r["n_probe"], n_stats=r["n_stats"], n_embed=r["n_embed"], embed_inputs=r.get("embed_inputs", "test"),
            record_attention=ScheduleConfig(**r["record_attention"]),
            record_weights=ScheduleConfig(**r["record_weights"]), step_attention_epochs=r["step_attention_epochs"],
            log_every=r["log_every"],
            checkpoint_every=r["checkpoint_every"], label_smoothing=r.get("label_smoothing", 0.0), sweep=sweep)
    datasets = {n: Entry(n, d["task"], {k: v for k, v in d.items() if k != "task"})
                for n, d in data["datasets"].items()}
    models = {n: Entry(n, m["kind"], {k: v for k, v in m.items() if k != "kind"}) for n, m in data["models"].items()}
    return Config(device=data["device"], runs=runs, datasets=datasets, models=models, raw=data)


def standalone_files(paths) -> list[str]:
    """Those of ``paths`` (config files) that declare ``standalone: true`` (a complete config,
    meant to replace the default one rather than be merged into it)."""
    out = []
    for path in paths:
        raw = read_config_file(path)
        if isinstance(raw, Mapping) and raw.get("standalone") is True:
            out.append(str(path))
    return out


def read_config_file(path: str | Path) -> Any:
    """A YAML config file's content, unvalidated (an unreadable file: ConfigError naming it)."""
    try:
        with open(path) as fh:
            return yaml.safe_load(fh)
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from exc


def load_config_file(path: str | Path) -> Config:
    """Read a YAML config file and validate it."""
    return load_config(read_config_file(path) or {})
