"""Task families (DESIGN section 7), one plug-in module each (see ``pipeline_lib.plumbing.registry``).

A task module declares ``NAME``, ``CONFIG`` (its keys of a ``datasets`` entry), ``MODELS`` (the model
kinds that serve it), ``SHAPE`` (n_train, n_test, tokens, T, classes as expressions of its keys),
``CHECKS``, ``PROBE_TARGETS`` and optionally ``EMBED_INPUTS``, and defines ``Params``, ``generate(params) -> xr.Dataset`` (the
artifact's data: ``x``, ``y``, ``split`` and anything else it offers) and
``probe_targets(ds, split, n) -> {name: labels}`` (and ``embed_inputs(ds, kind) -> (x, y)`` for the
kinds of ``EMBED_INPUTS`` besides "test"). This package file holds only what they share.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import xarray as xr


@dataclass(frozen=True)
class TaskData:
    """Train/test split of a sequence-classification task; ``attrs`` go into the artifact."""

    x_train: np.ndarray  # (n_train, T) int64
    y_train: np.ndarray  # (n_train,) int64
    x_test: np.ndarray  # (n_test, T) int64
    y_test: np.ndarray  # (n_test,) int64
    attrs: dict = field(default_factory=dict)
    latent_train: np.ndarray | None = None  # hidden variables a task is built from (probe targets)
    latent_test: np.ndarray | None = None
    draw: np.ndarray | None = None  # (n_train,): the training draw of each training row (the i-th seed of a run trains on draw i)

    def to_dataset(self) -> xr.Dataset:
        """Train and test in one table along ``sample``, told apart by the ``split`` coordinate; with
        training draws, the ``draw`` coordinate gives each row's draw (-1 on the test rows)."""
        x = np.concatenate([self.x_train, self.x_test])
        y = np.concatenate([self.y_train, self.y_test])
        split = np.array(["train"] * len(self.x_train) + ["test"] * len(self.x_test), dtype=object)
        coords = {"sample": np.arange(len(x)), "position": np.arange(x.shape[1]), "split": ("sample", split)}
        if self.draw is not None:
            coords["draw"] = ("sample", np.concatenate([self.draw, np.full(len(self.x_test), -1)]).astype(np.int64))
        return xr.Dataset(
            {"x": (("sample", "position"), x), "y": (("sample",), y)},
            coords=coords,
            attrs={f"task_{k}": v for k, v in self.attrs.items()},
        )


def split_values(ds: xr.Dataset, name: str, split: str, n: int | None = None) -> np.ndarray:
    """The first ``n`` values of variable ``name`` in one split of a dataset artifact."""
    return ds[name].values[ds.split.values == split][:n]


def chance_without_step1(y: np.ndarray, candidates: np.ndarray) -> float:
    """Two-step tasks: best accuracy of a predictor that ignores step 1, i.e. always answers the
    first candidate or always the second."""
    return float(max(np.mean(y == candidates[:, 0]), np.mean(y == candidates[:, 1])))


def two_step_dataset(data: TaskData, step1: np.ndarray, candidates: np.ndarray, description: str,
                     layout: str) -> xr.Dataset:
    """A two-step task's artifact: ``x``, ``y``, ``step1`` (the hidden first step, the probe target),
    ``candidates`` and, in attrs, the chance level without step 1 on the test split."""
    ds = data.to_dataset()
    ds["step1"] = ("sample", step1)
    ds["step1"].attrs["description"] = description
    ds["candidates"] = (("sample", "candidate"), candidates)
    test = ds.split.values == "test"
    ds.attrs.update(task_chance_without_step1=chance_without_step1(ds.y.values[test], candidates[test]),
                    task_x_layout=layout, task_n_classes=int(data.attrs["n_classes"]))
    return ds
