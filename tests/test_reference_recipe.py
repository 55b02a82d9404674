"""The Eureka paper's reference recipe as run keys: the cosine schedule with warm-up and floor, label
smoothing, drop-path and parameters without weight decay, each against a formula or torch's own code."""
import dataclasses
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from pipeline_lib import engine
from pipeline_lib.batches import TrainingSet
from pipeline_lib.engine import train_seeds
from pipeline_lib.losses import per_seed_loss_acc
from pipeline_lib.lr_schedule import epoch_lr
from pipeline_lib.models import build_run_model, run_inputs
from pipeline_lib.models.layer_stack import DropPath, drop_path_rates
from pipeline_lib.plumbing.config import OptimizerConfig, TrainingPlan, load_config
from pipeline_lib.plumbing.errors import ConfigError
from pipeline_lib.slot_optim import SlotAdam, build_optimizer
from pipeline_lib.tasks.eureka_reasoning import eureka_reasoning

COSINE = OptimizerConfig(name="adamw", lr=5e-4, weight_decay=0.05, warmup_epochs=5, schedule="cosine", min_lr=1e-6,
                         warmup_lr=1e-6, cooldown_epochs=10)


def test_cosine_schedule_is_timms_warmup_then_torchs_cosine_annealing_then_the_floor():
    epochs = 110  # 100 epochs of schedule and 10 of cool-down, as the reference's --epochs 100 --cooldown-epochs 10
    lrs = [epoch_lr(COSINE, epochs, e) for e in range(epochs)]
    # the warm-up: linear from warmup_lr, epoch by epoch (timm CosineLRScheduler, warmup_t = 5)
    for e in range(5):
        assert lrs[e] == pytest.approx(1e-6 + e * (5e-4 - 1e-6) / 5, rel=1e-12)
    # after it: torch's CosineAnnealingLR over T_max = 100 epochs (timm's t is not shifted by the warm-up)
    p = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([p], lr=5e-4)
    cos = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=100, eta_min=1e-6)
    torch_lrs = []
    for _ in range(100):
        torch_lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        cos.step()
    np.testing.assert_allclose(lrs[5:100], torch_lrs[5:100], rtol=1e-9)
    assert lrs[100:] == [1e-6] * 10  # the cool-down holds the floor
    assert lrs[5] < 5e-4 and max(lrs) < 5e-4  # no epoch at the full rate: the warm-up ends on the cosine


def test_the_engine_steps_the_schedule_per_epoch_for_torch_and_slot_optimizers(smoke_raw):
    cfg, rc, tensors, model = _reasoning(smoke_raw, epochs=12, batch_size=64)
    for sweep in ((), (("lr", (5e-4, 1e-3)),)):
        run = dataclasses.replace(rc, optimizer=COSINE, sweep=sweep)
        plan = TrainingPlan.of(run)
        m = build_run_model(cfg.run_spec(rc.name), len(plan.slots))
        source = TrainingSet(tensors["x_train"], tensors["y_train"], 64, plan.seeds, torch.device("cpu"))
        tr = engine._training(m, plan, torch.device("cpu"), source)
        spe = source.steps_per_epoch
        assert spe > 1
        for step in range(12 * spe):
            group = tr.opt.param_groups[0]
            factor = epoch_lr(COSINE, 12, step // spe) / COSINE.lr
            if sweep:  # the last slot's rate: its swept lr times the schedule's factor (floor and warm-up scale with it)
                assert group["lr"] * group["slot_lr"].flatten()[-1].item() == pytest.approx(1e-3 * factor, rel=1e-9)
            else:
                assert group["lr"] == pytest.approx(COSINE.lr * factor, rel=1e-9)
            tr.opt.step()
            tr.sched.step()


def test_label_smoothing_equals_torchs_and_timms_formula_in_both_layouts():
    g = torch.Generator().manual_seed(0)
    for S, B, V in ((3, 200, 5), (2, 7, 100)):  # a short class axis (moved to the front) and a long one
        logits = torch.randn(S, B, V, generator=g, dtype=torch.float64)
        y = torch.randint(V, (B,), generator=g)
        for s in (0.0, 0.1, 0.3):
            loss, acc = per_seed_loss_acc(logits, y, s)
            ref = torch.stack([F.cross_entropy(logits[i], y, label_smoothing=s) for i in range(S)])
            log_p = torch.log_softmax(logits, -1)
            timm = ((1 - s) * -log_p.gather(-1, y.expand(S, B)[..., None]).squeeze(-1) - s * log_p.mean(-1)).mean(1)
            np.testing.assert_allclose(loss, ref, rtol=1e-12)
            np.testing.assert_allclose(loss, timm, rtol=1e-12)
            np.testing.assert_allclose(acc, (logits.argmax(-1) == y).double().mean(1), rtol=1e-6)


def test_label_smoothing_changes_the_steps_but_not_what_is_recorded(smoke_raw):
    cfg, rc, tensors, model = _reasoning(smoke_raw, epochs=3, batch_size=64)
    plain = train_seeds(model, tensors, TrainingPlan.of(rc), torch.device("cpu"))
    _, _, _, model2 = _reasoning(smoke_raw, epochs=3, batch_size=64)
    smoothed = train_seeds(model2, tensors, TrainingPlan.of(dataclasses.replace(rc, label_smoothing=0.1)),
                           torch.device("cpu"))
    # epoch 0 is the initialisation: the recorded losses are the unsmoothed cross-entropy in both runs
    np.testing.assert_array_equal(smoothed.test_loss[:, 0], plain.test_loss[:, 0])
    np.testing.assert_array_equal(smoothed.train_loss[:, 0], plain.train_loss[:, 0])
    assert not np.allclose(smoothed.test_loss[:, -1], plain.test_loss[:, -1])  # the objective moved the training


def test_label_smoothing_with_a_full_batch_steps_on_the_smoothed_loss_and_records_the_plain_one(smoke_raw):
    cfg, rc, tensors, model = _reasoning(smoke_raw, epochs=2, batch_size="full")
    rec = train_seeds(model, tensors, TrainingPlan.of(dataclasses.replace(rc, label_smoothing=0.2)), torch.device("cpu"))
    _, _, _, fresh = _reasoning(smoke_raw, epochs=2, batch_size="full")
    with torch.no_grad():
        plain, _ = per_seed_loss_acc(fresh(tensors["x_train"]), tensors["y_train"])
    np.testing.assert_allclose(rec.train_loss[:, 0], plain.numpy(), rtol=1e-6)


def test_drop_path_rates_and_masks_are_timms_rule_per_slot():
    assert drop_path_rates(0.1, 1) == [0.0]  # a one-layer stack drops nothing
    np.testing.assert_allclose(drop_path_rates(0.1, 7), torch.linspace(0, 0.1, 7).numpy())
    sampler = DropPath([0.0, 0.1], [3, 4])
    m = sampler.mask(1, 100_000)
    np.testing.assert_allclose(np.unique(m.numpy()), [0.0, 1 / 0.9], rtol=1e-6)
    kept = (m > 0).double().mean(1).numpy()
    assert np.all(np.abs(kept - 0.9) < 5 * math.sqrt(0.9 * 0.1 / 100_000))  # Bernoulli(0.9) within 5 sigma
    alone = DropPath([0.0, 0.1], [4]).mask(1, 100_000)
    np.testing.assert_array_equal(alone[0], m[1])  # slot 1's masks come from its seed alone


def test_drop_path_trains_seed_batched_as_one_by_one_and_resumes_bit_identically(smoke_raw, tmp_path):
    from pipeline_lib.checkpointing import Checkpointing

    torch.set_num_threads(1)
    smoke_raw["models"]["reasoning_tf"].update(depth=2, drop_path=0.5)
    cfg, rc, tensors, model = _reasoning(smoke_raw, epochs=6, batch_size=64)
    assert model.drop_rates == [0.0, 0.5]
    together = train_seeds(model, tensors, TrainingPlan.of(rc), torch.device("cpu"))
    for i, seed in enumerate(rc.seeds):
        one = dataclasses.replace(rc, seeds=(seed,))
        m = build_run_model(cfg.run_spec(rc.name), 1)
        m.init_seeds([seed])
        alone = train_seeds(m, tensors, TrainingPlan.of(one), torch.device("cpu"))
        np.testing.assert_allclose(together.test_loss[i], alone.test_loss[0], rtol=1e-5, atol=1e-6)
    smoke_raw["models"]["reasoning_tf"].update(drop_path=0.0)
    _, _, _, no_drop = _reasoning(smoke_raw, epochs=6, batch_size=64)
    without = train_seeds(no_drop, tensors, TrainingPlan.of(rc), torch.device("cpu"))
    assert not np.allclose(without.test_loss[:, -1], together.test_loss[:, -1])  # it does drop something
    np.testing.assert_array_equal(without.test_loss[:, 0], together.test_loss[:, 0])  # not in evaluation

    smoke_raw["models"]["reasoning_tf"].update(drop_path=0.5)

    class Stop(Exception):
        pass

    def stop_at_4(epoch, _):
        if epoch == 4:
            raise Stop

    ck = Checkpointing(tmp_path / "ck.pt", 3, "key")
    _, _, _, m = _reasoning(smoke_raw, epochs=6, batch_size=64)
    with pytest.raises(Stop):
        train_seeds(m, tensors, TrainingPlan.of(rc), torch.device("cpu"), callback=stop_at_4, checkpoint=ck)
    _, _, _, fresh = _reasoning(smoke_raw, epochs=6, batch_size=64)
    resumed = train_seeds(fresh, tensors, TrainingPlan.of(rc), torch.device("cpu"), checkpoint=ck)
    np.testing.assert_array_equal(resumed.test_loss, together.test_loss)


def test_drop_path_needs_mini_batches(smoke_raw):
    smoke_raw["models"]["reasoning_tf"].update(depth=2, drop_path=0.1)
    cfg, rc, tensors, model = _reasoning(smoke_raw, epochs=2, batch_size="full")
    with pytest.raises(ValueError, match="drop_path needs mini-batch steps"):
        train_seeds(model, tensors, TrainingPlan.of(rc), torch.device("cpu"))


def test_parameters_named_in_no_weight_decay_are_not_decayed():
    opt_cfg = OptimizerConfig(name="adamw", lr=0.1, weight_decay=0.5, no_weight_decay=("b",))
    for build in ("torch", "slot"):
        a, b = torch.nn.Parameter(torch.ones(2, 3)), torch.nn.Parameter(torch.ones(2, 3))
        if build == "torch":
            opt = build_optimizer([a, b], opt_cfg, names=["a", "b"])
        else:
            slots = [{"run_seed": s, "lr": 0.1, "weight_decay": 0.5, "momentum": 0.0, "lr_ratio": {}} for s in (0, 1)]
            opt = SlotAdam({"a": a, "b": b}, slots, decoupled=True, no_decay=opt_cfg.no_weight_decay)
        with pytest.raises(ValueError, match=r"'optimizer.no_weight_decay' names \['c'\]"):
            (build_optimizer([a, b], dataclasses.replace(opt_cfg, no_weight_decay=("c",)), names=["a", "b"]) if build == "torch"
             else SlotAdam({"a": a, "b": b}, slots, decoupled=True, no_decay=("c",)))
        a.grad, b.grad = torch.zeros_like(a), torch.zeros_like(b)  # no gradient: only the decay moves a parameter
        opt.step()
        np.testing.assert_allclose(a.detach(), 1 - 0.1 * 0.5, rtol=1e-6, err_msg=build)
        np.testing.assert_array_equal(b.detach(), torch.ones(2, 3), err_msg=build)


@pytest.mark.parametrize("change,key", [
    ({"min_lr": 1e-6}, "optimizer.min_lr' belongs to the cosine schedule"),
    ({"schedule": "cosine", "min_lr": 1.0}, "optimizer.min_lr': 1.0 exceeds the learning rate"),
    ({"schedule": "cosine", "cooldown_epochs": 20}, "optimizer.cooldown_epochs'"),
])
def test_a_bad_recipe_key_fails_at_config_time_naming_it(smoke_raw, change, key):
    smoke_raw["runs"]["r_softmax"]["optimizer"] = {"lr": 1e-2, **change}
    with pytest.raises(ConfigError, match=key.replace("(", r"\(").replace(")", r"\)")):
        load_config(smoke_raw)


def _reasoning(smoke_raw, epochs, batch_size, run="r_softmax"):
    smoke_raw["runs"][run].update(epochs=epochs, batch_size=batch_size)
    cfg = load_config(smoke_raw)
    rc, spec = cfg.runs[run], cfg.run_spec(run)
    data = eureka_reasoning(cfg.datasets["reasoning"].params["n"], 0.3, 0)
    tensors = {"x_train": run_inputs(spec, data.x_train), "y_train": torch.as_tensor(data.y_train),
               "x_test": run_inputs(spec, data.x_test), "y_test": torch.as_tensor(data.y_test),
               "probe_x": run_inputs(spec, data.x_test[:3])}
    model = build_run_model(spec)
    model.init_seeds(list(rc.seeds))
    return cfg, rc, tensors, model
