"""Fig. 4 of 'Easing Optimization Paths': z_A of a d=2 circuit model after pretraining and after
finetuning, coloured by the sum of the first k tokens, with the cluster count of every seed; one row
per training setting (``pretrain``/``finetune`` first, then each of ``settings``, then ``p3``)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure

from ..analysis.clusters import count_clusters
from ..plumbing.store import read_dataset
from . import style

NAME = "fig4_embeddings"
PAPER = "Easing Optimization Paths: a Circuit Perspective"  # the report's category
CONFIG = """
description: z_A of a d=2 model after pretraining and after finetuning, coloured by the sum of the first k tokens.
required: [pretrain, finetune]
properties:
  pretrain:
    description: "Pretraining run (its final snapshot)."
    type: string
    x-ref: run
    x-requires: &d2
      properties:
        model: {properties: {kind: {const: circuit}, d: {const: 2}}}
        run: {properties: {n_embed: {minimum: 2}}}
    x-requires-message: &d2message >-
      must use a circuit model with d=2 and record z_A (n_embed >= 2) to be drawn in the plane
  finetune:
    description: "Finetuning run (its final snapshot)."
    type: string
    x-ref: run
    x-requires: *d2
    x-requires-message: *d2message
  settings:
    description: "Further rows: label -> {pretrain, finetune} pair of runs (e.g. another architecture or training setting)."
    type: object
    default: {}
    additionalProperties:
      type: object
      required: [pretrain, finetune]
      additionalProperties: false
      properties:
        pretrain: {description: "Pretraining run.", type: string, x-ref: run, x-requires: *d2, x-requires-message: *d2message}
        finetune: {description: "Finetuning run.", type: string, x-ref: run, x-requires: *d2, x-requires-message: *d2message}
  scratch:
    description: "Optional control: a d=2 run trained on the finetune's task from scratch (the paper: could not emerge from p = 4 only); its learned share and z_A statistics are reported, not drawn. null: none."
    type: [string, "null"]
    default: null
    x-ref: run
    x-requires: *d2
    x-requires-message: *d2message
  seed: {description: "Seed drawn (cluster counts are reported for every seed).", type: integer, minimum: 0, default: 0}
  max_clusters:
    description: "Largest k tried by the k-means/silhouette cluster count."
    type: integer
    minimum: 2
    default: 24
  p3:
    description: "Optional diagnostic row: a {pretrain, finetune} pair whose finetune trains on p=3 (the reference finetune.py's default), where the sums of the first k tokens take 2k+1 values; null: none."
    type: [object, "null"]
    default: null
    required: [pretrain, finetune]
    additionalProperties: false
    properties:
      pretrain: {description: "Pretraining run.", type: string, x-ref: run, x-requires: *d2, x-requires-message: *d2message}
      finetune: {description: "Finetuning run (p=3).", type: string, x-ref: run, x-requires: *d2, x-requires-message: *d2message}
"""
CHECKS = [["seed", "all(seed in seeds(r) for r in [pretrain, finetune, *[r for s in settings.values() for r in s.values()], "
           "*(p3 or {}).values()])", "seed {seed} is not trained by every run drawn"]]

PURE = 0.99  # "equivalence classes" of the sum: at least this share of points in a cluster of their own sum


@dataclass(frozen=True)
class Params:
    pretrain: str
    finetune: str
    settings: tuple = ()  # ((label, {"pretrain": run, "finetune": run}), ...)
    scratch: str | None = None
    seed: int = 0
    max_clusters: int = 24
    p3: tuple | None = None  # (("pretrain", run), ("finetune", run))


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    panels, stats, fitted, fitted0 = [], {}, {}, {}
    pairs = [("", {"pretrain": params.pretrain, "finetune": params.finetune})] + [
        (f" ({label})", pair) for label, pair in params.settings] + (
        [(" (p=3 diagnostic)", dict(params.p3))] if params.p3 else [])
    shown = [(setting, phase, pair[key]) for setting, pair in pairs
             for phase, key in (("after pretraining", "pretrain"), ("after finetuning", "finetune"))]
    if params.scratch:
        shown.append((" (control: from scratch, not drawn)", "", params.scratch))
    for setting, phase, run in shown:
        traj = read_dataset(paths.trajectory(run), rule="train")
        k = int(traj.attrs["task_k"])
        sums = traj.embed_x.values[:, :k].sum(1)
        z = traj.z_A.isel(snapshot=-1)  # final weights
        z0 = traj.z_A.isel(snapshot=0)  # the run's first snapshot: the initialisation, or a finetune's start
        if run not in fitted:  # a run drawn twice is counted once: per seed, the count and its clusters' labels
            fitted[run], fitted0[run] = _fit(z, params.max_clusters), _fit(z0, params.max_clusters)
        counts = {s: k for s, (k, _) in fitted[run].items()}
        if phase:
            panels.append({"title": f"{phase}{setting}\n{run}, seed {params.seed}", "z": z.sel(seed=params.seed).values,
                           "color": sums, "clusters": counts[params.seed]})
        train_acc, test_acc = traj.train_acc.isel(epoch=-1), traj.test_acc.isel(epoch=-1)
        stats[run] = {"clusters_per_seed": counts, "distinct_sums": int(len(np.unique(sums))),
                      "median_clusters": float(np.median(list(counts.values()))),
                      "final_train_acc": {int(s): float(train_acc.sel(seed=s)) for s in z.seed.values},
                      "final_test_acc": {int(s): float(test_acc.sel(seed=s)) for s in z.seed.values},
                      "purity_per_seed": {s: sum_purity(labels, sums) for s, (_, labels) in fitted[run].items()},
                      "clusters_start_per_seed": {s: k for s, (k, _) in fitted0[run].items()},
                      "purity_start_per_seed": {s: sum_purity(labels, sums) for s, (_, labels) in fitted0[run].items()},
                      "order_per_seed": {int(s): count_order(z.sel(seed=s).values, sums) for s in z.seed.values},
                      "order_start_per_seed": {int(s): count_order(z0.sel(seed=s).values, sums) for s in z.seed.values},
                      "pc1_share_per_seed": {int(s): pc1_share(z.sel(seed=s).values) for s in z.seed.values}}
    stats["summary"] = ("clusters of z_A (k-means, k by best silhouette): "
                        + "; ".join(f"{r}: final train accuracy per seed "
                                    f"{[round(a, 3) for a in s['final_train_acc'].values()]}, cluster counts "
                                    f"{list(s['clusters_per_seed'].values())} ({s['distinct_sums']} distinct sums)"
                                    for r, s in stats.items()))
    return plot_fig4_embeddings(panels, ncols=2), stats


def _fit(z, max_clusters: int) -> dict[int, tuple[int, np.ndarray]]:
    """Per seed of ``z`` (seed, point, 2): the cluster count and the points' cluster labels (:func:`count_clusters`)."""
    return {int(s): count_clusters(z.sel(seed=s).values, max_clusters, seed=0)[::2] for s in z.seed.values}


def sum_purity(labels: np.ndarray, sums: np.ndarray) -> float:
    """The share of points whose cluster (``labels``, as :func:`count_clusters` counted them) holds mostly their
    own sum: 1 when every cluster is one sum class ('equivalence classes' of the sum), whatever the count."""
    return float(sum(np.bincount(sums[labels == c]).max() for c in np.unique(labels)) / len(sums))


def count_order(z: np.ndarray, sums: np.ndarray) -> float | None:
    """How well one direction of the plane orders z_A by the count: |Spearman's rho| between the
    projection of z_A (n, 2) on its first principal axis and the sum of the first k tokens (1: the count
    is a monotone function of the position along that axis). None where z_A or the sums do not vary."""
    from scipy.stats import spearmanr

    centred = z - z.mean(0)
    if not np.isfinite(centred).all() or np.allclose(centred, 0) or np.unique(sums).size < 2:
        return None
    axis = np.linalg.svd(centred, full_matrices=False)[2][0]
    rho = spearmanr(centred @ axis, sums).statistic
    return None if not np.isfinite(rho) else float(abs(rho))


def pc1_share(z: np.ndarray) -> float | None:
    """The share of z_A's variance along its first principal axis (1: one-dimensional)."""
    sv = np.linalg.svd(z - z.mean(0), compute_uv=False) if np.isfinite(z).all() else None
    return None if sv is None or not (sv**2).sum() > 0 else float(sv[0] ** 2 / (sv**2).sum())


def plot_fig4_embeddings(panels: list[dict], ncols: int | None = None) -> Figure:
    """Each panel: ``title``, ``z`` (n, 2), ``color`` (n,) sums, ``clusters`` (count found); ``ncols``
    panels per row (default: all in one row)."""
    ncols = ncols or len(panels)
    fig, axes = style.figure(ncols=ncols, nrows=-(-len(panels) // ncols), width=4.0, height=3.2)
    for ax, panel in zip(axes.ravel(), panels):
        sc = ax.scatter(panel["z"][:, 0], panel["z"][:, 1], c=panel["color"], cmap="turbo", s=6,
                        vmin=np.min(panel["color"]), vmax=np.max(panel["color"]))
        # the cluster count in the title: a note inside the axes lay over the points where a cloud reached its corner
        ax.set_title(f"{panel['title']}: {panel['clusters']} clusters", fontsize=8)
        ax.set_xlabel("z_A[0]")
        ax.set_ylabel("z_A[1]")
        fig.colorbar(sc, ax=ax, label="sum of the first k tokens", fraction=0.05)
    return fig
