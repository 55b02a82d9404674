"""Figure stage eureka_qkv_gradients: mean |grad| of W_Q, W_K, W_V over training (Eureka paper Fig. 5)."""
from __future__ import annotations

from ...config import Config
from ...figures.eureka_qkv_gradients import MATRICES, plot_eureka_qkv_gradients
from . import experiment_arms, figure_provenance, per_arm_summary, save_figure

NAME = "eureka_qkv_gradients"


def build(cfg: Config, inputs: dict[str, str], pdf: str, png: str, sidecar: str) -> dict:
    fc = cfg.figures[NAME]
    rows = {exp: experiment_arms(cfg, exp, inputs, [f"grad_{m}" for m in MATRICES]) for exp in fc.experiments}
    fig, stats = plot_eureka_qkv_gradients(rows)
    stats["summary"] = per_arm_summary(stats, lambda s: "mean over training of the median |grad| " + ", ".join(
        f"{m} {s[m]['median_mean_over_training']:.2e}" for m in MATRICES))
    save_figure(fig, stats, figure_provenance(cfg, NAME, inputs, __name__), pdf, png, sidecar)
    return stats
