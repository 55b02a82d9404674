"""GaLore against Adam (Tian's talk: "the weight gradient can be even more low-rank", the premise of
GaLore's gradient projection). Per comparison (a model trained with Adam and with galore_adam, same
data; only the seeds both runs trained are shown), left: the stable rank ||G||_F^2 / ||G||_2^2 of each weight matrix's full-batch
gradient over training (median over seeds; dotted: the matrix's full rank min(m, n)); right: final
test accuracy per seed and the optimizer state each arm kept, measured on the live optimizer at the
end of training (elements, bytes per seed)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure

from ..plumbing.store import read_dataset
from . import style

NAME = "galore_lowrank"
PAPER = "Tian: algebraic structure of solutions (CoGO, GaLore)"
CONFIG = """
description: Adam against GaLore per comparison (gradient stable rank over training, accuracy, optimizer state).
required: [comparisons]
properties:
  comparisons:
    description: "Label -> {adam: run, galore: run}, both listed in analyses.gradient_rank.runs."
    type: object
    minProperties: 1
    additionalProperties:
      type: object
      additionalProperties: false
      required: [adam, galore]
      properties:
        adam: {type: string, x-ref: run, x-reads: [analysis/gradient_rank, trajectory]}
        galore: {type: string, x-ref: run, x-reads: [analysis/gradient_rank, trajectory]}
        matched: {description: "Optional: Adam at GaLore's lr x scale (the matched effective step), the control of the GaLore-vs-Adam claims; only its trajectory is read.", type: string, x-ref: run, x-reads: [trajectory]}
  success_threshold:
    description: "A seed succeeds when its final test accuracy is >= this (the claims' outcome)."
    type: number
    minimum: 0
    maximum: 1
    default: 0.9
"""
ARMS = ("adam", "galore")
LOW_RANK_SHARE = 0.25  # a gradient is low-rank when its stable rank is at most this share of min(m, n)


@dataclass(frozen=True)
class Params:
    comparisons: tuple[tuple[str, dict], ...]
    success_threshold: float = 0.9


def arm_stats(cfg, run: str, paths, seeds: list[int]) -> tuple[dict, object]:
    """One arm's numbers over ``seeds`` (the seeds both arms trained); the state size is per seed."""
    gr = read_dataset(paths.analysis("gradient_rank", run), rule="gradient_rank")
    traj = read_dataset(paths.trajectory(run), rule="train")
    S = traj.sizes["seed"]  # the optimizer state was measured over all of the run's seeds
    gr, traj = gr.sel(seed=seeds), traj.sel(seed=seeds)
    last = traj.isel(epoch=-1)
    opt = cfg.runs[run].optimizer
    elements, nbytes = int(gr.attrs["optimizer_state_elements"]), int(gr.attrs["optimizer_state_bytes"])
    sr = gr.stable_rank.median("seed")
    return {"run": run, "optimizer": opt.name, "lr": float(opt.lr), "options": dict(opt.options), "seeds": list(seeds),
            "final_test_acc": [float(v) for v in last.test_acc.values],
            "final_train_acc": [float(v) for v in last.train_acc.values],
            "state_elements_per_seed": elements / S, "state_bytes_per_seed": nbytes / S,
            "stable_rank_first": {str(p): float(v) for p, v in zip(gr.param.values, sr.isel(epoch=0).values)},
            "stable_rank_final": {str(p): float(v) for p, v in zip(gr.param.values, sr.isel(epoch=-1).values)},
            "stable_rank_median_over_training": {str(p): float(v) for p, v in
                                                 zip(gr.param.values, sr.isel(epoch=slice(1, None)).median("epoch").values)},
            "max_rank": {str(p): int(v) for p, v in zip(gr.param.values, gr.max_rank.values)}}, gr


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    n = len(params.comparisons)
    fig, axes = style.figure(ncols=2, nrows=n, width=4.0, height=3.4)
    stats: dict = {}
    for row, (label, pair) in enumerate(params.comparisons):
        stats[label] = {}
        ax, ax_acc = axes[row, 0], axes[row, 1]
        ticks = []
        seeds = sorted(set(cfg.runs[pair["adam"]].seeds) & set(cfg.runs[pair["galore"]].seeds))
        if not seeds:
            raise ValueError(f"config key 'figures.galore_lowrank.comparisons.{label}': runs {pair['adam']} and "
                             f"{pair['galore']} share no seed; allowed: runs with common seeds")
        for i, arm in enumerate(ARMS):
            st, gr = arm_stats(cfg, pair[arm], paths, seeds)
            stats[label][arm] = st
            x = np.maximum(gr.epoch.values, 1)
            sr = gr.stable_rank.median("seed")
            for p in gr.param.values:  # each weight matrix thin, their mean bold
                ax.plot(x, sr.sel(param=p), color=style.ARM_COLORS[i], lw=style.SEED_LW, alpha=style.SEED_ALPHA)
            ax.plot(x, sr.mean("param"), color=style.ARM_COLORS[i], lw=style.MEDIAN_LW,
                    label=f"{arm} ({pair[arm]}): mean of {gr.sizes['param']} matrices")
            acc = st["final_test_acc"]
            ax_acc.scatter(np.full(len(acc), i) + np.linspace(-0.1, 0.1, len(acc)), acc, color=style.ARM_COLORS[i], s=14)
            ticks.append(f"{arm}\n{pair[arm]}\nstate per seed:\n{st['state_elements_per_seed']:.0f} el.\n"
                         f"{st['state_bytes_per_seed'] / 1024:.1f} KiB")  # short lines: no label runs into the next
        ranks = sorted({int(r) for r in gr.max_rank.values})  # the matrices' full ranks, as the caption says
        for j, rank in enumerate(ranks):
            ax.axhline(rank, color="0.5", ls=":", lw=0.8,
                       label=f"full rank min(m, n): {', '.join(map(str, ranks))}" if j == 0 else None)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("epoch")
        ax.set_ylabel("gradient stable rank (median over seeds)")
        ax.set_title(label, fontsize=9)
        ax.legend(fontsize=6)
        ax_acc.set_ylim(-0.05, 1.05)
        ax_acc.set_ylabel("final test accuracy (per seed)")
        if pair.get("matched"):
            stats[label]["matched"] = matched_stats(cfg, pair["matched"], paths, seeds)
            acc = stats[label]["matched"]["final_test_acc"]
            ax_acc.scatter(np.full(len(acc), 2) + np.linspace(-0.1, 0.1, len(acc)), acc, color=style.ARM_COLORS[2], s=14)
            ticks.append(f"adam,\nlr x scale\n{pair['matched']}\n(matched\nstep)")
        ax_acc.set_xticks(range(len(ticks)), ticks, fontsize=7)
        ax_acc.set_xlim(-0.6, len(ticks) - 0.4)
        a, g = stats[label]["adam"], stats[label]["galore"]
        stats[label]["state_bytes_ratio_galore_over_adam"] = g["state_bytes_per_seed"] / a["state_bytes_per_seed"]
        stats[label]["success_threshold"] = params.success_threshold
    stats["summary"] = "; ".join(
        f"{label}: test acc median Adam {np.median(s['adam']['final_test_acc']):.3f} vs GaLore "
        f"{np.median(s['galore']['final_test_acc']):.3f}; optimizer state per seed {s['adam']['state_bytes_per_seed']:.0f} B "
        f"vs {s['galore']['state_bytes_per_seed']:.0f} B (x{s['state_bytes_ratio_galore_over_adam']:.2f}); gradient "
        f"stable rank (median over training, Adam run) "
        + ", ".join(f"{p} {v:.2f}/{s['adam']['max_rank'][p]}" for p, v in s["adam"]["stable_rank_median_over_training"].items())
        for label, s in stats.items())
    return fig, stats


def matched_stats(cfg, run: str, paths, seeds: list[int]) -> dict:
    """The matched-step Adam run's final accuracies over the comparison's seeds that it trained too."""
    traj = read_dataset(paths.trajectory(run), rule="train")
    common = [s for s in seeds if s in set(int(v) for v in traj.seed.values)]
    last = traj.sel(seed=common).isel(epoch=-1)
    opt = cfg.runs[run].optimizer
    return {"run": run, "optimizer": opt.name, "lr": float(opt.lr), "seeds": common,
            "final_test_acc": [float(v) for v in last.test_acc.values],
            "final_train_acc": [float(v) for v in last.train_acc.values]}


# -- claims ---------------------------------------------------------------------------------------------------

COMPARISONS = {"modadd": "modular_addition", "reasoning": "eureka_reasoning"}  # claim suffix -> default label


