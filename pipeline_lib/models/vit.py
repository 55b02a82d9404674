"""A small ViT for the digits task of 'Eureka-Moments': the CLS-token transformer of
``models.transformer`` over linear embeddings of square image patches."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..attention import resolved_tau
from .transformer import PARAM_DIMS as TRANSFORMER_PARAM_DIMS
from .transformer import SeedTransformer

NAME = "vit"
CONFIG = """
properties:
  n_heads: {description: "Attention heads per layer (d must be divisible by it).", type: integer, minimum: 1, default: 4}
  depth: {description: "Number of layers.", type: integer, minimum: 1, default: 1}
  mlp_ratio: {description: "Hidden width of the MLP as a multiple of d.", type: integer, minimum: 1, default: 4}
  patch: {description: "Side of the square image patches (the image's side must be divisible by it).", type: integer, minimum: 1, default: 4}
  drop_path:
    description: >
      Drop-path (stochastic depth) rate of the last layer in training steps, rising linearly from 0 at
      the first (timm's rule, as the Eureka reference ViT); default 0.
    type: number
    minimum: 0
    exclusiveMaximum: 1
"""
CHECKS = [
    ["n_heads", "d % n_heads == 0", "d={d} is not divisible by n_heads={n_heads}; allowed: a divisor of d"],
    ["patch", "round(T ** 0.5) ** 2 == T and round(T ** 0.5) % patch == 0",
     "the square image of dataset '{dataset}' ({T} pixels) is not divisible into {patch}x{patch} patches; "
     "allowed: a divisor of the image's side"],
]
ARCH = "(T, classes)"
SITES = "[f'attn_out_{layer}' for layer in range(depth)] + ['cls']"
RECORDS = ["attention", "qkv_gradients", "attention_hist"]

PARAM_DIMS = TRANSFORMER_PARAM_DIMS  # the same parameters (W_patch, b_patch in place of W_E)


@dataclass(frozen=True)
class Params:
    d: int
    n_heads: int = 4
    depth: int = 1
    mlp_ratio: int = 4
    patch: int = 4
    drop_path: float = 0.0


def build(params: Params, n_seeds: int, shape: dict, attention) -> SeedTransformer:
    """The model of a run over square images (``shape["T"]`` pixels) cut into patches (not initialised)."""
    n_patches = (image_side(shape["T"]) // params.patch) ** 2
    return SeedTransformer(n_seeds, shape["classes"], n_patches, params.d, params.n_heads, params.depth,
                           params.mlp_ratio, patch_dim=params.patch ** 2, variant=attention.variant,
                           tau=resolved_tau(attention, params.d // params.n_heads), drop_path=params.drop_path)


def as_inputs(x: np.ndarray, params: Params) -> torch.Tensor:
    """Dataset ``x`` (n, side * side) -> image patches (n, patches, patch * patch)."""
    return patchify(x, params.patch)


def image_side(pixels: int) -> int:
    """The side of a square image of ``pixels`` pixels (16 for the digits task, 56 for the MNIST one)."""
    side = round(pixels ** 0.5)
    if side * side != pixels:
        raise ValueError(f"{pixels} pixels are not a square image")
    return side


def patchify(images: np.ndarray, patch: int) -> torch.Tensor:
    """(n, side * side) flattened square images with values 0..16 -> (n, patches, patch*patch) floats in
    [0, 1], patches in row-major order."""
    n, side = images.shape[0], image_side(images.shape[1])
    x = torch.as_tensor(np.asarray(images), dtype=torch.float32).view(n, side // patch, patch, side // patch, patch)
    return (x.permute(0, 1, 3, 2, 4).reshape(n, (side // patch) ** 2, patch * patch) / 16.0).contiguous()
