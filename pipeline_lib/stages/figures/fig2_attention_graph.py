"""Figure stage fig2_attention_graph: one probe sequence's attention as a graph at several epochs."""
from __future__ import annotations

import numpy as np

from ...config import Config
from ...figures.fig2 import plot_fig2_attention_graph
from ...store import read_dataset
from . import arm_trajectory, figure_provenance, recorded_attention, save_figure


def pick_epochs(recorded: np.ndarray, n: int) -> list[int]:
    """n of the recorded epochs, log-spaced (first and last included)."""
    if len(recorded) <= n:
        return [int(e) for e in recorded]
    targets = np.geomspace(1, recorded[-1] + 1, n) - 1
    idx = sorted({int(np.argmin(np.abs(recorded - t))) for t in targets} | {0, len(recorded) - 1})
    return [int(recorded[i]) for i in idx]


def build(cfg: Config, inputs: dict[str, str], pdf: str, png: str, sidecar: str) -> dict:
    fc = cfg.figures["fig2_attention_graph"]
    rows, stats = {}, {}
    k = None
    for run in fc.runs:
        traj, _ = arm_trajectory(cfg, run, inputs, ["attention"])
        own = read_dataset(inputs[run], rule="train")
        k = int(own.attrs["k"])
        att = recorded_attention(traj).sel(seed=fc.seed).isel(probe=fc.probe)
        shown = pick_epochs(att.epoch.values, fc.n_epochs)
        pos = [int(np.searchsorted(att.epoch.values, e)) for e in shown]
        previous = np.stack([att.isel(epoch=max(i - 1, 0)).values for i in pos])
        tokens = own.probe_x.isel(probe=fc.probe).values
        rows[run] = {"epochs": shown, "attention": att.sel(epoch=shown).values, "previous": previous,
                     "tokens": tokens}
        final = att.isel(epoch=-1).values
        stats[run] = {"epochs": shown, "final_attention_on_first_k": float(final[:k].sum())}
    fig = plot_fig2_attention_graph(rows, k)
    stats["summary"] = (f"seed {fc.seed}, probe {fc.probe}: final attention mass on the first k={k} positions "
                        + "; ".join(f"{r} {s['final_attention_on_first_k']:.2f}" for r, s in stats.items()))
    save_figure(fig, stats, figure_provenance(cfg, "fig2_attention_graph", inputs, __name__), pdf, png, sidecar)
    return stats
