"""Figure stage fig3_attention_heatmap: attention per position over epochs, one panel per arm."""
from __future__ import annotations

from ...config import Config
from ...figures.fig3 import plot_fig3_attention_heatmap
from ...store import read_dataset
from . import arm_trajectory, figure_provenance, recorded_attention, save_figure


def build(cfg: Config, inputs: dict[str, str], pdf: str, png: str, sidecar: str) -> dict:
    fc = cfg.figures["fig3_attention_heatmap"]
    arms, switches, stats = {}, {}, {}
    k = None
    for label, run in fc.arms:
        traj, switches[label] = arm_trajectory(cfg, run, inputs, ["attention"])
        k = int(read_dataset(inputs[run], rule="train").attrs["k"])
        att = recorded_attention(traj).mean("probe")
        att = att.mean("seed") if fc.seed is None else att.sel(seed=fc.seed)
        arms[label] = att
        mass = att.isel(position=slice(0, k)).sum("position")
        stats[label] = {"first_k_mass_start": float(mass.isel(epoch=0)), "first_k_mass_end": float(mass.isel(epoch=-1))}
    fig = plot_fig3_attention_heatmap(arms, k, switches)
    who = "mean over seeds" if fc.seed is None else f"seed {fc.seed}"
    stats["summary"] = (f"attention mass on the first k={k} positions ({who}, mean over probes), start -> end: "
                        + "; ".join(f"{lbl} {s['first_k_mass_start']:.2f} -> {s['first_k_mass_end']:.2f}"
                                    for lbl, s in stats.items()))
    save_figure(fig, stats, figure_provenance(cfg, "fig3_attention_heatmap", inputs, __name__), pdf, png, sidecar)
    return stats
