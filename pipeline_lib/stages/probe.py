"""Stage `probe`: linear probes on internal sites of one run at its weight snapshots."""
from __future__ import annotations

import numpy as np
import torch
import xarray as xr

from ..analysis.probe import chance_accuracy, probe_accuracy, sma_targets
from ..config import Config
from ..models import build_model
from ..store import code_hash, dataset_split, provenance, read_dataset, snapshot_arrays, write_dataset


def choose_snapshots(n: int, max_snapshots: int) -> list[int]:
    """At most ``max_snapshots`` indices of n snapshots, log-spaced, first and last included."""
    if n <= max_snapshots:
        return list(range(n))
    idx = np.unique(np.round(np.geomspace(1, n, max_snapshots)).astype(int) - 1)
    return sorted(set(idx.tolist()) | {0, n - 1})


@torch.no_grad()
def probe_stage(cfg: Config, run: str, weights_path: str, dataset_path: str, out_path: str,
                threads: int = 1) -> xr.Dataset:
    pc, rc = cfg.probes, cfg.runs[run]
    torch.set_num_threads(max(1, threads))
    w = read_dataset(weights_path, rule="train")
    data = read_dataset(dataset_path, rule="dataset")
    p, k, T = (int(data.attrs[f"task_{a}"]) for a in ("p", "k", "T"))
    (x_fit, _), (x_eval, _) = dataset_split(data, "train"), dataset_split(data, "test")
    x_fit, x_eval = x_fit[: pc.n_fit], x_eval[: pc.n_eval]
    t_fit, t_eval = sma_targets(x_fit, k, p), sma_targets(x_eval, k, p)
    seeds = list(w.seed.values)
    model = build_model(cfg.models[rc.model], len(seeds), p, T)
    snaps = choose_snapshots(w.sizes["snapshot"], pc.max_snapshots)
    acc = np.full((len(seeds), len(snaps), len(pc.sites), len(t_fit)), np.nan, dtype=np.float32)
    xf, xe = torch.as_tensor(x_fit, dtype=torch.long), torch.as_tensor(x_eval, dtype=torch.long)
    for j, snap in enumerate(snaps):
        model.load_arrays(snapshot_arrays(w, snap))
        fit, ev = model.internals(xf), model.internals(xe)
        for si, site in enumerate(pc.sites):
            f_site, e_site = getattr(fit, site).numpy(), getattr(ev, site).numpy()  # (S, n, d)
            for s in range(len(seeds)):
                for ti, target in enumerate(t_fit):
                    acc[s, j, si, ti] = probe_accuracy(f_site[s], t_fit[target], e_site[s], t_eval[target])
    out = xr.Dataset(
        {"accuracy": (("seed", "snapshot", "site", "target"), acc),
         "chance": (("target",), np.array([chance_accuracy(t_fit[t], t_eval[t]) for t in t_fit], np.float32))},
        coords={"seed": seeds, "snapshot": w.snapshot.values[snaps], "site": list(pc.sites), "target": list(t_fit)},
    )
    out["accuracy"].attrs["description"] = ("held-out accuracy of a logistic-regression probe fitted on "
                                            f"{len(x_fit)} training sequences, scored on {len(x_eval)} test sequences")
    attrs = provenance(cfg.probe_slice(run), [weights_path, dataset_path], device="cpu",
                       code=code_hash(__name__))
    attrs.update(run=run, p=p, k=k)
    write_dataset(out, out_path, attrs)
    return out
