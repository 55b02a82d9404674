"""Shortest-path transformer (Tian et al., "Spectral Journey"): path accuracy of greedy decoding on
held-out graphs over training (every seed thin, the median bold), and at the end of training
per shortest-path length and per graph size (a decoded path counts when it is a walk of the graph
from s to t of length d_G(s, t): any of the shortest paths). Beside it (dotted), the teacher-forced accuracy
of the path tokens (the training metric); the path accuracy on training graphs is in the measured numbers only."""
from __future__ import annotations

from dataclasses import dataclass

from matplotlib.figure import Figure

from ..plumbing.store import read_dataset
from . import style

NAME = "shortest_path_accuracy"
PAPER = "Tian: shortest-path transformer and the Spectral Line Navigator"
CONFIG = """
description: Path accuracy of greedy decoding over training, per path length and per graph size.
required: [runs]
properties:
  runs:
    description: "Runs listed in analyses.path_accuracy.runs (one colour each)."
    type: array
    minItems: 1
    items: {type: string, x-ref: run, x-reads: [analysis/path_accuracy]}
"""
NEAR_PERFECT = 0.95  # convention: "near-perfect" path accuracy


@dataclass(frozen=True)
class Params:
    runs: tuple[str, ...]


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    fig, axes = style.figure(ncols=3, width=3.6, height=2.9)
    stats: dict = {"runs": {}}
    for i, run in enumerate(params.runs):
        color = style.ARM_COLORS[i % len(style.ARM_COLORS)]
        an = read_dataset(paths.analysis("path_accuracy", run), rule="path_accuracy")
        traj = read_dataset(paths.trajectory(run), rule="train")
        ax = axes[0, 0]
        epochs = an.snapshot.values
        style.seeds_and_median(ax, epochs, an.path_acc, color, label=f"{run}: path accuracy (test graphs)")
        ax.plot(traj.epoch.values, traj.test_acc.median("seed"), color=color, ls=":", lw=1.2,
                label="path tokens, teacher forced (median)")
        final = an.path_acc.isel(snapshot=-1)
        for ax, dim, n_var, label in ((axes[0, 1], "length", "n_by_length", "shortest-path length d(s, t)"),
                                      (axes[0, 2], "n_nodes", "n_by_size", "graph size n")):
            da = an["acc_by_length" if dim == "length" else "acc_by_size"]
            x = an[dim].values
            for s in da.seed.values:
                ax.plot(x + 0.08 * (i - 0.5), da.sel(seed=s), "o", color=color, ms=2.5, alpha=style.SEED_ALPHA)
            ax.plot(x, da.median("seed"), "-o", color=color, lw=style.MEDIAN_LW, ms=4, label=run)
            ax.set_xticks(x)
            ax.set_xticklabels([f"{v}\n({n})" for v, n in zip(x, an[n_var].values)], fontsize=7)
            ax.set_xlabel(f"{label} (test sequences)", fontsize=8)
            ax.set_ylim(-0.03, 1.03)
        stats["runs"][run] = {
            "seeds": int(an.sizes["seed"]), "final_epoch": int(epochs[-1]), "n_test": int(an.sizes["sample"]),
            "path_acc_final": [float(v) for v in final.values], "path_acc_final_median": float(final.median()),
            "exact_match_final_median": float(an.exact.mean("sample").median()),
            "train_path_acc_median": float(an.train_path_acc.median()),
            "teacher_forced_test_acc_median": float(traj.test_acc.isel(epoch=-1).median()),
            "by_length": {int(v): float(a) for v, a in zip(an.length.values, an.acc_by_length.median("seed").values)},
            "by_size": {int(v): float(a) for v, a in zip(an.n_nodes.values, an.acc_by_size.median("seed").values)},
        }
    axes[0, 0].set_xlabel("epoch")
    axes[0, 0].set_ylabel("fraction correct")
    axes[0, 0].set_ylim(-0.03, 1.03)
    axes[0, 0].legend(fontsize=6, loc="lower right")
    axes[0, 1].set_ylabel("path accuracy (final, median bold)")
    stats["summary"] = "; ".join(
        f"{run}: final test path accuracy median {s['path_acc_final_median']:.3f} over {s['seeds']} seeds "
        f"(per seed {', '.join(f'{v:.3f}' for v in s['path_acc_final'])}; exact match with the dataset's path "
        f"{s['exact_match_final_median']:.3f}; training graphs {s['train_path_acc_median']:.3f}); per length "
        + ", ".join(f"d={k}: {v:.3f}" for k, v in s["by_length"].items())
        + "; per size " + ", ".join(f"n={k}: {v:.3f}" for k, v in s["by_size"].items())
        for run, s in stats["runs"].items())
    return fig, stats


