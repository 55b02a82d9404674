"""Scan&Snap (Tian's talk): the attention c over one class's context tokens across training steps
(heat map: 10 common then 10 distinct tokens, least to most frequent), the common tokens' total mass
and the entropy of c over the distinct tokens against steps (every seed thin, median bold), with the
talk's reference log marked."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr
from matplotlib.figure import Figure

from ..plumbing.store import read_dataset
from . import style

NAME = "scan_snap_attention"
PAPER = "Tian: training dynamics of attention (Scan&Snap, JoMA)"
CONFIG = """
description: The attention c of a Scan&Snap run over steps, its common-token mass and distinct entropy.
required: [run]
properties:
  run: {description: "A run listed in analyses.scan_snap.runs.", type: string, x-ref: run, x-reads: [analysis/scan_snap, trajectory]}
  class_index: {description: "The class whose tokens the heat map shows.", type: integer, minimum: 0, default: 0}
  seed: {description: "The seed of the heat map (the curves show every seed).", type: integer, minimum: 0, default: 0}
"""

# the reference (lr_Z = 1, eta_Y/eta_Z = 1, zero init): the losses and the initial c (10 x 0.0645 common, top
# distinct 0.0645) are those of facebookresearch/luckmatters ssl/real-dataset/scan_snap/figure_4.log (one run, seed 2);
# the final c values (0.39-0.43, 0.17) have no recorded source
REFERENCE = {"loss": {0: 3.526, 2: 2.368, 4: 0.733, 6: 0.161, 10: 0.013, 20: 2.1e-4},
             "common_mass": (0.645, "0.39-0.43"), "top_distinct": (0.065, 0.17)}
LOSS_STEPS = (0, 2, 4, 6, 10, 20)
REFERENCE_DATA = {"num_last": 2, "num_next_per_last": 1, "num_common": 10, "num_distinct": 10, "common_weight": 1.0,
                  "distinct_min": 0.1, "distinct_max": 1.0, "T": 128}

REL_TOL = 0.10  # a measured value matches a point reference (a logged loss, a "~" value) within 10% of it

LOG = "facebookresearch/luckmatters ssl/real-dataset/scan_snap/figure_4.log"
REFERENCE_CLAIMS = ("loss_matches_log", "common_mass_final", "top_distinct_final", "snap_starts_near_8",
                    "snap_ends_near_30", "frozen_after_40")


def is_reference_setting(cfg, run: str) -> bool:
    """Whether a run is the talk's logged setting (the references are then comparable)."""
    rc = cfg.runs[run]
    data = cfg.datasets[rc.dataset].params
    return (all(data.get(k) == v for k, v in REFERENCE_DATA.items()) and rc.batch_size == 128 and rc.epochs >= 20
            and rc.optimizer.lr == 1.0 and rc.optimizer.momentum == 0.9 and dict(rc.optimizer.lr_ratio).get("Y", 1.0) == 1.0
            and not rc.sweep and cfg.models[rc.model].params.get("init", "zero") == "zero")


@dataclass(frozen=True)
class Params:
    run: str
    class_index: int = 0
    seed: int = 0


def transition_steps(mass: np.ndarray, steps: np.ndarray, lo: float = 0.1, hi: float = 0.9) -> tuple[float, float]:
    """First steps at which a monotone-ish curve has covered ``lo`` and ``hi`` of its total change."""
    change = np.abs(mass - mass[0])
    total = change[-1]
    if total == 0:
        return float("nan"), float("nan")
    return float(steps[np.argmax(change >= lo * total)]), float(steps[np.argmax(change >= hi * total)])


def settle_step(mass: np.ndarray, steps: np.ndarray, tol: float = 0.1) -> float:
    """First step from which a curve stays within ``tol`` of its total change of its final value (a curve that
    moves back and forth settles only when it stops doing so)."""
    total = abs(mass[-1] - mass[0])
    if total == 0:
        return float("nan")
    away = np.flatnonzero(np.abs(mass - mass[-1]) > tol * total)
    return float(steps[0]) if away.size == 0 else float(steps[min(away[-1] + 1, len(steps) - 1)])


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    an = read_dataset(paths.analysis("scan_snap", params.run), rule="scan_snap")
    traj = read_dataset(paths.trajectory(params.run), rule="train")
    return plot(an, traj, params), stats(cfg, an, traj, params)


def stats(cfg, an, traj, params: Params) -> dict:
    n = params.class_index
    loss = traj.train_loss
    mass, top = an.common_mass.sel({"class": n}), an.top_distinct.sel({"class": n})
    steps = an.step.values
    trans = [transition_steps(mass.sel(seed=s).values, steps) for s in an.seed.values]
    opt = cfg.runs[params.run].optimizer
    lr_Y = opt.lr * dict(opt.lr_ratio).get("Y", 1.0)
    K, M = an.sizes["class"], int(traj.attrs.get("task_M", an.sizes["token"]))
    out = {
        "loss": {str(t): {"median": float(loss.sel(epoch=t).median()), "min": float(loss.sel(epoch=t).min()),
                          "max": float(loss.sel(epoch=t).max()), "reference": REFERENCE["loss"][t],
                          "per_seed": [float(v) for v in loss.sel(epoch=t).values]}
                 for t in LOSS_STEPS if t in loss.epoch.values},
        "common_mass": {"initial": float(mass.isel(step=0).median()), "final_median": float(mass.isel(step=-1).median()),
                        "final_min": float(mass.isel(step=-1).min()), "final_max": float(mass.isel(step=-1).max()),
                        "reference": list(REFERENCE["common_mass"]),
                        "final_per_seed": [float(v) for v in mass.isel(step=-1).values]},
        "top_distinct": {"initial": float(top.isel(step=0).median()), "final_median": float(top.isel(step=-1).median()),
                         "final_min": float(top.isel(step=-1).min()), "final_max": float(top.isel(step=-1).max()),
                         "reference": list(REFERENCE["top_distinct"]),
                         "final_per_seed": [float(v) for v in top.isel(step=-1).values]},
        "distinct_entropy": {"initial": float(an.distinct_entropy.isel(step=0).median()),
                             "final_median": float(an.distinct_entropy.isel(step=-1).median())},
        "common_mass_10_90_percent_steps": {"median": [float(np.nanmedian([t[0] for t in trans])),
                                                       float(np.nanmedian([t[1] for t in trans]))],
                                            "per_seed": trans},
        "common_mass_settle_step": [settle_step(mass.sel(seed=s).values, steps) for s in an.seed.values],
        "distinct_growth_order": growth_order(an.distinct_c),
        "theory_t0": 2 * K * np.log(M) / lr_Y, "seeds": int(an.sizes["seed"]),
        "reference_setting": is_reference_setting(cfg, params.run),
    }
    ls = out["loss"]
    out["summary"] = (
        "loss (median over {s} seeds; reference) ".format(s=out["seeds"])
        + ", ".join(f"step {t}: {v['median']:.3g} ({v['reference']:.3g})" for t, v in ls.items())
        + f"; class {n} common-token mass {out['common_mass']['initial']:.3f} -> {out['common_mass']['final_median']:.3f} "
        f"(seeds {out['common_mass']['final_min']:.3f}-{out['common_mass']['final_max']:.3f}; reference 0.645 -> 0.39-0.43)"
        f", top distinct token {out['top_distinct']['initial']:.3f} -> {out['top_distinct']['final_median']:.3f} "
        f"(reference 0.065 -> 0.17); distinct entropy {out['distinct_entropy']['initial']:.3f} -> "
        f"{out['distinct_entropy']['final_median']:.3f}; common mass covers 10%/90% of its change by steps "
        f"{out['common_mass_10_90_percent_steps']['median'][0]:.0f}/{out['common_mass_10_90_percent_steps']['median'][1]:.0f} "
        f"(reference: changes between ~8 and ~30, frozen after ~40; theory t0 = 2K ln M / eta_Y = {out['theory_t0']:.1f})"
        + ("" if out["reference_setting"] else "; NOTE: not the talk's setting, the references are not comparable"))
    return out


def growth_order(distinct_c: xr.DataArray) -> dict:
    """Per seed and class, Spearman's rho between the distinct tokens' frequency rank (``rank`` 0: least
    frequent) and the growth of their logits over training, z_l(last) - z_l(0): c_l is proportional to
    P(l) exp(z_l), so log c_l(last) / c_l(0) is that growth up to a shift shared by the class's tokens, which
    no rank changes. ``per_seed``: the mean over classes."""
    from scipy.stats import spearmanr

    growth = np.log(distinct_c.isel(step=-1).values / distinct_c.isel(step=0).values)  # (seed, class, rank)
    order = np.arange(growth.shape[-1])
    rho = np.array([[spearmanr(order, g).statistic for g in per_class] for per_class in growth])
    return {"per_seed_class": [[float(r) for r in row] for row in rho],
            "per_seed": [float(r) for r in np.nanmean(rho, axis=1)]}


def plot(an, traj, params: Params) -> Figure:
    n = params.class_index
    fig, axes = style.figure(ncols=3, width=3.3)
    ax = axes[0, 0]
    c = an.c.sel(seed=params.seed, **{"class": n})
    support = np.flatnonzero(an.c.sel({"class": n}).max(("seed", "step")).values > 0)
    img = ax.imshow(c.values[:, support].T, aspect="auto", origin="lower", cmap="viridis",
                    extent=(an.step.values[0], an.step.values[-1], -0.5, len(support) - 0.5))
    fig.colorbar(img, ax=ax, label="c per token")
    ax.set_xlabel("step")
    ax.set_ylabel("token (common, then distinct)")
    ax.set_title(f"c over class {n}'s tokens (seed {params.seed})", fontsize=9)
    ax = axes[0, 1]
    style.seeds_and_median(ax, an.step, an.common_mass.sel({"class": n}), style.ARM_COLORS[0], label="common mass")
    style.seeds_and_median(ax, an.step, an.top_distinct.sel({"class": n}), style.ARM_COLORS[1], label="top distinct")
    ax.axhline(REFERENCE["top_distinct"][1], color=style.ARM_COLORS[1], ls=":", lw=0.8, label="reference final top")
    ax.axhspan(0.39, 0.43, color=style.ARM_COLORS[0], alpha=0.15, lw=0, label="reference final mass")
    ax.set_xlabel("step")
    ax.set_ylabel("c (common: their sum; distinct: the top)")
    ax.legend(fontsize=7)
    ax = axes[0, 2]
    style.seeds_and_median(ax, an.step, an.distinct_entropy, "k", label="distinct entropy")
    ax.set_xlabel("step")
    ax.set_ylabel("entropy of c over distinct tokens (nats)")
    loss_ax = ax.twinx()
    loss_ax.semilogy(traj.epoch, traj.train_loss.median("seed"), color=style.ARM_COLORS[2], lw=1.2, label="loss")
    loss_ax.scatter(list(REFERENCE["loss"]), list(REFERENCE["loss"].values()), color=style.ARM_COLORS[2], marker="x",
                    s=18, label="reference loss")
    loss_ax.set_ylabel("training loss (median)")
    loss_ax.legend(fontsize=7, loc="center right")
    return fig
