"""Stage `interpolate`: loss along theta(t) = (1-t) theta_a + t theta_b between two runs' final weights."""
from __future__ import annotations

import numpy as np
import torch
import xarray as xr

from ..analysis.interpolate import barrier_height, interpolate, t_grid
from ..config import Config
from ..store import code_hash, dataset_split, provenance, read_dataset, snapshot_arrays, write_dataset
from .kinds import MODEL_MODULES, build_run_model, run_inputs


def interpolate_stage(cfg: Config, name: str, weights_a: str, weights_b: str, dataset_path: str,
                      out_path: str, threads: int = 1) -> xr.Dataset:
    ic = cfg.interpolation[name]
    torch.set_num_threads(max(1, threads))
    seeds = list(cfg.runs[ic.b].seeds)
    wa = read_dataset(weights_a, rule="train").sel(seed=seeds)
    wb = read_dataset(weights_b, rule="train").sel(seed=seeds)
    data = read_dataset(dataset_path, rule="dataset")
    splits = {s: (run_inputs(cfg, ic.b, x), torch.as_tensor(y, dtype=torch.long))
              for s, (x, y) in ((s, dataset_split(data, s)) for s in ("train", "test"))}
    model = build_run_model(cfg, ic.b, len(seeds))
    ts = t_grid(ic.t_min, ic.t_max, ic.n_points)
    res = interpolate(model, snapshot_arrays(wa, -1), snapshot_arrays(wb, -1), ts, splits)
    out = xr.Dataset(
        {k: (("seed", "t"), v.astype(np.float32)) for k, v in res.items()},
        coords={"seed": seeds, "t": ts},
    )
    for split in ("train", "test"):
        out[f"barrier_{split}"] = (("seed",), barrier_height(ts, res[f"{split}_loss"]).astype(np.float32))
        out[f"barrier_{split}"].attrs["description"] = (
            f"max {split} loss on t in [0, 1] minus the larger endpoint loss")
    attrs = provenance(cfg.analysis_slice("interpolation", name), [weights_a, weights_b, dataset_path],
                       device="cpu", code=code_hash(__name__) + code_hash(MODEL_MODULES[cfg.models[cfg.runs[ic.b].model].kind]))
    attrs.update(run_a=ic.a, run_b=ic.b, epoch_a=int(wa.snapshot[-1]), epoch_b=int(wb.snapshot[-1]),
                 dataset=ic.dataset)
    write_dataset(out, out_path, attrs)
    return out
