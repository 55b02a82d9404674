"""Which rows, seeds and snapshot of an artifact a stage reads: a dataset's split, a weights artifact's snapshot,
the coordinates that ride along the seed axis. Hashed code (unlike the store's I/O): a change here changes what is
computed."""
from __future__ import annotations

import numpy as np
import xarray as xr


def dataset_split(ds: xr.Dataset, which: str) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) of one split ('train' or 'test') of a dataset artifact. A dataset with training draws (one
    per seed, read by the training stage) has no single training set: asking for it raises, naming the dataset."""
    sel = ds.split.values == which
    if which == "train" and "draw" in ds.coords:
        raise ValueError(f"dataset {ds.attrs.get('task_task', '')!r} holds {int(ds.attrs.get('task_draws', 0))} "
                         "training draws, one per seed (config key 'draws'), and no single training set: "
                         "this stage reads one; use a dataset without 'draws' for it")
    return ds.x.values[sel], ds.y.values[sel]


def seed_coords(ds: xr.Dataset) -> dict:
    """The coordinates along ``seed`` besides ``seed`` itself (a swept run's run_seed, lr, lr_ratio_*),
    for an analysis to carry into its artifact."""
    return {k: v for k, v in ds.coords.items() if v.dims == ("seed",) and k != "seed"}


def snapshot_arrays(weights: xr.Dataset, index: int) -> dict[str, np.ndarray]:
    """Every variable with a ``snapshot`` dim at one snapshot (by position), as (seed, ...) arrays."""
    return {n: v.isel(snapshot=index).values for n, v in weights.data_vars.items() if "snapshot" in v.dims}
