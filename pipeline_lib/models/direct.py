"""What the small models of Tian's analyses share: models whose forward pass is their ``internals``
(no separate fast path), whose internals name ``attention`` and ``logits``, and whose sites are
fields of the internals. Only the models that need it import this module, so a change here reruns
only their runs."""
from __future__ import annotations

import numpy as np
import torch
from torch import nn


class DirectModel(nn.Module):
    """Base of a seed-batched model computed by ``internals`` alone (subclasses define it and
    ``param_names``)."""

    records_gradients = False
    records_attention_histogram = False
    embed_site = None

    @torch.no_grad()
    def load_arrays(self, arrays) -> None:
        """Set every parameter from (S, ...) arrays, e.g. a weight snapshot."""
        for name in self.param_names():
            getattr(self, name).copy_(torch.as_tensor(np.asarray(arrays[name])))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.internals(x).logits

    def site(self, internals, name: str) -> torch.Tensor:
        return getattr(internals, name)

    def attention(self, x: torch.Tensor) -> torch.Tensor:
        return self.internals(x).attention
