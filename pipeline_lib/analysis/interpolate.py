"""Loss along the straight line between two solutions (Fig. 6 of 'Easing Optimization Paths')."""
from __future__ import annotations

import numpy as np
import torch

from ..engine import per_seed_loss_acc


def t_grid(t_min: float = -0.25, t_max: float = 1.25, n_points: int = 61) -> np.ndarray:
    """Evenly spaced t that always contains the endpoints t=0 and t=1 exactly."""
    ts = np.linspace(t_min, t_max, n_points)
    ts = np.union1d(np.round(ts, 12), [0.0, 1.0] if t_min <= 0 and t_max >= 1 else [])
    return ts


@torch.no_grad()
def interpolate(model, theta_a: dict[str, np.ndarray], theta_b: dict[str, np.ndarray], ts: np.ndarray,
                splits: dict[str, tuple[torch.Tensor, torch.Tensor]]) -> dict[str, np.ndarray]:
    """Per-seed loss and accuracy of theta(t) = (1 - t) theta_a + t theta_b for every t.

    ``theta_*`` map parameter names to (S, ...) arrays; ``splits`` maps a split name to (x, y).
    Returns {f"{split}_loss": (S, len(ts)), f"{split}_acc": ...}.
    """
    out = {f"{s}_{m}": np.zeros((model.S, len(ts)), dtype=np.float64) for s in splits for m in ("loss", "acc")}
    for i, t in enumerate(ts):
        model.load_arrays({n: (1 - t) * theta_a[n] + t * theta_b[n] for n in theta_a})
        for split, (x, y) in splits.items():
            loss, acc = per_seed_loss_acc(model(x), y)
            out[f"{split}_loss"][:, i] = loss.cpu().numpy()
            out[f"{split}_acc"][:, i] = acc.cpu().numpy()
    return out


def barrier_height(ts: np.ndarray, loss: np.ndarray) -> np.ndarray:
    """Per seed: max loss on t in [0, 1] minus the larger of the two endpoint losses (>= 0)."""
    inside = (ts >= 0) & (ts <= 1)
    ends = np.maximum(loss[:, np.argmin(np.abs(ts))], loss[:, np.argmin(np.abs(ts - 1))])
    return loss[:, inside].max(axis=1) - ends
