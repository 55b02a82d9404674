"""Every registered plug-in passes the contract of its kind: a new task, model, analysis or figure
gets these tests for free (scikit-learn's check_estimator, STYLE.md)."""
import dataclasses
import inspect

import numpy as np
import pytest
import torch
import yaml

from conftest import SMOKE, load_yaml
from pipeline_lib.models import build_run_model, param_dims, run_inputs
from pipeline_lib.models.protocol import SeedModel
from pipeline_lib.plumbing import registry
from pipeline_lib.plumbing.config import evaluate, load_config, task_shape
from pipeline_lib.plumbing.config_checks import model_records

COMMON = {"task": {"seed"}, "model": {"d"}, "analysis": set(), "figure": set(), "optimizer": set()}  # keys the machinery adds
ALL = [(kind, name) for kind in registry.PACKAGES for name in registry.plugins(kind)]


@pytest.fixture(scope="module")
def smoke():
    return load_config(load_yaml(SMOKE))


def test_the_smoke_config_exercises_every_plugin(smoke):
    """So the smoke DAG in CI runs every plug-in end to end."""
    used = {"task": {e.plugin for e in smoke.datasets.values()}, "model": {e.plugin for e in smoke.models.values()},
            "analysis": set(smoke.raw["analyses"]), "figure": set(smoke.raw["figures"]),
            "optimizer": {r.optimizer.name for r in smoke.runs.values()}}
    for kind in registry.PACKAGES:
        assert used[kind] >= set(registry.plugins(kind)), f"{kind}s not in .test/config/config.yaml"


@pytest.mark.parametrize("kind,name", ALL, ids=[f"{k}:{n}" for k, n in ALL])
def test_declaration_and_params_mirror_the_config_schema(kind, name):
    plug, module = registry.plugin(kind, name), registry.load(kind, name)
    assert module.NAME == name
    for key, value in plug.declared.items():  # what the registry read without importing = what importing gives
        assert (yaml.safe_load(module.CONFIG) if key == "CONFIG" else getattr(module, key)) == value, key
    fields = {f.name: f for f in dataclasses.fields(module.Params)}
    props = plug.schema.get("properties", {})
    assert set(fields) == set(props) | COMMON[kind]
    for key, sub in props.items():
        assert "description" in sub, f"{name}.{key} has no description"
        default = fields[key].default
        if "default" in sub:
            expected = sub["default"]
            assert default == (tuple(expected) if isinstance(expected, list) else tuple(expected.items())
                               if isinstance(expected, dict) else expected), key  # config.to_params' conversion
        elif key in COMMON[kind]:  # a common key the plug-in redeclares to make it optional (scan_snap's d)
            assert key not in plug.schema.get("required", []), key
        elif kind in ("optimizer", "model", "task") and key not in plug.schema.get("required", []):
            # a key added to a kind carries no schema default (the config slices of runs that do not set it must
            # not change, or they would rerun): Params has it, and the description says it
            shown = (str(default).lower() if isinstance(default, bool) else f"{default:g}"
                     if isinstance(default, (int, float)) else str(default))
            assert default is not dataclasses.MISSING and f"default {shown}" in sub["description"], key
        else:
            assert default is dataclasses.MISSING and key in plug.schema.get("required", []), key


@pytest.mark.parametrize("kind", ["analysis", "figure"])
def test_compute_and_build_signatures(kind):
    for name in registry.plugins(kind):
        fn = registry.load(kind, name).compute if kind == "analysis" else registry.load(kind, name).build
        expected = ["cfg", "name", "params", "paths", "threads"] if kind == "analysis" else ["cfg", "params", "paths", "outputs"]
        assert list(inspect.signature(fn).parameters) == expected, name


@pytest.mark.parametrize("dataset", load_yaml(SMOKE)["datasets"])
def test_task_generates_what_it_declares(smoke, dataset, monkeypatch):
    monkeypatch.chdir(SMOKE.parents[1])  # the test config's paths (e.g. the MNIST stand-ins) are relative to .test
    entry = smoke.datasets[dataset]
    plug, module = registry.plugin("task", entry.plugin), registry.load("task", entry.plugin)
    ds = module.generate(smoke.params("task", dataset))
    shape = task_shape(smoke.raw["datasets"][dataset])
    split = ds.split.values
    # a label per example, or per position for next-token tasks (-1: no label there)
    assert ds.x.dims == ("sample", "position") and ds.y.dims in (("sample",), ("sample", "position"))
    # an online task (fresh samples every step) stores only its fixed test set
    # a dataset with draws holds n_train rows per draw
    n_train = 0 if plug.get("ONLINE") else shape["n_train"] * max(smoke.raw["datasets"][dataset].get("draws", 0), 1)
    assert (split == "train").sum() == n_train and (split == "test").sum() == shape["n_test"]
    labels = ds.y.values if ds.y.ndim == 1 else ds.y.values[ds.y.values != -1]
    assert ds.sizes["position"] == shape["T"] and 0 <= labels.min() and labels.max() < shape["classes"]
    if shape["tokens"] is not None:
        assert 0 <= ds.x.min() and ds.x.max() < shape["tokens"]
    targets = module.probe_targets(ds, "train", 5)
    assert list(targets) == evaluate(plug.get("PROBE_TARGETS", "[]"), smoke.raw["datasets"][dataset], "test")
    assert all(len(v) == 5 for v in targets.values())
    assert set(plug.get("MODELS", [])) <= set(registry.plugins("model"))


def _runs_per_model(raw):
    first = {}
    for run, rc in raw["runs"].items():
        first.setdefault(rc["model"], run)
    return list(first.values())


@pytest.mark.parametrize("run", _runs_per_model(load_yaml(SMOKE)))
def test_model_kind_follows_the_protocol(smoke, run, monkeypatch):
    """Declared capabilities, parameter dims, sites, and S batched seeds = S models of one seed."""
    monkeypatch.chdir(SMOKE.parents[1])  # the test config's paths are relative to .test
    spec = smoke.run_spec(run)
    plug = registry.plugin("model", spec.model_kind)
    data = registry.load("task", spec.task).generate(smoke.params("task", spec.dataset))
    x = run_inputs(spec, data.x.values[:6])
    model = build_run_model(spec, 2)
    model.init_seeds([0, 3])
    assert isinstance(model, SeedModel) and model.S == 2
    records = model_records(dict(spec.model, kind=spec.model_kind))  # a list, or an expression of the entry
    assert model.records_gradients == ("qkv_gradients" in records)
    assert model.records_attention_histogram == ("attention_hist" in records)
    assert (model.embed_site is not None) == ("z_A" in records)
    for n in model.param_names():
        assert len(param_dims(spec)[n]) == getattr(model, n).dim() - 1, n
    with torch.no_grad():
        logits = model(x)
        internals = model.internals(x)
        assert logits.shape[:2] == (2, 6) and logits.shape[-1] >= spec.shape["classes"]
        for site in evaluate(plug.get("SITES", "[]"), spec.model, "test"):
            assert model.site(internals, site).shape[:2] == (2, 6), site
        att = model.attention(x)
        # a model declares whether it records attention; one that does not returns None
        assert (att is not None) == ("attention" in records)
        if att is not None:
            torch.testing.assert_close(att.sum(-1), torch.ones(2, 6))
        for slot, seed in enumerate([0, 3]):
            alone = build_run_model(spec, 1)
            alone.init_seeds([seed])
            torch.testing.assert_close(alone(x)[0], logits[slot], rtol=1e-5, atol=1e-5)
            if att is not None:
                assert np.allclose(alone.attention(x)[0].numpy(), att[slot].numpy(), atol=1e-6)


BROKEN = [  # (module source, words the error must contain)
    ('NAME = "t"\nCONFIG = "properties: {a: {type: string, x-ref: interpolation}}"\nSHAPE = {}', ["x-ref", "analysis/"]),
    ('NAME = "t"\nCONFIG = "- a list"\nSHAPE = {}', ["CONFIG must be a YAML mapping"]),
    ('NAME = "t"\nCONFIG = "properties: {a: {type: strin}}"\nSHAPE = {}', ["not a valid JSON schema"]),
    ('NAME = "t"\nCONFIG = ""\nSHAPE = {"n_train": "1"}', ["SHAPE must give exactly"]),
    ('NAME = "t"\nCONFIG = ""\nSHAPE = {}\nMODELS = ["circuit"] + ["vit"]', ["MODELS must be a literal"]),
    ('NAME = "t"\nCONFIG = ""\nSHAPE = {}\nCHECKS = [["k", "k < 2"]]', ["CHECKS must be [key, expression, message]"]),
    ('NAME = "t"\nCONFIG = "properties: {a: {type: string, x-ref: run, x-reads: [weigths]}}"\nSHAPE = {}',
     ["x-reads 'weigths'"]),
    ("NAME = 't'\ndef broken(:\n", ["cannot be parsed"]),
]


@pytest.mark.parametrize("source,words", BROKEN, ids=[w[0] for _, w in BROKEN])
def test_a_malformed_plugin_declaration_names_its_file(tmp_path, source, words):
    path = tmp_path / "mytask.py"
    path.write_text(source)
    with pytest.raises(registry.PluginError) as err:
        declared = registry._declaration(path, "task")
        declared["CONFIG"] = yaml.safe_load(declared["CONFIG"]) or {}
        registry._check_declaration("task", path, declared)
    assert str(path) in str(err.value) and all(w in str(err.value) for w in words), str(err.value)


def _rst_messages(categories) -> list[str]:
    """docutils' system messages for the hyperlink targets Snakemake's report appends to its front page and to
    every caption (``.. _<category>: <link>``, one per category), rendered as the report renders them."""
    from docutils.core import publish_doctree
    from docutils.nodes import system_message

    links = "Text.\n\n" + "".join(f".. _{c}: javascript:app.showCategory('{i}')\n" for i, c in enumerate(categories))
    tree = publish_doctree(links, settings_overrides={"report_level": 5, "halt_level": 5})
    return [m.astext() for m in tree.findall(system_message)]


def test_report_categories_are_distinct_rst_targets():
    figures = list(registry.plugins("figure"))
    raw = {registry.plugin("figure", f).get("PAPER", registry.DEFAULT_CATEGORY) for f in figures}
    assert any(": " in r for r in raw)  # else this test checks nothing: the papers' names carry colons
    assert _rst_messages(sorted(raw)), "the raw names should collide as targets (the defect this guards against)"
    cats = {registry.report_category(f) for f in figures}
    assert len(cats) == len(raw)  # one category per paper, as before
    assert _rst_messages(sorted(cats)) == []
    registry.check_report_categories(figures)


def test_report_categories_that_rst_would_merge_are_refused(monkeypatch):
    fake = {"a": {"PAPER": "Tian: One"}, "b": {"PAPER": "tian —  one"}}
    monkeypatch.setattr(registry, "plugin", lambda kind, name: registry.Plugin(kind, name, "m", registry.PACKAGE_DIR,
                                                                                fake[name]))
    with pytest.raises(registry.PluginError, match="one name to the report"):
        registry.check_report_categories(["a", "b"])


def test_a_plugin_looked_up_alone_is_the_one_the_whole_package_declares():
    """A job reads only the module named after its plug-in; where that module declares another name (or none is
    named so), the whole package is read: either way the same plug-in, declarations included."""
    for kind in registry.PACKAGES:
        for name, plug in registry.plugins(kind).items():
            alone = registry.plugin(kind, name)
            assert alone == plug and alone.declared == plug.declared, (kind, name)
    assert registry.plugin("task", "sparse_modular_addition").path.name != "sparse_modular_addition.py"
