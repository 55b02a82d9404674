"""Modular addition (Tian's CoGO analysis): Fourier magnitudes |A[k, j]|, |B[k, j]|, |C[k, j]| of the
final weights per frequency k and hidden node j for one seed (nodes ordered by the frequency they
belong to; most of the q nodes carry almost nothing), and the histogram of the order of each
frequency (#nodes with |A[k, j]| > 0.05) over every solved seed of each run: the talk's solutions
are of order 4 or 6 (dashed lines)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from ..plumbing.store import read_dataset
from . import style

NAME = "cogo_fourier"
PAPER = "Tian: algebraic structure of solutions (CoGO, GaLore)"
CONFIG = """
description: Per-frequency Fourier magnitudes of one seed, and the order histogram over seeds.
required: [runs]
properties:
  runs:
    description: "Runs listed in analyses.fourier.runs; the heat maps show the first. A galore_adam run is compared with the runs of the same dataset, model and weight decay trained with adam at its lr and at lr x scale (the matched step)."
    type: array
    minItems: 1
    items: {type: string, x-ref: run, x-reads: [analysis/fourier]}
  seed: {description: "Seed of the heat maps (null: the first solved seed).", type: [integer, "null"], minimum: 0, default: null}
"""
GALORE_SCALE = 0.25  # galore_adam's default scale (optimizers.galore_adam.Params.scale; torch-free here)


@dataclass(frozen=True)
class Params:
    runs: tuple[str, ...]
    seed: int | None = None


def run_info(cfg, run: str) -> dict:
    """What the claims compare runs by: optimizer, lr, GaLore's scale, dataset, model, weight decay."""
    rc = cfg.runs[run]
    opt = rc.optimizer
    scale = dict(opt.options).get("scale", GALORE_SCALE) if opt.name == "galore_adam" else None
    return {"optimizer": opt.name, "lr": float(opt.lr), "scale": scale, "dataset": rc.dataset, "model": rc.model,
            "weight_decay": float(opt.weight_decay)}


def order_stats(an: xr.Dataset) -> dict:
    """Order counts over the solved seeds at the final and the first snapshot, and per solved seed the share
    of frequencies of order 4 or 6."""
    ok = an.solved.values.astype(bool)
    final, first = (an.order.isel(snapshot=i).values[ok] for i in (-1, 0))
    orders = final[np.isfinite(final)].astype(int)
    init = first[np.isfinite(first)].astype(int)
    share = lambda o: float(np.isin(o, (4, 6)).mean()) if len(o) else float("nan")  # noqa: E731
    return {"d": int(an.attrs["d"]), "solved_seeds": int(ok.sum()), "seeds": int(an.sizes["seed"]),
            "order_counts": {int(k): int(c) for k, c in enumerate(np.bincount(orders, minlength=11)) if c},
            "frac_order_4_or_6": share(orders), "init_frac_order_4_or_6": share(init),
            "n_frequencies": int(len(orders)), "n_order_4_or_6": int(np.isin(orders, (4, 6)).sum()),
            "per_seed": {"seed": [int(s) for s in an.seed.values[ok]],
                         "frac_order_4_or_6": [share(o[np.isfinite(o)]) for o in final],
                         "top_frequency_share": [top_frequency_share(an.sel(seed=s)) for s in an.seed.values[ok]]}}


def top_frequency_share(one: xr.Dataset) -> float | None:
    """One seed's median, over its nodes above the threshold (``node_freq`` >= 0), of the share of the node's input
    power (|A|^2 + |B|^2 over the whole spectrum, the frequencies -k and k together) held by its strongest
    frequency k >= 1: 1 for a node whose input weights are one Fourier mode. None without such a node."""
    power = one.A_mag.values.astype(float) ** 2 + one.B_mag.values.astype(float) ** 2  # (freq0 0..n, node)
    nodes = np.flatnonzero(one.node_freq.values >= 0)
    if not len(nodes):
        return None
    p = power[:, nodes]
    total = p[0] + 2 * p[1:].sum(0)  # a real weight vector: |A[-k]| = |A[k]|
    return float(np.median(2 * p[1:].max(0) / total))


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    fig, axes = style.figure(ncols=4, width=3.6, height=2.9)
    first = read_dataset(paths.analysis("fourier", params.runs[0]), rule="fourier")
    solved = first.seed.values[first.solved.values.astype(bool)]
    seed = params.seed if params.seed is not None else int(solved[0]) if len(solved) else int(first.seed.values[0])
    one = first.sel(seed=seed)
    owner = one.node_freq.values
    active = np.flatnonzero(owner >= 0)
    order = active[np.argsort(owner[active], kind="stable")]
    for ax, m in zip(axes[0, :3], ("A", "B", "C")):
        mag = one[f"{m}_mag"].values[:, order] if len(order) else one[f"{m}_mag"].values
        im = ax.imshow(mag, aspect="auto", cmap="magma", interpolation="nearest")
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # rows are frequencies: no half-frequency ticks
        ax.set_xlabel(f"node ({len(order)} of {one.sizes['node']} above threshold)" if len(order) else
                      "node (seed not solved: not analysed)" if not bool(one.solved) else
                      f"node (none of {one.sizes['node']} above threshold)", fontsize=8)
        if m == "A":
            ax.set_ylabel("frequency k")
        ax.set_title(f"|{m}[k, j]|, {params.runs[0]} seed {seed}", fontsize=8)
        fig.colorbar(im, ax=ax, fraction=0.046, pad=0.02)
    ax = axes[0, 3]
    stats: dict = {"heatmap": {"run": params.runs[0], "seed": seed, "active_nodes": int(len(order)),
                               "solved": bool(one.solved)}, "runs": {}}
    width = 0.8 / len(params.runs)  # each run's bar beside the others' at every order, none hidden behind another
    for i, run in enumerate(params.runs):
        an = first if i == 0 else read_dataset(paths.analysis("fourier", run), rule="fourier")
        ok = an.solved.values.astype(bool)
        orders = an.order.isel(snapshot=-1).values[ok].ravel()
        orders = orders[np.isfinite(orders)].astype(int)
        counts = np.bincount(orders, minlength=11)
        label = (f"{run}: " if len(params.runs) > 1 else "") + (
            f"d={an.attrs['d']}, {int(ok.sum())} of {len(ok)} seeds solved" + (" (no bars)" if not ok.any() else ""))
        ax.bar(np.arange(len(counts)) + (i - (len(params.runs) - 1) / 2) * width, counts, width=width,
               color=style.ARM_COLORS[i % len(style.ARM_COLORS)], label=label)
        stats["runs"][run] = {**order_stats(an), **run_info(cfg, run)}
    for v in (4, 6):
        ax.axvline(v, color="k", ls=":", lw=0.8, zorder=0, label="orders 4 and 6 (the talk)" if v == 4 else None)
    ax.set_xlabel("order (#nodes with |A[k, j]| > threshold)", fontsize=8)
    ax.set_ylabel("frequencies (solved seeds)")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # counts
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    stats["summary"] = "; ".join(
        f"d={s['d']}: {s['solved_seeds']}/{s['seeds']} seeds solved, {100 * s['frac_order_4_or_6']:.1f}% of their "
        f"frequencies of order 4 or 6 (order counts {s['order_counts']})" for s in stats["runs"].values())
    return fig, stats


# -- claims ---------------------------------------------------------------------------------------------------


