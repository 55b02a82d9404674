"""What the small models of Tian's analyses share: models whose forward pass is their ``internals``
(no separate fast path), whose internals name ``attention`` and ``logits``, and whose sites are
fields of the internals. Only the models that need it import this module, so a change here reruns
only their runs."""
from __future__ import annotations

import numpy as np
import torch
from torch import nn

from . import seed_generator


class DirectModel(nn.Module):
    """Base of a seed-batched model computed by ``internals`` alone (subclasses define it and
    ``param_names``)."""

    records_gradients = False
    records_attention_histogram = False
    embed_site = None

    @torch.no_grad()
    def init_each(self, seeds: list[int], draw) -> None:
        """Slot i from ``seeds[i]`` alone: every parameter (in ``param_names`` order) of the slot set to
        ``draw(name, shape, generator)``, the generator being ``seed_generator(seed, 'init')``."""
        assert len(seeds) == self.S
        for i, seed in enumerate(seeds):
            g = seed_generator(seed, "init")
            for name in self.param_names():
                p = getattr(self, name)[i]
                p.copy_(draw(name, p.shape, g))

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
