"""Fig. 3 of 'Easing Optimization Paths': attention per position over training, one panel per arm,
the boundary of the first k positions marked; optionally a second row per step over the first epochs
of mini-batch runs (``step_arms``: runs with ``step_attention_epochs``), the paper's resolution. Its
claims also read the linear probes of ``probe_runs`` ("addition modulo k+1")."""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import xarray as xr
from matplotlib.figure import Figure

from ..intervals import json_floats, read_floats
from ..plumbing.store import read_dataset
from . import style
from .reading import arm_trajectory, recorded_attention

NAME = "fig3_attention_heatmap"
PAPER = "Easing Optimization Paths: a Circuit Perspective"  # the report's category
CONFIG = """
description: Attention per position over epochs, one panel per arm, the k boundary marked.
required: [arms]
properties:
  arms:
    description: "Label -> run (with its ancestors). The claims compare the arms labelled 'curriculum' and 'scratch', and read the p=2 phase of 'curriculum' and of 'curriculum, d=2'."
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
  probe_runs:
    description: "Label -> run whose linear probes (analyses.probes) the 'addition modulo k+1' claims read (not drawn): 'curriculum', a finetune whose first snapshot is the switch (the p=2 weights on p=4 inputs), 'scratch', whose first snapshot is the untrained initialisation, and 'pretrain', a p=2 run probed at every snapshot (analyses.probes.every_snapshot), whose count is timed against its answer."
    type: object
    default: {}
    additionalProperties:
      type: string
      x-ref: run
      x-reads: [analysis/probes, trajectory]
      x-requires: {properties: {dataset: {properties: {task: {const: sparse_modular_addition}}}}}
      x-requires-message: "must be a sparse_modular_addition run (the claims probe the zeros among the first k)"
"""
CHECKS = [["seed", "seed is None or all(seed in seeds(r) for r in [*arms.values(), *step_arms.values()])",
           "seed {seed} is not trained by every run of {[*arms.values(), *step_arms.values()]}"]]

PROBE_SITE, PROBE_TARGET = "z_A", "zeros_k"
SOLVED = 0.99  # "solves for z" / "solving for y": the count probe's and the model's test accuracy


@dataclass(frozen=True)
class Params:
    arms: tuple[tuple[str, str], ...]
    seed: int | None = None
    step_arms: tuple[tuple[str, str], ...] = ()
    probe_runs: tuple[tuple[str, str], ...] = ()


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    arms, switches, stats = {}, {}, {}
    k = None
    for label, run in params.arms:
        traj, switches[label] = arm_trajectory(cfg, run, paths, ["attention"])
        k = int(read_dataset(paths.trajectory(run), rule="train").attrs["task_k"])
        arms[label], stats[label] = _shown(recorded_attention(traj), params.seed, k, "epoch")
        stats[label].update(zeros_stats(cfg, run, paths, k))
    steps = {}
    for label, run in params.step_arms:
        own = read_dataset(paths.trajectory(run), rule="train")
        k = int(own.attrs["task_k"])
        steps[label], stats[f"{label} (per step)"] = _shown(own.step_attention, params.seed, k, "step")
        stats[f"{label} (per step)"]["steps"] = int(own.sizes["step"] - 1)
    who = "mean over seeds" if params.seed is None else f"seed {params.seed}"
    summary = (f"attention mass on the first k={k} positions ({who}, mean over probes), start -> end: "
               + "; ".join(f"{lbl} {s['first_k_mass_start']:.2f} -> {s['first_k_mass_end']:.2f}"
                           for lbl, s in stats.items()))
    if params.probe_runs:
        stats["probes"] = {label: probe_stats(read_dataset(paths.analysis("probes", run), rule="probes"),
                                              read_dataset(paths.trajectory(run), rule="train"))
                           for label, run in params.probe_runs}
        summary += f". Probe of {PROBE_TARGET} from {PROBE_SITE}, median over seeds, first -> last snapshot: " + "; ".join(
            f"{lbl} {np.nanmedian(read_floats(p['first_per_seed'])):.2f} -> {np.nanmedian(read_floats(p['last_per_seed'])):.2f} "
            f"(chance {p['chance']:.2f})" for lbl, p in stats["probes"].items() if "missing" not in p)
    stats["summary"] = summary
    return plot_fig3_attention_heatmap(arms, k, switches, steps), stats


def _shown(att: xr.DataArray, seed: int | None, k: int, time: str) -> tuple[xr.DataArray, dict]:
    """The attention drawn (mean over probes; over seeds unless one is chosen), its mass on the first k
    positions at the first and last ``time`` (epoch or step), and that mass per seed."""
    att = att.mean("probe")
    per_seed = att.isel(position=slice(0, k)).sum("position", skipna=False)  # (seed, time)
    st = {"first_k_mass_start_per_seed": json_floats(per_seed.isel({time: 0})),
          "first_k_mass_end_per_seed": json_floats(per_seed.isel({time: -1}))}
    att = att.mean("seed") if seed is None else att.sel(seed=seed)
    mass = att.isel(position=slice(0, k)).sum("position")
    return att, {"first_k_mass_start": float(mass.isel({time: 0})), "first_k_mass_end": float(mass.isel({time: -1})),
                 **st}


def zeros_stats(cfg, run: str, paths, k: int) -> dict:
    """Per seed, :func:`zero_measures`' zero and value focus at epoch 0 of the arm's first phase and, for an arm of
    several phases, its focuses and favoured value at the last recorded epoch of its last-but-one phase (the
    switch), each over that phase's own probe sequences, with the attention mass on the first k there (mean over
    the probes) and that phase's final train accuracy. Each phase's trajectory is read once."""
    chain, seeds = cfg.lineage(run), list(cfg.runs[run].seeds)
    read = functools.cache(lambda r: read_dataset(paths.trajectory(r), rule="train").sel(seed=seeds))

    def attention(r: str, which: int) -> xr.DataArray:
        return recorded_attention(read(r)).isel(epoch=which).transpose("seed", "probe", "position")

    def at(r: str, which: int) -> dict[str, list]:
        return zero_measures(attention(r, which).values, read(r).probe_x.values, k)

    start = at(chain[0], 0)
    out = {"value_focus_start_per_seed": start["value_focus"], "zero_focus_start_per_seed": start["zero_focus"]}
    if len(chain) > 1:
        switch = at(chain[-2], -1)
        out["value_focus_switch_per_seed"] = switch["value_focus"]
        out["zero_focus_switch_per_seed"] = switch["zero_focus"]
        out["favours_switch_per_seed"] = switch["favours"]
        first_k = attention(chain[-2], -1).mean("probe").isel(position=slice(0, k)).sum("position", skipna=False)
        out["first_k_mass_switch_per_seed"] = json_floats(first_k)
        # whether the phase before the switch learned its task: what its attention there is a structure of
        out["train_acc_switch_per_seed"] = json_floats(read(chain[-2]).train_acc.isel(epoch=-1))
    return out


def zero_shares(att: np.ndarray, tokens: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Over the probes with both zeros and non-zeros among the first k tokens: the share of the first-k attention
    on the zero tokens (seed, probe) and the zeros' share of the first k (probe,). None where no probe qualifies.
    ``att``: (seed, probe, position); ``tokens``: (probe, position)."""
    zero = np.asarray(tokens)[:, :k] == 0
    n0 = zero.sum(1)
    keep = (n0 > 0) & (n0 < k)
    if not keep.any():
        return None
    a = np.asarray(att, dtype=float)[:, keep, :k]
    return (a * zero[keep]).sum(-1) / a.sum(-1), n0[keep] / k


def zero_measures(att: np.ndarray, tokens: np.ndarray, k: int) -> dict[str, list]:
    """Per seed, over the probes with both zeros and non-zeros among the first k tokens (None where no probe
    qualifies), with a the share of the first-k attention on the zeros and q the zeros' share of the first k, per
    probe (:func:`zero_shares`):

    - ``zero_focus``: how fully the attention sits on the zeros, (a - q) / (1 - q), mean over the probes: 1 when all
      of it is on the zeros, 0 when it is spread as the tokens are, negative when it leans to the non-zeros;
    - ``value_focus``: how fully it sits on the tokens of one value (0 or 1): the larger of the zero focus and the
      same mean of (q - a) / q for the ones;
    - ``favours``: the value whose mean that is ('zeros' or 'ones'; None where neither is a number)."""
    shares = zero_shares(att, tokens, k)
    if shares is None:
        return {"zero_focus": [None] * len(att), "value_focus": [None] * len(att), "favours": [None] * len(att)}
    share, q = shares
    zeros, ones = ((share - q) / (1 - q)).mean(1), ((q - share) / q).mean(1)
    return {"zero_focus": json_floats(zeros), "value_focus": json_floats(np.maximum(zeros, ones)),
            "favours": ["zeros" if z >= o else "ones" if o > z else None for z, o in zip(zeros, ones)]}


def probe_stats(ds: xr.Dataset, traj: xr.Dataset) -> dict:
    """Per seed, the held-out accuracy of the zeros_k probe from z_A at the first and the last probed
    snapshot, with the snapshots' epochs and the majority-class chance; and when the count and the answer
    are solved (:data:`SOLVED`): the first probed snapshot whose count probe reaches it, the first epoch
    whose test accuracy (the run's own answer) does (None: never)."""
    if PROBE_SITE not in list(ds.site.values) or PROBE_TARGET not in list(ds.target.values):
        return {"missing": f"its probes artifact has no {PROBE_TARGET} probe at {PROBE_SITE}"}
    acc = ds.accuracy.sel(site=PROBE_SITE, target=PROBE_TARGET)
    test = traj.test_acc.sel(seed=acc.seed.values)

    def solved(epochs: np.ndarray, values: np.ndarray) -> tuple[int | None, int | None]:
        """(the first epoch at or above SOLVED, the recorded epoch before it; None where there is none)."""
        hit = np.flatnonzero(values >= SOLVED)
        i = hit[0] if hit.size else len(values)
        return (int(epochs[i]) if hit.size else None), (int(epochs[i - 1]) if i > 0 else None)

    count = [solved(acc.snapshot.values, a) for a in acc.values]
    return {"first_snapshot": int(acc.snapshot[0]), "last_snapshot": int(acc.snapshot[-1]),
            "first_per_seed": json_floats(acc.isel(snapshot=0)), "last_per_seed": json_floats(acc.isel(snapshot=-1)),
            "chance": float(ds.chance.sel(target=PROBE_TARGET)), "snapshots_probed": int(acc.sizes["snapshot"]),
            "count_solved_epoch": [c for c, _ in count], "count_unsolved_epoch": [u for _, u in count],
            "answer_solved_epoch": [solved(test.epoch.values, a)[0] for a in test.values]}


# -- claims ---------------------------------------------------------------------------------------------------

SOLELY = 0.9  # "focus solely on the first k": at least this share of the attention on them


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
    spare = list(axes[1][len(steps):]) if steps else []  # an empty slot: the colour scale and the key go there
    for ax in spare:
        ax.axis("off")
    for ax, (label, att) in zip(axes[0], arms.items()):
        epochs = att.epoch.values
        edges = np.concatenate([[epochs[0] - 0.5], (epochs[1:] + epochs[:-1]) / 2, [epochs[-1] + 0.5]])
        mesh = _heatmap(ax, edges, att, "epoch", k, vmax)
        ax.text(edges[-1], k - 0.5, f" k={k}", color="k", va="center", fontsize=7)
        for e in switches.get(label, []):
            ax.axvline(e, color="w", ls=":", lw=1.2)
            ax.text(e, -0.5, "switch ", color="w", ha="right", va="top", fontsize=7)
        ax.set_xscale("symlog", linthresh=10)
        ax.set_xlabel("epoch")
        ax.set_title(label)
    axes[0][0].set_ylabel("position")
    if spare:  # in the empty slot, beside the panels it explains, not a canvas' width away
        key = spare[0]
        fig.colorbar(mesh, cax=key.inset_axes((0.05, 0.78, 0.9, 0.09)), orientation="horizontal",
                     label="attention (one colour scale for every panel)")
        key.text(0.05, 0.42, f"dashed: k = {k}; the positions below it\ndo not decide the label\n"
                 "dotted: the switch from the run it\nstarts from (its weights, the new task)",
                 transform=key.transAxes, va="top", fontsize=8)
    else:
        fig.colorbar(mesh, ax=axes.ravel().tolist(), label="attention", shrink=0.9)
    return fig
