"""Figure stage fig4_embeddings: z_A of a d=2 model after pretraining and after finetuning."""
from __future__ import annotations

import numpy as np

from ...analysis.clusters import count_clusters
from ...config import Config
from ...figures.fig4 import plot_fig4_embeddings
from ...store import read_dataset
from . import figure_provenance, save_figure


def build(cfg: Config, inputs: dict[str, str], pdf: str, png: str, sidecar: str) -> dict:
    fc = cfg.figures["fig4_embeddings"]
    panels, stats = [], {}
    for phase, run in (("after pretraining", fc.pretrain), ("after finetuning", fc.finetune)):
        traj = read_dataset(inputs[run], rule="train")
        k = int(traj.attrs["k"])
        sums = traj.embed_x.values[:, :k].sum(1)
        z = traj.z_A.isel(snapshot=-1)  # final weights
        counts = {int(s): count_clusters(z.sel(seed=s).values, fc.max_clusters, seed=0)[0] for s in z.seed.values}
        panels.append({"title": f"{phase}\n{run}, seed {fc.seed}", "z": z.sel(seed=fc.seed).values,
                       "color": sums, "clusters": counts[fc.seed]})
        stats[run] = {"clusters_per_seed": counts, "distinct_sums": int(len(np.unique(sums))),
                      "median_clusters": float(np.median(list(counts.values())))}
    fig = plot_fig4_embeddings(panels)
    stats["summary"] = ("clusters of z_A (k-means, k by best silhouette), median over seeds [range]: "
                        + "; ".join(f"{r} {s['median_clusters']:g} [{min(s['clusters_per_seed'].values())}-"
                                    f"{max(s['clusters_per_seed'].values())}] for {s['distinct_sums']} distinct sums"
                                    for r, s in stats.items()))
    save_figure(fig, stats, figure_provenance(cfg, "fig4_embeddings", inputs, __name__), pdf, png, sidecar)
    return stats
