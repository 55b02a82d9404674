"""The circuits paper's thought experiment (Sec. II.a): a run on inputs [x_1, x_2] made of twice the same sequence
(task sparse_modular_addition_copies), where either copy decides the label. Left: per seed, the share of single
gradient steps, each on one training input alone (analysis single_step), that raise the input's own attention on
both twins (a label-deciding position of one copy and the same position of the other) among those that raise it
on either, over the run's weight snapshots; beside it the same share for pairs that are not twins (a
label-deciding position of one copy and another one of the other copy), and the share that independent moves
would give (1/3). Middle: the attention per position over the epochs (mean over seeds and probes), the copies'
first k positions marked. Right: per seed, the weaker copy's share of the attention the two copies' first k
positions hold at the last recorded epoch (a half: the circuit is duplicated evenly; zero: one copy holds it
alone), against the seed's final train accuracy. The stats also hold the same shares for the training's own
mini-batch updates, read on the held-out probes after every step of the run's first epochs."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr
from matplotlib.figure import Figure

from ..intervals import json_floats, read_floats
from ..plumbing.errors import ConfigError
from ..plumbing.store import read_dataset
from . import style
from .reading import recorded_attention

NAME = "circuits_duplicates"
PAPER = "Easing Optimization Paths: a Circuit Perspective"
CONFIG = """
description: Sec. II.a's thought experiment on a repeated input [x, x]; do single updates reinforce both copies' circuits, and do both copies end with attention?
required: [run]
properties:
  run:
    description: "A run on repeated inputs that records the attention after every optimizer step (step_attention_epochs >= 1), measured by analyses.single_step."
    type: string
    x-ref: run
    x-reads: [analysis/single_step, trajectory]
    x-requires:
      properties:
        dataset: {properties: {task: {const: sparse_modular_addition_copies}, copies: {const: 2}}}
        run: {properties: {step_attention_epochs: {minimum: 1}}}
    x-requires-message: "must be a sparse_modular_addition_copies run with copies: 2 and step_attention_epochs >= 1"
"""
INDEPENDENT = 1 / 3  # P(both rise | either rises) for two moves that rise or fall independently, each half the time
DUPLICATED = 0.25  # a seed ends with duplicates where the weaker copy holds at least this share of the two copies'
# first-k attention (at worst 1 : 3 between the copies; fixed before any run, the paper prints no level)
LEARNED = 0.95  # a seed learned the task: final train accuracy at least this (as circuits.fig4's precondition)


@dataclass(frozen=True)
class Params:
    run: str


def both_rise(d1: np.ndarray, d2: np.ndarray) -> tuple[float, int]:
    """Among the paired changes where either of ``d1`` and ``d2`` rises (> 0), the share where both do, and how
    many such pairs there are (NaN share where none)."""
    either = (d1 > 0) | (d2 > 0)
    n = int(either.sum())
    return (float(((d1 > 0) & (d2 > 0)).sum() / n) if n else float("nan")), n


def twin_stats(d: np.ndarray, x: np.ndarray, T: int, k: int) -> dict:
    """Per seed, from changes of the attention ``d`` (seed, time, input, position) of two-copy inputs ``x`` (input,
    position) of length 2 T, the both-rise share (:func:`both_rise`) of:

    - ``copies``: the two copies' attention masses on their first k positions (the two circuits);
    - ``twins``: the positions (t, t + T) for t < k (one token, two positions);
    - ``same_token_pairs``: (t, u + T) with t != u < k whose tokens are equal (the control of ``twins``: a shared
      token without a shared position);
    - ``other_token_pairs``: (t, u + T) with t != u < k whose tokens differ;
    - ``twins_beyond_k``: the twins at the positions that do not decide the label."""
    firsts = [(t, u) for t in range(k) for u in range(k)]
    masks = {"twins": [(t, u, None) for t, u in firsts if t == u],
             "same_token_pairs": [(t, u, x[:, t] == x[:, u]) for t, u in firsts if t != u],
             "other_token_pairs": [(t, u, x[:, t] != x[:, u]) for t, u in firsts if t != u],
             "twins_beyond_k": [(t, t, None) for t in range(k, T)]}
    out = {}
    for name, pairs in masks.items():
        shares = []
        for s in range(len(d)):
            a = [d[s, ..., t] if m is None else d[s][:, m, t] for t, _, m in pairs]
            b = [d[s, ..., u + T] if m is None else d[s][:, m, u + T] for _, u, m in pairs]
            shares.append(both_rise(np.concatenate([v.ravel() for v in a]), np.concatenate([v.ravel() for v in b])))
        out[f"{name}_both_rise_per_seed"] = json_floats([v for v, _ in shares])
        out[f"{name}_events_per_seed"] = [n for _, n in shares]
    copies = [both_rise(c[..., :k].sum(-1), c[..., T:T + k].sum(-1)) for c in d]
    out["copies_both_rise_per_seed"] = json_floats([v for v, _ in copies])
    out["copies_events_per_seed"] = [n for _, n in copies]
    return out


def single_step_stats(ss: xr.Dataset, T: int, k: int) -> dict:
    """:func:`twin_stats` of the single-input gradient steps over every snapshot, and the copies' share at the
    first snapshot alone (with its epoch)."""
    d = ss.attention_change.transpose("seed", "snapshot", "input", "position").values
    x = ss.x.transpose("input", "position").values
    first = twin_stats(d[:, :1], x, T, k)
    return {**twin_stats(d, x, T, k), "copies_both_rise_first_snapshot_per_seed": first["copies_both_rise_per_seed"],
            "snapshots": [int(e) for e in ss.snapshot.values], "n_inputs": int(ss.sizes["input"])}


def end_stats(traj: xr.Dataset, T: int, k: int) -> dict:
    """Per seed, the attention (mean over probes) on each copy's first k positions at the first and the last
    recorded epoch, the weaker copy's share of their sum at the last, whether both copies' masses grew, and the
    final train and test accuracy."""
    recorded = recorded_attention(traj)
    att = recorded.mean("probe").transpose("seed", "epoch", "position").values  # (seed, epoch, 2T)
    first, last = att[:, 0], att[:, -1]
    m1, m2 = last[:, :k].sum(1), last[:, T:T + k].sum(1)
    s1, s2 = first[:, :k].sum(1), first[:, T:T + k].sum(1)
    return {"epoch": int(recorded.epoch[-1]), "first_epoch": int(recorded.epoch[0]),
            "copy_mass_per_seed": [[float(a), float(b)] for a, b in zip(m1, m2)],
            "copy_mass_first_per_seed": [[float(a), float(b)] for a, b in zip(s1, s2)],
            "both_grew_per_seed": [bool(a > c and b > e) for a, b, c, e in zip(m1, m2, s1, s2)],
            "weaker_copy_share_per_seed": json_floats(np.minimum(m1, m2) / (m1 + m2)),
            "weaker_copy_share_first_per_seed": json_floats(np.minimum(s1, s2) / (s1 + s2)),
            "train_acc_end_per_seed": json_floats(traj.train_acc.isel(epoch=-1)),
            "test_acc_end_per_seed": json_floats(traj.test_acc.isel(epoch=-1))}


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    traj = read_dataset(paths.trajectory(params.run), rule="train")
    if traj.attrs.get("task_task") != "sparse_modular_addition_copies" or int(traj.attrs.get("task_copies", 0)) != 2:
        raise ConfigError(f"figures.circuits_duplicates.run: run '{params.run}' trains on task "
                          f"{traj.attrs.get('task_task')!r} with {traj.attrs.get('task_copies')} copies; allowed: "
                          "sparse_modular_addition_copies with copies: 2 (the paper's [x_1, x_2])")
    T, k = int(traj.attrs["task_T"]), int(traj.attrs["task_k"])
    ss = read_dataset(paths.analysis("single_step", params.run), rule="single_step")
    step_changes = traj.step_attention.transpose("seed", "step", "probe", "position").diff("step").values
    probes = traj.probe_x.transpose("probe", "position").values
    stats = {"run": params.run, "p": int(traj.attrs["task_p"]), "T": T, "k": k, "independent": INDEPENDENT,
             "single_step": single_step_stats(ss, T, k), "end": end_stats(traj, T, k),
             "training_steps": {**twin_stats(step_changes, probes, T, k), "steps": int(traj.sizes["step"] - 1),
                                "n_probe": int(traj.sizes["probe"])}}
    one, end, run_steps = stats["single_step"], stats["end"], stats["training_steps"]

    def med(values: list) -> float:
        return float(np.nanmedian(read_floats(values)))

    stats["summary"] = (
        f"{params.run} (p = {stats['p']}, [x, x] with T = {T}, k = {k}): of the single-input gradient steps raising "
        f"either copy's first-k attention ({one['n_inputs']} inputs, {len(one['snapshots'])} snapshots), a median "
        f"{med(one['copies_both_rise_per_seed']):.3f} raise both (twin positions: "
        f"{med(one['twins_both_rise_per_seed']):.3f}, equal tokens elsewhere: "
        f"{med(one['same_token_pairs_both_rise_per_seed']):.3f}; independent moves: {INDEPENDENT:.3f}); the "
        f"training's mini-batch updates on held-out probes, its first {run_steps['steps']} steps: "
        f"{med(run_steps['copies_both_rise_per_seed']):.3f}; at epoch {end['epoch']} the weaker copy holds a median "
        f"{med(end['weaker_copy_share_per_seed']):.3f} of the two copies' first-k attention")
    mean_att = recorded_attention(traj).mean(["seed", "probe"])
    return plot_circuits_duplicates(one, end, mean_att, T, k), stats


def plot_circuits_duplicates(twins: dict, end: dict, mean_att: xr.DataArray, T: int, k: int) -> Figure:
    """``twins``/``end``: :func:`twin_stats` and :func:`end_stats`; ``mean_att``: attention (epoch, position)."""
    fig, axes = style.figure(ncols=3, width=3.6, height=2.8)
    ax = axes[0][0]
    seeds = np.arange(len(twins["twins_both_rise_per_seed"]))
    for off, key, color, label in ((-0.27, "copies", "C3", "the two copies' first-k masses"),
                                   (0.0, "twins", "C1", "twin positions (t, t + T), t < k"),
                                   (0.27, "same_token_pairs", "0.6", "equal tokens, t != t' < k")):
        ax.bar(seeds + off, read_floats(twins[f"{key}_both_rise_per_seed"]), width=0.27, color=color, label=label)
    ax.axhline(INDEPENDENT, color="k", ls=":", lw=1, label="independent moves (1/3)")
    ax.set(xlabel="seed", ylabel="raise both / raise either", ylim=(0, 1.4), title="a step on one input")
    ax.set_yticks(np.linspace(0, 1, 6))
    ax.legend(fontsize=7, loc="upper left", frameon=False)
    ax = axes[0][1]
    epochs = mean_att.epoch.values
    edges = np.concatenate([[epochs[0] - 0.5], (epochs[1:] + epochs[:-1]) / 2, [epochs[-1] + 0.5]])
    mesh = ax.pcolormesh(edges, np.arange(2 * T + 1) - 0.5, mean_att.transpose("position", "epoch").values,
                         cmap="viridis", vmin=0, shading="flat")
    for y in (k - 0.5, T - 0.5, T + k - 0.5):
        ax.axhline(y, color="w", ls="--" if y != T - 0.5 else "-", lw=1)
    ax.invert_yaxis()
    ax.set_yticks([0, k, T, T + k])
    ax.set_xscale("symlog", linthresh=10)
    ax.set(xlabel="epoch", ylabel="position", title="attention (mean over seeds)")
    fig.colorbar(mesh, ax=ax, shrink=0.8)
    ax = axes[0][2]
    grew = np.array(end["both_grew_per_seed"])
    acc, share = read_floats(end["train_acc_end_per_seed"]), read_floats(end["weaker_copy_share_per_seed"])
    ax.scatter(acc[grew], share[grew], color="C0", label="both copies' masses grew")
    ax.scatter(acc[~grew], share[~grew], facecolors="none", edgecolors="C0", label="a copy's mass did not grow")
    ax.axhline(0.5, color="k", ls=":", lw=1)
    ax.axhline(DUPLICATED, color="C3", ls="--", lw=1, label=f"duplicated: at least {DUPLICATED:g}")
    ax.axvline(LEARNED, color="0.5", ls="--", lw=1, label=f"learned: at least {LEARNED:g}")
    ax.legend(fontsize=7, loc="lower left", frameon=False)
    ax.set(xlabel="final train accuracy", ylabel="weaker copy's share (0.5: even)", ylim=(0, 0.55),
           title=f"first-k attention, epoch {end['epoch']}")
    return fig
