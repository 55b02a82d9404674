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
