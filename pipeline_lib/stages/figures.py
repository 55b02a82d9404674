"""Figure stages: read artifacts, call one plotting function, write .pdf/.png and a .json sidecar.

The sidecar holds the numbers the figure states (e.g. success counts) and the figure's provenance
(config slice, input paths and hashes, code version); the PNG carries the same JSON in its metadata.
"""
from __future__ import annotations

import json
from pathlib import Path

import xarray as xr

from ..config import Config
from ..figures.fig5 import plot_fig5_accuracy
from ..store import atomic_path, code_hash, provenance, read_dataset



def save_figure(fig, stats: dict, attrs: dict, pdf: str, png: str, sidecar: str) -> None:
    import matplotlib.pyplot as plt

    meta = json.dumps({"stats": stats, "provenance": attrs})
    with atomic_path(pdf) as tmp:
        fig.savefig(tmp, format="pdf", bbox_inches="tight", metadata={"Subject": meta[:60000]})
    with atomic_path(png) as tmp:
        fig.savefig(tmp, format="png", dpi=150, bbox_inches="tight", metadata={"Description": meta})
    with atomic_path(sidecar) as tmp:
        Path(tmp).write_text(json.dumps({"stats": stats, "provenance": attrs}, indent=2))
    plt.close(fig)


def arm_trajectory(cfg: Config, run: str, paths: dict[str, str]) -> tuple[xr.Dataset, list[int]]:
    """A run's trajectory with its ancestors' phases in front (seeds of the last run), and the
    epochs where one phase hands over to the next."""
    chain = cfg.lineage(run)
    seeds = list(cfg.runs[run].seeds)
    parts, switches = [], []
    for i, r in enumerate(chain):
        ds = read_dataset(paths[r], rule="train")[["train_loss", "train_acc", "test_loss", "test_acc"]]
        ds = ds.sel(seed=seeds)
        if i + 1 < len(chain):  # the next phase re-records the hand-over epoch on its own task
            ds = ds.isel(epoch=slice(0, -1))
            switches.append(cfg.start_epoch(chain[i + 1]))
        parts.append(ds)
    return xr.concat(parts, dim="epoch"), switches


def fig5_accuracy(cfg: Config, trajectories: dict[str, str], pdf: str, png: str, sidecar: str) -> dict:
    fc = cfg.figures["fig5_accuracy"]
    arms, switches = {}, {}
    for label, run in fc.arms:
        arms[label], switches[label] = arm_trajectory(cfg, run, trajectories)
    fig, stats = plot_fig5_accuracy(arms, switches, fc.success_threshold)
    attrs = provenance(cfg.figure_slice("fig5_accuracy"), [trajectories[r] for r in sorted(trajectories)],
                       device="none", code=code_hash(__name__))
    save_figure(fig, stats, attrs, pdf, png, sidecar)
    return stats
