"""The workflow's configuration: JSON-Schema validation, defaults, cross-checks, frozen dataclasses.

This is the only module that parses config dicts. ``load_config(raw)`` validates a raw dict (as read
from ``config/config.yaml``) against ``workflow/schemas/config.schema.yaml``, fills the schema's
defaults, checks what a schema cannot express (references between entries, cycles, sizes) and
returns a frozen :class:`Config`. Every failure raises :class:`ConfigError` with a message naming
the config key path and what is allowed. Import cost is kept small (no torch) so that an invalid
config fails in well under a second.
"""
from __future__ import annotations

import copy
import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import yaml

SCHEMA_PATH = Path(__file__).resolve().parents[1] / "workflow" / "schemas" / "config.schema.yaml"


class ConfigError(ValueError):
    """An invalid configuration; the message names the key path and what is allowed."""


# --------------------------------------------------------------------------------------------------
# dataclasses (what the rest of the code sees)


@dataclass(frozen=True)
class DatasetConfig:
    name: str
    task: str
    p: int | None = None  # sparse_modular_addition
    T: int | None = None
    k: int | None = None
    n_train: int | None = None  # sparse_modular_addition, eureka_digits
    n_test: int | None = None
    n: int | None = None  # eureka_reasoning
    train_fraction: float | None = None
    test_images: float | None = None  # eureka_digits
    seed: int = 0


@dataclass(frozen=True)
class ModelConfig:
    name: str
    d: int
    vocab: int | None = None
    kind: str = "circuit"
    mlp_ratio: int = 4
    n_heads: int = 4
    depth: int = 1
    patch: int = 4
    tied_unembed: bool = False

    @property
    def d_head(self) -> int:
        """Width of one attention head (the circuit model has one head of width d)."""
        return self.d if self.kind == "circuit" else self.d // self.n_heads


@dataclass(frozen=True)
class AttentionConfig:
    variant: str = "softmax"
    tau: float | str = "sqrt_d"
    schedule: str = "none"

    def resolved_tau(self, d_head: int) -> float:
        """The temperature; under Heat Treatment the schedule's final one, sqrt(d_head) (it replaces tau)."""
        # tau = sqrt(d_head) is both papers' default temperature (DESIGN section 6).
        if self.tau == "sqrt_d" or self.schedule == "heat_treatment":
            return math.sqrt(d_head)
        return float(self.tau)

    def describe(self) -> str:
        tau = "sqrt(d_head)" if self.tau == "sqrt_d" else f"{float(self.tau):g}"
        return self.variant + (" + heat treatment" if self.schedule == "heat_treatment" else f", tau={tau}")


@dataclass(frozen=True)
class OptimizerConfig:
    name: str = "adam"
    lr: float = 1e-3
    weight_decay: float = 0.0
    betas: tuple[float, float] = (0.9, 0.999)
    momentum: float = 0.0
    warmup_epochs: int = 0


@dataclass(frozen=True)
class ScheduleConfig:
    dense_until: int = 100
    log_points: int = 50
    every: int = 500

    def epochs(self, start: int, stop: int) -> list[int]:
        """Recorded epochs in [start, stop]: dense early, log-spaced, every N; ends always included."""
        n = stop - start
        local = {0, n}
        local.update(range(0, min(self.dense_until, n) + 1))
        if self.log_points and n > 0:
            for i in range(self.log_points):
                local.add(int(round(n ** (i / max(self.log_points - 1, 1)))))
        if self.every:
            local.update(range(0, n + 1, self.every))
        return sorted(start + e for e in local if 0 <= e <= n)


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
    n_embed: int = 256
    record_attention: ScheduleConfig = field(default_factory=ScheduleConfig)
    record_weights: ScheduleConfig = field(default_factory=ScheduleConfig)
    log_every: int = 500
    checkpoint_every: int = 500


@dataclass(frozen=True)
class InterpolationConfig:
    name: str
    a: str
    b: str
    dataset: str
    t_min: float = -0.25
    t_max: float = 1.25
    n_points: int = 61


@dataclass(frozen=True)
class ProbesConfig:
    runs: tuple[str, ...] = ()
    sites: tuple[str, ...] = ("z_A", "mlp_out")
    max_snapshots: int = 12
    n_fit: int = 1024
    n_eval: int = 512


@dataclass(frozen=True)
class ParamEmbedConfig:
    name: str
    runs: tuple[str, ...]
    perplexity: float = 30.0


@dataclass(frozen=True)
class Fig2Config:
    runs: tuple[str, ...]
    seed: int = 0
    probe: int = 0
    n_epochs: int = 6


@dataclass(frozen=True)
class Fig3Config:
    arms: tuple[tuple[str, str], ...]
    seed: int | None = None


@dataclass(frozen=True)
class Fig4Config:
    pretrain: str
    finetune: str
    seed: int = 0
    max_clusters: int = 24


@dataclass(frozen=True)
class Fig5Config:
    arms: tuple[tuple[str, str], ...]
    success_threshold: float = 0.9


@dataclass(frozen=True)
class Fig6Config:
    interpolation: str


@dataclass(frozen=True)
class Fig7Config:
    param_embed: str
    seeds: tuple[int, ...] = (0, 1, 2, 3)
    method: str = "tsne"


@dataclass(frozen=True)
class EurekaConfig:
    name: str
    arms: tuple[tuple[str, str], ...]
    threshold: float = 0.7


@dataclass(frozen=True)
class EurekaFigureConfig:
    experiments: tuple[str, ...]
    n_epochs: int = 5


EUREKA_FIGURES = ("eureka_accuracy", "eureka_table", "eureka_qkv_gradients", "eureka_attention_distribution",
                  "eureka_probes")


@dataclass(frozen=True)
class Config:
    device: str
    datasets: Mapping[str, DatasetConfig]
    models: Mapping[str, ModelConfig]
    runs: Mapping[str, RunConfig]
    figures: Mapping[str, Any]
    interpolation: Mapping[str, InterpolationConfig] = field(default_factory=dict)
    probes: ProbesConfig = field(default_factory=ProbesConfig)
    param_embed: Mapping[str, ParamEmbedConfig] = field(default_factory=dict)
    eureka: Mapping[str, EurekaConfig] = field(default_factory=dict)
    raw: Mapping[str, Any] = field(repr=False, compare=False, default_factory=dict)

    def lineage(self, run: str) -> list[str]:
        """The run and its init_from ancestors, oldest first."""
        chain = [run]
        while self.runs[chain[0]].init_from is not None:
            chain.insert(0, self.runs[chain[0]].init_from)
        return chain

    def start_epoch(self, run: str) -> int:
        """Global epoch at which a run starts: the summed epochs of its ancestors."""
        return sum(self.runs[r].epochs for r in self.lineage(run)[:-1])

    def run_slice(self, run: str) -> dict:
        """The resolved config that determines one run's artifacts (its provenance)."""
        rc = self.runs[run]
        return {
            "run": self.raw["runs"][run],
            "run_name": run,
            "model": self.raw["models"][rc.model],
            "dataset": self.raw["datasets"][rc.dataset],
            "device": self.device,
            "start_epoch": self.start_epoch(run),
        }

    def dataset_shape(self, name: str) -> dict:
        """n_train, n_test, tokens (None for images), T and classes of a dataset entry."""
        return dataset_shape(self.raw["datasets"][name])

    def dataset_slice(self, name: str) -> dict:
        return {"dataset_name": name, "dataset": self.raw["datasets"][name]}

    def figure_slice(self, name: str) -> dict:
        return {"figure": name, "params": self.raw["figures"][name]}

    def figure_runs(self, name: str) -> list[str]:
        """Runs whose trajectories a figure reads, ancestors included, in a stable order."""
        refs = _run_refs("figures", name, self.raw["figures"][name])  # the references validation checks
        for exp in self.raw["figures"][name].get("experiments", []):
            refs += _run_refs("analyses.eureka", exp, self.raw["analyses"]["eureka"][exp])
        return sorted({a for _, r in refs for a in self.lineage(r)})

    def analysis_slice(self, kind: str, name: str) -> dict:
        """Config of one analysis: kind 'interpolation', 'param_embed' or 'eureka', and its name."""
        return {"analysis": kind, "name": name, "params": self.raw["analyses"][kind][name]}

    def probe_slice(self, run: str) -> dict:
        """Config of the probes of one run: the shared settings, not the list of probed runs (adding a
        run to that list must not rerun the probes of the others)."""
        settings = {k: v for k, v in self.raw["analyses"]["probes"].items() if k != "runs"}
        return {"analysis": "probes", "run": run, "params": settings}


def slice_hash(obj: Any) -> str:
    """Stable short hash of a JSON-serialisable config slice."""
    return hashlib.sha256(canonical_json(obj).encode()).hexdigest()[:16]


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


# --------------------------------------------------------------------------------------------------
# validation


def _schema() -> dict:
    with open(SCHEMA_PATH) as fh:
        return yaml.safe_load(fh)


def _validator_class():
    """A 2020-12 validator that fills ``default`` values of object properties while validating."""
    from jsonschema import Draft202012Validator, validators

    base_properties = Draft202012Validator.VALIDATORS["properties"]

    def properties_with_defaults(validator, properties, instance, schema):
        if validator.is_type(instance, "object"):
            for key, sub in properties.items():
                if "default" in sub and key not in instance:
                    instance[key] = copy.deepcopy(sub["default"])
        yield from base_properties(validator, properties, instance, schema)

    return validators.extend(Draft202012Validator, {"properties": properties_with_defaults})


def _key_path(path) -> str:
    return ".".join(str(p) for p in path) or "<top level>"


def _describe(error) -> str:
    """Turn a jsonschema error into a sentence naming the key path and what is allowed."""
    path = _key_path(error.absolute_path)
    schema = error.schema if isinstance(error.schema, dict) else {}
    if error.validator == "additionalProperties":
        allowed = sorted(schema.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed)) if isinstance(error.instance, dict) else []
        where = f"under '{path}'" if error.absolute_path else "at the top level"
        keys = ", ".join(f"'{_key_path([*error.absolute_path, e])}'" for e in extra)
        return f"unknown config key {keys}; allowed keys {where}: {', '.join(allowed)}"
    if error.validator == "required":
        return f"config key '{path}' is missing a required key: {error.message}"
    if error.validator == "not" and isinstance(error.instance, dict) and "task" in error.instance:
        keys = sorted(set(error.instance) & {"p", "T", "k", "n_train", "n_test", "n", "train_fraction", "test_images"})
        return (f"config key '{path}': task {error.instance['task']} does not take some of the keys {keys} "
                f"(sparse_modular_addition: p, T, k, n_train, n_test; eureka_reasoning: n, train_fraction; "
                f"eureka_digits: n_train, n_test, test_images)")
    if error.validator == "propertyNames":
        return f"config key '{path}': name {error.instance!r} must contain only letters, digits and _"
    allowed, about = _allowed_from_schema(schema), schema.get("description")
    return (f"config key '{path}': {error.message}" + (f"; allowed: {allowed}" if allowed else "")
            + (f" ({about})" if about else ""))


def _allowed_from_schema(schema: dict) -> str:
    if "enum" in schema:
        return "one of " + ", ".join(map(repr, schema["enum"]))
    if "oneOf" in schema:
        return " or ".join(_allowed_from_schema(s) or s.get("type", "?") for s in schema["oneOf"])
    if "type" in schema:
        bounds = [f"{k} {schema[k]}" for k in ("minimum", "exclusiveMinimum", "maximum") if k in schema]
        return f"{schema['type']}" + (f" ({', '.join(bounds)})" if bounds else "")
    return ""


def validate_raw(raw: Mapping[str, Any]) -> dict:
    """Validate against the JSON schema and return a copy with defaults filled."""
    if not isinstance(raw, Mapping):
        raise ConfigError(f"the config must be a mapping of keys to values, got {type(raw).__name__}")
    data = copy.deepcopy(dict(raw))
    validator = _validator_class()(_schema())
    errors = sorted(validator.iter_errors(data), key=lambda e: (len(e.absolute_path), str(e.absolute_path)))
    if errors:
        # The deepest error under a oneOf names the real problem; report them all, most specific first.
        msgs = []
        for err in errors:
            leaf = max(err.context, key=lambda e: len(e.absolute_path)) if err.context else None
            msgs.append(_describe(leaf if leaf is not None and leaf.validator != "type" else err))
        raise ConfigError("invalid config:\n  - " + "\n  - ".join(dict.fromkeys(msgs)))
    return data


def _check_references(data: dict) -> None:
    problems: list[str] = []
    runs = data["runs"]
    for name, run in runs.items():
        key = f"runs.{name}"
        if run["dataset"] not in data["datasets"]:
            problems.append(f"config key '{key}.dataset': {run['dataset']!r} is not a dataset; "
                            f"defined datasets: {', '.join(data['datasets'])}")
        if run["model"] not in data["models"]:
            problems.append(f"config key '{key}.model': {run['model']!r} is not a model; "
                            f"defined models: {', '.join(data['models'])}")
        parent = run["init_from"]
        if parent is not None and parent not in runs:
            problems.append(f"config key '{key}.init_from': {parent!r} is not a run; defined runs: {', '.join(runs)}")
    if problems:
        raise ConfigError("invalid config:\n  - " + "\n  - ".join(problems))
    for name in runs:  # cycles in init_from
        seen = [name]
        while runs[seen[-1]]["init_from"] is not None:
            nxt = runs[seen[-1]]["init_from"]
            if nxt in seen:
                cycle = " -> ".join([*seen[seen.index(nxt):], nxt])
                raise ConfigError(f"invalid config:\n  - config key 'runs.{name}.init_from' forms a cycle: "
                                  f"{cycle}; init_from must point to an earlier run")
            seen.append(nxt)


def dataset_shape(ds: dict) -> dict:
    """Sizes a dataset entry implies: n_train, n_test, token values (None for images), length T."""
    if ds["task"] == "sparse_modular_addition":
        return {"n_train": ds["n_train"], "n_test": ds["n_test"], "tokens": ds["p"], "T": ds["T"], "classes": ds["p"]}
    if ds["task"] == "eureka_reasoning":
        total = (ds["n"] + 1) ** 4
        n_train = int(round(ds["train_fraction"] * total))
        return {"n_train": n_train, "n_test": total - n_train, "tokens": ds["n"] + 1, "T": 4, "classes": ds["n"] + 1}
    return {"n_train": ds["n_train"], "n_test": ds["n_test"], "tokens": None, "T": 16 * 16, "classes": 10}


def _check_semantics(data: dict) -> None:
    problems: list[str] = []
    for name, ds in data["datasets"].items():
        key = f"datasets.{name}"
        if ds["task"] != "sparse_modular_addition":
            continue
        if ds["k"] > ds["T"]:
            problems.append(f"config key '{key}.k': k={ds['k']} exceeds the sequence length T={ds['T']}; allowed 1 <= k <= T")
        space = ds["p"] ** ds["T"]
        if ds["n_test"] > space:
            problems.append(f"config key '{key}.n_test': {ds['n_test']} test sequences requested but only "
                            f"p^T = {space} distinct sequences exist; allowed n_test <= {space}")
    for name, model in data["models"].items():
        if model["kind"] != "circuit" and model["d"] % model["n_heads"]:
            problems.append(f"config key 'models.{name}.n_heads': d={model['d']} is not divisible by "
                            f"n_heads={model['n_heads']}; allowed: a divisor of d")
        if model["kind"] == "vit" and 16 % model["patch"]:
            problems.append(f"config key 'models.{name}.patch': the 16x16 digits image is not divisible into "
                            f"{model['patch']}x{model['patch']} patches; allowed 1, 2, 4, 8, 16")
    for name, run in data["runs"].items():
        key = f"runs.{name}"
        ds, model = data["datasets"][run["dataset"]], data["models"][run["model"]]
        shape = dataset_shape(ds)
        images = shape["tokens"] is None
        if images != (model["kind"] == "vit"):
            problems.append(f"config key '{key}.model': model '{run['model']}' (kind {model['kind']}) cannot read "
                            f"dataset '{run['dataset']}' (task {ds['task']}); allowed: kind vit for eureka_digits, "
                            f"circuit or transformer for token tasks")
            continue
        vocab = model["vocab"] if model["vocab"] is not None else shape["tokens"]
        if not images and vocab < shape["tokens"]:
            problems.append(f"config key 'models.{run['model']}.vocab': vocab={vocab} is smaller than the "
                            f"{shape['tokens']} token values of dataset '{run['dataset']}' used by run '{name}'; "
                            f"allowed vocab >= {shape['tokens']}")
        if run["n_probe"] > shape["n_test"]:
            problems.append(f"config key '{key}.n_probe': {run['n_probe']} probe sequences but dataset "
                            f"'{run['dataset']}' has {shape['n_test']} test examples; allowed n_probe <= that")
        bs = run["batch_size"]
        if bs != "full" and bs > shape["n_train"]:
            problems.append(f"config key '{key}.batch_size': {bs} exceeds the {shape['n_train']} training examples "
                            f"of dataset '{run['dataset']}'; allowed batch_size <= that or 'full'")
        parent = run["init_from"]
        if parent is not None:
            prun = data["runs"][parent]
            pmodel, pds = data["models"][prun["model"]], data["datasets"][prun["dataset"]]
            pshape = dataset_shape(pds)
            pvocab = pmodel["vocab"] if pmodel["vocab"] is not None else pshape["tokens"]
            arch = lambda m, v, s: (m["kind"], m["d"], m["mlp_ratio"], m["tied_unembed"], m["n_heads"],  # noqa: E731
                                    m["depth"], m["patch"], v, s["T"])
            if arch(pmodel, pvocab, pshape) != arch(model, vocab, shape):
                problems.append(f"config key '{key}.init_from': run '{parent}' has a different architecture "
                                f"(kind, d, mlp_ratio, tied_unembed, n_heads, depth, patch, vocab, T) = "
                                f"{arch(pmodel, pvocab, pshape)} vs {arch(model, vocab, shape)}; a finetune must "
                                f"keep the parent's shapes")
            missing = sorted(set(_seed_list(run["seeds"])) - set(_seed_list(prun["seeds"])))
            if missing:
                problems.append(f"config key '{key}.seeds': seeds {missing} are not trained by init_from run "
                                f"'{parent}' (seed i starts from seed i); allowed: a subset of its seeds")
    problems.extend(_check_analyses_and_figures(data))
    if problems:
        raise ConfigError("invalid config:\n  - " + "\n  - ".join(problems))


def _run_refs(section: str, name: str, params: dict) -> list[tuple[str, str]]:
    """(key path, run name) of every run an analysis or figure entry refers to."""
    key = f"{section}.{name}"
    refs = [(f"{key}.arms.{lbl}", r) for lbl, r in params.get("arms", {}).items()]
    refs += [(f"{key}.runs", r) for r in params.get("runs", [])]
    refs += [(f"{key}.{k}", params[k]) for k in ("a", "b", "pretrain", "finetune") if k in params]
    return refs


def _check_analyses_and_figures(data: dict) -> list[str]:
    problems = []
    runs, analyses, figures = data["runs"], data["analyses"], data["figures"]
    entries = [("analyses.interpolation", n, p) for n, p in analyses["interpolation"].items()]
    entries += [("analyses.param_embed", n, p) for n, p in analyses["param_embed"].items()]
    entries += [("analyses.eureka", n, p) for n, p in analyses["eureka"].items()]
    entries += [("analyses", "probes", analyses["probes"])]
    entries += [("figures", n, p) for n, p in figures.items()]
    for section, name, params in entries:
        for key, run in _run_refs(section, name, params):
            if run not in runs:
                problems.append(f"config key '{key}': {run!r} is not a run; defined runs: {', '.join(runs)}")
    if problems:
        return problems
    for name, ip in analyses["interpolation"].items():
        key = f"analyses.interpolation.{name}"
        ra, rb = runs[ip["a"]], runs[ip["b"]]
        if ip["dataset"] is not None and ip["dataset"] not in data["datasets"]:
            problems.append(f"config key '{key}.dataset': {ip['dataset']!r} is not a dataset")
        if ra["model"] != rb["model"] or _seed_list(ra["seeds"]) != _seed_list(rb["seeds"]):
            problems.append(f"config key '{key}': runs '{ip['a']}' and '{ip['b']}' must share the model and "
                            f"the seeds to be interpolated")
        if not ip["t_min"] < ip["t_max"]:
            problems.append(f"config key '{key}.t_min': must be smaller than t_max")
    for fig, ref_kind in (("fig6_interpolation", "interpolation"), ("fig7_param_tsne", "param_embed")):
        if fig in figures and figures[fig][ref_kind] not in analyses[ref_kind]:
            problems.append(f"config key 'figures.{fig}.{ref_kind}': {figures[fig][ref_kind]!r} is not an entry "
                            f"of analyses.{ref_kind}; defined: {', '.join(analyses[ref_kind]) or 'none'}")
    for fig, params in figures.items():
        for exp in params.get("experiments", []):
            if exp not in analyses["eureka"]:
                problems.append(f"config key 'figures.{fig}.experiments': {exp!r} is not an entry of "
                                f"analyses.eureka; defined: {', '.join(analyses['eureka']) or 'none'}")
            elif fig == "eureka_probes":
                for lbl, run in analyses["eureka"][exp]["arms"].items():
                    if run not in analyses["probes"]["runs"]:
                        problems.append(f"config key 'analyses.eureka.{exp}.arms.{lbl}': run {run!r} is drawn by "
                                        f"eureka_probes but not probed; add it to analyses.probes.runs")
    if "fig4_embeddings" in figures:
        for k in ("pretrain", "finetune"):
            run = runs[figures["fig4_embeddings"][k]]
            if data["models"][run["model"]]["d"] != 2 or run["n_embed"] < 2:
                problems.append(f"config key 'figures.fig4_embeddings.{k}': run "
                                f"'{figures['fig4_embeddings'][k]}' must use a d=2 model and record "
                                f"z_A (n_embed >= 2) to be drawn in the plane")
    return problems


def _seed_list(seeds) -> tuple[int, ...]:
    return tuple(range(seeds)) if isinstance(seeds, int) else tuple(seeds)


def load_config(raw: Mapping[str, Any]) -> Config:
    """Validate a raw config mapping and return the frozen :class:`Config` (raises ConfigError)."""
    data = validate_raw(raw)
    _check_references(data)
    _check_semantics(data)
    datasets = {n: DatasetConfig(name=n, **d) for n, d in data["datasets"].items()}
    models = {n: ModelConfig(name=n, **m) for n, m in data["models"].items()}
    runs = {}
    for n, r in data["runs"].items():
        opt = dict(r["optimizer"], betas=tuple(r["optimizer"]["betas"]))
        runs[n] = RunConfig(
            name=n, dataset=r["dataset"], model=r["model"], epochs=r["epochs"],
            seeds=_seed_list(r["seeds"]), batch_size=r["batch_size"], init_from=r["init_from"],
            optimizer=OptimizerConfig(**opt), attention=AttentionConfig(**r["attention"]),
            n_probe=r["n_probe"], n_stats=r["n_stats"], n_embed=r["n_embed"],
            record_attention=ScheduleConfig(**r["record_attention"]),
            record_weights=ScheduleConfig(**r["record_weights"]), log_every=r["log_every"],
            checkpoint_every=r["checkpoint_every"],
        )
    figure_types = {"fig2_attention_graph": Fig2Config, "fig3_attention_heatmap": Fig3Config,
                    "fig4_embeddings": Fig4Config, "fig5_accuracy": Fig5Config,
                    "fig6_interpolation": Fig6Config, "fig7_param_tsne": Fig7Config,
                    **{name: EurekaFigureConfig for name in EUREKA_FIGURES}}
    figures = {name: figure_types[name](**_frozen(params)) for name, params in data["figures"].items()}
    an = data["analyses"]
    interpolation = {n: InterpolationConfig(name=n, **dict(p, dataset=p["dataset"] or runs[p["b"]].dataset))
                     for n, p in an["interpolation"].items()}
    param_embed = {n: ParamEmbedConfig(name=n, **_frozen(p)) for n, p in an["param_embed"].items()}
    eureka = {n: EurekaConfig(name=n, **_frozen(p)) for n, p in an["eureka"].items()}
    return Config(device=data["device"], datasets=datasets, models=models, runs=runs, figures=figures,
                  interpolation=interpolation, probes=ProbesConfig(**_frozen(an["probes"])),
                  param_embed=param_embed, eureka=eureka, raw=data)


def _frozen(params: dict) -> dict:
    """Lists become tuples and mappings (label -> run) tuples of pairs, for frozen dataclasses."""
    return {k: tuple(v.items()) if isinstance(v, dict) else tuple(v) if isinstance(v, list) else v
            for k, v in params.items()}


def load_config_file(path: str | Path) -> Config:
    """Read a YAML config file and validate it."""
    path = Path(path)
    try:
        with open(path) as fh:
            raw = yaml.safe_load(fh)
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from exc
    return load_config(raw or {})
