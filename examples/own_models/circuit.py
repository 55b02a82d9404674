"""The circuits paper's Fig. 5 model (paper_text equations) as a plain, single-seed `nn.Module`, trained
seed-batched through the workflow's `module` model kind (`config/own_circuit.yaml` runs Fig. 5 with it).

    z_t = RMS(E[x_t] + P_t),  s = softmax(z w_Q / tau),  z_A = sum_t s_t W_V z_t,
    z_O = RMS(z_A) + W_2 GELU(W_1 RMS(z_A)),  logits = W_U z_O

Config block:

    models:
      own_circuit: {kind: module, module: "examples.own_models.circuit:CircuitNet",
                    args: {vocab: 4, T: 12, d: 32, h: 128}, sites: [value]}

Its initialisation is PyTorch's defaults under `torch.manual_seed(seed)` (embeddings N(0, 1), linear maps
U(-1/sqrt(fan_in), 1/sqrt(fan_in)), w_Q like a linear map of fan-in d): the same distributions as the
workflow's own `circuit` kind, drawn from another stream, so seed i is not the same network in both.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn


def rms_norm(x: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)


class CircuitNet(nn.Module):
    def __init__(self, vocab: int, T: int, d: int, h: int, tau: float | None = None):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(T, d)
        self.w_Q = nn.Parameter((torch.rand(d) * 2 - 1) / math.sqrt(d))
        self.value = nn.Linear(d, d, bias=False)
        self.fc1, self.fc2 = nn.Linear(d, h, bias=False), nn.Linear(h, d, bias=False)
        self.out = nn.Linear(d, vocab, bias=False)
        self.tau = math.sqrt(d) if tau is None else tau

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, T) -> (B, vocab)
        z = rms_norm(self.tok(x) + self.pos.weight)  # (B, T, d)
        s = torch.softmax(z @ self.w_Q / self.tau, dim=-1)  # (B, T)
        z_A = (s.unsqueeze(-1) * self.value(z)).sum(1)  # (B, d)
        zbar = rms_norm(z_A)
        return self.out(zbar + self.fc2(F.gelu(self.fc1(zbar))))
