"""Bring your own ``nn.Module``: a plain PyTorch model that trains one seed becomes a seed-batched model.

Config: ``models: {my_net: {kind: module, module: "my_package.my_model:MyNet", args: {...}}}``. The
class is imported from the working directory or an installed package; ``args`` are its constructor's
keyword arguments. Its ``forward`` maps one batch of examples, ``(batch, positions)`` (token ids as
``long``, or values as floats for tasks of real-valued inputs), to logits ``(batch, classes)``.

S seeds train in lock-step with PyTorch's model-ensembling recipe: seed i's parameters are those of
``MyNet(**args)`` built right after ``torch.manual_seed(seed_i)`` (exactly what a plain run under that
seed starts from), stacked along a leading seed axis, and the forward pass is ``torch.func.vmap`` over
``functional_call`` of one template instance. The weights artifact keeps the module's own parameter
names and shapes (plus the seed axis); their dims are named ``<parameter>_<i>``.

Optional keys: ``attention`` names a submodule whose output is the attention row recorded for probe
inputs, ``(batch, positions)`` (put an ``nn.Identity()`` on the weights your forward computes, e.g.
the last query's weights averaged over heads); ``sites`` name submodules (``named_modules()``) whose
outputs probes can read, flattened to ``(batch, features)``.

``compile: true`` runs the seed-batched forward pass through ``torch.compile`` wherever the model runs
(training, evaluation, analyses that rebuild it from its weights): fused kernels instead of one operator
at a time over all seeds (on a CPU it needs a C++ compiler; the numbers differ from the eager run's by
rounding). Reading sites and attention stays eager. A fault of the forward itself is reported as the
eager run reports it (the failed call is repeated eagerly), a failure of the compilation names the key.

Refused, with the config key named: modules with dropout of p > 0 or batch norm (a per-seed random
mask or an in-place running statistic has no lock-step equivalent of the plain run), an import that
fails, a class that is not an ``nn.Module``, constructor arguments it does not take, and logits of
the wrong shape (checked on two examples of the dataset's shape when the config is read).
"""
from __future__ import annotations

import contextlib
import functools
import importlib
import json
import os
import warnings
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch
from torch import nn
from torch.func import functional_call, vmap
from torch.nn.attention import SDPBackend, sdpa_kernel

from ..plumbing.registry import user_import_path

NAME = "module"
CONFIG = """
properties:
  d: {description: "Not used (leave it out): the module's constructor arguments set its sizes.", type: integer, minimum: 1}
  module: {description: "The nn.Module class, 'package.module:Class', importable from the working directory or an installed package.", type: string, pattern: "^[A-Za-z_][A-Za-z0-9_.]*:[A-Za-z_][A-Za-z0-9_]*$"}
  args: {description: "Keyword arguments of the class's constructor.", type: object, default: {}}
  attention: {description: "Name of a submodule whose output is the attention row recorded for probe inputs, (batch, positions); null: none recorded.", type: [string, "null"], default: null}
  sites: {description: "Submodules (names in named_modules()) whose outputs probes can read.", type: array, items: {type: string}, default: []}
  compile: {description: "Compile the seed-batched forward pass with torch.compile (fused kernels: faster after a one-off compile of seconds to a minute per input shape; numbers differ from the eager run by rounding; on a CPU it needs a C++ compiler); default false: eager.", type: boolean}
required: [module]
"""
TASKS = ["*"]
VALIDATE = True
ARCH = "(module, args)"
SITES = "sites"
RECORDS = "['attention'] if attention else []"
PARAM_DIMS = None  # per module: param_dims(params) below

# dropout and batch norm: no lock-step equivalent of the plain run (see the module docstring)
_REFUSED = (nn.modules.dropout._DropoutNd, nn.modules.batchnorm._BatchNorm)


@dataclass(frozen=True)
class Params:
    module: str
    args: tuple = ()  # (key, value) pairs of the constructor's keyword arguments
    attention: str | None = None
    sites: tuple = ()
    d: int | None = None
    compile: bool = False


class ModuleError(ValueError):
    """A module model's class or settings cannot be used (the message names the config key)."""


class Internals(NamedTuple):
    logits: torch.Tensor  # (S, B, classes)
    captured: dict  # submodule name -> its output (S, B, ...)


def import_class(spec: str, key: str = "module") -> type:
    """``'package.module:Class'`` -> the class, found as :func:`user_import_path` says (the working directory
    first, the checkout last)."""
    module_name, _, cls_name = spec.partition(":")
    user_import_path()
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 (any failure of the user's import is reported the same way)
        raise ModuleError(f"config key '{key}': cannot import {module_name!r} (from the working directory "
                          f"{os.getcwd()} or an installed package): {type(exc).__name__}: {exc}") from None
    cls = getattr(module, cls_name, None)
    if not (isinstance(cls, type) and issubclass(cls, nn.Module)):
        raise ModuleError(f"config key '{key}': {spec!r} is {'missing' if cls is None else type(cls).__name__}, "
                          f"not an nn.Module class")
    return cls


def instance(cls: type, args: dict, seed: int, key: str = "args") -> nn.Module:
    """``cls(**args)`` built right after ``torch.manual_seed(seed)`` (the global generator restored)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        try:
            return cls(**args)
        except Exception as exc:  # noqa: BLE001 (the user's constructor: any failure is reported with the key)
            raise ModuleError(f"config key '{key}': {cls.__name__}(**{args}) failed: {type(exc).__name__}: {exc}") from None


def refused_parts(net: nn.Module) -> list[str]:
    """Submodules the adapter cannot batch over seeds: dropout with p > 0, batch norm."""
    out = []
    for name, m in net.named_modules():
        if isinstance(m, nn.modules.dropout._DropoutNd) and m.p == 0:
            continue
        if isinstance(m, _REFUSED) or (isinstance(m, nn.MultiheadAttention) and m.dropout > 0):
            out.append(f"{name or '(the module)'} ({type(m).__name__})")
    return out


def _key(name: str) -> str:
    return name.replace(".", "__")


class ModuleModel(nn.Module):
    """S seeds of a plain ``nn.Module`` in lock-step: every parameter (and buffer) stacked on a
    leading seed axis, the forward pass vmapped over a template instance."""

    records_gradients = False
    records_attention_histogram = False
    embed_site = None

    def __init__(self, cls: type, args: dict, n_seeds: int, attention: str | None = None, sites: tuple = (),
                 where: str = "models", compile: bool = False):
        super().__init__()
        self.S, self.d_head, self.tau, self.beta = n_seeds, 1, 1.0, None  # attention is the module's own
        self._cls, self._args, self._where = cls, dict(args), where
        template = instance(cls, self._args, 0, f"{where}.args")
        refused = refused_parts(template)
        if refused:
            raise ModuleError(f"config key '{where}.args': {cls.__name__} has {', '.join(refused)}: a per-seed "
                              f"random mask or running statistic cannot be batched over seeds; set dropout to 0 "
                              f"and use layer norm instead of batch norm")
        modules = dict(template.named_modules())
        for key, name in [("attention", attention)] + [("sites", s) for s in sites]:
            if name is not None and name not in modules:
                raise ModuleError(f"config key '{where}.{key}': {cls.__name__} has no submodule {name!r}; it has "
                                  f"{', '.join(n for n in modules if n) or 'none'}")
        buffers = dict(template.named_buffers())
        other = dict(instance(cls, self._args, 1, f"{where}.args").named_buffers()) if buffers else {}
        drawn = sorted(n for n, b in buffers.items() if not torch.equal(b, other[n]))
        if drawn:
            raise ModuleError(f"config key '{where}.module': {cls.__name__}'s buffer(s) {drawn} differ from seed to seed "
                              f"(drawn at random), but a run's weights keep its parameters only, so a model rebuilt "
                              f"from them would lose them; make them parameters or fixed")
        template.train()  # no dropout or batch norm: the mode only keeps PyTorch's inference fast paths off
        self.__dict__["template"] = template  # not a submodule: its own tensors are never used
        self.__dict__["submodules"] = modules  # hooks for attention and sites attach here
        self.__dict__["_compile"], self.__dict__["compiled"] = compile, None  # see _compiled()
        self._attention_name, self._sites = attention, tuple(sites)
        names = [n for n, _ in template.named_parameters()]
        taken = sorted(n for n in names if hasattr(self, n))  # e.g. a parameter named 'tau' or 'forward'
        if taken:
            raise ModuleError(f"config key '{where}.module': {cls.__name__}'s parameter(s) {taken} share a name with "
                              f"an attribute of the workflow's seed-batched model; rename them in the module")
        self._names = names
        self._buffer_names = list(buffers)
        self.stack = nn.ParameterDict({_key(n): nn.Parameter(p.detach().unsqueeze(0).repeat(n_seeds, *[1] * p.dim()))
                                       for n, p in template.named_parameters()})
        for n, b in buffers.items():
            self.register_buffer("buffer__" + _key(n), b.detach().unsqueeze(0).repeat(n_seeds, *[1] * b.dim()))

    def __getattr__(self, name: str):
        names = self.__dict__.get("_names")
        if names is not None and name in names:
            return self._stacked()[_key(name)]
        return super().__getattr__(name)

    def _stacked(self) -> nn.ParameterDict:
        """The stacked parameters, read past attribute lookup (a module parameter may be named ``stack``)."""
        return self.__dict__["_modules"]["stack"]

    def _apply(self, fn, recurse=True):
        self.__dict__["template"]._apply(fn)  # e.g. .to(device): tensors the module keeps as plain attributes
        return super()._apply(fn, recurse)

    def param_names(self) -> list[str]:
        return list(self._names)

    @torch.no_grad()
    def init_seeds(self, seeds: list[int]) -> None:
        """Slot i from ``cls(**args)`` under ``torch.manual_seed(seeds[i])``."""
        assert len(seeds) == self.S
        for i, seed in enumerate(seeds):
            net = instance(self._cls, self._args, seed, f"{self._where}.args")
            for n, p in net.named_parameters():
                self._stacked()[_key(n)][i].copy_(p)
            for n, b in net.named_buffers():
                getattr(self, "buffer__" + _key(n))[i].copy_(b)

    @torch.no_grad()
    def load_arrays(self, arrays) -> None:
        for n in self._names:
            self._stacked()[_key(n)].copy_(torch.as_tensor(np.asarray(arrays[n])))

    def _run(self, x: torch.Tensor, capture: tuple[str, ...]) -> Internals:
        params = {n: self._stacked()[_key(n)] for n in self._names}
        buffers = {n: getattr(self, "buffer__" + _key(n)) for n in self._buffer_names}
        # (B, positions) shared by the seeds, or (S, B, positions) a batch per seed. A shared batch is
        # expanded over the seeds (no copy): with an unbatched input, vmap puts the seed axis inside the
        # first layer's output (e.g. an embedding gives (B, T, S, d) in memory) and every later product
        # of it with seed-major tensors is strided, which costs more than the arithmetic on a CPU.
        if x.dim() == 2:
            x = x.expand(self.S, *x.shape)
        eager = self._batched(capture)
        compiled = self._compiled() if not capture else None
        try:
            with warnings.catch_warnings(), _vmappable_attention(x):
                # attention kernels without a batching rule run one seed at a time
                warnings.filterwarnings("ignore", message="There is a performance drop")
                if compiled is None:
                    logits, captured = eager(params, buffers, x)
                else:
                    try:
                        logits, captured = compiled(params, buffers, x)
                    except Exception as exc:  # noqa: BLE001 (tracing or compiling the user's forward)
                        eager(params, buffers, x)  # a fault of the forward itself raises its own error here
                        raise ModuleError(f"config key '{self._where}.compile': torch.compile of "
                                          f"{self._cls.__name__}'s seed-batched forward failed ({type(exc).__name__}: "
                                          f"{exc}); leave compile out to run it eagerly") from exc
        except RuntimeError as exc:
            if "randomness error mode" in str(exc):  # vmap's message for a random draw under randomness="error"
                raise ModuleError(f"config key '{self._where}.module': {self._cls.__name__}'s forward draws random "
                                  f"numbers, which cannot be batched over seeds like the plain run") from exc
            raise
        if logits.dim() != 3:
            raise ModuleError(f"config key '{self._where}.module': {self._cls.__name__} returned logits of shape "
                              f"{tuple(logits.shape[1:])} for a batch of {x.shape[-2]}; expected (batch, classes)")
        return Internals(logits, dict(zip(capture, captured)))

    def _compiled(self):
        """The compiled seed-batched forward of the template (``compile: true``), or None. Built on first
        use and rebuilt for another template (a deep copy of the model has its own)."""
        if not self.__dict__["_compile"]:
            return None
        template, cached = self.__dict__["template"], self.__dict__["compiled"]
        if cached is None or cached[0] != id(template):
            cached = self.__dict__["compiled"] = (id(template), torch.compile(self._batched(())))
        return cached[1]

    def _batched(self, capture: tuple[str, ...]):
        """``(params, buffers, x) -> (logits, captured)`` over a leading seed axis of all three: :meth:`_one`
        under vmap (what ``torch.compile`` is given for the plain forward)."""
        return vmap(functools.partial(self._one, capture), in_dims=(0, 0, 0), randomness="error")

    def _one(self, capture, p, b, xs):
        """One seed: the template called with that seed's tensors, the outputs of ``capture`` read by
        forward hooks."""
        template, modules = self.__dict__["template"], self.__dict__["submodules"]
        out: dict = {}
        hooks = [modules[name].register_forward_hook(lambda _m, _i, o, name=name: out.__setitem__(name, o))
                 for name in capture]
        try:
            logits = functional_call(template, {**p, **b}, (xs,))
        finally:
            for h in hooks:
                h.remove()
        missing = [name for name in capture if name not in out]
        if missing:
            raise ModuleError(f"config key '{self._where}.sites'/'attention': submodule(s) {missing} of "
                              f"{self._cls.__name__} are not called by its forward, so there is no output to read")
        return logits, tuple(out[name] for name in capture)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._run(x, ()).logits

    def internals(self, x: torch.Tensor) -> Internals:
        return self._run(x, self._sites + ((self._attention_name,) if self._attention_name else ()))

    def site(self, internals: Internals, name: str) -> torch.Tensor:
        out = internals.captured[name]
        return out.reshape(out.shape[0], out.shape[1], -1)

    def attention(self, x: torch.Tensor) -> torch.Tensor | None:
        if self._attention_name is None:
            return None
        att = self._run(x, (self._attention_name,)).captured[self._attention_name]
        if att.dim() != 3:
            raise ModuleError(f"config key '{self._where}.attention': submodule {self._attention_name!r} gave shape "
                              f"{tuple(att.shape[1:])}; expected (batch, positions)")
        return att


def _vmappable_attention(x: torch.Tensor):
    """On CUDA, ``scaled_dot_product_attention`` inside the user's forward (e.g. ``nn.TransformerEncoderLayer``)
    restricted to the math kernel: the memory-efficient kernel's backward fails under vmap ("LSE is not
    correctly aligned (strideH)", torch 2.11). On the CPU nothing changes."""
    return sdpa_kernel([SDPBackend.MATH]) if x.is_cuda else contextlib.nullcontext()


def param_dims(params: Params) -> dict:
    """Dim names of each parameter after the seed axis: ``<name>_<i>`` (the module's own shapes)."""
    net = instance(import_class(params.module), dict(params.args), 0)
    return {n: tuple(f"{n}_{i}" for i in range(p.dim())) for n, p in net.named_parameters()}


def build(params: Params, n_seeds: int, shape: dict, attention, where: str = "models") -> ModuleModel:
    return ModuleModel(import_class(params.module, f"{where}.module"), dict(params.args), n_seeds, params.attention,
                       params.sites, where, params.compile)


def as_inputs(x: np.ndarray, params: Params | None = None) -> torch.Tensor:
    """Dataset ``x`` (N, positions): token ids as long, real values as float32."""
    x = np.asarray(x)
    return torch.as_tensor(x, dtype=torch.long if np.issubdtype(x.dtype, np.integer) else torch.float32)


def validate(model: dict, shape: dict, run: dict, where: str, run_key: str) -> list[str]:
    """Config-time checks of a module model for one run: importable, built from its args, no refused
    parts, logits (batch, classes) on two examples of the dataset's shape, the run's attention the
    default (a module computes its own)."""
    att = run.get("attention") or {}
    problems = [f"config key '{run_key}.attention.{k}': a module model computes its own attention; leave "
                f"{k} out" for k, default in (("variant", "softmax"), ("schedule", "none"), ("tau", "sqrt_d"))
                if att.get(k, default) != default]
    try:
        _probe(model["module"], _frozen(model.get("args", {})), model.get("attention"), tuple(model.get("sites", ())),
               shape["T"], shape["tokens"], shape["classes"], where)
    except ModuleError as exc:
        problems.append(str(exc))
    return problems


def _frozen(args: dict) -> tuple:
    return tuple(sorted((k, json.dumps(v, sort_keys=True)) for k, v in args.items()))


@functools.lru_cache(maxsize=None)
def _probe(module: str, args: tuple, attention, sites: tuple, T: int, tokens, classes: int, where: str) -> None:
    net = ModuleModel(import_class(module, f"{where}.module"), {k: json.loads(v) for k, v in args},
                      1, attention, sites, where)
    g = torch.Generator().manual_seed(0)  # the same batch every time: a check that passes by chance is no check
    x = torch.randint(0, tokens, (2, T), generator=g) if tokens else torch.rand(2, T, generator=g)
    if tokens:
        x[0] = tokens - 1  # the largest token id always: a vocabulary too small for the data fails here
    try:
        with torch.no_grad():
            logits = net(x)
            if attention:
                net.attention(x)
    except ModuleError:
        raise
    except Exception as exc:  # noqa: BLE001 (the user's forward: any failure is reported with the key)
        raise ModuleError(f"config key '{where}.module': {module} fails on a batch of 2 examples of shape ({T},) "
                          f"({'token ids < ' + str(tokens) if tokens else 'floats'}): {type(exc).__name__}: {exc}") from None
    if logits.shape[-1] < classes:  # more is allowed (e.g. logits over a vocabulary a finetune grows into)
        raise ModuleError(f"config key '{where}.module': {module} returns {logits.shape[-1]} logits per example; "
                          f"the dataset has {classes} classes, so at least {classes} are needed")
