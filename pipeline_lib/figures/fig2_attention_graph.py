"""Fig. 2 of 'Easing Optimization Paths': the attention of one probe sequence as a bipartite graph
(input positions -> output) at several recorded epochs, one row per run; and, as the paper draws it,
rows after single optimizer steps of a mini-batch run's first epochs (runs with
``step_attention_epochs``), red/blue from the change over the last step."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure

from ..intervals import json_floats
from ..plumbing.store import read_dataset
from ..stats import log_spaced_values
from . import style
from .reading import arm_trajectory, recorded_attention

NAME = "fig2_attention_graph"
PAPER = "Easing Optimization Paths: a Circuit Perspective"  # the report's category
CONFIG = """
description: Bipartite attention graph of one probe sequence at several recorded epochs.
required: [runs]
properties:
  runs:
    description: "One row per run (with its ancestors' epochs in front)."
    type: array
    minItems: 1
    items:
      type: string
      x-ref: run
      x-requires: {properties: {dataset: {properties: {task: {const: sparse_modular_addition}}}}}
      x-requires-message: "must be a sparse_modular_addition run (the figure marks the first k positions)"
  seed: {description: "Seed shown.", type: integer, minimum: 0, default: 0}
  probe: {description: "Index of the probe sequence shown.", type: integer, minimum: 0, default: 0}
  n_epochs:
    description: "Number of epochs (panels) per row, log-spaced over the recorded ones."
    type: integer
    minimum: 2
    default: 6
  step_runs:
    description: "Rows drawn step by step (the paper's view): runs recording the attention after every optimizer step (step_attention_epochs >= 1); each panel's red/blue is the change over that one step."
    type: array
    default: []
    items:
      type: string
      x-ref: run
      x-requires:
        properties:
          dataset: {properties: {task: {const: sparse_modular_addition}}}
          run: {properties: {step_attention_epochs: {minimum: 1}}}
      x-requires-message: "must be a sparse_modular_addition run with step_attention_epochs >= 1"
  n_steps:
    description: "Number of steps (panels) per step row, log-spaced over the recorded steps."
    type: integer
    minimum: 2
    default: 6
"""
CHECKS = [
    ["seed", "all(seed in seeds(r) for r in [*runs, *step_runs])",
     "seed {seed} is not trained by every run of {[*runs, *step_runs]}"],
    ["probe", "all(probe < run(r)['n_probe'] for r in [*runs, *step_runs])",
     "probe {probe} is not recorded: the runs record n_probe = "
     "{[run(r)['n_probe'] for r in [*runs, *step_runs]]} probe sequences"],
]

RISE, FALL = "#d62728", "#1f77b4"


@dataclass(frozen=True)
class Params:
    runs: tuple[str, ...]
    seed: int = 0
    probe: int = 0
    n_epochs: int = 6
    step_runs: tuple[str, ...] = ()
    n_steps: int = 6


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    rows, stats = {}, {}
    k = None
    for run in params.runs:
        traj, _ = arm_trajectory(cfg, run, paths, ["attention"])
        own = read_dataset(paths.trajectory(run), rule="train")
        k = int(own.attrs["task_k"])
        att = recorded_attention(traj).sel(seed=params.seed).isel(probe=params.probe)
        shown = log_spaced_values(att.epoch.values, params.n_epochs)
        pos = [int(np.searchsorted(att.epoch.values, e)) for e in shown]
        previous = np.stack([att.isel(epoch=max(i - 1, 0)).values for i in pos])
        rows[run] = {"titles": [f"epoch {e}" for e in shown], "attention": att.sel(epoch=shown).values,
                     "previous": previous, "tokens": own.probe_x.isel(probe=params.probe).values}
        final = att.isel(epoch=-1).values
        stats[run] = {"epochs": shown, "final_attention_on_first_k": float(final[:k].sum())}
    summary = [f"seed {params.seed}, probe {params.probe}: final attention mass on the first k={k} positions "
               + "; ".join(f"{r} {s['final_attention_on_first_k']:.2f}" for r, s in stats.items())]
    for run in params.step_runs:
        own = read_dataset(paths.trajectory(run), rule="train")
        k = int(own.attrs["task_k"])
        att = own.step_attention  # (seed, step, probe, position)
        shown = log_spaced_values(att.step.values[1:], params.n_steps)  # steps >= 1: each has a previous one
        one = att.sel(seed=params.seed).isel(probe=params.probe)
        rows[f"{run}\n(per step)"] = {
            "titles": [f"step {s} (epoch {float(one.step_epoch.sel(step=s)):.2f})" for s in shown],
            "attention": one.sel(step=shown).values, "previous": one.sel(step=[s - 1 for s in shown]).values,
            "tokens": own.probe_x.isel(probe=params.probe).values}
        st = stats[f"{run} (per step)"] = step_stats(att, k)
        st.update(run_mass_beyond_k(own, k), has_ancestors=len(cfg.lineage(run)) > 1)
        summary.append(f"{run}, every step of its first {st['epochs']} epochs (all seeds and probes): "
                       f"{st['share_raising_rest']:.2f} of the steps raise the attention on the positions >= k, "
                       f"{st['share_raising_first_k']:.2f} on the first k")
    stats["summary"] = ". ".join(summary)
    return plot_fig2_attention_graph(rows, k), stats


def step_stats(att, k: int) -> dict:
    """How single steps move the attention: the share of (seed, probe, step) changes that raise the
    attention mass on the first k positions, and on the others (the paper's 'some batches reinforce
    the tokens beyond k'); and the mean mass on the first k at the start and the last recorded step."""
    first_k = att.isel(position=slice(0, k)).sum("position")  # (seed, step, probe)
    rest = att.isel(position=slice(k, None)).sum("position")
    steps = att.sizes["step"] - 1
    per_epoch = int(round(1 / float(att.step_epoch[1] - att.step_epoch[0]))) if steps else 1
    raising_rest = rest.diff("step") > 0
    return {"steps": int(steps), "steps_per_epoch": per_epoch, "epochs": steps // max(per_epoch, 1),
            "share_raising_first_k": float((first_k.diff("step") > 0).mean()),
            "share_raising_rest": float(raising_rest.mean()),
            "first_k_mass_start": float(first_k.isel(step=0).mean()), "first_k_mass_end": float(first_k.isel(step=-1).mean()),
            "share_raising_rest_per_seed": [float(v) for v in raising_rest.mean(["step", "probe"]).values]}


def run_mass_beyond_k(own, k: int) -> dict:
    """Per seed, the attention mass on the positions >= k (mean over probes) at the first and the last
    epoch the run recorded its attention (the whole run, not only its per-step epochs)."""
    att = recorded_attention(own)
    rest = att.isel(position=slice(k, None)).sum("position", skipna=False).mean("probe")  # (seed, epoch)
    return {"beyond_k_epochs": [int(att.epoch[0]), int(att.epoch[-1])],
            "beyond_k_mass_start_per_seed": json_floats(rest.isel(epoch=0)),
            "beyond_k_mass_end_per_seed": json_floats(rest.isel(epoch=-1))}


def plot_fig2_attention_graph(rows: dict[str, dict], k: int) -> Figure:
    """One row per arm, one panel per epoch: input positions (bottom) -> output (top).

    ``rows[label]`` holds ``titles`` (one per shown epoch or step), ``attention`` (n_shown, T),
    ``previous`` (n_shown, T: the attention at the recorded epoch, or the step, before each shown one)
    and ``tokens`` (T,). Edge width is the attention score; red if it rose since the previous record,
    blue if it fell. The first k positions (those the label depends on) are filled.
    """
    n_cols = max(len(r["titles"]) for r in rows.values())
    fig, axes = style.figure(ncols=n_cols, nrows=len(rows), width=1.5, height=1.6)
    for row_axes, (label, r) in zip(axes, rows.items()):
        T = r["attention"].shape[1]
        xs = np.arange(T)
        for ax, title, att, prev in zip(row_axes, r["titles"], r["attention"], r["previous"]):
            for t in range(T):
                color = RISE if att[t] > prev[t] else FALL
                ax.plot([xs[t], (T - 1) / 2], [0, 1], color=color, lw=0.3 + 8 * att[t], alpha=0.8,
                        solid_capstyle="round")
            ax.scatter(xs, np.zeros(T), s=18, zorder=3, edgecolor="k", linewidth=0.5,
                       c=["k" if t < k else "w" for t in range(T)])
            ax.scatter([(T - 1) / 2], [1], s=30, c="k", zorder=3)
            for t, tok in enumerate(r["tokens"]):
                ax.text(xs[t], -0.18, str(int(tok)), ha="center", va="top", fontsize=6)
            ax.set_title(title, fontsize=7)
            ax.set_xlim(-0.7, T - 0.3)
            ax.set_ylim(-0.35, 1.1)
            ax.axis("off")
        for ax in row_axes[len(r["titles"]):]:
            ax.axis("off")
        row_axes[0].text(-0.15, 0.5, label, transform=row_axes[0].transAxes, rotation=90, ha="right",
                         va="center", fontsize=9)
    fig.text(0.5, -0.02, "edge width = attention; red: rose, blue: fell since the previous recorded epoch (per-step "
             f"rows: since the previous optimizer step); filled: the first k={k} positions", ha="center", fontsize=7)
    return fig
