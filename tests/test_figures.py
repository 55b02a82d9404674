import numpy as np
import pytest
import xarray as xr

from pipeline_lib.figures.fig5 import plot_fig5_accuracy, success_counts
from pipeline_lib.figures.style import success_label, wilson_interval


def test_wilson_interval_matches_the_textbook_value():
    lo, hi = wilson_interval(4, 10)
    assert (round(lo, 2), round(hi, 2)) == (0.17, 0.69)
    assert wilson_interval(0, 10)[0] == pytest.approx(0.0, abs=1e-12)
    assert success_label("curriculum", 4, 10) == "curriculum 4/10 [0.17, 0.69]"


def test_success_counts_treat_diverged_as_failure():
    assert success_counts(np.array([0.95, 0.9, 0.3, np.nan]), 0.9) == (2, 4)


def _arm(final):
    epochs = np.arange(0, 101)
    acc = np.clip(np.outer(final, epochs / 100.0), 0, 1)
    return xr.Dataset({"train_acc": (("seed", "epoch"), acc), "test_acc": (("seed", "epoch"), acc)},
                      coords={"seed": np.arange(len(final)), "epoch": epochs})


def test_fig5_renders_and_reports_counts():
    arms = {"scratch": _arm([0.3, 0.2, 0.25]), "curriculum": _arm([1.0, 0.95, 0.4])}
    fig, stats = plot_fig5_accuracy(arms, {"curriculum": [30]}, threshold=0.9)
    assert stats["scratch"]["successes"] == 0 and stats["curriculum"]["successes"] == 2
    assert stats["curriculum"]["switch_epochs"] == [30]
    ax_train, ax_test = fig.axes
    # 3 thin seed lines + 1 median per arm, and the switch line of the curriculum arm
    assert len(ax_test.lines) == 2 * 4 + 1
    texts = " ".join(t.get_text() for t in fig.texts)
    assert "curriculum 2/3" in texts and "scratch 0/3" in texts


def test_every_circuit_figure_renders_from_synthetic_data():
    from pipeline_lib.figures.fig2 import plot_fig2_attention_graph
    from pipeline_lib.figures.fig3 import plot_fig3_attention_heatmap
    from pipeline_lib.figures.fig4 import plot_fig4_embeddings
    from pipeline_lib.figures.fig6 import plot_fig6_interpolation
    from pipeline_lib.figures.fig7 import plot_fig7_param_tsne

    rng = np.random.default_rng(0)
    att = rng.dirichlet(np.ones(6), size=3)
    fig = plot_fig2_attention_graph({"a": {"epochs": [0, 5, 9], "attention": att, "previous": att[::-1],
                                           "tokens": [1, 0, 2, 3, 1, 0]}}, k=3)
    assert len(fig.axes) == 3 and len(fig.axes[0].lines) == 6  # one edge per position
    heat = xr.DataArray(rng.dirichlet(np.ones(6), size=4), dims=("epoch", "position"),
                        coords={"epoch": [0, 1, 10, 100]})
    fig = plot_fig3_attention_heatmap({"x": heat, "y": heat}, k=3, switches={"y": [10]})
    assert len(fig.axes) == 3  # two panels and the colorbar
    fig = plot_fig4_embeddings([{"title": "t", "z": rng.normal(size=(50, 2)), "color": rng.integers(0, 6, 50),
                                 "clusters": 6}])
    assert "6 clusters" in [t.get_text() for t in fig.axes[0].texts]
    ts = np.linspace(-0.25, 1.25, 7)
    interp = xr.Dataset({f"{s}_{m}": (("seed", "t"), rng.random((3, 7)) + 0.1) for s in ("train", "test")
                         for m in ("loss", "acc")} | {f"barrier_{s}": (("seed",), rng.random(3)) for s in ("train", "test")},
                        coords={"seed": [0, 1, 2], "t": ts})
    fig = plot_fig6_interpolation(interp, "scratch", "curriculum")
    assert len(fig.axes[0].lines) == 3 + 1 + 2  # seeds, median, two endpoint lines
    emb = xr.Dataset({"tsne": (("seed", "snapshot", "component"), rng.normal(size=(2, 6, 2))),
                      "pca": (("seed", "snapshot", "component"), rng.normal(size=(2, 6, 2)))},
                     coords={"seed": [0, 1], "arm": ("snapshot", ["a"] * 3 + ["b"] * 3),
                             "phase": ("snapshot", ["a", "a", "a", "p", "b", "b"]), "epoch": ("snapshot", range(6))})
    fig = plot_fig7_param_tsne(emb, [0, 1])
    markers = [ln.get_marker() for ln in fig.axes[0].lines]
    assert markers.count("s") == 1 and markers.count("*") == 2 and markers.count("o") == 2
