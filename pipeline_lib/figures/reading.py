"""Named inputs of figures: a run's trajectory with its ancestors' phases, the arms of an analysis
entry. Figures read artifacts only through these and ``store.read_dataset`` (never a model)."""
from __future__ import annotations

import xarray as xr

from ..plumbing.store import read_dataset


def arm_trajectory(cfg, run: str, paths, variables: list[str]) -> tuple[xr.Dataset, list[int]]:
    """A run's trajectory with its ancestors' phases in front (seeds of the last run), and the
    epochs where one phase hands over to the next."""
    chain = cfg.lineage(run)
    seeds = list(cfg.runs[run].seeds)
    parts, switches = [], []
    for i, r in enumerate(chain):
        ds = read_dataset(paths.trajectory(r), rule="train")[variables].sel(seed=seeds)
        if i + 1 < len(chain):  # the next phase re-records the hand-over epoch on its own task
            ds = ds.isel(epoch=slice(0, -1))
            switches.append(cfg.start_epoch(chain[i + 1]))
        parts.append(ds)
    return xr.concat(parts, dim="epoch"), switches


def recorded_attention(traj: xr.Dataset) -> xr.DataArray:
    """Attention at the epochs the schedule recorded (the artifact's ``attention_recorded``)."""
    return traj.attention.sel(epoch=traj.attention_recorded)


def entry_arms(cfg, kind: str, name: str, paths, variables: list[str], artifact: str = "trajectory") -> dict[str, xr.Dataset]:
    """Arm label -> the variables of one artifact per arm of analysis entry ``analyses.<kind>.<name>``
    (whose params hold ``arms``: label -> run). ``artifact``: 'trajectory' (the run's), or the name
    of a per-run analysis such as 'probes' (that analysis's artifact of the run)."""
    def path(run):
        return paths.trajectory(run) if artifact == "trajectory" else paths.analysis(artifact, run)

    rule = "train" if artifact == "trajectory" else artifact
    return {label: read_dataset(path(run), rule=rule)[variables]
            for label, run in cfg.analyses[kind][name].arms}


def per_arm_summary(stats: dict, describe, skip: tuple[str, ...] = ()) -> str:
    """One report line from stats shaped experiment -> arm label -> numbers: each arm's
    ``describe(numbers)``, prefixed with its experiment and label; keys in ``skip`` are not arms."""
    return "; ".join(f"{exp} {label}: {describe(numbers)}" for exp, arms in stats.items()
                     for label, numbers in arms.items() if label not in skip)
