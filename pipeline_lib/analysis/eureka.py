"""Eureka-moment statistics ('Eureka-Moments in Transformers', Table 1): per seed the first epoch
whose test accuracy exceeds a threshold; per arm the share of seeds that have one (the Eureka-ratio,
with a 95% Wilson interval), their mean Eureka epoch and their accuracy. Analysis ``eureka``: one
experiment's runs compared as arms (results/analysis/eureka/<name>.h5)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr

from ..plumbing.store import read_dataset
from ..stats import wilson_interval

NAME = "eureka"
CONFIG = """
description: "Named Eureka-moment experiments: runs compared as arms (the eureka_* figures)."
required: [arms]
properties:
  arms:
    description: "Label (e.g. the attention variant) -> run; all arms of an experiment use the same dataset."
    type: object
    minProperties: 1
    additionalProperties: {type: string, x-ref: run, x-reads: [trajectory]}
  threshold:
    description: "The Eureka epoch of a seed is the first epoch whose test accuracy exceeds this (the paper: 0.7)."
    type: number
    exclusiveMinimum: 0
    maximum: 1
    default: 0.7
"""
RESOURCES = {"runtime": 10, "mem_mb": 2000}
PER_ARM = ("n_seeds", "n_eureka", "eureka_ratio", "ratio_ci_low", "ratio_ci_high", "mean_eureka_epoch",
           "acc_after_eureka", "mean_final_test_acc", "n_plateau", "n_memorise", "lr", "last_epoch")
PER_SEED = ("eureka_epoch", "final_test_acc", "train_eureka_epoch", "final_train_acc")


@dataclass(frozen=True)
class Params:
    arms: tuple[tuple[str, str], ...]
    threshold: float = 0.7


def compute(cfg, name: str, params: Params, paths, threads: int = 1) -> tuple[xr.Dataset, dict]:
    from ..attention import describe  # here: the module imports torch, and figures load this one's Params

    labels = [lbl for lbl, _ in params.arms]
    seeds = sorted({s for _, run in params.arms for s in cfg.runs[run].seeds})
    per_seed = {v: np.full((len(labels), len(seeds)), np.nan) for v in PER_SEED}
    per_arm = {v: np.zeros(len(labels)) for v in PER_ARM}
    for i, (label, run) in enumerate(params.arms):
        traj = read_dataset(paths.trajectory(run), rule="train")
        res = eureka_summary(traj.test_acc.values, traj.epoch.values, params.threshold, traj.train_acc.values)
        res["lr"] = cfg.runs[run].optimizer.lr
        res["last_epoch"] = int(traj.epoch.values[-1])
        cols = [seeds.index(int(s)) for s in traj.seed.values]
        for v in per_seed:
            per_seed[v][i, cols] = res[v]
        for v in PER_ARM:
            per_arm[v][i] = res[v]
    rc = {lbl: cfg.runs[run] for lbl, run in params.arms}
    out = xr.Dataset(
        {**{v: (("arm", "seed"), a.astype(np.float32)) for v, a in per_seed.items()},
         **{v: (("arm",), a) for v, a in per_arm.items()},
         "run": (("arm",), np.array([r.name for r in rc.values()], dtype=object)),
         "attention": (("arm",), np.array([describe(r.attention) if _has_attention(cfg, r) else "none (no attention)"
                                           for r in rc.values()], dtype=object)),
         "dataset": (("arm",), np.array([r.dataset for r in rc.values()], dtype=object))},
        coords={"arm": labels, "seed": seeds},
    )
    out["eureka_epoch"].attrs["description"] = f"first epoch with test accuracy > {params.threshold} (NaN: never)"
    out["eureka_ratio"].attrs["description"] = "share of seeds with a Eureka epoch; ratio_ci_* its 95% Wilson interval"
    out["acc_after_eureka"].attrs["description"] = "mean final test accuracy of the seeds with a Eureka epoch"
    out["train_eureka_epoch"].attrs["description"] = f"first epoch with train accuracy > {params.threshold} (NaN: never)"
    out["n_plateau"].attrs["description"] = (f"seeds without a Eureka epoch whose final train accuracy is also <= "
                                             f"{params.threshold}: train and test stay on the plateau together")
    out["n_memorise"].attrs["description"] = (f"seeds without a Eureka epoch whose final train accuracy is > "
                                              f"{params.threshold}: the training set is fitted, the test set not")
    out["lr"].attrs["description"] = "the run's peak learning rate (optimizer.lr)"
    out["last_epoch"].attrs["description"] = "the run's last recorded epoch (its length)"
    return out, {"threshold": params.threshold, "experiment": name, "device": "none"}


def _has_attention(cfg, run) -> bool:
    """Whether the run's model kind records attention (a ResNet control has none to describe)."""
    from ..plumbing.config_checks import model_records

    return "attention" in model_records(cfg.raw["models"][run.model])


def eureka_epochs(test_acc: np.ndarray, epochs: np.ndarray, threshold: float) -> np.ndarray:
    """First epoch at which test accuracy exceeds ``threshold``, per seed (rows); NaN if never."""
    above = np.nan_to_num(np.asarray(test_acc, dtype=float), nan=-np.inf) > threshold
    first = np.argmax(above, axis=1)
    return np.where(above.any(axis=1), np.asarray(epochs, dtype=float)[first], np.nan)


def eureka_summary(test_acc: np.ndarray, epochs: np.ndarray, threshold: float,
                   train_acc: np.ndarray | None = None) -> dict:
    """Per-seed Eureka epochs and final accuracy, and the arm's Table-1 numbers. ``test_acc`` is
    (seeds, epochs); a seed whose last accuracy is NaN (diverged) counts as one without Eureka. With
    ``train_acc`` (same shape) also the train-side crossing and whether each seed without a Eureka epoch
    stays on the plateau in training too (the paper's Sec. 2: train and validation accuracy saturate
    together) or fits its training set without generalising (memorises)."""
    ep = eureka_epochs(test_acc, epochs, threshold)
    final = np.asarray(test_acc, dtype=float)[:, -1]
    hit = np.isfinite(ep)
    train = np.full_like(np.asarray(test_acc, dtype=float), np.nan) if train_acc is None else np.asarray(train_acc, float)
    final_train = train[:, -1]
    fitted = np.nan_to_num(final_train, nan=-np.inf) > threshold
    n, k = len(ep), int(hit.sum())
    lo, hi = wilson_interval(k, n)
    return {
        "eureka_epoch": ep, "final_test_acc": final,
        "n_seeds": n, "n_eureka": k, "eureka_ratio": k / n, "ratio_ci_low": lo, "ratio_ci_high": hi,
        "mean_eureka_epoch": float(np.mean(ep[hit])) if k else float("nan"),
        "acc_after_eureka": float(np.nanmean(final[hit])) if k else float("nan"),
        "mean_final_test_acc": float(np.nanmean(final)) if np.isfinite(final).any() else float("nan"),
        "train_eureka_epoch": eureka_epochs(train, epochs, threshold), "final_train_acc": final_train,
        "n_plateau": int((~hit & ~fitted).sum()) if train_acc is not None else float("nan"),
        "n_memorise": int((~hit & fitted).sum()) if train_acc is not None else float("nan"),
    }
