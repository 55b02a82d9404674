"""Stage `eureka_stats`: Eureka epochs per seed and Eureka-ratio per arm of one experiment
(results/analysis/eureka/<name>.h5)."""
from __future__ import annotations

import numpy as np
import xarray as xr

from ..analysis.eureka import eureka_summary
from ..config import Config
from ..store import code_hash, provenance, read_dataset, write_dataset

PER_ARM = ("n_seeds", "n_eureka", "eureka_ratio", "ratio_ci_low", "ratio_ci_high", "mean_eureka_epoch",
           "acc_after_eureka", "mean_final_test_acc")


def eureka_stats(cfg: Config, name: str, trajectories: dict[str, str], out_path: str) -> xr.Dataset:
    ec = cfg.eureka[name]
    labels = [lbl for lbl, _ in ec.arms]
    seeds = sorted({s for _, run in ec.arms for s in cfg.runs[run].seeds})
    per_seed = {v: np.full((len(labels), len(seeds)), np.nan) for v in ("eureka_epoch", "final_test_acc")}
    per_arm = {v: np.zeros(len(labels)) for v in PER_ARM}
    for i, (label, run) in enumerate(ec.arms):
        traj = read_dataset(trajectories[run], rule="train")
        res = eureka_summary(traj.test_acc.values, traj.epoch.values, ec.threshold)
        cols = [seeds.index(int(s)) for s in traj.seed.values]
        for v in per_seed:
            per_seed[v][i, cols] = res[v]
        for v in PER_ARM:
            per_arm[v][i] = res[v]
    rc = {lbl: cfg.runs[run] for lbl, run in ec.arms}
    out = xr.Dataset(
        {**{v: (("arm", "seed"), a.astype(np.float32)) for v, a in per_seed.items()},
         **{v: (("arm",), a) for v, a in per_arm.items()},
         "run": (("arm",), np.array([r.name for r in rc.values()], dtype=object)),
         "attention": (("arm",), np.array([r.attention.describe() for r in rc.values()], dtype=object)),
         "dataset": (("arm",), np.array([r.dataset for r in rc.values()], dtype=object))},
        coords={"arm": labels, "seed": seeds},
    )
    out["eureka_epoch"].attrs["description"] = f"first epoch with test accuracy > {ec.threshold} (NaN: never)"
    out["eureka_ratio"].attrs["description"] = "share of seeds with a Eureka epoch; ratio_ci_* its 95% Wilson interval"
    out["acc_after_eureka"].attrs["description"] = "mean final test accuracy of the seeds with a Eureka epoch"
    attrs = provenance(cfg.analysis_slice("eureka", name), [trajectories[r] for _, r in ec.arms], device="none",
                       code=code_hash(__name__))
    attrs.update(threshold=ec.threshold, experiment=name)
    write_dataset(out, out_path, attrs)
    return out
