"""Fig. 4 of 'Easing Optimization Paths': z_A of the d=2 model, coloured by the sum of the first k tokens."""
from __future__ import annotations

import numpy as np

from . import style


def plot_fig4_embeddings(panels: list[dict]):
    """Each panel: ``title``, ``z`` (n, 2), ``color`` (n,) sums, ``clusters`` (count found)."""
    fig, axes = style.figure(ncols=len(panels), width=4.0, height=3.2)
    for ax, panel in zip(axes[0], panels):
        sc = ax.scatter(panel["z"][:, 0], panel["z"][:, 1], c=panel["color"], cmap="turbo", s=6,
                        vmin=np.min(panel["color"]), vmax=np.max(panel["color"]))
        ax.set_title(panel["title"], fontsize=8)
        ax.text(0.02, 0.98, f"{panel['clusters']} clusters", transform=ax.transAxes, va="top", fontsize=8)
        ax.set_xlabel("z_A[0]")
        ax.set_ylabel("z_A[1]")
        fig.colorbar(sc, ax=ax, label="sum of the first k tokens", fraction=0.05)
    fig.subplots_adjust(wspace=0.55)  # room for each panel's colorbar label
    return fig
