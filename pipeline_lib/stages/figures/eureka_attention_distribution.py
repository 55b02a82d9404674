"""Figure stage eureka_attention_distribution: histograms of attention weights over training (Fig. 8)."""
from __future__ import annotations

from ...config import Config
from ...figures.eureka_attention_distribution import plot_eureka_attention_distribution
from . import experiment_arms, figure_provenance, per_arm_summary, save_figure

NAME = "eureka_attention_distribution"


def build(cfg: Config, inputs: dict[str, str], pdf: str, png: str, sidecar: str) -> dict:
    fc = cfg.figures[NAME]
    rows = {exp: experiment_arms(cfg, exp, inputs, ["attention_hist"]) for exp in fc.experiments}
    fig, stats = plot_eureka_attention_distribution(rows, fc.n_epochs)
    stats["summary"] = per_arm_summary(stats, lambda s: (
        f"share of attention weights > 0.5 from epoch {min(s, key=int)} to {max(s, key=int)}: "
        f"{s[min(s, key=int)]['above_0.5']:.3f} -> {s[max(s, key=int)]['above_0.5']:.3f}"))
    save_figure(fig, stats, figure_provenance(cfg, NAME, inputs, __name__), pdf, png, sidecar)
    return stats
