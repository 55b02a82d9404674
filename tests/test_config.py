import time

import pytest

from conftest import REPO, SMOKE, load_yaml
from pipeline_lib.plumbing import registry
from pipeline_lib.plumbing.config import ConfigError, load_config, load_config_file
from pipeline_lib.plumbing.config_checks import model_records
from pipeline_lib.recording import recorded_epochs


def test_an_overlay_trains_the_defaults_runs_of_the_same_name_as_the_default_does():
    """Fig. 4's settings overlay repeats the default's main pair and pretrain_p2_d2 (standalone, so it must define
    them): the same recipe, dataset and model, so that both configs train the same runs."""
    default = load_config_file(REPO / "config" / "config.yaml")
    for path in ("circuits_fig4_settings.yaml", "circuits_paper_code.yaml"):
        overlay = load_config_file(REPO / "config" / path)
        shared = set(overlay.runs) & set(default.runs)
        assert path != "circuits_fig4_settings.yaml" or {"pretrain_p2_d2_pal", "curriculum_p2_p4_d2_pal",
                                                         "pretrain_p2_d2"} <= shared
        for run in shared:
            assert overlay.run_slice(run) == default.run_slice(run), (path, run)


def test_default_and_smoke_configs_are_valid():
    cfg = load_config_file(REPO / "config" / "config.yaml")
    circuit = {"scratch_p4", "pretrain_p2", "curriculum_p2_p4", "pretrain_p2_d2_pal", "curriculum_p2_p4_d2_pal"}
    assert circuit <= set(cfg.runs)
    # every figure module is drawn by the default config or by a shipped overlay (the registry's inventory)
    drawn = set(cfg.figures) | {f for p in (REPO / "config").glob("*.yaml") for f in (load_yaml(p) or {}).get("figures", {})}
    assert drawn == set(registry.plugins("figure")) and len(cfg.figures) > 20
    # the attention entropy is measured on every run of the default config whose model has attention
    with_attention = {r for r in cfg.runs if "attention" in model_records(cfg.raw["models"][cfg.runs[r].model])}
    assert set(cfg.analyses["attention_sparsity"].runs) == with_attention
    without = {cfg.models[cfg.runs[r].model].plugin for r in set(cfg.runs) - with_attention}
    # CoGO/GaLore's MLP; the decoder records no fixed-probe attention; JoMA's exp and linear b are no distributions
    assert without == {"quadratic_mlp", "decoder", "joma"}
    assert {cfg.raw["models"][cfg.runs[r].model]["attention"] for r in set(cfg.runs) - with_attention
            if cfg.models[cfg.runs[r].model].plugin == "joma"} == {"exp", "linear"}
    # the five attention variants, 10 seeds each: NormSoftmax is the paper's Eq. 2 on both tasks (the reference
    # code's variance form is a diagnostic experiment of its own)
    five = lambda norm: {("softmax", "sqrt_d"), ("softmax", 1 / 3), ("softmax", "HT"), (norm, "sqrt_d"), (norm, "HT")}  # noqa: E731
    table1 = load_config_file(REPO / "config" / "eureka_table1.yaml")  # standalone: Table 1 in the calibrated regime
    for c, exp, norm in ((cfg, "reasoning", "normsoftmax"), (table1, "digits", "normsoftmax")):
        arms = [c.runs[r] for _, r in c.analyses["eureka"][exp].arms]
        assert {(a.attention.variant, a.attention.tau if a.attention.schedule == "none" else "HT")
                for a in arms} >= five(norm), exp
        assert all(len(a.seeds) >= 10 and a.optimizer.schedule == "cosine" and a.label_smoothing == 0.1
                   for a in arms), exp
    # the reasoning comparison changes one thing: every arm of an experiment shares its learning rate and
    # schedule (the reference's loop: no cool-down epochs), and the grid has two rates
    for c, grid in ((cfg, ("reasoning", "reasoning_lr5e4")), (table1, ("digits", "digits_lr1e4", "digits_nopos"))):
        rates = set()
        for exp in grid:
            arms = [c.runs[r] for _, r in c.analyses["eureka"][exp].arms]
            assert len({(a.optimizer.lr, a.epochs, a.optimizer.cooldown_epochs, a.batch_size) for a in arms}) == 1, exp
            assert all(a.optimizer.cooldown_epochs == 0 for a in arms), exp
            rates.add(arms[0].optimizer.lr)
        assert len(rates) == 2, grid
    assert cfg.analyses["eureka"]["reasoning"].threshold == 0.7
    # the paper-scale config names its reasoning experiments as the default does, each at the default's rate
    paper_eureka = load_config_file(REPO / "config" / "eureka_paper.yaml")
    for exp in ("reasoning", "reasoning_lr5e4"):
        rate = {paper_eureka.runs[r].optimizer.lr for _, r in paper_eureka.analyses["eureka"][exp].arms}
        assert rate == {cfg.runs[r].optimizer.lr for _, r in cfg.analyses["eureka"][exp].arms}, exp
    # the GPU overlay runs the default's comparison (same arms and grid, same recipe) at d = 64 for longer
    long = load_config_file(REPO / "config" / "eureka_long.yaml")
    for exp in ("reasoning", "reasoning_lr5e4"):
        mine, default = (dict(c.analyses["eureka"][exp].arms) for c in (long, cfg))
        for label, run in mine.items():
            a, b = long.runs[run], cfg.runs[default[label]]
            assert (a.attention, a.optimizer, a.batch_size, a.label_smoothing) == (
                b.attention, b.optimizer, b.batch_size, b.label_smoothing), (exp, label)
            assert a.epochs == 3000 and long.models[a.model].params["d"] == 64
    # the shortest-path transformer at the paper's size: graphs of 3-10 nodes, d = 512, 2 layers, 1-8 heads
    paper = load_config_file(REPO / "config" / "shortest_path_paper.yaml")
    assert {paper.run_spec(r).model["n_heads"] for r in paper.runs} == {1, 2, 4, 8}
    assert all(paper.run_spec(r).model["d"] == 512 and paper.run_spec(r).model["depth"] == 2 for r in paper.runs)
    assert paper.raw["datasets"]["shortest_path_n10"]["n_max"] == 10
    assert cfg.runs["scratch_p4"].epochs == 10000 and cfg.runs["pretrain_p2"].epochs == 3000
    assert cfg.runs["curriculum_p2_p4"].init_from == "pretrain_p2"
    assert cfg.runs["curriculum_p2_p4"].seeds == tuple(range(10))
    assert cfg.lineage("curriculum_p2_p4") == ["pretrain_p2", "curriculum_p2_p4"]
    assert cfg.start_epoch("curriculum_p2_p4") == 3000
    load_config_file(SMOKE)


def test_defaults_are_filled(smoke_raw):
    cfg = load_config(smoke_raw)
    rc = cfg.runs["scratch_p4"]
    assert rc.batch_size == "full" and rc.optimizer.name == "adam" and rc.optimizer.betas == (0.9, 0.999)
    assert rc.attention.tau == "sqrt_d" and rc.attention.variant == "softmax" and rc.attention.schedule == "none"
    assert cfg.models["circuit_d32"].params["mlp_ratio"] == 4 and cfg.datasets["reasoning"].params["train_fraction"] == 0.3
    assert cfg.raw["runs"]["scratch_p4"]["init_from"] is None


def _set(raw, path, value):
    *head, last = path.split(".")
    node = raw
    for k in head:
        node = node[k]
    if value is _DELETE:
        del node[last]
    else:
        node[last] = value


_DELETE = object()

# (what is wrong, key path to change, new value, words the message must contain)
MALFORMED = [
    ("unknown top-level key", "colour", "red", ["colour", "allowed keys"]),
    ("unknown run key", "runs.scratch_p4.epoch", 5, ["runs.scratch_p4.epoch", "epochs"]),
    ("wrong type", "runs.scratch_p4.epochs", "ten", ["runs.scratch_p4.epochs", "integer"]),
    ("negative epochs", "runs.scratch_p4.epochs", -5, ["runs.scratch_p4.epochs", "minimum"]),
    ("empty seed list", "runs.scratch_p4.seeds", [], ["runs.scratch_p4.seeds"]),
    ("non-numeric lr", "runs.scratch_p4.optimizer.lr", "fast", ["runs.scratch_p4.optimizer.lr", "number"]),
    ("unknown optimizer", "runs.scratch_p4.optimizer.name", "lion", ["runs.scratch_p4.optimizer.name", "adam"]),
    ("bad batch size", "runs.scratch_p4.batch_size", "half", ["runs.scratch_p4.batch_size", "full"]),
    ("missing required key", "runs.scratch_p4.model", _DELETE, ["runs.scratch_p4", "model"]),
    ("init_from a missing run", "runs.curriculum_p2_p4.init_from", "nope", ["runs.curriculum_p2_p4.init_from", "nope"]),
    ("init_from cycle", "runs.pretrain_p2.init_from", "curriculum_p2_p4", ["init_from", "cycle"]),
    ("vocabulary smaller than p", "models.circuit_d32.vocab", 2, ["models.circuit_d32.vocab", "allowed vocab >= 4"]),
    ("k > T", "datasets.sma_p4_T12.k", 9, ["datasets.sma_p4_T12.k", "k <= T"]),
    ("unknown device", "device", "tpu", ["device", "cuda"]),
    ("figure naming a missing run", "figures.fig5_accuracy.arms.scratch", "nope", ["figures.fig5_accuracy.arms.scratch", "nope"]),
    ("dataset too small for its test split", "datasets.sma_p2_T12.n_test", 100, ["datasets.sma_p2_T12.n_test", "64"]),
    ("figure naming a missing analysis", "figures.fig6_interpolation.interpolation", "nope",
     ["figures.fig6_interpolation.interpolation", "nope", "scratch_vs_curriculum"]),
    ("fig4 on a model that is not d=2", "figures.fig4_embeddings.pretrain", "pretrain_p2",
     ["figures.fig4_embeddings.pretrain", "d=2"]),
    ("probe of a missing run", "analyses.probes.runs", ["nope"], ["analyses.probes.runs", "nope"]),
    ("dataset referenced but missing", "runs.scratch_p4.dataset", "nope", ["runs.scratch_p4.dataset", "nope"]),
    ("tau not positive", "runs.r_normsoftmax.attention.tau", 0, ["runs.r_normsoftmax.attention.tau"]),
    ("unknown attention variant", "runs.r_ht.attention.variant", "sparsemax",
     ["runs.r_ht.attention.variant", "normsoftmax_var"]),
    ("a vit on a token task", "runs.r_softmax.model", "digits_vit", ["runs.r_softmax.model", "eureka_digits"]),
    ("heads do not divide the width", "models.reasoning_tf.n_heads", 3, ["models.reasoning_tf.n_heads", "divisible"]),
    ("a key of another task", "datasets.reasoning.p", 3, ["datasets.reasoning.p", "task eureka_reasoning", "n, seed, task, train_fraction"]),
    ("a circuit model on the reasoning task", "runs.r_softmax.model", "circuit_d32",
     ["runs.r_softmax.model", "kind circuit", "eureka_reasoning", "transformer"]),
    ("a key of another model kind", "models.circuit_d32.n_heads", 2, ["models.circuit_d32.n_heads", "kind circuit"]),
    ("a probe target the task does not offer", "analyses.probes.targets", ["token_9"],
     ["analyses.probes.targets", "token_9", "zeros_k"]),
    ("a probe site the model does not offer", "analyses.probes.sites", ["z_A", "resid"],
     ["analyses.probes.sites", "resid", "attn_out_0"]),
    ("a figure on runs of the wrong task", "figures.fig3_attention_heatmap.arms.scratch", "r_softmax",
     ["figures.fig3_attention_heatmap.arms.scratch", "sparse_modular_addition"]),
    ("a gradient figure on circuit runs", "analyses.eureka.digits.arms.softmax", "scratch_p4",
     ["analyses.eureka.digits.arms.softmax", "qkv_gradients"]),
    ("a figure seed no run trained", "figures.fig4_embeddings.seed", 7, ["figures.fig4_embeddings.seed", "seed 7"]),
    ("a probe sequence that is not recorded", "figures.fig2_attention_graph.probe", 4,
     ["figures.fig2_attention_graph.probe", "n_probe"]),
    ("interpolation between different models", "analyses.interpolation.scratch_vs_curriculum.b", "pretrain_p2_d2",
     ["analyses.interpolation.scratch_vs_curriculum.b", "must share the model, and run b must train every seed of run a"]),
    ("digits without sizes", "datasets.digits.n_train", _DELETE, ["datasets.digits", "n_train"]),
    ("figure naming a missing experiment", "figures.eureka_table.experiments", ["nope"],
     ["figures.eureka_table.experiments", "nope", "reasoning"]),
    ("eureka arm naming a missing run", "analyses.eureka.reasoning.arms.HT", "nope",
     ["analyses.eureka.reasoning.arms.HT", "nope"]),
    ("eureka_probes of an unprobed run", "analyses.probes.runs", ["pretrain_p2"],
     ["analyses.eureka.reasoning.arms.Softmax", "analyses.probes.runs"]),
]


@pytest.mark.parametrize("what,path,value,words", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_config_is_rejected_naming_the_key(smoke_raw, what, path, value, words):
    _set(smoke_raw, path, value)
    t0 = time.perf_counter()
    with pytest.raises(ConfigError) as err:
        load_config(smoke_raw)
    assert time.perf_counter() - t0 < 2.0
    msg = str(err.value)
    for w in words:
        assert w in msg, f"{what}: {w!r} not in message:\n{msg}"


def test_a_run_with_more_seeds_than_its_datasets_draws_is_rejected_naming_both_keys(smoke_raw):
    smoke_raw["datasets"]["sma_draws"] = dict(smoke_raw["datasets"]["sma_p4_T12"], draws=2)
    smoke_raw["runs"]["on_draws"] = dict(smoke_raw["runs"]["scratch_p4"], dataset="sma_draws", seeds=2)
    load_config(smoke_raw)
    smoke_raw["runs"]["on_draws"]["seeds"] = [0, 1, 2]
    with pytest.raises(ConfigError, match=r"runs.on_draws.seeds': 3 seeds .* 'datasets.sma_draws.draws'"):
        load_config(smoke_raw)


def test_embed_inputs_must_be_offered_by_the_runs_task(smoke_raw):
    """A run records z_A for the test set or for an input set its task declares (EMBED_INPUTS)."""
    smoke_raw["runs"]["pretrain_p2_d2"]["embed_inputs"] = "first_k_patterns"
    load_config(smoke_raw)
    smoke_raw["runs"]["pretrain_p2_d2"]["embed_inputs"] = "all_patterns"
    with pytest.raises(ConfigError, match=r"runs.pretrain_p2_d2.embed_inputs': task sparse_modular_addition .* "
                                          r"offers \['test', 'first_k_patterns'\]; got 'all_patterns'"):
        load_config(smoke_raw)
    smoke_raw["runs"]["pretrain_p2_d2"]["embed_inputs"] = "test"
    smoke_raw["runs"]["r_softmax"]["embed_inputs"] = "first_k_patterns"
    with pytest.raises(ConfigError, match=r"runs.r_softmax.embed_inputs': task eureka_reasoning .* offers \['test'\]"):
        load_config(smoke_raw)


def test_interpolation_b_may_train_more_seeds_than_a_but_not_fewer(smoke_raw):
    """The same-initialisation control meets a's seeds in a run of more seeds (another data draw)."""
    entry = smoke_raw["analyses"]["interpolation"]["scratch_vs_curriculum"]
    smoke_raw["runs"]["more"] = dict(smoke_raw["runs"]["scratch_p4"], seeds=smoke_raw["runs"]["scratch_p4"]["seeds"] + 2)
    smoke_raw["analyses"]["interpolation"]["same_init"] = dict(entry, a="scratch_p4", b="more")
    load_config(smoke_raw)
    smoke_raw["analyses"]["interpolation"]["same_init"] = dict(entry, a="more", b="scratch_p4")
    with pytest.raises(ConfigError, match="run b must train every seed of run a"):
        load_config(smoke_raw)


def test_finetune_must_keep_parent_architecture(smoke_raw):
    smoke_raw["models"]["wide"] = {"d": 16, "vocab": 4}
    smoke_raw["runs"]["curriculum_p2_p4"]["model"] = "wide"
    with pytest.raises(ConfigError, match="runs.curriculum_p2_p4.init_from.*different architecture"):
        load_config(smoke_raw)


def test_finetune_seeds_must_exist_in_parent(smoke_raw):
    smoke_raw["runs"]["curriculum_p2_p4"]["seeds"] = [0, 7]
    with pytest.raises(ConfigError, match=r"runs.curriculum_p2_p4.seeds.*\[7\]"):
        load_config(smoke_raw)


def test_schedule_is_dense_early_sparse_late():
    cfg = load_config(load_yaml(REPO / "config" / "config.yaml"))
    epochs = recorded_epochs(cfg.runs["scratch_p4"].record_attention, 0, 10000)
    assert epochs[0] == 0 and epochs[-1] == 10000
    assert set(range(101)) <= set(epochs)
    assert len(epochs) < 250  # sparse later: far fewer than 10001
    gaps = [b - a for a, b in zip(epochs, epochs[1:])]
    assert max(gaps) <= 500
    shifted = recorded_epochs(cfg.runs["scratch_p4"].record_attention, 3000, 10000)
    assert shifted[0] == 3000 and shifted[-1] == 10000 and 3100 in shifted


def test_device_auto_is_resolved_before_the_params(smoke_raw, monkeypatch):
    import torch

    smoke_raw["device"] = "auto"
    cfg = load_config(smoke_raw)
    expected = "cuda" if torch.cuda.is_available() else "cpu"  # what torch itself says
    assert cfg.device == expected and cfg.run_slice("scratch_p4")["device"] == expected
    assert cfg.run_spec("scratch_p4").device == expected
    assert cfg.raw["device"] == expected
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    from pipeline_lib.plumbing.device import resolve_device_setting

    assert resolve_device_setting("auto") == "cpu" and resolve_device_setting("cuda") == "cuda"


@pytest.mark.parametrize("cuda, hip, available, expected", [
    ("None", "None", True, "cpu"),  # a CPU build: torch is not even asked
    ("'12.4'", "None", True, "cuda"), ("'12.4'", "None", False, "cpu"), ("None", "'6.2'", True, "cuda")])
def test_device_auto_reads_the_torch_build_and_asks_torch_only_for_a_gpu_build(
        tmp_path, monkeypatch, cuda, hip, available, expected):
    import importlib.util
    import sys
    import types

    from pipeline_lib.plumbing.device import resolve_device_setting

    pkg = tmp_path / "torch"
    pkg.mkdir()
    (pkg / "version.py").write_text(f"from typing import Optional\n__version__ = '9.9'\n"
                                    f"cuda: Optional[str] = {cuda}\nhip: Optional[str] = {hip}\n")
    (pkg / "__init__.py").write_text("")
    fake = types.ModuleType("torch")
    fake.__spec__ = importlib.util.spec_from_file_location("torch", pkg / "__init__.py",
                                                           submodule_search_locations=[str(pkg)])
    asked = []
    fake.cuda = types.SimpleNamespace(is_available=lambda: asked.append(1) or available)
    monkeypatch.setitem(sys.modules, "torch", fake)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert resolve_device_setting("auto") == expected
    assert bool(asked) == (cuda != "None" or hip != "None")


def test_strings_from_nested_config_overrides_are_read_as_numbers(smoke_raw):
    # snakemake --config 'runs={scratch_p4: {...}}' gives every nested scalar as a string
    run = smoke_raw["runs"]["scratch_p4"]
    run.update(epochs="7", seeds="[0, 1, 2]", optimizer={"lr": "1e-2", "betas": ["0.8", "0.99"]},
               attention={"tau": "0.5"})
    cfg = load_config(smoke_raw)
    rc = cfg.runs["scratch_p4"]
    assert (rc.epochs, rc.seeds, rc.optimizer.lr, rc.optimizer.betas, rc.attention.tau) == (
        7, (0, 1, 2), 0.01, (0.8, 0.99), 0.5)
    smoke_raw["runs"]["pretrain_p2"]["log_every"] = "often"
    with pytest.raises(ConfigError, match=r"runs\.pretrain_p2\.log_every.*'often' is not of type 'integer'"):
        load_config(smoke_raw)


def test_standalone_configs_are_found_and_results_folder_is_configurable(tmp_path, smoke_raw):
    from pipeline_lib.plumbing.config import standalone_files

    assert standalone_files([REPO / "config" / "eureka_paper.yaml"]) == [str(REPO / "config" / "eureka_paper.yaml")]
    assert standalone_files([REPO / "config" / "config.yaml", SMOKE]) == []
    assert load_config_file(REPO / "config" / "eureka_paper.yaml").paths.dataset("x") == "results/eureka_paper/datasets/x.h5"
    with pytest.raises(ConfigError, match="cannot read config file .*missing.yaml"):
        standalone_files([tmp_path / "missing.yaml"])
    smoke_raw["results"] = "has space"
    with pytest.raises(ConfigError, match="config key 'results'"):
        load_config(smoke_raw)


def test_cogo_paper_config_is_the_talks_sweep():
    """config/cogo_paper.yaml: d x wd x q, 5 seeds each, the talk's optimizer and length; the table
    reads every run and the Fourier analysis covers them."""
    cfg = load_config_file(REPO / "config" / "cogo_paper.yaml")
    grid = set()
    for rc in cfg.runs.values():
        assert rc.epochs == 10000 and len(rc.seeds) == 5 and rc.batch_size == "full"
        assert rc.optimizer.name == "adam" and rc.optimizer.lr == 1e-2
        grid.add((cfg.params("task", rc.dataset).d, cfg.params("model", rc.model).q, rc.optimizer.weight_decay))
    assert grid == {(d, q, wd) for d in (23, 71, 127) for q in (256, 512, 1024)
                    for wd in (1e-5, 5e-5, 1e-4, 2e-4, 5e-4)}
    assert set(cfg.analyses["fourier"].runs) == set(cfg.runs) == set(cfg.figures["cogo_table"].runs)
    talk = [r for r in cfg.runs if cfg.params("model", cfg.runs[r].model).q == 512
            and cfg.runs[r].optimizer.weight_decay == 5e-5]
    assert sorted(cfg.params("task", cfg.runs[r].dataset).d for r in talk) == [23, 71, 127]
    # the default config runs the talk's setting at d = 23 and one more odd d
    default = load_config_file(REPO / "config" / "config.yaml")
    ds = sorted(default.params("task", default.runs[r].dataset).d for r in default.analyses["fourier"].runs
                if default.runs[r].optimizer.name == "adam")
    assert ds[0] == 23 and len(set(ds)) >= 2 and all(d % 2 for d in ds)


def test_the_training_plan_carries_the_runs_values_and_its_slots_seeds(smoke_raw):
    """TrainingPlan.of is plumbing (in no code hash): pin it as a field-for-field copy of the run's values."""
    import dataclasses

    from pipeline_lib.plumbing.config import TrainingPlan

    smoke_raw["runs"]["scratch_p4"].update(sweep={"lr": [1e-3, 1e-2]}, batch_size=32)  # a sweep of mini-batches
    smoke_raw.update(analyses={}, figures={})  # (no analysis reads a swept run of this task)
    cfg = load_config(smoke_raw)
    rc = cfg.runs["scratch_p4"]
    plan = cfg.run_spec("scratch_p4").plan
    for f in dataclasses.fields(TrainingPlan):
        if f.name not in ("slots", "per_slot", "optimizer_module"):
            assert getattr(plan, f.name) == getattr(rc, f.name), f.name
    assert plan.slots == tuple(rc.slots()) and not plan.per_slot and plan.optimizer_module is None  # adam
    assert plan.seeds == [s["run_seed"] for s in rc.slots()] == list(rc.seeds) * 2
    assert TrainingPlan.of(rc) == plan


def test_a_global_seed_count_sets_every_counted_run_and_keeps_curricula_consistent():
    raw = load_yaml(REPO / "config" / "config.yaml")
    default = load_config(load_yaml(REPO / "config" / "config.yaml"))
    raw["seeds"] = 3
    cfg = load_config(raw)
    counted = [n for n, r in load_yaml(REPO / "config" / "config.yaml")["runs"].items()
               if not isinstance(r.get("seeds"), list)]
    assert counted and all(cfg.runs[n].seeds == (0, 1, 2) for n in counted)
    listed = [n for n in cfg.runs if n not in counted]
    assert listed and all(cfg.runs[n].seeds == default.runs[n].seeds for n in listed)  # explicit lists kept
    for name, run in cfg.runs.items():  # every finetune starts from a parent that trained its seeds
        if run.init_from:
            assert set(run.seeds) <= set(cfg.runs[run.init_from].seeds), name
    assert cfg.run_slice("scratch_p4")["run"]["seeds"] == 3  # the jobs' params follow: those runs rerun
    assert default.run_slice("scratch_p4") == load_config(dict(load_yaml(REPO / "config" / "config.yaml"),
                                                               seeds=None)).run_slice("scratch_p4")
    raw["seeds"] = 0
    with pytest.raises(ConfigError, match="config key 'seeds'"):
        load_config(raw)
