"""Fig. 3 of 'Easing Optimization Paths': attention per position over training, one panel per arm,
the boundary of the first k positions marked; optionally a second row per step over the first epochs
of mini-batch runs (``step_arms``: runs with ``step_attention_epochs``), the paper's resolution."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr
from matplotlib.figure import Figure

from ..store import read_dataset
from . import style
from .reading import arm_trajectory, recorded_attention

NAME = "fig3_attention_heatmap"
PAPER = "Easing Optimization Paths: a Circuit Perspective"  # the report's category
CONFIG = """
description: Attention per position over epochs, one panel per arm, the k boundary marked.
required: [arms]
properties:
  arms:
    description: "Label -> run (with its ancestors)."
    type: object
    minProperties: 1
    additionalProperties:
      type: string
      x-ref: run
      x-requires: {properties: {dataset: {properties: {task: {const: sparse_modular_addition}}}}}
      x-requires-message: "must be a sparse_modular_addition run (the figure marks the first k positions)"
  seed: {description: "Seed shown; null: the mean over seeds.", type: [integer, "null"], default: null}
  step_arms:
    description: "Label -> run recording the attention after every optimizer step (step_attention_epochs >= 1): a second row, attention per position against the step."
    type: object
    default: {}
    additionalProperties:
      type: string
      x-ref: run
      x-requires:
        properties:
          dataset: {properties: {task: {const: sparse_modular_addition}}}
          run: {properties: {step_attention_epochs: {minimum: 1}}}
      x-requires-message: "must be a sparse_modular_addition run with step_attention_epochs >= 1"
"""
CHECKS = [["seed", "seed is None or all(seed in seeds(r) for r in [*arms.values(), *step_arms.values()])",
           "seed {seed} is not trained by every run of {[*arms.values(), *step_arms.values()]}"]]


@dataclass(frozen=True)
class Params:
    arms: tuple[tuple[str, str], ...]
    seed: int | None = None
    step_arms: tuple[tuple[str, str], ...] = ()


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    arms, switches, stats = {}, {}, {}
    k = None
    for label, run in params.arms:
        traj, switches[label] = arm_trajectory(cfg, run, paths, ["attention"])
        k = int(read_dataset(paths.trajectory(run), rule="train").attrs["task_k"])
        arms[label], stats[label] = _shown(recorded_attention(traj), params.seed, k, "epoch")
    steps = {}
    for label, run in params.step_arms:
        own = read_dataset(paths.trajectory(run), rule="train")
        k = int(own.attrs["task_k"])
        steps[label], stats[f"{label} (per step)"] = _shown(own.step_attention, params.seed, k, "step")
        stats[f"{label} (per step)"]["steps"] = int(own.sizes["step"] - 1)
    who = "mean over seeds" if params.seed is None else f"seed {params.seed}"
    stats["summary"] = (f"attention mass on the first k={k} positions ({who}, mean over probes), start -> end: "
                        + "; ".join(f"{lbl} {s['first_k_mass_start']:.2f} -> {s['first_k_mass_end']:.2f}"
                                    for lbl, s in stats.items()))
    return plot_fig3_attention_heatmap(arms, k, switches, steps), stats


def _shown(att: xr.DataArray, seed: int | None, k: int, time: str) -> tuple[xr.DataArray, dict]:
    """The attention drawn (mean over probes; over seeds unless one is chosen) and its mass on the
    first k positions at the first and last ``time`` (epoch or step)."""
    att = att.mean("probe")
    att = att.mean("seed") if seed is None else att.sel(seed=seed)
    mass = att.isel(position=slice(0, k)).sum("position")
    return att, {"first_k_mass_start": float(mass.isel({time: 0})), "first_k_mass_end": float(mass.isel({time: -1}))}


def _heatmap(ax, edges: np.ndarray, att: xr.DataArray, time: str, k: int, vmax: float):
    """Attention per position (rows, position 0 on top) against ``time`` (columns between ``edges``),
    the first k positions marked."""
    T = att.sizes["position"]
    mesh = ax.pcolormesh(edges, np.arange(T + 1) - 0.5, att.transpose("position", time).values,
                         cmap="viridis", vmin=0, vmax=vmax, shading="flat")
    ax.axhline(k - 0.5, color="w", ls="--", lw=1.2)
    ax.invert_yaxis()
    return mesh


def plot_fig3_attention_heatmap(arms: dict[str, xr.DataArray], k: int, switches: dict[str, list[int]],
                                steps: dict[str, xr.DataArray] | None = None) -> Figure:
    """``arms[label]``: attention (position, epoch) at the recorded epochs (already averaged);
    ``steps[label]``: attention (position, step) with a ``step_epoch`` coordinate, drawn in a second row."""
    steps = steps or {}
    fig, axes = style.figure(ncols=max(len(arms), len(steps)), nrows=2 if steps else 1, width=3.6, height=2.6)
    vmax = np.nanmax([float(a.max()) for a in [*arms.values(), *steps.values()]] + [1e-6])  # one colour scale
    mesh = None
    for ax in axes[0][len(arms):]:
        ax.axis("off")
    for ax, (label, att) in zip(axes[1] if steps else [], steps.items()):
        x = att.step_epoch.values
        edges = np.concatenate([[x[0] - (x[1] - x[0]) / 2], (x[1:] + x[:-1]) / 2, [x[-1] + (x[-1] - x[-2]) / 2]])
        mesh = _heatmap(ax, edges, att, "step", k, vmax)
        ax.set_xlabel("epoch (a column per step)")
        ax.set_ylabel("position")
        ax.set_title(label, fontsize=9)
    for ax in (axes[1][len(steps):] if steps else []):
        ax.axis("off")
    for ax, (label, att) in zip(axes[0], arms.items()):
        epochs = att.epoch.values
        edges = np.concatenate([[epochs[0] - 0.5], (epochs[1:] + epochs[:-1]) / 2, [epochs[-1] + 0.5]])
        mesh = _heatmap(ax, edges, att, "epoch", k, vmax)
        ax.text(edges[-1], k - 0.5, f" k={k}", color="k", va="center", fontsize=7)
        for e in switches.get(label, []):
            ax.axvline(e, color="w", ls=":", lw=1.2)
        ax.set_xscale("symlog", linthresh=10)
        ax.set_xlabel("epoch")
        ax.set_title(label)
    axes[0][0].set_ylabel("position")
    if steps:
        fig.subplots_adjust(hspace=0.55)  # room for the top row's x label under the bottom row's titles
    fig.colorbar(mesh, ax=axes.ravel().tolist(), label="attention", shrink=0.9)
    return fig
