"""Stage `dataset` for the two-step tasks of 'Eureka-Moments' (eureka_reasoning, eureka_digits).

Besides ``x``/``y`` the artifact holds ``step1(sample)``, the hidden first step (the probe target),
and in attrs ``task_chance_without_step1``: the best test accuracy of a predictor that ignores
step 1 (always answer the first candidate, or always the second), computed from the data.
"""
from __future__ import annotations

import numpy as np

from ..config import Config
from ..store import code_hash, provenance, write_dataset
from ..tasks.eureka import digits_step1, eureka_digits, eureka_reasoning, eureka_step1
from .dataset import task_to_dataset


def build_dataset(cfg: Config, name: str, out_path: str) -> None:
    d = cfg.datasets[name]
    if d.task == "eureka_reasoning":
        data = eureka_reasoning(d.n, d.train_fraction, d.seed)
        x = np.concatenate([data.x_train, data.x_test])
        step1, candidates = eureka_step1(x), x[:, 2:4]  # candidates: c and d
        layout = "tokens (a, b, c, d)"
    elif d.task == "eureka_digits":
        data = eureka_digits(d.n_train, d.n_test, d.seed, d.test_images)
        latent = np.concatenate([data.latent_train, data.latent_test])
        step1, candidates = digits_step1(latent), latent[:, [1, 2]]  # candidates: TR and BL targets
        layout = "16x16 image flattened row-major, values 0..16"
    else:
        raise ValueError(f"stage dataset_eureka does not generate task {d.task!r}")
    ds = task_to_dataset(data)
    ds["step1"] = ("sample", step1)
    ds["step1"].attrs["description"] = ("hidden first step: a and b have different parity" if d.task == "eureka_reasoning"
                                        else "hidden first step: the two indicator digits have the same class")
    ds["candidates"] = (("sample", "candidate"), candidates)
    test = ds.split.values == "test"
    y = ds.y.values[test]
    chance = float(max(np.mean(y == candidates[test, 0]), np.mean(y == candidates[test, 1])))
    ds.attrs.update(task_chance_without_step1=chance, task_x_layout=layout, task_n_classes=int(data.attrs["n_classes"]))
    write_dataset(ds, out_path, provenance(cfg.dataset_slice(name), device="none", code=code_hash(__name__)))
