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

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.rms(self.token(x) + self.position.weight)
        attn = F.softmax(self.query.weight @ h.transpose(-1, -2) / math.sqrt(self.d), dim=-1)
        z = (attn @ self.value(h)).squeeze(1)
        return self.unembed(z + self.fc2(F.gelu(self.fc1(self.rms(z)))))


def parity_data(rng: np.random.Generator, n: int, p: int = 2) -> tuple[torch.Tensor, torch.Tensor]:
    x = (rng.random((n, T)) // (1 / p)).astype(np.int64)
    return torch.from_numpy(x), torch.from_numpy(x[:, :K].sum(1) % p)


def train(model_seed: int, vocab: int, lr: float, steps: int) -> tuple[float, float]:
    rng = np.random.default_rng(1)
    (x, y), (xt, yt) = parity_data(rng, 2048), parity_data(rng, 1024)
    torch.manual_seed(model_seed)
    model = NotebookModel(2, vocab, 32)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    for _ in range(steps):
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    with torch.no_grad():
        return tuple(float((model(a).argmax(-1) == b).float().mean()) for a, b in ((x, y), (xt, yt)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vocab", type=int, nargs="+", default=[4],
                    help="token vocabularies (the notebook: 2, or 4 to finetune on p=4)")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--seeds", type=int, nargs="+", default=[20, *range(9)])
    ap.add_argument("--keep", action="store_true", help="write the table to kept/pal_fig4_recipe.json beside this file")
    args = ap.parse_args()
    torch.set_num_threads(1)
    acc = {}
    for vocab in args.vocab:
        for seed in args.seeds:
            acc[vocab, seed] = train(seed, vocab, args.lr, args.steps)
            print(f"vocab {vocab} lr {args.lr:g} steps {args.steps} model seed {seed}: train {acc[vocab, seed][0]:.3f} "
                  f"test {acc[vocab, seed][1]:.3f}", flush=True)
    if args.keep:
        from pipeline_lib.build.kept_tables import keep

        columns = ["model seed"] + [f"vocab {v}: {s}" for v in args.vocab for s in ("train", "test")]
        rows = [[f"{seed} (the notebook's seed)" if seed == 20 else str(seed)]
                + [f"{a:.3f}" for v in args.vocab for a in acc[v, seed]] for seed in args.seeds]
        where = keep(Path(__file__).parent / "kept" / "pal_fig4_recipe.json", columns, rows,
                     ["python", "docs/diagnostics/pal_fig4_recipe.py", *sys.argv[1:]])
        print(f"kept {where}")


if __name__ == "__main__":
    main()
