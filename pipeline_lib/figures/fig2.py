"""Fig. 2 of 'Easing Optimization Paths': attention of one sequence as a bipartite graph over epochs."""
from __future__ import annotations

import numpy as np

from . import style

RISE, FALL = "#d62728", "#1f77b4"


def plot_fig2_attention_graph(rows: dict[str, dict], k: int):
    """One row per arm, one panel per epoch: input positions (bottom) -> output (top).

    ``rows[label]`` holds ``epochs`` (shown epochs), ``attention`` (n_shown, T), ``previous``
    (n_shown, T: the attention at the recorded epoch before each shown one) and ``tokens`` (T,).
    Edge width is the attention score; red if it rose since the previous recorded epoch, blue if it
    fell. The first k positions (those the label depends on) are filled.
    """
    n_cols = max(len(r["epochs"]) for r in rows.values())
    fig, axes = style.figure(ncols=n_cols, nrows=len(rows), width=1.5, height=1.6)
    for row_axes, (label, r) in zip(axes, rows.items()):
        T = r["attention"].shape[1]
        xs = np.arange(T)
        for ax, epoch, att, prev in zip(row_axes, r["epochs"], r["attention"], r["previous"]):
            for t in range(T):
                color = RISE if att[t] > prev[t] else FALL
                ax.plot([xs[t], (T - 1) / 2], [0, 1], color=color, lw=0.3 + 8 * att[t], alpha=0.8,
                        solid_capstyle="round")
            ax.scatter(xs, np.zeros(T), s=18, zorder=3, edgecolor="k", linewidth=0.5,
                       c=["k" if t < k else "w" for t in range(T)])
            ax.scatter([(T - 1) / 2], [1], s=30, c="k", zorder=3)
            for t, tok in enumerate(r["tokens"]):
                ax.text(xs[t], -0.18, str(int(tok)), ha="center", va="top", fontsize=6)
            ax.set_title(f"epoch {int(epoch)}", fontsize=8)
            ax.set_xlim(-0.7, T - 0.3)
            ax.set_ylim(-0.35, 1.1)
            ax.axis("off")
        for ax in row_axes[len(r["epochs"]):]:
            ax.axis("off")
        row_axes[0].text(-0.15, 0.5, label, transform=row_axes[0].transAxes, rotation=90, ha="right",
                         va="center", fontsize=9)
    fig.text(0.5, -0.02, f"edge width = attention; red: rose, blue: fell since the previous recorded epoch; "
             f"filled: the first k={k} positions", ha="center", fontsize=7)
    return fig
