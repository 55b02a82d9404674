"""Results from Python (notebooks): open a run's trajectory and weights, an analysis, a model at a snapshot,
and the table of runs. Everything reads the HDF5 artifacts of a results folder; nothing here trains.

    import pipeline_lib as pl
    traj = pl.open_run("curriculum_p2_p4")        # the pretraining and finetuning phases on one epoch axis
    traj.test_acc.median("seed").plot()
    model = pl.model_at("scratch_p4", epoch=10000, seed=3)   # a torch model of that snapshot
    pl.runs()                                     # every run with its final metrics

A finetuned run's artifact holds its own epochs only (its ``init_from`` names the run it starts from):
:func:`open_run` follows that chain back and joins the phases along ``epoch`` with the run of each epoch
as the coordinate ``phase`` (the switch's epoch belongs to the later phase, which evaluates the new task there).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import xarray as xr


def _open(path: Path) -> xr.Dataset:
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist; build it first (e.g. `snakemake {path}`) or pass the "
                                "results folder it lies in (results=...)")
    with xr.open_dataset(path, engine="h5netcdf") as ds:
        return ds.load()


def open_run(name: str, results: str | Path = "results", phases: bool = True) -> xr.Dataset:
    """The trajectory of run ``name`` (losses, accuracies, attention per seed and epoch). With ``phases``, a
    finetuned run comes with the runs it starts from, joined along ``epoch`` (variables over epochs only),
    the coordinate ``phase`` naming each epoch's run."""
    traj = _open(Path(results) / "runs" / name / "trajectory.h5")
    parent = traj.attrs.get("init_from", "")
    if not phases or not parent:
        return traj.assign_coords(phase=("epoch", np.full(traj.sizes["epoch"], name, dtype=object)))
    before = open_run(parent, results, phases=True)
    before = before.sel(epoch=before.epoch < int(traj.epoch[0]), seed=traj.seed.values)
    keep = [v for v in traj.data_vars if "epoch" in traj[v].dims and v in before.data_vars]
    here = traj[keep].assign_coords(phase=("epoch", np.full(traj.sizes["epoch"], name, dtype=object)))
    joined = xr.concat([before[keep], here], dim="epoch", coords="minimal", compat="override", join="outer")
    joined.attrs = dict(traj.attrs, phases=", ".join(dict.fromkeys(joined.phase.values.tolist())))
    return joined


def open_weights(name: str, results: str | Path = "results") -> xr.Dataset:
    """The weight snapshots of run ``name``: every parameter over (snapshot, seed, its own dims)."""
    return _open(Path(results) / "runs" / name / "weights.h5")


def open_analysis(kind: str, name: str, results: str | Path = "results") -> xr.Dataset:
    """The artifact of an analysis entry, e.g. ``open_analysis("eureka", "reasoning")``."""
    return _open(Path(results) / "analysis" / kind / f"{name}.h5")


def model_at(name: str, epoch: int | None = None, seed: int = 0, results: str | Path = "results"):
    """A torch model of run ``name`` (one seed) with its weights at the recorded snapshot ``epoch`` (None: the
    last), built from the config the run recorded in its artifact, so it needs no config file."""
    from . import snapshots

    weights = open_weights(name, results)
    epoch = int(weights.snapshot.values[-1]) if epoch is None else epoch
    return snapshots.model_at(weights, snapshots.run_spec(weights, name), epoch, [seed])


def runs(results: str | Path = "results") -> list[dict]:
    """Every trained run of a results folder with its last epoch's metrics (medians over seeds)."""
    rows = []
    for path in sorted(Path(results).glob("runs/*/trajectory.h5")):
        with xr.open_dataset(path, engine="h5netcdf") as traj:  # only the last epoch's metrics are read
            last = traj.isel(epoch=-1)
            rows.append({"run": path.parent.name, "model": traj.attrs.get("model_kind", ""),
                         "dataset": traj.attrs.get("dataset", ""), "init_from": traj.attrs.get("init_from", ""),
                         "seeds": int(traj.sizes["seed"]), "epoch": int(last.epoch),
                         **{k: float(last[k].median()) for k in ("train_loss", "train_acc", "test_loss", "test_acc")
                            if k in last}})
    return rows


def format_runs(rows: list[dict]) -> str:
    """The rows of :func:`runs` as an aligned text table."""
    if not rows:
        return "no runs"
    cols = list(dict.fromkeys(k for r in rows for k in r))
    cell = lambda v: f"{v:.4g}" if isinstance(v, float) else str(v)  # noqa: E731
    widths = {c: max(len(c), *(len(cell(r.get(c, ""))) for r in rows)) for c in cols}
    lines = ["  ".join(c.ljust(widths[c]) for c in cols)]
    lines += ["  ".join(cell(r.get(c, "")).ljust(widths[c]) for c in cols) for r in rows]
    return "\n".join(lines)
