"""Plain PyTorch MLPs trained seed-batched through the workflow's `module` model kind: ModAddMLP on modular
addition, TokenMLP on sparse modular addition (config/circuits_mlp.yaml: the circuits paper's curriculum on a
second architecture).

Config block (config/config.yaml or the test config):

    models:
      own_mlp: {kind: module, module: "examples.own_models.mlp:ModAddMLP", args: {p: 23, d: 32, hidden: 64}}
    runs:
      own_mlp_modadd: {dataset: modadd_d23, model: own_mlp, epochs: 500, seeds: 5, batch_size: full}

Input: (batch, 2) token pairs (a, b); output: logits (batch, p) over a + b mod p.
"""
import torch
from torch import nn


class ModAddMLP(nn.Module):
    def __init__(self, p: int, d: int = 32, hidden: int = 64):
        super().__init__()
        self.embed = nn.Embedding(p, d)
        self.hidden = nn.Sequential(nn.Linear(2 * d, hidden), nn.ReLU())
        self.out = nn.Linear(hidden, p)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        e = self.embed(x)  # (batch, 2, d)
        return self.out(self.hidden(e.flatten(1)))


class TokenMLP(nn.Module):
    """Sparse modular addition without attention: a token embedding shared over positions (as the circuits paper's
    W_E), the T embeddings concatenated, one hidden layer with GELU (as the paper's MLP block), logits over the
    vocabulary (so a finetune from p = 2 to p = 4 keeps every weight's shape).

    Input: (batch, T) token ids below ``vocab``; output: logits (batch, vocab)."""

    def __init__(self, vocab: int, T: int, d: int = 32, hidden: int = 128):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.hidden = nn.Sequential(nn.Linear(T * d, hidden), nn.GELU())
        self.out = nn.Linear(hidden, vocab)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.hidden(self.embed(x).flatten(1)))
