"""Stage `dataset`: generate a task's train/test split into results/datasets/<name>.h5."""
from __future__ import annotations

import numpy as np
import xarray as xr

from ..tasks import TaskData
from ..tasks.sma import sparse_modular_addition
from ..config import Config
from ..store import code_hash, provenance, write_dataset



def task_to_dataset(data: TaskData) -> xr.Dataset:
    """Train and test in one table along ``sample``, told apart by the ``split`` coordinate."""
    x = np.concatenate([data.x_train, data.x_test])
    y = np.concatenate([data.y_train, data.y_test])
    split = np.array(["train"] * len(data.x_train) + ["test"] * len(data.x_test), dtype=object)
    return xr.Dataset(
        {"x": (("sample", "position"), x), "y": (("sample",), y)},
        coords={"sample": np.arange(len(x)), "position": np.arange(x.shape[1]), "split": ("sample", split)},
        attrs={f"task_{k}": v for k, v in data.attrs.items()},
    )


def build_dataset(cfg: Config, name: str, out_path: str) -> None:
    d = cfg.datasets[name]
    if d.task != "sparse_modular_addition":
        raise ValueError(f"unknown task {d.task!r}")
    data = sparse_modular_addition(d.p, d.T, d.k, d.n_train, d.n_test, d.seed)
    write_dataset(task_to_dataset(data), out_path,
                  provenance(cfg.dataset_slice(name), device="none", code=code_hash(__name__)))
