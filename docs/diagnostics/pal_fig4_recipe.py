"""Diagnostic, outside the pipeline: does the Fig. 4 notebook's p=2 recipe learn for initialisations other
than the notebook's own?

The model and recipe are re-implemented here from a reading of facebookresearch/pal
projects/visualization/notebooks/factorization.ipynb (its "Training recipes" cell: emb_dim 2, ffn_dim 32,
Adam at lr 1e-3, full batch of 2048 sequences of length 12, k = 5, 3000 steps; the model seeded with
torch.manual_seed(20), the data with numpy seed 1 as `rand // (1 / vocab)`): token and position embeddings,
RMS normalisation (eps outside the root), one learned query vector against the normalised inputs, a value
map, a GELU MLP with biases on a residual, and the unembedding tied to the token embedding. Parameters are
created in the notebook's order, so model seed 20 gives the notebook's initialisation.

Run: python docs/diagnostics/pal_fig4_recipe.py [--vocab 4 2] [--lr 1e-3] [--steps 3000] [--seeds 20 0 1 ...]
[--keep]. Prints, per vocabulary and model seed, the final train and test accuracy on p = 2 (test: 1024 fresh
sequences); ``--keep`` also writes them, with the command and the machine, to ``kept/pal_fig4_recipe.json``
beside this file, from which ``python -m pipeline_lib publish`` fills the table of ``pal_fig4_recipe.md``.

``--finetune`` follows the notebook's Fig. 4(b) and Fig. 5 instead (vocabulary 4 always: ``--vocab`` is not
read): each model seed's p = 2 model is finetuned on p = 4 (recipe 2: Adam at lr 1e-2, a fresh optimiser, 7000
steps: the notebook's "niter = 7_000 # 2 -> 4"), and the same initialisation is trained on p = 4 from scratch
(lr 1e-2, 10000 steps: "niter = 10_000 # 4"). The p = 4 data are drawn from the same numpy seed, so the p = 2
set is the p = 4 set's high bits, as the pipeline's curriculum couples them. It prints the accuracies and the
clusters of z_A (the attention's output) on the notebook's embedded inputs, the 4^5 first-k patterns followed by
zeros, counted as the pipeline's Fig. 4 counts them (``pipeline_lib.figures.fig4_embeddings``: k-means with k by
the best silhouette, and the share of points in a cluster of their own sum); ``--keep`` writes
``kept/pal_fig4_finetune.json``.
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

T, K = 12, 5


class NotebookModel(nn.Module):
    def __init__(self, d: int, vocab: int, ffn: int):
        super().__init__()
        self.token = nn.Embedding(vocab, d)
        self.position = nn.Embedding(T, d)
        self.query = nn.Linear(d, 1, bias=False)
        self.value = nn.Linear(d, d, bias=False)
        self.fc1, self.fc2 = nn.Linear(d, ffn), nn.Linear(ffn, d)
        self.unembed = nn.Linear(d, vocab, bias=False)
        self.unembed.weight = self.token.weight
        self.d = d

    @staticmethod
    def rms(x: torch.Tensor) -> torch.Tensor:
        return x / ((x**2).mean(-1, keepdim=True).sqrt() + 1e-5)

    def z_a(self, x: torch.Tensor) -> torch.Tensor:
        """The attention's output (the notebook's ``out``, the paper's z_A)."""
        h = self.rms(self.token(x) + self.position.weight)
        attn = F.softmax(self.query.weight @ h.transpose(-1, -2) / math.sqrt(self.d), dim=-1)
        return (attn @ self.value(h)).squeeze(1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = self.z_a(x)
        return self.unembed(z + self.fc2(F.gelu(self.fc1(self.rms(z)))))


def parity_data(rng: np.random.Generator, n: int, p: int = 2) -> tuple[torch.Tensor, torch.Tensor]:
    x = (rng.random((n, T)) // (1 / p)).astype(np.int64)
    return torch.from_numpy(x), torch.from_numpy(x[:, :K].sum(1) % p)


def datasets(p: int) -> tuple[tuple[torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor]]:
    """The training and test sets of p, drawn from numpy seed 1 (so that x_p2 == x_p4 // 2 entry by entry)."""
    rng = np.random.default_rng(1)
    return parity_data(rng, 2048, p), parity_data(rng, 1024, p)


def fit(model: nn.Module, p: int, lr: float, steps: int) -> tuple[float, float]:
    """``steps`` full-batch Adam steps (a fresh optimiser) on p; the final train and test accuracy."""
    (x, y), (xt, yt) = datasets(p)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    for _ in range(steps):
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    with torch.no_grad():
        return tuple(float((model(a).argmax(-1) == b).float().mean()) for a, b in ((x, y), (xt, yt)))


def notebook_model(model_seed: int, vocab: int) -> NotebookModel:
    torch.manual_seed(model_seed)
    return NotebookModel(2, vocab, 32)


def train(model_seed: int, vocab: int, lr: float, steps: int) -> tuple[float, float]:
    return fit(notebook_model(model_seed, vocab), 2, lr, steps)


def z_a_clusters(model: NotebookModel) -> tuple[int, float]:
    """z_A of the 4^5 first-k patterns followed by zeros (the notebook's inputs for p = 4): its cluster count
    and sum purity, as the pipeline's Fig. 4 counts them."""
    from pipeline_lib.analysis.clusters import count_clusters
    from pipeline_lib.figures.fig4_embeddings import sum_purity

    codes = np.arange(4**K)
    x = np.zeros((len(codes), T), dtype=np.int64)
    for i in range(K):
        x[:, i] = codes // 4 ** (K - 1 - i) % 4
    with torch.no_grad():
        z = model.z_a(torch.from_numpy(x)).numpy()
    count, _, labels = count_clusters(z.astype(np.float64), 24, seed=0)
    return count, sum_purity(labels, x[:, :K].sum(1))


def finetune(model_seed: int, steps: tuple[int, int, int], lrs: tuple[float, float]) -> list[float]:
    """Fig. 4(b) from one initialisation: p = 2 then p = 4 (the curriculum), and p = 4 from scratch."""
    model = notebook_model(model_seed, 4)
    p2 = fit(model, 2, lrs[0], steps[0])
    ft = fit(model, 4, lrs[1], steps[1])
    ft_clusters = z_a_clusters(model)
    scratch = notebook_model(model_seed, 4)
    sc = fit(scratch, 4, lrs[1], steps[2])
    return [p2[0], *ft, *ft_clusters, *sc, *z_a_clusters(scratch)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vocab", type=int, nargs="+", default=[4],
                    help="token vocabularies (the notebook: 2, or 4 to finetune on p=4)")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--seeds", type=int, nargs="+", default=[20, *range(9)])
    ap.add_argument("--finetune", action="store_true", help="Fig. 4(b): p = 2 then p = 4, and p = 4 from scratch")
    ap.add_argument("--ft-lr", type=float, default=1e-2, help="with --finetune: the p = 4 phases' learning rate")
    ap.add_argument("--ft-steps", type=int, default=7000, help="with --finetune: the finetune's steps")
    ap.add_argument("--scratch-steps", type=int, default=10000, help="with --finetune: p = 4 from scratch's steps")
    ap.add_argument("--keep", action="store_true", help="write the table to kept/ beside this file")
    args = ap.parse_args()
    torch.set_num_threads(1)
    if args.finetune:
        return finetune_table(args)
    acc = {}
    for vocab in args.vocab:
        for seed in args.seeds:
            acc[vocab, seed] = train(seed, vocab, args.lr, args.steps)
            print(f"vocab {vocab} lr {args.lr:g} steps {args.steps} model seed {seed}: train {acc[vocab, seed][0]:.3f} "
                  f"test {acc[vocab, seed][1]:.3f}", flush=True)
    if args.keep:
        columns = ["model seed"] + [f"vocab {v}: {s}" for v in args.vocab for s in ("train", "test")]
        rows = [[seed_label(seed)] + [f"{a:.3f}" for v in args.vocab for a in acc[v, seed]] for seed in args.seeds]
        keep_table("pal_fig4_recipe.json", columns, rows)


def seed_label(seed: int) -> str:
    return f"{seed} (the notebook's seed)" if seed == 20 else str(seed)


def keep_table(name: str, columns: list[str], rows: list[list[str]]) -> None:
    from pipeline_lib.build.kept_tables import keep

    where = keep(Path(__file__).parent / "kept" / name, columns, rows,
                 ["python", "docs/diagnostics/pal_fig4_recipe.py", *sys.argv[1:]])
    print(f"kept {where}")


def finetune_table(args) -> None:
    steps, lrs = (args.steps, args.ft_steps, args.scratch_steps), (args.lr, args.ft_lr)
    columns = ["model seed", "p = 2: train", "p = 2 -> 4: train", "p = 2 -> 4: test", "p = 2 -> 4: z_A clusters",
               "p = 2 -> 4: sum purity", "p = 4 from scratch: train", "p = 4 from scratch: test",
               "p = 4 from scratch: z_A clusters", "p = 4 from scratch: sum purity"]
    rows = []
    for seed in args.seeds:
        v = finetune(seed, steps, lrs)
        rows.append([seed_label(seed)] + [str(int(a)) if c.endswith("clusters") else f"{a:.3f}"
                                          for c, a in zip(columns[1:], v)])
        print(" | ".join(f"{c}: {r}" for c, r in zip(columns, rows[-1])), flush=True)
    if args.keep:
        keep_table("pal_fig4_finetune.json", columns, rows)


if __name__ == "__main__":
    main()
