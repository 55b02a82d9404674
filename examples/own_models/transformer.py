"""A standard `nn.TransformerEncoder` classifier on the Eureka reasoning task, trained seed-batched through
the workflow's `module` model kind, its attention recorded.

Config block:

    models:
      own_transformer: {kind: module, module: "examples.own_models.transformer:EncoderClassifier",
                        args: {tokens: 13, positions: 12, classes: 2, d: 32, heads: 2, layers: 1},
                        attention: attention_row, sites: [encoder.layers.0]}

Input: (batch, positions) token ids; output: logits (batch, classes) read from a CLS token prepended here.
`attention_row` is an `nn.Identity` through which the forward passes the last layer's CLS-query attention
(mean over heads), computed from that layer's own projections: the row the workflow records for its probes.
Dropout is 0: the adapter batches seeds in lock-step and refuses per-seed random masks.
"""
import torch
from torch import nn


class EncoderClassifier(nn.Module):
    def __init__(self, tokens: int, positions: int, classes: int, d: int = 32, heads: int = 2, layers: int = 1):
        super().__init__()
        self.embed = nn.Embedding(tokens + 1, d)  # the last id is CLS
        self.pos = nn.Parameter(torch.randn(positions + 1, d) * 0.02)
        layer = nn.TransformerEncoderLayer(d, heads, dim_feedforward=2 * d, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d, classes)
        self.attention_row = nn.Identity()
        self.cls_id = tokens

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        cls = torch.full_like(x[:, :1], self.cls_id)
        h = self.embed(torch.cat([cls, x], 1)) + self.pos
        last = self.encoder.layers[-1]
        for layer in self.encoder.layers[:-1]:
            h = layer(h)
        # the last layer's CLS-query attention (its input is what the post-norm layer attends over)
        _, w = last.self_attn(h[:, :1], h, h, need_weights=True, average_attn_weights=True)
        self.attention_row(w[:, 0])  # (batch, positions + 1): recorded through the identity's hook
        h = last(h)
        return self.head(h[:, 0])
