"""Analysis ``probes``: how linearly decodable a task's probe targets are from a model's internal
sites, at a run's weight snapshots (logistic regression; one job per probed run).

The targets are those the run's task offers (``probe_targets`` of its task module, e.g. the sparse
modular addition's partial sums, the Eureka tasks' hidden first step); the sites those its model
offers (``SITES``/``site`` of its model module, e.g. the circuit model's z_A and mlp_out).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import torch
import xarray as xr
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from ..models import build_run_model, run_inputs
from ..plumbing import registry
from ..plumbing.store import read_dataset
from ..selection import dataset_split, snapshot_arrays
from ..stats import log_spaced_indices

NAME = "probes"
PER_RUN = True  # one job per run listed in `runs`; the other keys are shared settings
CONFIG = """
description: "Linear probes on internal sites of the listed runs, at their weight snapshots."
properties:
  runs: {description: "Runs to probe (each on its own dataset).", type: array, items: {type: string, x-ref: run, x-reads: [weights, dataset]}, default: []}
  sites:
    description: "Internal sites probed (null: every site the run's model offers, e.g. z_A and mlp_out of the circuit model, attn_out_<layer> and cls of the transformer)."
    type: [array, "null"]
    items: {type: string}
    minItems: 1
    default: null
  targets:
    description: "Probe targets (null: every target the run's task offers, e.g. label, sum_k, zeros_k, token_<i> for sparse modular addition, step1 for the Eureka tasks)."
    type: [array, "null"]
    items: {type: string}
    minItems: 1
    default: null
  max_snapshots: {description: "Probe at most this many snapshots (log-spaced, first and last included).", type: integer, minimum: 1, default: 12}
  every_snapshot:
    description: "Runs (of runs) probed at every weight snapshot instead of max_snapshots of them, e.g. to time when a target becomes decodable."
    type: array
    items: {type: string, x-ref: run}
    default: []
  n_fit: {description: "Training sequences the probes are fitted on.", type: integer, minimum: 2, default: 1024}
  n_eval: {description: "Held-out test sequences the probes are scored on.", type: integer, minimum: 1, default: 512}
"""
CHECKS = [
    ["sites", "sites is None or set(sites) <= set(model_offers(r))",
     "run '{r}' is probed at sites {sites} but its model offers {model_offers(r)}"],
    ["targets", "targets is None or set(targets) <= set(task_offers(r))",
     "run '{r}' is probed for targets {targets} but its task offers {task_offers(r)}"],
    ["every_snapshot", "all(x in runs for x in every_snapshot)",
     "{[x for x in every_snapshot if x not in runs]} are not among the probed runs {runs}"],
]
USES = ["model", "task"]  # the run's model builds the sites, its task the targets
RESOURCES = {"runtime": 60, "mem_mb": 4000}


@dataclass(frozen=True)
class Params:
    runs: tuple[str, ...] = ()
    sites: tuple[str, ...] | None = None
    targets: tuple[str, ...] | None = None
    max_snapshots: int = 12
    every_snapshot: tuple[str, ...] = ()
    n_fit: int = 1024
    n_eval: int = 512


def choose_snapshots(n: int, max_snapshots: int) -> list[int]:
    """At most ``max_snapshots`` indices of n snapshots, log-spaced, first and last included."""
    return list(range(n)) if n <= max_snapshots else log_spaced_indices(n, max_snapshots)


@torch.no_grad()
def compute(cfg, name: str, params: Params, paths, threads: int = 1) -> tuple[xr.Dataset, dict]:
    """Probes of run ``name`` (a per-run analysis: the job's name is the run's)."""
    run = name
    torch.set_num_threads(max(1, threads))
    spec = cfg.run_spec(run)
    w = read_dataset(paths.weights(run), rule="train")
    data = read_dataset(paths.dataset(spec.dataset), rule="dataset")
    task = registry.load("task", spec.task)
    t_fit = task.probe_targets(data, "train", params.n_fit)
    t_eval = task.probe_targets(data, "test", params.n_eval)
    if params.targets is not None:
        t_fit, t_eval = {t: t_fit[t] for t in params.targets}, {t: t_eval[t] for t in params.targets}
    x_fit, x_eval = dataset_split(data, "train")[0][: params.n_fit], dataset_split(data, "test")[0][: params.n_eval]
    seeds = list(w.seed.values)
    model = build_run_model(spec, len(seeds))
    sites = list(params.sites) if params.sites is not None else model_sites(spec)
    n_snap = w.sizes["snapshot"]
    snaps = list(range(n_snap)) if run in params.every_snapshot else choose_snapshots(n_snap, params.max_snapshots)
    acc = np.full((len(seeds), len(snaps), len(sites), len(t_fit)), np.nan, dtype=np.float32)
    xf, xe = run_inputs(spec, x_fit), run_inputs(spec, x_eval)
    for j, snap in enumerate(snaps):
        model.load_arrays(snapshot_arrays(w, snap))
        fit, ev = model.internals(xf), model.internals(xe)
        for si, site in enumerate(sites):
            f_site, e_site = model.site(fit, site).numpy(), model.site(ev, site).numpy()  # (S, n, d)
            for s in range(len(seeds)):
                for ti, target in enumerate(t_fit):
                    acc[s, j, si, ti] = probe_accuracy(f_site[s], t_fit[target], e_site[s], t_eval[target])
    out = xr.Dataset(
        {"accuracy": (("seed", "snapshot", "site", "target"), acc),
         "chance": (("target",), np.array([chance_accuracy(t_fit[t], t_eval[t]) for t in t_fit], np.float32))},
        coords={"seed": seeds, "snapshot": w.snapshot.values[snaps], "site": sites, "target": list(t_fit)},
    )
    out["accuracy"].attrs["description"] = ("held-out accuracy of a logistic-regression probe fitted on "
                                            f"{len(x_fit)} training sequences, scored on {len(x_eval)} test sequences")
    return out, {"run": run, "model_kind": spec.model_kind}


def model_sites(spec) -> list[str]:
    """Every site the run's model offers (its declared SITES)."""
    from ..plumbing.config import evaluate

    plug = registry.plugin("model", spec.model_kind)
    return list(evaluate(plug.get("SITES", "[]"), spec.model, f"{plug.path} SITES"))


def probe_accuracy(train_x: np.ndarray, train_y: np.ndarray, test_x: np.ndarray, test_y: np.ndarray,
                   max_iter: int = 300) -> float:
    """Held-out accuracy of a standardised multinomial logistic regression (NaN if one class)."""
    if len(np.unique(train_y)) < 2 or not (np.isfinite(train_x).all() and np.isfinite(test_x).all()):
        return float("nan")
    clf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=max_iter))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(train_x, train_y)
    return float(clf.score(test_x, test_y))


def chance_accuracy(train_y: np.ndarray, test_y: np.ndarray) -> float:
    """Accuracy of always predicting the most frequent training class."""
    values, counts = np.unique(train_y, return_counts=True)
    return float(np.mean(test_y == values[np.argmax(counts)]))
