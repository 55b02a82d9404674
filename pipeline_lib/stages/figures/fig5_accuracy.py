"""Figure stage fig5_accuracy: train/test accuracy of the arms, success counts with Wilson intervals."""
from __future__ import annotations

from ...config import Config
from ...figures.fig5 import plot_fig5_accuracy
from ...figures.style import success_label
from . import arm_trajectory, figure_provenance, save_figure

METRICS = ["train_loss", "train_acc", "test_loss", "test_acc"]


def build(cfg: Config, inputs: dict[str, str], pdf: str, png: str, sidecar: str) -> dict:
    fc = cfg.figures["fig5_accuracy"]
    arms, switches = {}, {}
    for label, run in fc.arms:
        arms[label], switches[label] = arm_trajectory(cfg, run, inputs, METRICS)
    fig, stats = plot_fig5_accuracy(arms, switches, fc.success_threshold)
    stats["summary"] = (f"seeds with final test accuracy >= {fc.success_threshold}: "
                        + "; ".join(success_label(lbl, s["successes"], s["seeds"]) for lbl, s in stats.items()))
    save_figure(fig, stats, figure_provenance(cfg, "fig5_accuracy", inputs, __name__), pdf, png, sidecar)
    return stats
