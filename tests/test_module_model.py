"""Bring your own nn.Module (model kind `module`): S seeds trained in lock-step equal S plain runs of the
module, its weights keep the module's names, what cannot be batched is refused, and a bad module fails
when the config is read, naming the key."""
import copy

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from conftest import needs_cxx
from pipeline_lib.batches import TrainingSet
from pipeline_lib.engine import train_seeds
from pipeline_lib.models import build_run_model, param_dims, run_inputs
from pipeline_lib.models.module import ModuleError, ModuleModel, import_class
from pipeline_lib.plumbing.config import TrainingPlan, load_config
from pipeline_lib.plumbing.errors import ConfigError

MLP = "examples.own_models.mlp:ModAddMLP"
ARGS = {"p": 7, "d": 8, "hidden": 16}


def _modadd(p=7, n=40, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(0, p, (n, 2), generator=g)
    return x, (x[:, 0] + x[:, 1]) % p


def _config(smoke_raw, model=None, **run):
    raw = copy.deepcopy(smoke_raw)
    raw["models"]["own"] = model or {"kind": "module", "module": MLP, "args": ARGS}
    raw["runs"]["own_run"] = {"dataset": "modadd_d7", "model": "own", "epochs": 3, "seeds": 3, "batch_size": 8,
                              "n_probe": 4, **run}
    return raw


def test_s_seeds_in_lock_step_equal_s_plain_runs_of_the_module_float64(smoke_raw):
    cfg = load_config(_config(smoke_raw, optimizer={"name": "adam", "lr": 0.01}))
    rc, spec = cfg.runs["own_run"], cfg.run_spec("own_run")
    x, y = _modadd()
    tensors = {"x_train": x, "y_train": y, "x_test": x[:10], "y_test": y[:10], "probe_x": x[:4]}
    model = build_run_model(spec)
    model.init_seeds(list(rc.seeds))
    model.double()
    train_seeds(model, tensors, TrainingPlan.of(rc), torch.device("cpu"))
    cls = import_class(MLP)
    for i, seed in enumerate(rc.seeds):
        torch.manual_seed(seed)  # what a plain run of the module does
        net = cls(**ARGS).double()
        opt = torch.optim.Adam(net.parameters(), lr=0.01)
        order = TrainingSet(x, y, 8, [seed], torch.device("cpu"))  # the same data order as the seed's slot
        for _ in range(rc.epochs):
            for xb, yb, _w in order.steps():
                opt.zero_grad()
                F.cross_entropy(net(xb[0]), yb[0]).backward()
                opt.step()
        for name, p in net.named_parameters():
            trained = getattr(model, name)[i]
            assert trained.dtype == torch.float64
            np.testing.assert_allclose(trained.detach().numpy(), p.detach().numpy(), rtol=1e-10, atol=1e-12)
    assert not np.allclose(getattr(model, "out.bias")[0].detach(), getattr(model, "out.bias")[1].detach())


@needs_cxx
def test_compile_true_trains_the_same_seeds_as_the_eager_adapter_up_to_rounding(smoke_raw):
    """The model key ``compile: true`` runs the seed-batched forward through torch.compile (fused kernels):
    the same training as the eager adapter, to float64 rounding, and leaving the key out is eager."""
    x, y = _modadd()
    trained = {}
    for compiled in (False, True):
        model_cfg = {"kind": "module", "module": MLP, "args": ARGS, **({"compile": True} if compiled else {})}
        cfg = load_config(_config(smoke_raw, model_cfg, optimizer={"name": "adam", "lr": 0.01}, batch_size="full"))
        rc, spec = cfg.runs["own_run"], cfg.run_spec("own_run")
        model = build_run_model(spec)
        assert (model._compiled() is not None) == compiled
        model.init_seeds(list(rc.seeds))
        model.double()
        tensors = {"x_train": x, "y_train": y, "x_test": x[:10], "y_test": y[:10], "probe_x": x[:4]}
        train_seeds(model, tensors, TrainingPlan.of(rc), torch.device("cpu"))
        trained[compiled] = {n: getattr(model, n).detach().clone() for n in model.param_names()}
    moved = 0.0
    for n, eager in trained[False].items():
        torch.testing.assert_close(trained[True][n], eager, rtol=1e-9, atol=1e-11)
        moved = max(moved, (eager - getattr(build_run_model(spec), n).detach().double()).abs().max().item())
    assert moved > 1e-3  # training moved the weights, so the comparison above can fail


@pytest.mark.parametrize("compile", [False, True])
def test_a_fault_of_the_forward_is_reported_as_such_compiled_or_not(compile):
    """Under torch.compile a fault of the module's own forward is the forward's error (a shape error stays a
    shape error, a random draw is named as one), not a failure of the compilation."""
    x = _modadd()[0]
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        ModuleModel(ShapeBug, {}, 2, where="models.m", compile=compile)(x)
    with pytest.raises(ModuleError, match=r"config key 'models.m.module': DrawsNoise's forward draws random numbers"):
        ModuleModel(DrawsNoise, {}, 2, where="models.m", compile=compile)(x)


def test_a_deep_copy_compiles_its_own_template():
    model = ModuleModel(import_class(MLP), ARGS, 2, compile=True)
    twin = copy.deepcopy(model)
    assert twin._compiled() is not model._compiled() and model._compiled() is model._compiled()


def test_a_compile_failure_names_the_key(monkeypatch):
    def broken(fn):
        def call(*_args):
            raise RuntimeError("no C++ compiler found")
        return call
    monkeypatch.setattr(torch, "compile", broken)
    model = ModuleModel(import_class(MLP), ARGS, 2, sites=("hidden",), where="models.own", compile=True)
    with pytest.raises(ModuleError, match=r"'models\.own\.compile'.*no C\+\+ compiler.*leave compile out"):
        model(torch.zeros(3, 2, dtype=torch.long))
    assert model.internals(torch.zeros(3, 2, dtype=torch.long)).logits.shape == (2, 3, 7)  # sites stay eager


def test_weights_keep_the_modules_names_and_shapes_plus_the_seed_axis(smoke_raw):
    cfg = load_config(_config(smoke_raw))
    spec = cfg.run_spec("own_run")
    model = build_run_model(spec)
    net = import_class(MLP)(**ARGS)
    assert model.param_names() == [n for n, _ in net.named_parameters()]
    dims = param_dims(spec)
    for n, p in net.named_parameters():
        assert getattr(model, n).shape == (3, *p.shape) and len(dims[n]) == p.dim()
    assert run_inputs(spec, np.zeros((2, 2), dtype=np.int64)).dtype == torch.long


def test_attention_and_sites_come_from_the_named_submodules():
    cls = import_class("examples.own_models.transformer:EncoderClassifier")
    args = {"tokens": 5, "positions": 6, "classes": 3, "d": 8, "heads": 2}
    model = ModuleModel(cls, args, 2, "attention_row", ("encoder.layers.0",))
    model.init_seeds([3, 4])
    x = torch.randint(0, 5, (4, 6))
    att = model.attention(x)
    assert att.shape == (2, 4, 7)  # positions + the CLS token
    np.testing.assert_allclose(att.sum(-1).detach().numpy(), 1.0, rtol=1e-5)
    site = model.site(model.internals(x), "encoder.layers.0")
    assert site.shape == (2, 4, 7 * 8)
    torch.manual_seed(4)
    plain = cls(**args)
    np.testing.assert_allclose(model(x)[1].detach().numpy(), plain(x).detach().numpy(), rtol=1e-5, atol=1e-6)


class WithDropout(torch.nn.Module):
    def __init__(self, p=0.1):
        super().__init__()
        self.embed, self.drop, self.out = torch.nn.Embedding(7, 4), torch.nn.Dropout(p), torch.nn.Linear(8, 7)

    def forward(self, x):
        return self.out(self.drop(self.embed(x).flatten(1)))


class FiveClasses(WithDropout):
    def __init__(self):
        super().__init__(0.0)
        self.out = torch.nn.Linear(8, 5)


class WithTau(WithDropout):
    def __init__(self):
        super().__init__(0.0)
        self.tau = torch.nn.Parameter(torch.ones(()))


class WithCompiled(WithDropout):
    def __init__(self):
        super().__init__(0.0)
        self.compiled = torch.nn.Parameter(torch.ones(()))


class ShapeBug(WithDropout):
    def __init__(self):
        super().__init__(0.0)

    def forward(self, x):
        return self.out(self.embed(x).flatten(1) @ torch.ones(3, 3))


class DrawsNoise(WithDropout):
    def __init__(self):
        super().__init__(0.0)

    def forward(self, x):
        return self.out(self.embed(x).flatten(1) + torch.rand(8))


class WithRandomBuffer(WithDropout):
    def __init__(self):
        super().__init__(0.0)
        self.register_buffer("projection", torch.randn(8))


class NamedStack(WithDropout):
    def __init__(self):
        super().__init__(0.0)
        self.stack = torch.nn.Parameter(torch.zeros(8))

    def forward(self, x):
        return self.out(self.embed(x).flatten(1) + self.stack)


class FailingInit(WithDropout):
    def __init__(self):
        raise ValueError("no such width")


class WithBatchNorm(WithDropout):
    def __init__(self):
        super().__init__(0.0)
        self.drop = torch.nn.BatchNorm1d(8)


class WithLayerNormAndBuffer(WithDropout):
    def __init__(self):
        super().__init__(0.0)
        self.drop = torch.nn.LayerNorm(8)
        self.register_buffer("shift", torch.arange(8.0) / 8)

    def forward(self, x):
        return self.out(self.drop(self.embed(x).flatten(1)) + self.shift)


def test_dropout_and_batch_norm_are_refused_layer_norm_buffers_and_p0_dropout_work():
    with pytest.raises(ModuleError, match=r"config key 'models.m.args'.*drop \(Dropout\)"):
        ModuleModel(WithDropout, {}, 2, where="models.m")
    with pytest.raises(ModuleError, match=r"drop \(BatchNorm1d\)"):
        ModuleModel(WithBatchNorm, {}, 2, where="models.m")
    with pytest.raises(ModuleError, match=r"parameter\(s\) \['tau'\] share a name"):
        ModuleModel(WithTau, {}, 2, where="models.m")
    with pytest.raises(ModuleError, match=r"parameter\(s\) \['compiled'\] share a name"):
        ModuleModel(WithCompiled, {}, 2, where="models.m", compile=True)
    with pytest.raises(ModuleError, match=r"buffer\(s\) \['projection'\] differ from seed to seed"):
        ModuleModel(WithRandomBuffer, {}, 2, where="models.m")
    with pytest.raises(ModuleError, match=r"config key 'models.m.args': FailingInit\(\*\*\{\}\) failed: ValueError"):
        ModuleModel(FailingInit, {}, 2, where="models.m")
    named = ModuleModel(NamedStack, {}, 2)  # a parameter named like the adapter's own container
    named.init_seeds([0, 1])
    assert "stack" in named.param_names() and getattr(named, "stack").shape == (2, 8)
    torch.manual_seed(1)
    x = _modadd()[0]
    np.testing.assert_allclose(named(x)[1].detach().numpy(), NamedStack()(x).detach().numpy(), rtol=1e-6)
    x = _modadd()[0]
    for cls, args in ((WithDropout, {"p": 0.0}), (WithLayerNormAndBuffer, {})):
        model = ModuleModel(cls, args, 2)
        model.init_seeds([0, 1])
        torch.manual_seed(1)
        np.testing.assert_allclose(model(x)[1].detach().numpy(), cls(**args)(x).detach().numpy(), rtol=1e-6)


@pytest.mark.parametrize("model, match", [
    ({"module": "no_such_package.net:Net"}, r"config key 'models.own.module': cannot import 'no_such_package.net'"),
    ({"module": "examples.own_models.mlp:Missing"}, r"'models.own.module'.*is missing, not an nn.Module class"),
    ({"module": MLP, "args": {"p": 7, "width": 3}}, r"config key 'models.own.args'.*unexpected keyword"),
    ({"module": "test_module_model:FiveClasses"}, r"'models.own.module'.*5 logits per example; the dataset has 7 classes"),
    ({"module": MLP, "args": {"p": 5}}, r"'models.own.module'.*fails on a batch of 2 examples.*IndexError"),
    ({"module": MLP, "args": ARGS, "sites": ["nowhere"]}, r"config key 'models.own.sites'.*no submodule 'nowhere'"),
    ({"module": "examples.own_models.transformer:EncoderClassifier",
      "args": {"tokens": 7, "positions": 3, "classes": 7}}, r"'models.own.module'.*fails on a batch of 2 examples"),
])
def test_a_bad_module_fails_when_the_config_is_read_naming_the_key(smoke_raw, model, match):
    with pytest.raises(ConfigError, match=match):
        load_config(_config(smoke_raw, {"kind": "module", **model}))


def test_the_runs_attention_settings_are_refused_for_a_module(smoke_raw):
    with pytest.raises(ConfigError, match=r"config key 'runs.own_run.attention.variant'"):
        load_config(_config(smoke_raw, attention={"variant": "normsoftmax"}))


def test_a_module_named_from_the_checkout_imports_from_python_run_in_any_folder(smoke_raw, tmp_path, monkeypatch):
    import sys

    from conftest import REPO

    for name in [m for m in sys.modules if m == "examples" or m.startswith("examples.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(REPO))])
    monkeypatch.chdir(tmp_path)
    cfg = load_config(_config(smoke_raw))  # examples.own_models.mlp: found in the checkout, after everything else
    assert cfg.models["own"].plugin == "module" and sys.path[-1] == str(REPO)
