"""Theorems 3 and 4 of Tian's talk: what a one-layer transformer learns of sequences it saw and of those it did not.

Theorem 3 (the reversal curse), for a run of task ``relations`` with ``kind: reversal``: for every training
sequence p(x3 | x1, x2) >= 1 - (M - 1) / (2 (M eta_Y t / N)^c) -> 1 for some c > 0, and for every test sequence
(the reverse B_i <- A_i of a held-out item, never trained on) p(x3 | x1, x2) <= 1/M, at every t >~ N ln M / eta_Y.
Theorem 4 (the necessity of chain-of-thought), for a run with ``kind: chain``: for every held-out item i both steps
p(B_i | A_i ->) and p(C_i | B_i ->) obey the same lower bound, and the direct p(C_i | A_i ~>) <= 1/M.

From analysis ``next_token`` (the label's probability per seed, snapshot and sample), per run and seed: over the
recorded steps t >= t0 = N ln M / eta_Y (t counts optimizer steps: the snapshot's epoch times the steps of an
epoch; N the training sequences, M every token, the two relation tokens included), the lowest probability of the
sequences the lower bound is about (``p_low``), its decay exponent c (minus the slope of log(1 - p_low) against
log t, least squares: 1 - p_low falling as t^-c) over all those steps and over their last third (whether it still
falls at the end of the run), and the highest probability of the sequences the upper bound is about over those
steps, times M (``p_high_times_M``: at most 1 under the theorem). The control is the same highest probability,
over the same steps, for the trained sequences of the held-out kind (the reverses, or the direct sequences, of the
other items), which training raises.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure

from ..intervals import json_floats
from ..plumbing.store import read_dataset
from . import style

NAME = "relation_theorems"
PAPER = "Tian: training dynamics of attention (Scan&Snap, JoMA)"
CONFIG = """
description: Theorems 3 and 4 of the talk (the reversal curse, the necessity of chain-of-thought), the label's probability over steps.
required: [reversal, chain]
properties:
  reversal: {description: "A run of task relations with kind reversal, listed in analyses.next_token.runs.", type: string, x-ref: run, x-reads: [analysis/next_token]}
  chain: {description: "A run of task relations with kind chain, listed in analyses.next_token.runs.", type: string, x-ref: run, x-reads: [analysis/next_token]}
"""
# per theorem: the statements the lower bound is about (on the held-out items only for the chain: "for any test
# index i"), and the statement of the upper bound (always the held-out items' test sequences)
BOUNDS = {"reversal": (("forward", "reverse"), False, "reverse"), "chain": (("step1", "step2"), True, "direct")}
MIN_RATIO = 10.0  # eta_Y >> eta_Z, read as a ratio of at least 10 (as figure scan_snap_gain)
MIN_TOKENS = 100  # M >> 100, read as M > 100


@dataclass(frozen=True)
class Params:
    reversal: str
    chain: str


def theorem_setting(cfg, run: str, kind: str) -> list[str]:
    """What of the theorems' assumptions a run breaks that a config states (empty: none)."""
    rc = cfg.runs[run]
    broken = []
    M = int(cfg.run_spec(run).shape["tokens"])
    if M <= MIN_TOKENS:
        broken.append(f"M = {M} tokens (the theorems assume M >> {MIN_TOKENS})")
    model = cfg.models[rc.model].params
    if model.get("init", "zero") != "zero":
        broken.append(f"Z and Y do not start at zero (init: {model.get('init')})")
    opt = rc.optimizer
    if opt.name != "sgd" or (opt.momentum or 0.0) != 0.0 or opt.weight_decay or opt.schedule != "constant":
        broken.append(f"optimizer {opt.name}, momentum {opt.momentum or 0.0:g}, weight decay {opt.weight_decay:g}, "
                      f"schedule {opt.schedule} (the theorems are about plain SGD)")
    if rc.batch_size != 1:
        broken.append(f"batch size {rc.batch_size} (the theorems assume SGD with batch size 1)")
    if getattr(opt, "warmup_epochs", 0):
        broken.append(f"a warm-up of {opt.warmup_epochs} epochs (the theorems assume a constant rate)")
    if getattr(rc, "label_smoothing", 0.0):
        broken.append(f"label smoothing {rc.label_smoothing:g} (the theorems' loss is the plain cross-entropy)")
    ratio = dict(opt.lr_ratio)
    eta_y, eta_z = opt.lr * ratio.get("Y", 1.0), opt.lr * ratio.get("Z", 1.0)
    if not M ** -0.99 < eta_y < 1:
        broken.append(f"eta_Y = {eta_y:g} (the theorems assume 1/M^0.99 << eta_Y < 1)")
    if eta_y < MIN_RATIO * eta_z:
        broken.append(f"eta_Y / eta_Z = {eta_y / eta_z:g} (the decoder learns faster than the attention, eta_Y >> "
                      f"eta_Z, read as >= {MIN_RATIO:g})")
    if rc.sweep or getattr(rc, "init_from", None):
        broken.append("a swept run or one that starts from another run's weights")
    return broken


def decay_exponent(t: np.ndarray, gap: np.ndarray) -> np.ndarray:
    """Per leading index of ``gap`` (..., step) = 1 - p at steps ``t``: minus the least-squares slope of log(gap)
    against log(t) (c of gap ~ t^-c); NaN with fewer than 3 steps. A gap of 0 (p rounded to 1 in float64) is read
    as float64's resolution, so a seed that converged fully keeps a positive exponent."""
    if len(t) < 3:
        return np.full(gap.shape[:-1], np.nan)
    lt = np.log(t) - np.log(t).mean()
    lg = np.log(np.maximum(gap, np.finfo(np.float64).eps))
    return -((lg - lg.mean(-1, keepdims=True)) * lt).sum(-1) / (lt ** 2).sum()


def steps_per_epoch(n_train: int, batch_size) -> int:
    """Optimizer steps of one epoch: one for a full batch, else ceil(n_train / batch_size)."""
    return 1 if batch_size in (None, "full") else math.ceil(n_train / int(batch_size))


def lower_bound_sequences(an, kind: str) -> np.ndarray:
    """The samples the lower bound is about: training sequences of its statements (for the chain, of the held-out
    items only: "for any test index i")."""
    lower, held_only, _ = BOUNDS[kind]
    sel = (an.split.values == "train") & np.isin(an.statement.values, lower)
    return sel & an.held_out.values.astype(bool) if held_only else sel


def run_stats(cfg, an, run: str, kind: str) -> dict:
    """One run's statistics (see the module's docstring), per seed."""
    upper = BOUNDS[kind][2]
    statement, held, split = an.statement.values, an.held_out.values.astype(bool), an.split.values
    n_train = int((split == "train").sum())
    M = int(cfg.run_spec(run).shape["tokens"])
    rc = cfg.runs[run]
    eta_y = rc.optimizer.lr * dict(rc.optimizer.lr_ratio).get("Y", 1.0)
    t = an.step.values.astype(np.float64) * steps_per_epoch(n_train, rc.batch_size)
    t0 = n_train * math.log(M) / eta_y
    late = t >= t0
    end = np.flatnonzero(late)[-max(3, int(late.sum()) // 3):] if late.sum() >= 3 else np.array([], dtype=int)
    p = an.p_label.values  # (seed, step, sample)
    low_sel = lower_bound_sequences(an, kind)
    high_sel = (statement == upper) & held
    ctrl_sel = (statement == upper) & ~held
    p_low = p[..., low_sel].min(-1)  # (seed, step)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        c = decay_exponent(t[late], 1.0 - p_low[:, late])
        c_end = decay_exponent(t[end], 1.0 - p_low[:, end])
    high = p[..., high_sel].max(-1)
    ctrl = p[..., ctrl_sel].max(-1) if ctrl_sel.any() else np.full(high.shape, np.nan)
    out = {"run": run, "kind": kind, "M": M, "N": n_train, "eta_Y": eta_y, "t0": t0,
           "last_step": float(t[-1]), "steps_after_t0": int(late.sum()),
           "lower_bound_sequences": int(low_sel.sum()), "upper_bound_sequences": int(high_sel.sum()),
           "decay_exponent_per_seed": json_floats(c), "end_decay_exponent_per_seed": json_floats(c_end),
           "end_steps": int(len(end)), "p_low_last_per_seed": json_floats(p_low[:, -1]),
           "p_high_times_M_per_seed": json_floats(M * high[:, late].max(-1) if late.any()
                                                  else np.full(len(high), np.nan)),
           "control_times_M_per_seed": json_floats(M * ctrl[:, late].max(-1) if late.any()
                                                   else np.full(len(ctrl), np.nan)),
           "outside_theorem": theorem_setting(cfg, run, kind)}
    out["theorem_setting"] = not out["outside_theorem"]
    return out


def _median(values: list) -> float:
    """The median of per-seed values, None (NaN) skipped; NaN where none is left."""
    v = np.asarray(values, dtype=float)
    return float(np.median(v[np.isfinite(v)])) if np.isfinite(v).any() else math.nan


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    runs = {"reversal": params.reversal, "chain": params.chain}
    ans = {k: read_dataset(paths.analysis("next_token", r), rule="next_token") for k, r in runs.items()}
    for key, an in ans.items():
        if "statement" not in an.coords or "held_out" not in an.coords:
            raise ValueError(f"figures.relation_theorems.{key}: run {runs[key]!r} is not a run of task relations "
                             "(its samples carry no statement and held_out)")
        if not {*BOUNDS[key][0], BOUNDS[key][2]} <= set(an.statement.values):
            raise ValueError(f"figures.relation_theorems.{key}: run {runs[key]!r} is a run of task relations of "
                             f"another kind (its statements: {', '.join(sorted(set(an.statement.values)))}); "
                             f"allowed: a run of kind {key}")
    stats = {k: run_stats(cfg, an, runs[k], k) for k, an in ans.items()}
    for k, s in stats.items():
        s["summary"] = (f"run {s['run']} ({k}, M = {s['M']}, N = {s['N']}, t0 = N ln M / eta_Y = {s['t0']:.0f} "
                        f"steps, last step {s['last_step']:.0f}): lowest p of the {s['lower_bound_sequences']} "
                        f"sequences of the lower bound {np.median(s['p_low_last_per_seed']):.4f} at the last step, "
                        f"decay exponent of 1 - p {_median(s['decay_exponent_per_seed']):.2f}; highest p of the "
                        f"{s['upper_bound_sequences']} held-out sequences times M {_median(s['p_high_times_M_per_seed']):.3f} (trained ones of that "
                        f"kind {_median(s['control_times_M_per_seed']):.1f}; medians over seeds)"
                        + ("" if s["theorem_setting"] else "; outside the theorem's assumptions: "
                           + "; ".join(s["outside_theorem"])))
    summary = " | ".join(s["summary"] for s in stats.values())
    return plot_relation_theorems(cfg, ans, stats), {**stats, "summary": summary}


def plot_relation_theorems(cfg, ans: dict, stats: dict) -> Figure:
    fig, axes = style.figure(ncols=2, width=3.6)
    for ax, (kind, an) in zip(axes[0], ans.items()):
        s = stats[kind]
        upper = BOUNDS[kind][2]
        statement, held = an.statement.values, an.held_out.values.astype(bool)
        t = an.step.values.astype(np.float64) * steps_per_epoch(s["N"], cfg.runs[s["run"]].batch_size)
        p = an.p_label
        low = p.isel(sample=lower_bound_sequences(an, kind)).min("sample")
        high = p.isel(sample=(statement == upper) & held).max("sample")
        keep = t > 0
        style.seeds_and_median(ax, t[keep], 1.0 - low.isel(step=keep), style.ARM_COLORS[0],
                               label="1 - lowest p, " + ("trained" if kind == "reversal" else "both steps"))
        style.seeds_and_median(ax, t[keep], s["M"] * high.isel(step=keep), style.ARM_COLORS[1],
                               label=f"M x highest p, held-out {upper}")
        ax.axhline(1.0, color="0.5", lw=0.8, ls=":")
        ax.axvline(s["t0"], color="0.5", lw=0.8, ls="--")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("step t (dashed: N ln M / eta_Y)")
        ax.set_title(f"{'Theorem 3, reversal' if kind == 'reversal' else 'Theorem 4, chain'} (M = {s['M']})",
                     fontsize=9)
        ax.legend(fontsize=7)
    return fig
