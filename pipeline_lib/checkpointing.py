"""The resume state of a training run: saved atomically every few epochs, read back on restart."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import torch


@dataclass(frozen=True)
class Checkpointing:
    """Where and how often ``train_seeds`` saves its resume state; ``key`` identifies the run's
    config (a checkpoint with another key is ignored)."""

    path: Path
    every: int
    key: str


def save_checkpoint(ck: Checkpointing, epoch: int, state: dict) -> None:
    ck.path.parent.mkdir(parents=True, exist_ok=True)
    tmp = ck.path.with_suffix(".tmp")
    torch.save({"key": ck.key, "epoch": epoch, **state}, tmp)
    os.replace(tmp, ck.path)  # atomic: a kill leaves the previous checkpoint or the new one


def load_checkpoint(ck: Optional[Checkpointing], device) -> Optional[dict]:
    if ck is None or not ck.path.exists():
        return None
    try:
        state = torch.load(ck.path, map_location=device, weights_only=False)
    except Exception:  # a checkpoint from a killed write or an old version: start afresh
        return None
    return state if state.get("key") == ck.key else None
