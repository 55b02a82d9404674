"""The config's JSON schema, assembled from ``workflow/schemas/config.schema.yaml`` (device, runs)
and the plug-ins' ``CONFIG`` fragments, and validation with defaults filled and errors that name the
config key path and what is allowed."""
from __future__ import annotations

import contextlib
import copy
import functools
import json
from importlib import metadata
from pathlib import Path
from typing import Any, Mapping

import yaml

from . import registry, remembered
from .errors import ConfigError, fail

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "config.schema.yaml"



def _entry_schema(kind: str, key: str, description: str, common: dict, required: tuple = ()) -> dict:
    """Schema of a dataset (key 'task') or model (key 'kind') entry: the plug-in named by ``key``
    decides which other keys are allowed; ``required`` common keys are required unless the plug-in's
    fragment declares them itself (e.g. a model kind without an embedding width)."""
    plugs = registry.plugins(kind)
    props = {key: {"description": description, "type": "string", "enum": list(plugs)}, **common}
    branches = []
    for name, plug in plugs.items():
        frag = plug.schema
        branches.append({"if": {"properties": {key: {"const": name}}, "required": [key]},
                         "then": {"properties": {**props, **frag.get("properties", {})},
                                  "required": [k for k in required if k not in frag.get("properties", {})]
                                  + list(frag.get("required", [])), "additionalProperties": False,
                                  "x-plugin": f"{key} {name}"}})
    return {"type": "object", "required": [key] if key == "task" else [], "properties": props, "allOf": branches}


@functools.lru_cache(maxsize=1)
def schema() -> dict:
    """The config's JSON schema. Assembling it reads and checks every plug-in's declaration (about 1 s, in every
    ``snakemake`` start): a schema assembled before from the same sources is read back instead, remembered under
    the digest of ``pipeline_lib``'s source, the base schema and the versions of PyYAML and jsonschema
    (:mod:`.remembered`)."""
    try:
        key = remembered.code_key(SCHEMA_PATH.read_bytes(), yaml.__version__.encode(),
                                  metadata.version("jsonschema").encode())
    except (OSError, metadata.PackageNotFoundError):  # no checkout around the package (_assembled says so)
        key = None
    text = remembered.recall("config-schema", key)
    if text is not None:
        with contextlib.suppress(ValueError):  # a damaged file: assembled anew (and written over)
            return json.loads(text)
    assembled = _assembled()
    remembered.keep("config-schema", key, json.dumps(assembled))
    return assembled


def _assembled() -> dict:
    registry.check_rule_names()
    if not SCHEMA_PATH.exists():  # e.g. `pip install .`: the package copied away from its checkout
        raise ConfigError(f"pipeline_lib at {Path(__file__).resolve().parents[1]} has no checkout around it (the "
                          f"config schema {SCHEMA_PATH} is missing): it was installed without the workflow, as "
                          "`pip install .` does; install it from the checkout you run with `pip install -e .`")
    with open(SCHEMA_PATH) as fh:
        base = yaml.safe_load(fh)
    base["$defs"]["dataset"] = _entry_schema(
        "task", "task", "Generator: a task family of pipeline_lib/tasks.",
        {"seed": {"description": "Seed of the generator.", "type": "integer", "minimum": 0, "default": 0}})
    base["$defs"]["model"] = _entry_schema(
        "model", "kind", "Architecture: a model kind of pipeline_lib/models.",
        {"d": {"description": "Embedding width (d_model).", "type": "integer", "minimum": 1}}, required=("d",))
    base["$defs"]["model"]["properties"]["kind"]["default"] = "circuit"
    analyses = base["properties"]["analyses"]["properties"]
    for name, plug in registry.plugins("analysis").items():
        block = {"type": "object", "additionalProperties": False, **plug.schema}
        if plug.get("PER_RUN"):
            analyses[name] = {**block, "default": {}}
        else:
            analyses[name] = {"type": "object", "description": plug.schema.get("description", ""), "default": {},
                              "propertyNames": {"pattern": "^[A-Za-z0-9_]+$"}, "additionalProperties": block}
    figures = base["properties"]["figures"]["properties"]
    for name, plug in registry.plugins("figure").items():
        figures[name] = {"type": "object", "additionalProperties": False, **plug.schema}
    _add_optimizers(base["$defs"]["run"]["properties"]["optimizer"])
    return base


def _add_optimizers(opt: dict) -> None:
    """Optimizer plug-ins: their names join ``optimizer.name`` and their keys the block's, each key
    allowed only with its optimizer (``config_checks``). The keys carry no defaults here (the
    plug-in's ``Params`` holds them), so a new optimizer leaves every other run's config slice as it was."""
    for name, plug in registry.plugins("optimizer").items():
        opt["properties"]["name"]["enum"].append(name)
        opt["properties"]["name"]["description"] += f", {name}"
        for key, sub in plug.schema.get("properties", {}).items():
            opt["properties"].setdefault(key, {k: v for k, v in sub.items() if k != "default"})
        if plug.schema.get("required"):
            opt.setdefault("allOf", []).append({"if": {"properties": {"name": {"const": name}}, "required": ["name"]},
                                                "then": {"required": list(plug.schema["required"])}})


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
        where += f" ({schema['x-plugin']})" if "x-plugin" in schema else ""
        keys = ", ".join(f"'{_key_path([*error.absolute_path, e])}'" for e in extra)
        return f"unknown config key {keys}; allowed keys {where}: {', '.join(allowed)}"
    if error.validator == "required":
        return f"config key '{path}' is missing a required key: {error.message}"
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


def _read_scalar(text: str):
    """A string as Snakemake reads a top-level ``--config`` value (int, float, else YAML), kept as
    the string unless it reads as a finite number, a boolean, null, a list or a mapping."""
    import math

    for parse in (int, float):
        try:
            value = parse(text)
            return value if math.isfinite(value) else text
        except ValueError:
            pass
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    return value if value is None or isinstance(value, (bool, int, float, list, dict)) else text


def _coerce_strings(validator, data: dict, rounds: int = 5) -> list:
    """Snakemake reads nested ``--config`` values as strings (``runs={r: {epochs: 5}}`` gives
    ``'5'``): where the schema rejects such a string, use its reading (``_read_scalar``) instead; a
    reading that is still invalid is reported as such (naming the key path). A quoted number in a
    YAML file is read the same way. Returns the remaining validation errors."""
    for _ in range(rounds):
        errors = list(validator.iter_errors(data))
        changed = False
        for err in errors:
            for e in [err, *err.context]:
                if not isinstance(e.instance, str) or e.validator not in ("type", "oneOf", "anyOf", "enum"):
                    continue
                value = _read_scalar(e.instance)
                if isinstance(value, str) or not list(e.absolute_path):
                    continue
                *parent_keys, last = list(e.absolute_path)
                parent = data
                for k in parent_keys:
                    parent = parent[k]
                if parent[last] == e.instance:
                    parent[last] = value
                    changed = True
        if not changed:
            return errors
    return list(validator.iter_errors(data))


def validate_raw(raw: Mapping[str, Any]) -> dict:
    """Validate against the assembled JSON schema and return a copy with defaults filled."""
    if not isinstance(raw, Mapping):
        raise ConfigError(f"the config must be a mapping of keys to values, got {type(raw).__name__}")
    data = copy.deepcopy(dict(raw))
    validator = _validator_class()(schema())
    errors = _coerce_strings(validator, data)
    errors = sorted(errors, key=lambda e: (len(e.absolute_path), str(e.absolute_path)))
    msgs = []
    for err in errors:  # the deepest error under a oneOf/allOf names the real problem
        leaf = max(err.context, key=lambda e: len(e.absolute_path)) if err.context else None
        msgs.append(_describe(leaf if leaf is not None and leaf.validator != "type" else err))
    fail(msgs)
    return data
