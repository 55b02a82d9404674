"""A small ResNet for the image tasks of 'Eureka-Moments in Transformers' (the paper's CNN control,
Sec. 1: "a ResNet learns both tasks immediately"), seed-batched.

The reference's ``resnet9`` (boschresearch/eurekaMoments ``model_lib.py`` and ``resnet_custom.py``,
torchvision's ResNet with one BasicBlock per stage; read, not copied) scaled to the small images here:

    stem:   conv 3x3 (stride 1) -> norm -> ReLU                       (the reference: 7x7 stride 2, max-pool)
    stage s = 1..4, width w_s, stride 1 for s = 1 and 2 otherwise, one BasicBlock each:
            out = ReLU(norm(conv3x3(x, stride)));  out = norm(conv3x3(out))
            ReLU(out + shortcut),  shortcut = norm(conv1x1(x, stride)) where the shape changes, else x
    head:   global average pool -> linear to the classes

Nine convolutions in the main path (the stem and two per block) and the classifier. Normalisation is
GroupNorm (``norm_groups`` groups of channels per example) instead of the reference's BatchNorm: a
batch statistic with running averages has no lock-step form per seed (``models.module`` refuses it
for the same reason); the per-example norm keeps a seed's output independent of the rest of the batch.
Widths default to (8, 16, 32, 64) against the reference's (64, 128, 256, 512) (config key ``widths``), sized for a 2-core CPU.

S seeds run as one grouped convolution (``groups=S``): seed i's channels see seed i's input channels
only. Initialisation per seed (torchvision's): convolutions Kaiming-normal (fan_out, ReLU), norm gains
1 and biases 0, the classifier U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weight and bias. The model has
no attention, so its runs record none; the probes can read ``features`` (the pooled representation).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .direct import DirectModel

NAME = "resnet"
CONFIG = """
properties:
  d: {description: "Not used (leave it out): widths sets the sizes.", type: integer, minimum: 1}
  widths: {description: "Channels of the stages, one BasicBlock each (the reference's resnet9: [64, 128, 256, 512]).", type: array, minItems: 1, items: {type: integer, minimum: 1}, default: [8, 16, 32, 64]}
  norm_groups: {description: "GroupNorm groups per layer (every width must be divisible by it).", type: integer, minimum: 1, default: 4}
"""
CHECKS = [
    ["norm_groups", "len([w for w in widths if w % norm_groups]) == 0",
     "the widths {widths} are not all divisible by norm_groups={norm_groups}; allowed: a common divisor"],
    ["widths", "round(T ** 0.5) ** 2 == T",
     "dataset '{dataset}' has no square images ({T} values per example); allowed: an image task"],
]
TASKS = ["eureka_digits", "eureka_mnist"]
ARCH = "(T, classes, widths)"
SITES = "['features']"
RECORDS = []
PARAM_DIMS = None  # per widths: param_dims(params) below


@dataclass(frozen=True)
class Params:
    d: int | None = None
    widths: tuple = (8, 16, 32, 64)
    norm_groups: int = 4


def layer_shapes(widths, in_channels: int, classes: int) -> dict[str, tuple]:
    """Parameter name -> shape after the seed axis, in the order of initialisation."""
    shapes = {"stem_W": (widths[0], in_channels, 3, 3), "stem_g": (widths[0],), "stem_b": (widths[0],)}
    c_in = widths[0]
    for s, w in enumerate(widths, 1):
        shapes.update({f"s{s}_W1": (w, c_in, 3, 3), f"s{s}_g1": (w,), f"s{s}_b1": (w,),
                       f"s{s}_W2": (w, w, 3, 3), f"s{s}_g2": (w,), f"s{s}_b2": (w,)})
        if s > 1 or c_in != w:
            shapes.update({f"s{s}_Ws": (w, c_in, 1, 1), f"s{s}_gs": (w,), f"s{s}_bs": (w,)})
        c_in = w
    shapes.update({"fc_W": (c_in, classes), "fc_b": (classes,)})
    return shapes


def param_dims(params: Params) -> dict[str, tuple]:
    """Each parameter's dims after the seed axis, named ``<parameter>_<i>`` (the stages' widths and kernel
    sizes differ, so no two parameters share a channel dim) but for the classes."""
    dims = {}
    for name, shape in layer_shapes(params.widths, 1, 1).items():
        dims[name] = tuple("class" if name.startswith("fc_") and i == len(shape) - 1 else f"{name}_{i}"
                           for i in range(len(shape)))
    return dims


class Internals(NamedTuple):
    features: torch.Tensor  # (S, B, widths[-1]) the pooled representation
    logits: torch.Tensor  # (S, B, classes)


class SeedResNet(DirectModel):
    """The parameters of :func:`layer_shapes` with a leading seed axis."""

    def __init__(self, n_seeds: int, side: int, classes: int, widths=(8, 16, 32, 64), norm_groups: int = 4):
        super().__init__()
        self.S, self.side, self.widths, self.G = n_seeds, side, tuple(widths), norm_groups
        self.d_head, self.tau, self.beta = 1, 1.0, None  # no attention
        self.shapes = layer_shapes(self.widths, 1, classes)
        for name, shape in self.shapes.items():
            setattr(self, name, nn.Parameter(torch.zeros(n_seeds, *shape)))

    def param_names(self) -> list[str]:
        return list(self.shapes)

    def init_seeds(self, seeds: list[int]) -> None:
        fan_in_fc = self.shapes["fc_W"][0]

        def draw(name, shape, g):
            if len(shape) == 4:  # convolutions: Kaiming normal, fan_out, ReLU gain
                return torch.randn(shape, generator=g) * math.sqrt(2.0 / (shape[0] * shape[2] * shape[3]))
            if name.startswith("fc_"):  # the classifier: nn.Linear's U(-1/sqrt(fan_in), 1/sqrt(fan_in))
                return (torch.rand(shape, generator=g) * 2 - 1) / math.sqrt(fan_in_fc)
            return torch.ones(shape) if "_g" in name else torch.zeros(shape)  # norm gains 1, biases 0

        self.init_each(seeds, draw)

    def _conv(self, x: torch.Tensor, name: str, stride: int = 1) -> torch.Tensor:
        """x (B, S * c_in, H, W) through each seed's kernel ``name`` (S, c_out, c_in, k, k)."""
        W = getattr(self, name)
        k = W.shape[-1]
        return F.conv2d(x, W.reshape(-1, *W.shape[2:]), stride=stride, padding=k // 2, groups=self.S)

    def _norm(self, x: torch.Tensor, prefix: str, suffix: str) -> torch.Tensor:
        g, b = getattr(self, f"{prefix}_g{suffix}"), getattr(self, f"{prefix}_b{suffix}")
        return F.group_norm(x, self.S * self.G, g.reshape(-1), b.reshape(-1), eps=1e-5)

    def internals(self, x: torch.Tensor) -> Internals:
        """x (B, 1, side, side) images shared by the seeds, or (S, B, 1, side, side) a batch per seed."""
        if x.dim() == 4:
            B = x.shape[0]
            z = x.repeat(1, self.S, 1, 1)
        else:
            B = x.shape[1]
            z = x.transpose(0, 1).reshape(B, -1, *x.shape[-2:])
        z = F.relu(self._norm(self._conv(z, "stem_W"), "stem", ""))
        for s in range(1, len(self.widths) + 1):
            stride = 1 if s == 1 else 2
            out = F.relu(self._norm(self._conv(z, f"s{s}_W1", stride), f"s{s}", "1"))
            out = self._norm(self._conv(out, f"s{s}_W2"), f"s{s}", "2")
            short = self._norm(self._conv(z, f"s{s}_Ws", stride), f"s{s}", "s") if f"s{s}_Ws" in self.shapes else z
            z = F.relu(out + short)
        feats = z.mean(dim=(-2, -1)).view(B, self.S, -1).transpose(0, 1)  # (S, B, c)
        return Internals(feats, torch.baddbmm(self.fc_b[:, None, :], feats, self.fc_W))

    def attention(self, x: torch.Tensor) -> None:
        return None


def build(params: Params, n_seeds: int, shape: dict, attention) -> SeedResNet:
    return SeedResNet(n_seeds, image_side(shape["T"]), shape["classes"], params.widths, params.norm_groups)


def image_side(pixels: int) -> int:
    """The side of a square image (kept here, not imported from ``vit``: a ViT edit must not rerun ResNet runs)."""
    side = round(pixels ** 0.5)
    if side * side != pixels:
        raise ValueError(f"{pixels} values are not a square image")
    return side


def as_inputs(x: np.ndarray, params: Params | None = None) -> torch.Tensor:
    """Dataset ``x`` (n, side * side) with values 0..16 -> (n, 1, side, side) floats in [0, 1] (the ViT's scale)."""
    n, side = x.shape[0], image_side(x.shape[1])
    return (torch.as_tensor(np.asarray(x), dtype=torch.float32) / 16.0).view(n, 1, side, side).contiguous()
