import ast
import csv
import dataclasses
import importlib
import inspect
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import xarray as xr

from pipeline_lib.figures import style
from pipeline_lib.figures.fig5_accuracy import METRICS, fig5_stats, plot_fig5_accuracy
from pipeline_lib.plumbing import registry
from pipeline_lib.stats import success_counts, success_label, wilson_interval

FIGURES = set(registry.plugins("figure"))  # the inventory is the registry's, never a hand list
FIGURE_DIR = Path(style.__file__).parent


def test_wilson_interval_matches_the_textbook_value():
    lo, hi = wilson_interval(4, 10)
    assert (round(lo, 2), round(hi, 2)) == (0.17, 0.69)
    assert wilson_interval(0, 10)[0] == pytest.approx(0.0, abs=1e-12)
    assert success_label("curriculum", 4, 10) == "curriculum 4/10 [0.17, 0.69]"


def test_wilson_interval_equals_scipys_bit_for_bit():
    from scipy.stats import binomtest  # the reference; the pipeline's own formula avoids importing scipy.stats

    for n in (1, 2, 3, 7, 10, 31, 100):
        for k in range(n + 1):
            for level in (0.9, 0.95, 0.99):
                ci = binomtest(k, n).proportion_ci(confidence_level=level, method="wilson")
                assert wilson_interval(k, n, level) == (float(ci.low), float(ci.high)), (k, n, level)
    for bad in ((1, 0), (3, 2), (-1, 2)):
        with pytest.raises(ValueError, match="Wilson"):
            wilson_interval(*bad)


def test_success_counts_treat_diverged_as_failure():
    assert success_counts(np.array([0.95, 0.9, 0.3, np.nan]), 0.9) == (2, 4)


def _arm(final, epochs=np.arange(0, 101)):
    acc = np.clip(np.outer(final, (epochs - epochs[0]) / (epochs[-1] - epochs[0])), 0, 1)
    return xr.Dataset({m: (("seed", "epoch"), acc) for m in ("train_loss", "train_acc", "test_loss", "test_acc")},
                      coords={"seed": np.arange(len(final)), "epoch": epochs})


def test_fig5_scratch_claim_needs_seeds_that_memorize_without_generalizing():
    from pipeline_lib.scoring.fig5_accuracy import score_claims

    def verdict(train, test):
        arm = _arm(test)
        arm["train_acc"] = arm["train_acc"].copy()  # _arm's variables share one array
        arm["train_acc"][:, -1] = train
        return score_claims(fig5_stats({"scratch": arm}, {}, 0.9), None)[
            "circuits.fig5.scratch_does_not_generalise"]["verdict"]

    memorize = [1.0] * 10
    assert verdict(memorize, [0.25] * 10) == "reproduced"
    assert verdict([0.3] * 10, [0.25] * 10) == "not reproduced"  # learns nothing: it memorizes nothing either
    assert verdict(memorize, [0.95] * 10) == "not reproduced"  # generalizes
    assert verdict(memorize, [0.8] * 10) == "not reproduced"  # below the success bar, far above chance: it generalizes
    assert verdict(memorize, [0.3] * 9 + [0.99]) == "partial"  # one seed generalizes: most, not every, do not


def test_fig5_renders_and_reports_counts():
    arms = {"scratch": _arm([0.3, 0.2, 0.25]), "curriculum": _arm([1.0, 0.95, 0.4])}
    switches = {"curriculum": [30]}
    stats = fig5_stats(arms, switches, threshold=0.9)
    assert stats["scratch"]["successes"] == 0 and stats["curriculum"]["successes"] == 2
    assert stats["curriculum"]["switch_epochs"] == [30]
    assert list(stats["curriculum"]) == ["successes", "seeds", "ci95", "threshold", "final_test_acc", "final_train_acc",
                                         "switch_epochs", "epochs_to_threshold", "phase_start", "phase_epochs",
                                         "switch_change"]
    assert "switch_change" not in stats["scratch"]  # no switch, no change across one
    # _arm's accuracy rises linearly over epochs 0..100: seed 0 (final 1.0) crosses 0.9 at epoch 90, 60 after the switch
    assert stats["curriculum"]["epochs_to_threshold"] == [60, 65, None] and stats["curriculum"]["phase_epochs"] == 70
    fig = plot_fig5_accuracy(arms, switches, 0.9, stats)
    ax_train, ax_test = fig.axes
    # 3 thin seed lines + 1 median per arm, the switch line of the curriculum arm and the success threshold
    assert len(ax_test.lines) == 2 * 4 + 1 + 1 and len(ax_test.collections) == 2  # an interquartile band per arm
    texts = " ".join(t.get_text() for t in ax_test.texts)
    assert "curriculum 2/3" in texts and "scratch 0/3" in texts
    # one row per setting: the arms '<kind>, <setting>' share a row, and each kind keeps its colour in every row
    arms |= {"scratch, paper code": _arm([0.3, 0.95]), "curriculum, paper code": _arm([1.0, 1.0])}
    stats = fig5_stats(arms, switches, threshold=0.9)
    fig = plot_fig5_accuracy(arms, switches, 0.9, stats)
    assert len(fig.axes) == 4 and fig.axes[2].get_title(loc="left") == "paper code: train accuracy"
    medians = [{ln.get_label(): ln.get_color() for ln in ax.lines if not ln.get_label().startswith("_")}
               for ax in (fig.axes[0], fig.axes[2])]
    assert medians[0] == medians[1] and len(set(medians[0].values())) == 2  # scratch and curriculum, both rows
    assert "scratch 1/2" in " ".join(t.get_text() for t in fig.axes[3].texts)


def test_fig5_soon_after_switch_compares_time_to_threshold_with_scratch():
    """'Easily' as time: the curriculum's median epochs from its switch against scratch's from its start;
    a seed that never reaches the threshold counts as beyond its phase."""
    from pipeline_lib.scoring.fig5_accuracy import score_claims

    def verdict(curriculum_final, scratch_final, scratch_epochs=np.arange(0, 101)):
        arms = {"curriculum": _arm(curriculum_final), "scratch": _arm(scratch_final, scratch_epochs)}
        stats = fig5_stats(arms, {"curriculum": [50]}, threshold=0.9)
        return score_claims(stats, None)["circuits.fig5.curriculum_generalises_soon_after_switch"]["verdict"]

    # scratch never reaches it: its median is no time, but at least its run's 100 epochs, a bound the curriculum's
    # 40 epochs after the switch lie below; a curriculum that does not reach it either is not sooner
    assert verdict([1.0] * 10, [0.3] * 10) == "reproduced"
    assert verdict([0.3] * 10, [0.3] * 10) == "not reproduced"
    assert verdict([1.0] * 10, [0.3] * 5 + [1.0] * 5) == "reproduced"  # half of scratch at 90, half beyond 100
    assert verdict([1.0] * 10, [0.3] * 10, np.arange(0, 31)) == "not reproduced"  # scratch's bound, 30, is sooner
    assert verdict([1.0] * 10, [1.0] * 10) == "reproduced"  # 40 epochs after the switch; scratch later, at 90
    assert verdict([1.0] * 10, [1.0] * 10, np.arange(0, 31)) == "not reproduced"  # scratch sooner, at 27
    assert verdict([0.3] * 7 + [1.0] * 3, [1.0] * 10) == "not reproduced"  # most curriculum seeds never do
    assert verdict([0.3] * 5 + [1.0] * 5, [1.0] * 10) == "not reproduced"  # half never do: still no majority
    assert verdict([0.3] * 4 + [1.0] * 6, [1.0] * 10) == "partial"  # 6 of 10: the interval reaches past scratch's 90
    assert verdict([0.3] * 2 + [1.0] * 8, [1.0] * 10) == "reproduced"  # 8 of 10 at 40 epochs, scratch at 90
    # a curriculum seed that never generalises counts as never, as a scratch seed does (one censoring value)
    stats = fig5_stats({"curriculum": _arm([0.3] * 4 + [1.0] * 6), "scratch": _arm([0.3] * 10)}, {"curriculum": [50]},
                       threshold=0.9)
    assert "never: 101" in score_claims(stats, None)["circuits.fig5.curriculum_generalises_soon_after_switch"]["control"]


def test_fig5_discontinuity_is_the_largest_one_epoch_change_of_each_curve():
    """A drop at the switch larger than every other one-epoch change, in train and test accuracy, in every
    seed: reproduced; a later learning jump larger than the drop makes that seed not show it."""
    from pipeline_lib.scoring.fig5_accuracy import score_claims

    def verdict(jumps_after, drop=0.7):
        acc = np.full((len(jumps_after), 101), 1.0)
        acc[:, 50:] = 1.0 - drop  # the switch at epoch 50: from 1 on the old task to 1 - drop on the new one
        for seed, jump in enumerate(jumps_after):
            acc[seed, 80:] = 1.0 - drop + jump  # a learning jump 30 epochs after the switch
        arm = xr.Dataset({m: (("seed", "epoch"), acc.copy()) for m in METRICS},
                         coords={"seed": np.arange(len(jumps_after)), "epoch": np.arange(101)})
        stats = fig5_stats({"curriculum": arm}, {"curriculum": [50]}, threshold=0.9)
        assert stats["curriculum"]["switch_change"]["test_acc"]["at_switch"][0] == pytest.approx(-drop)
        return score_claims(stats, None)["circuits.fig5.discontinuity_at_switch"]

    assert verdict([0.1] * 10)["verdict"] == "reproduced"
    assert verdict([0.1] * 9 + [0.8])["verdict"] == "partial"  # one seed jumps more later than at the switch
    assert verdict([0.8] * 10)["verdict"] == "not reproduced"
    assert verdict([0.0] * 10, drop=0.0)["verdict"] == "not reproduced"  # a null: no change anywhere
    arm = _arm([1.0] * 3)
    assert score_claims(fig5_stats({"curriculum": arm}, {}, 0.9), None)[
        "circuits.fig5.discontinuity_at_switch"]["verdict"] == "not run"  # no switch drawn


def test_fig5_compares_each_arm_with_its_shared_draw_control():
    from pipeline_lib.figures.fig5_accuracy import draw_control

    arms = {"curriculum": _arm([1.0] * 3 + [0.3] * 7), "curriculum, shared draw": _arm([1.0] * 10),
            "scratch": _arm([0.3] * 10)}
    control = draw_control(fig5_stats(arms, {}, threshold=0.9))
    assert list(control) == ["curriculum"]  # scratch has no shared-draw arm
    c = control["curriculum"]
    assert c["own_draws"] == [3, 10] and c["shared_draw"] == [10, 10]
    assert c["difference"] == pytest.approx(-0.7) and c["ci95"][0] < -0.7 < c["ci95"][1] < 0


def test_seeds_and_median_draws_every_seed_thin_and_the_nan_skipping_median_bold():
    da = xr.DataArray([[0.0, 1.0], [1.0, np.nan], [2.0, 3.0]], dims=("seed", "epoch"),
                      coords={"seed": [0, 1, 2], "epoch": [0, 1]})
    fig, axes = style.figure()
    ax = axes[0][0]
    median = style.seeds_and_median(ax, da.epoch, da, "r", label="arm")
    assert median.values.tolist() == [1.0, 2.0]
    assert [ln.get_linewidth() for ln in ax.lines] == [style.SEED_LW] * 3 + [style.MEDIAN_LW]
    assert ax.lines[-1].get_label() == "arm"


def test_every_circuit_figure_renders_from_synthetic_data():
    from pipeline_lib.figures.fig2_attention_graph import plot_fig2_attention_graph
    from pipeline_lib.figures.fig3_attention_heatmap import plot_fig3_attention_heatmap
    from pipeline_lib.figures.fig4_embeddings import plot_fig4_embeddings
    from pipeline_lib.figures.fig6_interpolation import fig6_stats, plot_fig6_interpolation
    from pipeline_lib.figures.fig7_param_tsne import fig7_stats, plot_fig7_param_tsne

    rng = np.random.default_rng(0)
    att = rng.dirichlet(np.ones(6), size=3)
    fig = plot_fig2_attention_graph({"a": {"titles": ["epoch 0", "epoch 5", "epoch 9"], "attention": att, "previous": att[::-1],
                                           "tokens": [1, 0, 2, 3, 1, 0]}}, k=3)
    assert len(fig.axes) == 3 and len(fig.axes[0].lines) == 6  # one edge per position
    heat = xr.DataArray(rng.dirichlet(np.ones(6), size=4), dims=("epoch", "position"),
                        coords={"epoch": [0, 1, 10, 100]})
    fig = plot_fig3_attention_heatmap({"x": heat, "y": heat}, k=3, switches={"y": [10]})
    assert len(fig.axes) == 3  # two panels and the colorbar
    fig = plot_fig4_embeddings([{"title": "t", "z": rng.normal(size=(50, 2)), "color": rng.integers(0, 6, 50),
                                 "clusters": 6}])
    assert fig.axes[0].get_title().endswith(": 6 clusters") and not fig.axes[0].texts  # in the title, off the points
    ts = np.linspace(-0.25, 1.25, 7)
    interp = xr.Dataset({f"{s}_{m}": (("seed", "t"), rng.random((3, 7)) + 0.1) for s in ("train", "test")
                         for m in ("loss", "acc")} | {f"barrier_{s}": (("seed",), rng.random(3)) for s in ("train", "test")},
                        coords={"seed": [0, 1, 2], "t": ts})
    fig = plot_fig6_interpolation(interp, "scratch", "curriculum")
    assert len(fig.axes[0].lines) == 3 + 1 + 2  # seeds, median, two endpoint lines
    stats = fig6_stats(interp)
    assert list(stats) == ["barrier_train", "barrier_test", "summary"]
    assert stats["barrier_test"]["median"] == pytest.approx(float(np.median(interp.barrier_test)))
    emb = xr.Dataset({"tsne": (("seed", "snapshot", "component"), rng.normal(size=(2, 6, 2))),
                      "pca": (("seed", "snapshot", "component"), rng.normal(size=(2, 6, 2)))},
                     coords={"seed": [0, 1], "arm": ("snapshot", ["a"] * 3 + ["b"] * 3),
                             "phase": ("snapshot", ["a", "a", "a", "p", "b", "b"]), "epoch": ("snapshot", range(6))})
    fig = plot_fig7_param_tsne(emb, [0, 1])
    markers = [ln.get_marker() for ln in fig.axes[0].lines]
    assert markers.count("s") == 1 and markers.count("*") == 2 and markers.count("o") == 2
    end_distance = np.linalg.norm(emb.pca.isel(snapshot=2).values - emb.pca.isel(snapshot=5).values, axis=1)
    assert fig7_stats(emb, [0, 1], "tsne")["pca_end_distance_median"] == pytest.approx(float(np.median(end_distance)))


def _eureka_rows(rng, arms=("softmax", "HT"), seeds=2, epochs=8):
    coords = {"seed": np.arange(seeds), "epoch": np.arange(epochs), "layer": [0, 1], "head": [0, 1],
              "bin": (np.arange(10) + 0.5) / 10}
    def arm():
        acc = rng.random((seeds, epochs))
        return xr.Dataset({"train_acc": (("seed", "epoch"), acc), "test_acc": (("seed", "epoch"), acc),
                           "attention_hist": (("seed", "epoch", "layer", "bin"), rng.dirichlet(np.ones(10), (seeds, epochs, 2))),
                           **{f"grad_{m}": (("seed", "epoch", "layer", "head"), rng.lognormal(-3, 1, (seeds, epochs, 2, 2)))
                              for m in ("W_Q", "W_K", "W_V")}}, coords=coords)
    return {"reasoning": {a: arm() for a in arms}}


def test_eureka_figures_render_and_their_stats_name_every_arm():
    from pipeline_lib.figures import eureka_accuracy as acc
    from pipeline_lib.figures import eureka_attention_distribution as dist
    from pipeline_lib.figures import eureka_qkv_gradients as qkv

    rng = np.random.default_rng(1)
    rows = _eureka_rows(rng)
    stats = acc.eureka_accuracy_stats(rows, {"reasoning": 0.2})
    assert list(stats["reasoning"]) == ["softmax", "HT", "chance_without_step1"]  # chance after the arms
    final = rows["reasoning"]["HT"].test_acc.isel(epoch=-1).values
    assert stats["reasoning"]["HT"]["median_final_test_acc"] == pytest.approx(float(np.median(final)))
    fig = acc.plot_eureka_accuracy(rows, {"reasoning": 0.2}, {"reasoning": 0.7})
    assert len(fig.axes[0].lines) == 2 * (2 + 1) + 2  # train and test: seeds and median; chance, threshold
    # an arm keeps its colour in every row, even where the rows list different arms
    two = {"reasoning": rows["reasoning"], "other": {"HT": rows["reasoning"]["HT"]}}
    fig = acc.plot_eureka_accuracy(two, {"reasoning": 0.2, "other": 0.2}, 0.7)
    ht_first_row, ht_second_row = fig.axes[1], fig.axes[2]
    assert ht_first_row.lines[5].get_color() == ht_second_row.lines[5].get_color() != fig.axes[0].lines[5].get_color()

    stats = dist.distribution_stats(rows, 3)
    assert list(stats["reasoning"]["softmax"]) == ["0", "2", "7"]  # log-spaced, first and last included
    assert stats["reasoning"]["softmax"]["7"]["above_0.5"] == pytest.approx(float(
        rows["reasoning"]["softmax"].attention_hist.mean(("seed", "layer")).isel(epoch=-1)[5:].sum()))
    fig = dist.plot_eureka_attention_distribution(rows, 3)
    assert len(fig.axes[0].lines) == 3

    stats = qkv.gradient_stats(rows)
    assert list(stats["reasoning"]) == ["softmax", "HT"] and list(stats["reasoning"]["HT"]) == list(qkv.MATRICES)
    fig = qkv.plot_eureka_qkv_gradients(rows)
    assert len(fig.axes) == 3 and len(fig.axes[0].lines) == 2


def test_eureka_attention_distribution_picks_epochs_as_before():
    from pipeline_lib.figures.eureka_attention_distribution import pick_epochs

    epochs = np.array([0, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89])
    for n in range(2, 13):  # the former formula, kept for every n the schema allows but 1
        old = [int(epochs[i]) for i in np.unique(np.round(np.geomspace(1, len(epochs), n)).astype(int) - 1)]
        assert pick_epochs(epochs, n) == old


def test_eureka_probes_stats_put_chance_after_the_arms():
    from pipeline_lib.figures.eureka_probes import plot_eureka_probes, probe_stats

    rng = np.random.default_rng(2)
    def probe():
        return xr.Dataset({"accuracy": (("seed", "snapshot", "site", "target"), rng.uniform(0.4, 1, (3, 4, 2, 2))),
                           "chance": (("target",), [0.5, 0.3])},
                          coords={"seed": [0, 1, 2], "snapshot": [0, 1, 5, 20], "site": ["z_A", "mlp_out"],
                                  "target": ["step1", "other"]})
    rows = {"reasoning": {"softmax": probe(), "HT": probe()}}
    stats = probe_stats(rows)
    assert list(stats["reasoning"]) == ["softmax", "HT", "chance"] and stats["reasoning"]["chance"] == 0.5
    med = rows["reasoning"]["HT"].accuracy.sel(site="mlp_out", target="step1").median("seed")
    assert stats["reasoning"]["HT"]["mlp_out"]["median_last"] == pytest.approx(float(med[-1]))
    fig = plot_eureka_probes(rows)
    assert len(fig.axes) == 2 and len(fig.axes[0].lines) == 2 * (3 + 1 + 1) + 1  # per arm: seeds, median, its snapshot markers


def test_builds_read_their_inputs_through_paths(tmp_path):
    """fig5 draws a curriculum run after its ancestor; eureka_table writes its CSV and Markdown."""
    from pipeline_lib.figures import eureka_table, fig5_accuracy
    from pipeline_lib.plumbing.paths import Paths
    from pipeline_lib.plumbing.store import write_dataset

    paths = Paths(str(tmp_path))
    write_dataset(_arm([1.0, 0.5], np.arange(0, 11)), paths.trajectory("pre"))
    write_dataset(_arm([1.0, 0.95], np.arange(10, 31)), paths.trajectory("fine"))
    runs = {"pre": SimpleNamespace(seeds=(0, 1)), "fine": SimpleNamespace(seeds=(0, 1))}
    cfg = SimpleNamespace(runs=runs, lineage=lambda r: ["pre", "fine"] if r == "fine" else [r],
                          start_epoch=lambda r: 10 if r == "fine" else 0, analyses={})
    fig, stats = fig5_accuracy.build(cfg, fig5_accuracy.Params(arms=(("curriculum", "fine"),)), paths, {})
    assert stats["curriculum"]["switch_epochs"] == [10] and stats["curriculum"]["successes"] == 2
    assert len(fig.axes[1].lines[0].get_xdata()) == 31  # the hand-over epoch drawn once
    assert stats["summary"] == "seeds with final test accuracy >= 0.9: curriculum 2/2 [0.34, 1.00]"

    one = lambda v: (("arm",), [v, float("nan")])  # noqa: E731
    write_dataset(xr.Dataset({"n_eureka": (("arm",), [2, 0]), "n_seeds": (("arm",), [2, 2]),
                              "eureka_ratio": one(1.0), "ratio_ci_low": one(0.34), "ratio_ci_high": one(1.0),
                              "acc_after_eureka": one(0.987), "mean_final_test_acc": one(0.9),
                              "mean_eureka_epoch": one(12.0), "attention": (("arm",), ["softmax", "normsoftmax"])},
                             coords={"arm": ["softmax", "normsoftmax"]}), paths.analysis("eureka", "reasoning"))
    outputs = {ext: str(tmp_path / f"eureka_table{ext}") for ext in eureka_table.EXTRA_OUTPUTS}
    fig, stats = eureka_table.build(None, eureka_table.Params(experiments=("reasoning",)), paths, outputs)
    with open(outputs[".csv"], newline="") as fh:
        table = list(csv.reader(fh))
    assert table[0] == eureka_table.COLUMNS and table[1][6] == "0.987" and table[2][6] == "-" and table[1][3] == "-"
    assert Path(outputs[".md"]).read_text().count("\n") == 4
    assert stats["rows"][0]["Eureka-ratio"] == "2/2 = 1.00"


def _literals(path: Path) -> dict:
    out = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) and node.targets[0].id.isupper():
            try:
                out[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass
    return out


def test_every_figure_is_one_plugin_module_whose_params_mirror_its_config():
    import yaml

    modules = {p.stem: _literals(p) for p in FIGURE_DIR.glob("*.py") if "NAME" in _literals(p)}
    assert set(modules) == FIGURES and all(lit["NAME"] == stem for stem, lit in modules.items())
    for name, lit in modules.items():
        schema = yaml.safe_load(lit["CONFIG"])
        assert schema["description"] and "type" not in schema and "additionalProperties" not in schema, name
        mod = importlib.import_module(f"pipeline_lib.figures.{name}")
        fields = dataclasses.fields(mod.Params)
        assert [f.name for f in fields] == list(schema["properties"]), name
        for f in fields:
            default = schema["properties"][f.name].get("default", dataclasses.MISSING)
            as_param = (tuple(default) if isinstance(default, list) else tuple(default.items())
                        if isinstance(default, dict) else default)  # config.to_params' conversion
            assert f.default == as_param, (name, f.name)
        required = [f.name for f in fields if f.default is dataclasses.MISSING]
        assert sorted(schema.get("required", [])) == sorted(required), name
        assert list(inspect.signature(mod.build).parameters) == ["cfg", "params", "paths", "outputs"], name
    assert modules["eureka_table"]["EXTRA_OUTPUTS"] == [".csv", ".md"]
    fig4 = yaml.safe_load(modules["fig4_embeddings"]["CONFIG"])["properties"]
    assert all("d=2" in fig4[k]["x-requires-message"] for k in ("pretrain", "finetune"))


def test_figure_modules_never_pick_a_backend_or_import_pyplot():
    for path in FIGURE_DIR.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [f"{node.module}.{a.name}" for a in node.names] if isinstance(node, ast.ImportFrom) and node.module
                     else [])
            assert not any(n.startswith("matplotlib.pyplot") for n in names), path.name
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                assert node.func.attr != "use", f"{path.name}: matplotlib.use"


def test_report_caption_escapes_rst_and_jinja_and_states_the_numbers():
    from docutils.core import publish_parts

    from pipeline_lib.stages.figure import caption_rst

    attrs = {"config_hash": "c0ffee", "code_hash": "deadbeef", "git_commit": "abc", "created_at": "now"}
    rst = caption_rst("The weights theta_a *and* `b` {{ x }} [0, 1].\n  \nSecond   paragraph::\n\n- not a list"
                      "\n\n1. not enumerated\n\n.. not a comment\n\n:not: a field",
                      {"summary": "ratio 3/5 [0.23, 0.88] for W_Q"}, attrs)
    from jinja2 import Environment

    text = publish_parts(Environment().from_string(rst).render(), writer="html")["body"]
    plain = " ".join(re.sub(r"<[^>]+>", " ", text).split())
    assert "The weights theta_a *and* `b` {{ x }} [0, 1]." in plain and "Second paragraph::" in plain
    for kept in ("- not a list", "1. not enumerated", ".. not a comment", ":not: a field"):
        assert kept in plain, kept
    assert "<ul" not in text and "<ol" not in text and "<table" not in text and text.count("<p>") == 8
    assert "Measured: ratio 3/5 [0.23, 0.88] for W_Q" in plain and "code deadbeef" in plain
    assert "<strong>Measured:</strong>" in text


def test_fig2_step_stats_count_the_steps_that_raise_each_side():
    from pipeline_lib.figures.fig2_attention_graph import step_stats

    # one seed, one probe, T=4, k=2; first-k mass 0.5 -> 0.6 -> 0.55 -> 0.7 -> 0.8 over 4 steps, 2 per epoch
    mass = np.array([0.5, 0.6, 0.55, 0.7, 0.8])
    att = np.stack([mass / 2, mass / 2, (1 - mass) / 2, (1 - mass) / 2], axis=-1)[None, :, None, :]
    da = xr.DataArray(att, dims=("seed", "step", "probe", "position"),
                      coords={"step": np.arange(5), "step_epoch": ("step", np.arange(5) / 2)})
    st = step_stats(da, k=2)
    assert st["steps"] == 4 and st["steps_per_epoch"] == 2 and st["epochs"] == 2
    assert st["share_raising_first_k"] == pytest.approx(0.75) and st["share_raising_rest"] == pytest.approx(0.25)
    assert st["first_k_mass_start"] == pytest.approx(0.5) and st["first_k_mass_end"] == pytest.approx(0.8)


def test_fig3_draws_a_per_step_row_and_fig4_one_row_per_setting():
    from pipeline_lib.figures.fig3_attention_heatmap import plot_fig3_attention_heatmap
    from pipeline_lib.figures.fig4_embeddings import plot_fig4_embeddings

    rng = np.random.default_rng(1)
    heat = xr.DataArray(rng.dirichlet(np.ones(6), size=4), dims=("epoch", "position"), coords={"epoch": [0, 1, 10, 100]})
    steps = xr.DataArray(rng.dirichlet(np.ones(6), size=9), dims=("step", "position"),
                         coords={"step": np.arange(9), "step_epoch": ("step", np.arange(9) / 4)})
    fig = plot_fig3_attention_heatmap({"x": heat, "y": heat}, k=3, switches={}, steps={"x per step": steps})
    titled = [ax.get_title() for ax in fig.axes]
    assert titled[:4] == ["x", "y", "x per step", ""]  # the empty 4th panel is switched off
    mesh = fig.axes[2].collections[0]
    assert mesh.get_array().size == 6 * 9  # one column per recorded step
    panel = {"title": "t", "z": rng.normal(size=(20, 2)), "color": rng.integers(0, 4, 20), "clusters": 2}
    fig = plot_fig4_embeddings([panel] * 6, ncols=2)
    assert sum(ax.get_xlabel() == "z_A[0]" for ax in fig.axes) == 6  # 3 rows of 2 panels


def test_run_curves_reads_every_run_of_the_config_and_a_run_added_later(smoke_raw):
    from pipeline_lib.plumbing.config import load_config
    from pipeline_lib.plumbing.jobs import figure_inputs

    cfg = load_config(smoke_raw)
    inputs = set(figure_inputs(cfg, "run_curves"))
    assert {str(cfg.paths.trajectory(r)) for r in cfg.runs} <= inputs
    smoke_raw["runs"]["my_new_run"] = dict(smoke_raw["runs"]["scratch_p4"])
    grown = set(figure_inputs(load_config(smoke_raw), "run_curves"))
    assert grown - inputs == {str(cfg.paths.trajectory("my_new_run"))}
    smoke_raw["figures"]["run_curves"] = {"runs": ["scratch_p4"]}
    assert set(figure_inputs(load_config(smoke_raw), "run_curves")) == {str(cfg.paths.trajectory("scratch_p4"))}


def test_a_table_figure_has_no_blank_band_around_its_table():
    """Saved as the figure stage saves it (a tight bounding box, which keeps the whole axes), the table fills the
    image: beyond its frame at most 0.25 inch is blank on each side (the saving's own padding of 0.1 inch, and the
    table, measured at the figure's dpi, drawn a few percent narrower at the PNG's), for a short wide table and a
    long narrow one (a centred table in an axes sized by its rows left 0.37 inch above and below one row)."""
    import io

    from matplotlib.image import imread

    from pipeline_lib.figures.tables import table_figure

    dpi = 150  # as the figure stage saves its PNG
    for columns, rows, width in ((["a", "b"], [["1", "x"]], 13.0),
                                 ([f"column {i}" for i in range(12)], [[str(i * j) for j in range(12)] for i in range(20)], 4.0)):
        buf = io.BytesIO()
        table_figure(columns, rows, width=width).savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
        img = imread(io.BytesIO(buf.getvalue()))[..., :3]
        ink = (img < 0.9).any(axis=2)  # the frame and the text
        for axis in (1, 0):
            found = np.flatnonzero(ink.any(axis=axis))
            bands = (found[0], ink.shape[1 - axis] - 1 - found[-1])  # blank before and after the frame
            assert max(bands) <= 0.25 * dpi, (width, "rows" if axis == 1 else "columns", ink.shape, bands)


@pytest.mark.parametrize("arch, cid", [("paper code", "circuits.fig5.curriculum_beats_scratch_paper_code"),
                                        ("MLP", "circuits.fig5.curriculum_beats_scratch_mlp")])
def test_fig5_other_architectures_arms_through_score_claims_planted_and_null(arch, cid):
    from pipeline_lib.scoring.fig5_accuracy import score_claims

    def arms(k, k0):
        return {f"curriculum, {arch}": {"successes": k, "seeds": 10}, f"scratch, {arch}": {"successes": k0, "seeds": 10}}

    assert score_claims(arms(10, 0), None)[cid]["verdict"] == "reproduced"
    assert score_claims(arms(5, 5), None)[cid]["verdict"] == "not reproduced"
    others = {"circuits.fig5.curriculum_beats_scratch_paper_code", "circuits.fig5.curriculum_beats_scratch_mlp"} - {cid}
    assert score_claims(arms(10, 0), None)[others.pop()]["verdict"] == "not run"  # each reads its own arms only


def test_fig5_curriculum_claim_reads_every_pinkish_curve_and_the_contrast():
    """"easily finds a circuit that can generalize (pinkish curves)": every curriculum seed, and above scratch (one
    rule for the default's arms and the paper code's; these are the latter's, which need no curves)."""
    from pipeline_lib.scoring.fig5_accuracy import score_claims

    def verdict(k, k0, n=20):
        arms = {"curriculum, paper code": {"successes": k, "seeds": n}, "scratch, paper code": {"successes": k0, "seeds": n}}
        return score_claims(arms, None)["circuits.fig5.curriculum_beats_scratch_paper_code"]["verdict"]

    assert verdict(20, 0) == "reproduced"
    assert verdict(17, 0) == "partial"  # above scratch, but not every seed: a majority shown (Wilson low 0.64)
    assert verdict(11, 0) == "not reproduced"  # above scratch, yet about half the seeds fail
    assert verdict(20, 20) == "not reproduced"  # every seed, and scratch too: no contrast
