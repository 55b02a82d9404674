"""Figure stage eureka_probes: linear-probe accuracy of the first-step latent (Eureka paper Fig. 2)."""
from __future__ import annotations

from ...config import Config
from ...figures.eureka_probes import plot_eureka_probes
from . import experiment_arms, figure_provenance, per_arm_summary, save_figure

NAME = "eureka_probes"


def build(cfg: Config, inputs: dict[str, str], pdf: str, png: str, sidecar: str) -> dict:
    fc = cfg.figures[NAME]
    rows = {exp: experiment_arms(cfg, exp, inputs, ["accuracy", "chance"], key="probe_{run}", rule="probe")
            for exp in fc.experiments}
    fig, stats = plot_eureka_probes(rows)
    stats["summary"] = per_arm_summary(stats, lambda s: "step-1 probe at the last snapshot " + ", ".join(
        f"{site} {v['median_last']:.2f}" for site, v in s.items()), skip=("chance",))
    save_figure(fig, stats, figure_provenance(cfg, NAME, inputs, __name__), pdf, png, sidecar)
    return stats
