"""Figure stages, one module per figure: read artifacts, call one plotting function, write
``.pdf``/``.png`` and a ``.json`` sidecar with the numbers the figure states (``stats``, including a
one-line ``summary`` the HTML report quotes) and the figure's provenance, also embedded in the PNG
and PDF metadata. This package file holds only shared helpers, so that each figure's code hash
covers its own module and nothing of the other figures.
"""
from __future__ import annotations

import json
from pathlib import Path

import xarray as xr

from ...config import Config
from ...store import atomic_path, code_hash, provenance, read_dataset


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


def figure_provenance(cfg: Config, name: str, inputs: dict[str, str], module: str) -> dict:
    return provenance(cfg.figure_slice(name), [inputs[k] for k in sorted(inputs)], device="none",
                      code=code_hash(module))


def arm_trajectory(cfg: Config, run: str, paths: dict[str, str], variables: list[str]) -> tuple[xr.Dataset, list[int]]:
    """A run's trajectory with its ancestors' phases in front (seeds of the last run), and the
    epochs where one phase hands over to the next. ``paths`` maps run names to trajectory files."""
    chain = cfg.lineage(run)
    seeds = list(cfg.runs[run].seeds)
    parts, switches = [], []
    for i, r in enumerate(chain):
        ds = read_dataset(paths[r], rule="train")[variables].sel(seed=seeds)
        if i + 1 < len(chain):  # the next phase re-records the hand-over epoch on its own task
            ds = ds.isel(epoch=slice(0, -1))
            switches.append(cfg.start_epoch(chain[i + 1]))
        parts.append(ds)
    return xr.concat(parts, dim="epoch"), switches


def recorded_attention(traj: xr.Dataset) -> xr.DataArray:
    """Attention at the epochs the schedule recorded (the artifact's ``attention_recorded``)."""
    return traj.attention.sel(epoch=traj.attention_recorded)


def experiment_arms(cfg: Config, experiment: str, paths: dict[str, str], variables: list[str],
                    key: str = "{run}", rule: str = "train") -> dict[str, xr.Dataset]:
    """Arm label -> the variables of one artifact per arm of a Eureka experiment; ``key`` names the
    input that holds a run's artifact (trajectories by run name, probes as ``probe_{run}``)."""
    return {label: read_dataset(paths[key.format(run=run)], rule=rule)[variables]
            for label, run in cfg.eureka[experiment].arms}


def per_arm_summary(stats: dict, describe, skip: tuple[str, ...] = ()) -> str:
    """One report line from a Eureka figure's stats (experiment -> arm label -> numbers): each arm's
    ``describe(numbers)``, prefixed with its experiment and label; keys in ``skip`` are not arms."""
    return "; ".join(f"{exp} {label}: {describe(numbers)}" for exp, arms in stats.items()
                     for label, numbers in arms.items() if label not in skip)
