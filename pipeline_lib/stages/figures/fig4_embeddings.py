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
        train_acc = traj.train_acc.isel(epoch=-1)
        learned = [int(s) for s in z.seed.values if float(train_acc.sel(seed=s)) >= 0.99]
        stats[run] = {"clusters_per_seed": counts, "distinct_sums": int(len(np.unique(sums))),
                      "median_clusters": float(np.median(list(counts.values()))),
                      "final_train_acc": {int(s): float(train_acc.sel(seed=s)) for s in z.seed.values},
                      "seeds_learned": learned,  # train accuracy >= 0.99: clusters mean something
                      "clusters_of_learned": [counts[s] for s in learned]}
    fig = plot_fig4_embeddings(panels)
    stats["summary"] = ("clusters of z_A (k-means, k by best silhouette): "
                        + "; ".join(f"{r}: {len(s['seeds_learned'])}/{len(s['clusters_per_seed'])} seeds reach train "
                                    f"accuracy >= 0.99, their cluster counts {s['clusters_of_learned']}, all seeds' "
                                    f"median {s['median_clusters']:g} ({s['distinct_sums']} distinct sums)"
                                    for r, s in stats.items()))
    save_figure(fig, stats, figure_provenance(cfg, "fig4_embeddings", inputs, __name__), pdf, png, sidecar)
    return stats
