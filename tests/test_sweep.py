"""Hyperparameter grids on the seed axis (``pipeline_lib.slot_optim``, ``sweep`` of an epoch-engine run)."""
import dataclasses

import numpy as np
import pytest
import torch

from pipeline_lib.checkpointing import Checkpointing
from pipeline_lib.engine import train_seeds
from pipeline_lib.models import build_run_model
from pipeline_lib.plumbing.config import ConfigError, TrainingPlan, load_config
from pipeline_lib.slot_optim import SlotAdam, SlotSGD
from pipeline_lib.tasks.sma import sparse_modular_addition


def _slots(lrs, wds, moms, ratio=None):
    return [{"run_seed": 0, "lr": lr, "weight_decay": wd, "momentum": m, "lr_ratio": dict(ratio or {})}
            for lr, wd, m in zip(lrs, wds, moms)]


@pytest.mark.parametrize("kind", ["adam", "adamw", "sgd", "sgd_no_momentum"])
def test_slot_optimizers_equal_torch_per_slot_bit_for_bit(kind):
    """Every slot of SlotAdam / SlotSGD follows torch's optimizer with that slot's values, exactly,
    including per-parameter learning rates (lr_ratio) and a warm-up scheduler."""
    torch.manual_seed(0)
    S = 3
    shapes = {"a": (S, 4, 5), "b": (S, 5)}
    lrs, wds = [1e-3, 3e-3, 1e-2], [0.0, 1e-2, 5e-4]
    moms = [0.0] * S if kind == "sgd_no_momentum" else [0.9, 0.5, 0.0]
    ratio = {"b": 2.0}
    named = {n: torch.nn.Parameter(torch.randn(s)) for n, s in shapes.items()}
    singles = [{n: torch.nn.Parameter(named[n][i].detach().clone()) for n in named} for i in range(S)]
    slots = _slots(lrs, wds, moms, ratio)
    if kind.startswith("sgd"):
        ours = SlotSGD(named, slots)
        refs = [torch.optim.SGD([{"params": [singles[i]["a"]], "lr": lrs[i]},
                                 {"params": [singles[i]["b"]], "lr": 2 * lrs[i]}],
                                momentum=moms[i], weight_decay=wds[i]) for i in range(S)]
    else:
        ours = SlotAdam(named, slots, decoupled=kind == "adamw")
        cls = torch.optim.Adam if kind == "adam" else torch.optim.AdamW
        refs = [cls([{"params": [singles[i]["a"]], "lr": lrs[i]}, {"params": [singles[i]["b"]], "lr": 2 * lrs[i]}],
                    weight_decay=wds[i]) for i in range(S)]
    start = {n: p.detach().clone() for n, p in named.items()}
    warm = lambda step: min(1.0, (step + 1) / 4)  # noqa: E731
    scheds = [torch.optim.lr_scheduler.LambdaLR(o, warm) for o in [ours, *refs]]
    for _ in range(12):
        grads = {n: torch.randn(s) for n, s in shapes.items()}
        for n, p in named.items():
            p.grad = grads[n].clone()
        for i in range(S):
            for n, p in singles[i].items():
                p.grad = grads[n][i].clone()
        for o in [ours, *refs]:
            o.step()
        for sc in scheds:
            sc.step()
    for i in range(S):
        for n in named:
            assert torch.equal(named[n][i], singles[i][n]), (kind, i, n)
            assert (named[n][i] - start[n][i]).abs().min() > 0  # every slot and element moved


def test_slot_optimizer_state_round_trip_continues_exactly():
    torch.manual_seed(1)
    slots = _slots([1e-2, 3e-2], [1e-3, 0.0], [0.0, 0.0])
    p = torch.nn.Parameter(torch.randn(2, 3))
    q = torch.nn.Parameter(p.detach().clone())
    a, b = SlotAdam({"p": p}, slots), SlotAdam({"p": q}, slots)
    grads = [torch.randn(2, 3) for _ in range(6)]
    for g in grads[:3]:
        p.grad, q.grad = g.clone(), g.clone()
        a.step(), b.step()
    c = SlotAdam({"p": q}, _slots([1e-2, 3e-2], [1e-3, 0.0], [0.0, 0.0]))
    c.load_state_dict(b.state_dict())
    for g in grads[3:]:
        p.grad, q.grad = g.clone(), g.clone()
        a.step(), c.step()
    assert torch.equal(p, q)
    assert torch.equal(c.param_groups[0]["slot_lr"].flatten(), torch.tensor([1e-2, 3e-2], dtype=torch.float64))


def _sweep_setup(smoke_raw, sweep, batch_size=32, epochs=6, seeds=(0, 1), optimizer=None):
    """The smoke config's scratch_p4 with a sweep (no analysis or figure reads it); its run config
    (returned) trains ``seeds``."""
    smoke_raw.update(analyses={}, figures={})
    run = smoke_raw["runs"]["scratch_p4"]
    run.update(epochs=epochs, batch_size=batch_size, sweep=sweep, optimizer=optimizer or {"name": "adam", "lr": 1e-2})
    cfg = load_config(smoke_raw)
    rc = dataclasses.replace(cfg.runs["scratch_p4"], seeds=tuple(seeds))
    d = cfg.params("task", cfg.runs["scratch_p4"].dataset)
    data = sparse_modular_addition(d.p, d.T, d.k, d.n_train, d.n_test, d.seed)
    tensors = {k: torch.as_tensor(v) for k, v in dict(
        x_train=data.x_train, y_train=data.y_train, x_test=data.x_test, y_test=data.y_test,
        probe_x=data.x_test[:4]).items()}
    return cfg, rc, tensors


def _train(cfg, tensors, rc, seeds, checkpoint=None, callback=None):
    model = build_run_model(cfg.run_spec("scratch_p4"), len(seeds))
    model.init_seeds(seeds)
    return model, train_seeds(model, tensors, TrainingPlan.of(rc), torch.device("cpu"), checkpoint=checkpoint, callback=callback)


@pytest.mark.parametrize("optimizer", [{"name": "adam", "lr": 1e-2}, {"name": "sgd", "lr": 0.1, "momentum": 0.9}])
def test_two_seeds_by_three_lrs_batched_equal_the_six_single_runs(smoke_raw, optimizer):
    """The issue's test: a 2-seed x 3-lr grid trained in one batched run equals the six runs trained
    alone with torch's optimizer (mini-batches: each slot draws its seed's data order)."""
    torch.set_num_threads(1)
    lrs = [3e-3, 1e-2, 3e-2] if optimizer["name"] == "adam" else [0.03, 0.1, 0.3]
    cfg, rc, tensors = _sweep_setup(smoke_raw, {"lr": lrs}, optimizer=optimizer)
    slots = rc.slots()
    assert [(s["run_seed"], s["lr"]) for s in slots] == [(s, lr) for lr in lrs for s in (0, 1)]
    _, grid = _train(cfg, tensors, rc, [s["run_seed"] for s in slots])
    finals = grid.test_loss[:, -1]
    assert np.unique(np.round(finals, 4)).size == 6  # the six slots really trained differently
    for i, slot in enumerate(slots):
        alone_rc = dataclasses.replace(rc, seeds=(slot["run_seed"],), sweep=(),
                                       optimizer=dataclasses.replace(rc.optimizer, lr=slot["lr"]))
        _, alone = _train(cfg, tensors, alone_rc, [slot["run_seed"]])
        for name in ("train_loss", "test_loss", "train_acc", "test_acc", "attention"):
            np.testing.assert_allclose(getattr(grid, name)[i], getattr(alone, name)[0], rtol=0, atol=1e-5,
                                       err_msg=f"{name} slot {i}")
        for name, w in grid.weights.items():
            np.testing.assert_allclose(w[:, i], alone.weights[name][:, 0], rtol=0, atol=1e-5, err_msg=name)


def test_weight_decay_grid_resumes_bit_for_bit(smoke_raw, tmp_path):
    torch.set_num_threads(1)
    cfg, rc, tensors = _sweep_setup(smoke_raw, {"weight_decay": [0.0, 1e-2]}, batch_size="full", epochs=12,
                                    optimizer={"name": "adamw", "lr": 1e-2})
    seeds = [s["run_seed"] for s in rc.slots()]
    _, reference = _train(cfg, tensors, rc, seeds)
    ck = Checkpointing(tmp_path / "ck.pt", every=5, key="k")

    def stop(epoch, _):
        if epoch == 8:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _train(cfg, tensors, rc, seeds, checkpoint=ck, callback=stop)
    seen = []
    _, resumed = _train(cfg, tensors, rc, seeds, checkpoint=ck, callback=lambda e, _: seen.append(e))
    assert seen[0] == 5
    np.testing.assert_array_equal(resumed.test_loss, reference.test_loss)
    for name in reference.weights:
        np.testing.assert_array_equal(resumed.weights[name], reference.weights[name])


@pytest.mark.parametrize("change, message", [
    (lambda raw: raw["runs"]["scratch_p4"].update(sweep={"momentum": [0.0, 0.9]}), "sweep.momentum"),
    (lambda raw: raw["runs"]["scratch_p4"].update(sweep={"lr": [1e-3]}, optimizer={"name": "galore_adam", "rank": 2}),
     "runs.scratch_p4.sweep"),
    (lambda raw: raw["runs"]["pretrain_p2"].update(sweep={"lr": [1e-3, 1e-2]}), "runs.curriculum_p2_p4.init_from"),
    (lambda raw: raw["runs"]["curriculum_p2_p4"].update(sweep={"lr": [1e-3, 1e-2]}), "runs.curriculum_p2_p4.sweep"),
])
def test_sweep_config_errors_name_the_key(smoke_raw, change, message):
    change(smoke_raw)
    with pytest.raises(ConfigError, match=message.replace(".", r"\.")):
        load_config(smoke_raw)


def test_swept_run_artifacts_carry_the_grid_on_the_seed_axis(smoke_raw, tmp_path):
    """The train stage writes slot = cell x seed along ``seed``, with run_seed, lr and weight_decay
    coordinates; the same seed in two cells starts from the same weights."""
    import xarray as xr

    from pipeline_lib.stages.dataset import build_dataset
    from pipeline_lib.stages.train import train_run

    smoke_raw.update(analyses={}, figures={})
    smoke_raw["runs"]["scratch_p4"].update(epochs=4, sweep={"lr": [1e-3, 1e-2], "weight_decay": [0.0, 1e-3]})
    smoke_raw["runs"]["scratch_p4"]["record_weights"] = {"dense_until": 4}
    cfg = load_config(smoke_raw)
    build_dataset(cfg, "sma_p4_T12", str(tmp_path / "d.h5"))
    train_run(cfg, "scratch_p4", str(tmp_path / "d.h5"), str(tmp_path / "t.h5"), str(tmp_path / "w.h5"))
    traj = xr.open_dataset(tmp_path / "t.h5", engine="h5netcdf")
    weights = xr.open_dataset(tmp_path / "w.h5", engine="h5netcdf")
    n = 4 * len(cfg.runs["scratch_p4"].seeds)
    assert traj.sizes["seed"] == n and list(traj.seed.values) == list(range(n))
    assert list(traj.run_seed.values[:3]) == list(cfg.runs["scratch_p4"].seeds)
    grid = {(float(lr), float(wd)) for lr, wd in zip(traj.lr.values, traj.weight_decay.values)}
    assert grid == {(1e-3, 0.0), (1e-3, 1e-3), (1e-2, 0.0), (1e-2, 1e-3)}
    assert traj.attrs["swept"] == "lr, weight_decay"
    W0 = weights.W_E.isel(snapshot=0)
    np.testing.assert_array_equal(W0.sel(seed=0), W0.sel(seed=n - 3))  # same run_seed, another cell
    assert not np.array_equal(weights.W_E.isel(snapshot=-1).sel(seed=0), weights.W_E.isel(snapshot=-1).sel(seed=n - 3))


def test_a_swept_run_named_by_an_analysis_or_a_figure_is_refused(smoke_raw):
    """Analyses and figures select and count by seed; a swept run's seed axis holds slots."""
    smoke_raw["runs"]["scratch_p4"]["sweep"] = {"lr": [1e-3, 1e-2]}
    with pytest.raises(ConfigError, match=r"run 'scratch_p4' has a sweep"):
        load_config(smoke_raw)


@pytest.mark.parametrize("where, value, key", [
    ("optimizer", {"name": "adam", "lr_ratio": {"NOPE": 2.0}}, "runs.scratch_p4.optimizer.lr_ratio.NOPE"),
    ("sweep", {"lr_ratio": {"NOPE": [1.0, 2.0]}}, "runs.scratch_p4.sweep.lr_ratio.NOPE"),
    ("sweep", {"lr_ratio": {}}, "runs.scratch_p4.sweep.lr_ratio"),
])
def test_a_learning_rate_ratio_names_a_parameter_of_the_model(smoke_raw, where, value, key):
    smoke_raw["runs"]["scratch_p4"][where] = value
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        load_config(smoke_raw)
