"""Figure stage eureka_accuracy: train/test accuracy per attention variant, per experiment."""
from __future__ import annotations

from ...config import Config
from ...figures.eureka_accuracy import plot_eureka_accuracy
from . import experiment_arms, figure_provenance, save_figure

NAME = "eureka_accuracy"


def build(cfg: Config, inputs: dict[str, str], pdf: str, png: str, sidecar: str) -> dict:
    fc = cfg.figures[NAME]
    rows = {exp: experiment_arms(cfg, exp, inputs, ["train_acc", "test_acc"]) for exp in fc.experiments}
    # the chance level comes from the dataset the first arm read (the train stage copies it into attrs)
    chance = {exp: float(next(iter(arms.values())).attrs.get("task_chance_without_step1", float("nan")))
              for exp, arms in rows.items()}
    fig, stats = plot_eureka_accuracy(rows, chance, {e: cfg.eureka[e].threshold for e in fc.experiments})
    stats["summary"] = "; ".join(
        f"{exp}: median final test accuracy " + ", ".join(f"{lbl} {s['median_final_test_acc']:.2f}"
                                                          for lbl, s in st.items() if lbl != "chance_without_step1")
        + f" (chance without step 1: {chance[exp]:.3f})" for exp, st in stats.items())
    save_figure(fig, stats, figure_provenance(cfg, NAME, inputs, __name__), pdf, png, sidecar)
    return stats
