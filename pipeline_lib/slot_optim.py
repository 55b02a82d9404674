"""Optimizers whose hyperparameters differ per slot of the seed axis (hyperparameter grids).

The engine trains S slots at once along a leading axis of every parameter. torch's optimizers take
one learning rate (one weight decay, one momentum) per parameter tensor, so a grid over them would
need one run per grid point. Adam, AdamW and SGD are elementwise, so a value per slot is just a
tensor of shape (S, 1, ..., 1) in place of the scalar: :class:`SlotAdam` and :class:`SlotSGD` are
torch's update rules written that way (the single-tensor form of ``torch.optim.Adam`` / ``AdamW`` /
``SGD``, operation for operation), and ``tests/test_sweep.py`` checks that a batched grid equals the
grid points trained one by one with torch's optimizers.

A slot is a dict (``RunConfig.slots()``): ``run_seed``, ``lr``, ``lr_ratio`` (parameter name ->
multiple of lr: per-parameter learning rates), ``weight_decay``, ``momentum``.
"""
from __future__ import annotations

import importlib
from typing import Optional

import torch


def _per_slot(values, p: torch.Tensor) -> torch.Tensor:
    """(S,) values -> (S, 1, ..., 1) float64 broadcasting against parameter ``p`` (S, ...); factors
    derived from them are rounded to ``p``'s dtype once, as torch's Python-float arithmetic is."""
    return torch.tensor(values, dtype=torch.float64, device=p.device).view(-1, *([1] * (p.dim() - 1)))


def slot_lrs(names: list[str], slots: list[dict]) -> dict[str, list[float]]:
    """Parameter name -> each slot's learning rate (lr x lr_ratio); a ratio naming no parameter of the
    model is an error naming the config key."""
    for slot in slots:
        unknown = set(slot["lr_ratio"]) - set(names)
        if unknown:
            raise ValueError(f"config key 'optimizer.lr_ratio' (or 'sweep.lr_ratio') names {sorted(unknown)}, which the "
                             f"model does not have; allowed: {names}")
    return {n: [s["lr"] * s["lr_ratio"].get(n, 1.0) for s in slots] for n in names}


class _SlotOptimizer(torch.optim.Optimizer):
    """One parameter group per parameter, holding its per-slot tensors (``state_dict`` carries the
    moments for a resume; the hyperparameters come from the config). A group's ``lr`` (1.0) is a
    factor on every slot's learning rate, which torch's schedulers (the warm-up) set."""

    def __init__(self, named: dict[str, torch.nn.Parameter], slots: list[dict], defaults: dict,
                 no_decay: tuple[str, ...] = ()):
        lrs = slot_lrs(list(named), slots)
        _check_names(set(no_decay), list(named))
        groups = [{"params": [p], "name": n, "lr": 1.0, "slot_lr": _per_slot(lrs[n], p),
                   "slot_wd": _per_slot([0.0 if n in no_decay else s["weight_decay"] for s in slots], p)}
                  for n, p in named.items()]
        super().__init__(groups, defaults)
        self.any_wd = any(s["weight_decay"] for s in slots)

    def load_state_dict(self, state_dict: dict) -> None:
        tensors = [{k: g[k] for k in ("slot_lr", "slot_wd", "slot_momentum") if k in g} for g in self.param_groups]
        super().load_state_dict(state_dict)
        for g, kept in zip(self.param_groups, tensors):  # the slots' values come from the config, not the file
            g.update(kept)


class SlotAdam(_SlotOptimizer):
    """Adam (``decoupled=False``, L2 added to the gradient) or AdamW (``decoupled=True``) with a
    learning rate and a weight decay per slot; betas and eps are shared."""

    def __init__(self, named: dict[str, torch.nn.Parameter], slots: list[dict], betas=(0.9, 0.999), eps: float = 1e-8,
                 decoupled: bool = False, no_decay: tuple[str, ...] = ()):
        super().__init__(named, slots, {"betas": tuple(betas), "eps": eps}, no_decay)
        self.decoupled = decoupled

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            (p,), (beta1, beta2), eps = group["params"], group["betas"], group["eps"]
            if p.grad is None:
                continue
            grad, lr, wd = p.grad, group["slot_lr"] * group["lr"], group["slot_wd"]  # float64
            st = self.state[p]
            if not st:
                st["step"] = 0
                st["exp_avg"] = torch.zeros_like(p)
                st["exp_avg_sq"] = torch.zeros_like(p)
            st["step"] += 1
            if self.any_wd:
                if self.decoupled:
                    p.mul_((1 - lr * wd).to(p.dtype))
                else:
                    grad = torch.addcmul(grad, p, wd.to(p.dtype))  # = grad.add(p, alpha=wd), bit for bit
            st["exp_avg"].lerp_(grad, 1 - beta1)
            st["exp_avg_sq"].mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            step_size = (lr / (1 - beta1 ** st["step"])).to(p.dtype)
            denom = (st["exp_avg_sq"].sqrt() / (1 - beta2 ** st["step"]) ** 0.5).add_(eps)
            p.add_(st["exp_avg"].mul(-step_size).div_(denom))  # p + (-step_size * m) / denom, as addcdiv_


class SlotSGD(_SlotOptimizer):
    """SGD with momentum (torch's rule: buf = m buf + g, the first buf = g; p -= lr buf) and weight
    decay (g + wd p), each with a value per slot; ``addcmul`` rounds as torch's ``add(alpha=...)``."""

    def __init__(self, named: dict[str, torch.nn.Parameter], slots: list[dict], no_decay: tuple[str, ...] = ()):
        super().__init__(named, slots, {}, no_decay)
        for g in self.param_groups:
            g["slot_momentum"] = _per_slot([s["momentum"] for s in slots], g["params"][0])
        self.any_momentum = any(s["momentum"] for s in slots)

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            (p,) = group["params"]
            if p.grad is None:
                continue
            g = torch.addcmul(p.grad, p, group["slot_wd"].to(p.dtype)) if self.any_wd else p.grad  # g.add(p, alpha=wd)
            if self.any_momentum:
                st = self.state[p]
                st["momentum_buffer"] = (g.clone() if "momentum_buffer" not in st
                                         else st["momentum_buffer"].mul_(group["slot_momentum"].to(p.dtype)).add_(g))
                g = st["momentum_buffer"]
            p.addcmul_(g, (group["slot_lr"] * group["lr"]).to(p.dtype), value=-1)  # = p.add_(g, alpha=-lr), bit for bit


def build_slot_optimizer(named: dict[str, torch.nn.Parameter], opt_cfg, slots: list[dict]) -> torch.optim.Optimizer:
    """The slot optimizer for the run's optimizer name (adam, adamw or sgd)."""
    if opt_cfg.name in ("adam", "adamw"):
        return SlotAdam(named, slots, opt_cfg.betas, decoupled=opt_cfg.name == "adamw",
                        no_decay=opt_cfg.no_weight_decay)
    if opt_cfg.name == "sgd":
        return SlotSGD(named, slots, opt_cfg.no_weight_decay)
    raise ValueError(f"config key 'optimizer.name': a sweep or per-parameter learning rates need an elementwise "
                     f"optimizer with a value per slot; got {opt_cfg.name!r}; allowed: adam, adamw, sgd")


def _check_names(skip: set, names: list[str]) -> None:
    if skip - set(names):
        raise ValueError(f"config key 'optimizer.no_weight_decay' names {sorted(skip - set(names))}, which the model "
                         f"does not have; allowed: {names}")


def weight_decay_groups(params, names: Optional[list[str]], no_weight_decay) -> list:
    """torch parameter groups: the parameters ``names``d in ``no_weight_decay`` (the config key
    ``optimizer.no_weight_decay``) in a second group without weight decay; empty groups dropped."""
    if not no_weight_decay:
        return list(params)
    if names is None:
        raise ValueError("optimizer.no_weight_decay needs the parameters' names")
    skip = set(no_weight_decay)
    _check_names(skip, names)
    groups = [{"params": [p for n, p in zip(names, params) if n not in skip]},
              {"params": [p for n, p in zip(names, params) if n in skip], "weight_decay": 0.0}]
    return [g for g in groups if g["params"]]


def build_optimizer(params, opt_cfg, dims: Optional[list] = None, names: Optional[list[str]] = None,
                    module: Optional[str] = None) -> torch.optim.Optimizer:
    """torch's Adam, AdamW or SGD; any other name is an optimizer plug-in of ``pipeline_lib/optimizers``, whose
    ``module`` the run's plan names (``TrainingPlan.optimizer_module``): its ``build(params, opt_cfg, dims)``,
    ``dims``: each parameter's dim names after the seed axis; a plug-in that declares ``TAKES_NAMES = True``
    gets ``names`` too and honours ``no_weight_decay`` itself. The parameters ``names``d in
    ``opt_cfg.no_weight_decay`` form a second group without weight decay."""
    name = opt_cfg.name
    if name not in BUILTIN_OPTIMIZERS:
        if module is None:
            raise ValueError(f"optimizer {name!r} is a plug-in: give its module (the run's plan names it)")
        if dims is None:
            raise ValueError(f"optimizer {name!r} needs the parameters' dim names (train_seeds(param_dims=...))")
        plugin = importlib.import_module(module)
        if getattr(plugin, "TAKES_NAMES", False):  # it reads the parameters' names (and no_weight_decay) itself
            if names is None:
                raise ValueError(f"optimizer {name!r} needs the parameters' names")
            return plugin.build(params, opt_cfg, dims, names)
        if opt_cfg.no_weight_decay:
            raise ValueError(f"config key 'optimizer.no_weight_decay': optimizer {name!r} takes one weight decay; "
                             "allowed with adam, adamw, sgd and plug-ins that read the parameters' names")
        return plugin.build(params, opt_cfg, dims)
    if opt_cfg.no_weight_decay:
        params = weight_decay_groups(params, names, opt_cfg.no_weight_decay)
    # foreach: one call per operation for all parameters instead of a Python loop over them (the
    # per-step overhead of mini-batch training); the same arithmetic, equal bit for bit (checked for
    # Adam, AdamW and SGD with and without momentum and weight decay).
    if name == "adam":
        return torch.optim.Adam(params, lr=opt_cfg.lr, betas=opt_cfg.betas, weight_decay=opt_cfg.weight_decay,
                                foreach=True)
    if name == "adamw":
        return torch.optim.AdamW(params, lr=opt_cfg.lr, betas=opt_cfg.betas, weight_decay=opt_cfg.weight_decay,
                                 foreach=True)
    if name == "sgd":
        return torch.optim.SGD(params, lr=opt_cfg.lr, momentum=opt_cfg.momentum, weight_decay=opt_cfg.weight_decay,
                               foreach=True)
    raise ValueError(f"unknown optimizer {name!r}; allowed: adam, adamw, sgd")


BUILTIN_OPTIMIZERS = ("adam", "adamw", "sgd")


def optimizer_state_size(opt: torch.optim.Optimizer) -> dict:
    """Elements and bytes of every tensor the optimizer keeps per parameter (moments, projectors,
    step counters), measured on the live state."""
    tensors = [v for st in opt.state.values() for v in st.values() if torch.is_tensor(v)]
    return {"elements": int(sum(t.numel() for t in tensors)),
            "bytes": int(sum(t.numel() * t.element_size() for t in tensors))}
