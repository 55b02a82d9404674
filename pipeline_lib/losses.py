"""Per-seed losses and accuracies, and chunked evaluation of a whole set."""
from __future__ import annotations

from typing import Callable

import torch
import torch.nn.functional as F

from .attention import small_last


def loss_fn(model) -> Callable:
    """The model's per-seed (loss, accuracy) of its outputs and the labels: its ``loss_acc`` when it
    declares one (e.g. a centred MSE), else cross-entropy (:func:`per_seed_loss_acc`)."""
    return getattr(model, "loss_acc", per_seed_loss_acc)


def objective_fn(model, label_smoothing: float = 0.0) -> Callable:
    """The per-seed (loss, accuracy) that training steps descend: the model's (:func:`loss_fn`), or with
    ``label_smoothing`` > 0 the label-smoothed cross-entropy (a model with a loss of its own refuses it)."""
    if not label_smoothing:
        return loss_fn(model)
    if hasattr(model, "loss_acc"):
        raise ValueError(f"config key 'label_smoothing': the model ({type(model).__name__}) trains on a loss of its "
                         "own, not cross-entropy; allowed: 0")
    return lambda logits, y: per_seed_loss_acc(logits, y, label_smoothing)


def per_seed_loss_acc(logits: torch.Tensor, y: torch.Tensor,
                      label_smoothing: float = 0.0) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean cross-entropy and accuracy per seed. logits (S, B, V); y (B,) or (S, B). With
    ``label_smoothing`` s the target is (1 - s) one-hot + s uniform, as torch's ``cross_entropy(...,
    label_smoothing=s)`` and timm's ``LabelSmoothingCrossEntropy``: (1 - s) NLL + s mean_v(-log p_v)."""
    S, B, V = logits.shape
    y = y.expand(S, B)
    if small_last(logits):  # cross-entropy with the class axis in front: see attention.softmax_last
        log_p = torch.log_softmax(logits.movedim(-1, 0).contiguous(), dim=0)  # (V, S, B)
        nll = -log_p.gather(0, y[None]).squeeze(0)
        if label_smoothing:
            nll = (1 - label_smoothing) * nll - label_smoothing * log_p.mean(0)
        loss = nll.mean(1)
    else:
        loss = F.cross_entropy(logits.reshape(S * B, V), y.reshape(S * B), reduction="none",
                               label_smoothing=label_smoothing).view(S, B).mean(1)
    acc = (logits.argmax(-1) == y).float().mean(1)
    return loss, acc


EVAL_CHUNK = 1024  # examples per evaluation pass


@torch.no_grad()
def evaluate_set(model, loss_acc: Callable, x: torch.Tensor, y: torch.Tensor, chunk: int = EVAL_CHUNK):
    """Per-seed mean loss and accuracy of the model on all of (x, y), ``chunk`` examples at a time.

    Chunks keep every intermediate tensor small: a whole test set at once (10,249 examples x 10
    seeds x 128 hidden units: 52 MB per tensor) makes the allocator map and page-fault each one
    afresh (an out-of-place add on it: 25 ms against 5.5 ms in place), and it sets the peak memory.
    The accuracy is exact (the correct counts are summed); the loss is the chunks' means weighted
    by their sizes, equal to the mean over all up to the order of the float sums. This needs the
    model's ``loss_acc`` to return per-seed means over examples and the fraction of examples correct
    (both of the workflow's do); a set of at most ``chunk`` examples, or labels other than (N,), is
    one pass, as before."""
    N = x.shape[0]  # inputs (N, ...) and labels (N,), shared by all seeds
    if N <= chunk or y.dim() != 1 or y.shape[0] != N:  # another layout: one pass, as before
        return loss_acc(model(x), y)
    loss_sum, correct = 0.0, 0.0
    for i in range(0, N, chunk):
        loss, acc = loss_acc(model(x[i:i + chunk]), y[i:i + chunk])
        n = min(chunk, N - i)
        loss_sum = loss_sum + loss * n
        correct = correct + torch.round(acc * n)
    return loss_sum / N, correct / N
