"""Eureka-moments wiring: the fast one-layer path, recording in the engine (Q/K/V gradients,
attention histograms, Heat Treatment), the circuit model's attention variants, the Eureka statistics on
curves with a known jump (the eureka analysis), and the dataset stage on the Eureka tasks."""
import dataclasses
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from pipeline_lib.analysis.eureka import eureka_epochs, eureka_summary
from pipeline_lib.attention import attention_weights, heat_treatment_beta
from pipeline_lib.engine import train_seeds
from pipeline_lib.models import build_run_model, run_inputs
from pipeline_lib.models.circuit import CircuitModel
from pipeline_lib.models.transformer import SeedTransformer
from pipeline_lib.models.vit import patchify
from pipeline_lib.plumbing.config import TrainingPlan, load_config
from pipeline_lib.plumbing.store import read_dataset
from pipeline_lib.stats import wilson_interval as ratio_interval
from pipeline_lib.tasks.eureka_reasoning import eureka_label, eureka_reasoning


def _perturbed(model, scale=0.3, seed=0):
    """Seed-initialised, then moved away from the small init so attention is far from uniform."""
    model.init_seeds(list(range(model.S)))
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn(p.shape, generator=g) * scale)
    return model


@pytest.mark.parametrize("variant", ["softmax", "normsoftmax", "normsoftmax_var"])
def test_one_layer_fast_path_equals_the_direct_form_values_and_gradients(variant):
    m = _perturbed(SeedTransformer(3, 11, 4, 16, 4, depth=1, vocab=11, variant=variant))
    x = torch.randint(0, 11, (3, 40, 4), generator=torch.Generator().manual_seed(1))  # per-seed inputs
    y = torch.randint(0, 11, (40,), generator=torch.Generator().manual_seed(2))
    grads = []
    for fn in (m.forward, lambda x: m.internals(x).logits):
        m.zero_grad()
        logits = fn(x)
        F.cross_entropy(logits.reshape(-1, 11), y.repeat(3)).backward()
        grads.append({n: p.grad.clone() for n, p in m.named_parameters()})
    torch.testing.assert_close(m(x), m.internals(x).logits, atol=2e-5, rtol=1e-5)
    for name in grads[0]:  # W_Q gets its gradient only through the CLS query on both paths
        torch.testing.assert_close(grads[0][name], grads[1][name], atol=2e-5, rtol=1e-4, msg=name)


def test_attention_histogram_equals_numpy_histogram():
    m = _perturbed(SeedTransformer(2, 10, 16, 16, 4, depth=2, patch_dim=16, variant="normsoftmax"), 0.5)
    x = torch.rand(5, 16, 16, generator=torch.Generator().manual_seed(3))
    hist = m.attention_histogram(x, bins=10)
    assert hist.shape == (2, 2, 10)
    for layer, w in enumerate(m.internals(x).attention):
        for s in range(2):
            counts, _ = np.histogram(w[s].detach().numpy().ravel(), bins=10, range=(0, 1))
            np.testing.assert_allclose(hist[s, layer].numpy(), counts / counts.sum(), atol=1e-6)


@pytest.mark.parametrize("variant", ["normsoftmax", "normsoftmax_var"])
def test_circuit_model_variants_fast_path_equals_the_equations(variant):
    m = CircuitModel(2, vocab=4, T=6, d=8, tau=0.5, variant=variant)
    m.init_seeds([0, 1])
    x = torch.randint(0, 4, (20, 6), generator=torch.Generator().manual_seed(0))
    internals = m.internals(x)
    torch.testing.assert_close(m(x), internals.logits, atol=1e-5, rtol=1e-5)
    # the equations: z_t = RMS(W_E[x_t] + P_t); weights = variant(z . w_Q) over positions
    z = m.W_E[0][x] + m.P[0]
    z = z * torch.rsqrt(z.pow(2).mean(-1, keepdim=True) + 1e-6)
    expected = attention_weights(z @ m.w_Q[0], variant, 0.5)
    torch.testing.assert_close(internals.attention[0], expected)
    torch.testing.assert_close(m.attention(x)[0], expected)
    assert not torch.allclose(expected, torch.softmax(z @ m.w_Q[0] / 0.5, -1))  # the variant matters


def _reasoning_setup(smoke_raw, run, epochs, batch_size="full"):
    smoke_raw["runs"][run].update(epochs=epochs, batch_size=batch_size)
    cfg = load_config(smoke_raw)
    rc = cfg.runs[run]
    data = eureka_reasoning(cfg.datasets["reasoning"].params["n"], 0.3, 0)
    tensors = {"x_train": run_inputs(cfg.run_spec(run), data.x_train), "y_train": torch.as_tensor(data.y_train),
               "x_test": run_inputs(cfg.run_spec(run), data.x_test), "y_test": torch.as_tensor(data.y_test),
               "probe_x": run_inputs(cfg.run_spec(run), data.x_test[:3]), "stats_x": run_inputs(cfg.run_spec(run), data.x_test[:16])}
    model = build_run_model(cfg.run_spec(run))
    model.init_seeds(list(rc.seeds))
    return cfg, rc, tensors, model


@pytest.mark.parametrize("batch_size", ["full", 64])
def test_engine_records_the_epochs_mean_qkv_gradient(smoke_raw, batch_size):
    cfg, rc, tensors, model = _reasoning_setup(smoke_raw, "r_softmax", 2, batch_size)
    start = {n: p.detach().clone() for n, p in model.named_parameters()}
    rec = train_seeds(model, tensors, TrainingPlan.of(rc), torch.device("cpu"))
    assert rec.grads["W_Q"].shape == (2, 3, 1, 2)  # (seed, epoch, layer, head)
    assert np.isnan(rec.grads["W_Q"][:, -1]).all()  # no training step after the last epoch
    # recompute epoch 0's gradient summary from the initial weights, independently of the engine
    fresh = build_run_model(cfg.run_spec("r_softmax"))
    fresh.load_arrays({n: v.numpy() for n, v in start.items()})
    if batch_size == "full":
        logits = fresh(tensors["x_train"])
        loss = sum(F.cross_entropy(logits[s], tensors["y_train"]) for s in range(2))
        loss.backward()
        for name in ("W_Q", "W_K", "W_V"):
            expected = getattr(fresh, name).grad.abs().mean(dim=(-2, -1)).numpy()
            np.testing.assert_allclose(rec.grads[name][:, 0], expected, rtol=1e-4, err_msg=name)
    else:  # mini-batches: the mean over the epoch's steps, weighted by step size, is positive and finite
        assert np.isfinite(rec.grads["W_V"][:, :2]).all() and (rec.grads["W_V"][:, :2] > 0).all()
    hist = rec.attention_hist
    assert hist.shape == (2, 3, 1, 20)
    np.testing.assert_allclose(hist.sum(-1), 1.0, atol=1e-5)


def test_engine_follows_the_heat_treatment_schedule(smoke_raw):
    cfg, rc, tensors, model = _reasoning_setup(smoke_raw, "r_ht", 10)
    seen = []
    orig = model.attention_histogram

    def spy(x):
        seen.append(model.beta)
        return orig(x)

    model.attention_histogram = spy
    rec = train_seeds(model, tensors, TrainingPlan.of(rc), torch.device("cpu"))
    d_head = model.d_head  # d // n_heads of the reasoning_tf entry
    assert d_head == cfg.models["reasoning_tf"].params["d"] // cfg.models["reasoning_tf"].params["n_heads"]
    expected = [heat_treatment_beta(e, 10, d_head) for e in range(11)]
    np.testing.assert_allclose(seen[1:], expected)  # seen[0]: the engine sizing its buffers
    np.testing.assert_allclose(rec.temperature, 1 / np.array(expected))
    assert expected[0] == pytest.approx(3.0) and expected[5] == pytest.approx(1 / math.sqrt(d_head))
    assert model.beta is None and model.tau == pytest.approx(math.sqrt(d_head))  # the schedule's end
    plain = dataclasses.replace(rc, attention=dataclasses.replace(rc.attention, schedule="none"))
    model2 = build_run_model(cfg.run_spec("r_softmax"))
    model2.init_seeds(list(rc.seeds))
    rec2 = train_seeds(model2, tensors, TrainingPlan.of(plain), torch.device("cpu"))
    np.testing.assert_allclose(rec2.temperature, math.sqrt(d_head))
    assert not np.allclose(rec.test_loss, rec2.test_loss)  # the schedule changed the training


def test_seeds_without_a_eureka_moment_are_told_apart_by_their_train_accuracy():
    epochs = np.arange(0, 11)
    test = np.array([np.r_[np.full(5, 0.55), np.full(6, 0.95)],  # a Eureka-moment: train and test jump together
                     np.full(11, 0.55),  # plateau: train stays with test
                     np.full(11, 0.55),  # memorises: train fitted, test not
                     np.full(11, 0.60)])
    train = np.array([np.r_[np.full(4, 0.56), np.full(7, 0.97)], np.full(11, 0.58), np.r_[np.full(3, 0.6), np.full(8, 1.0)],
                      np.r_[np.full(10, 0.6), [0.71]]])  # ends just above the threshold: counts as fitted
    res = eureka_summary(test, epochs, 0.7, train)
    assert (res["n_eureka"], res["n_plateau"], res["n_memorise"]) == (1, 1, 2)
    np.testing.assert_array_equal(res["train_eureka_epoch"], [4, np.nan, 3, 10])
    np.testing.assert_allclose(res["final_train_acc"], [0.97, 0.58, 1.0, 0.71])
    assert np.isnan(eureka_summary(test, epochs, 0.7)["n_plateau"])  # no train curves: not counted


def test_eureka_epochs_and_ratio_on_curves_with_a_known_jump():
    epochs = np.arange(0, 101)
    plateau = np.full(101, 0.55)
    jump_at = [20, 63, None, 100]
    curves = []
    for j in jump_at:
        c = plateau.copy()
        if j is not None:
            c[j:] = 0.95
        curves.append(c)
    curves.append(np.r_[plateau[:50], np.full(51, 0.7)])  # reaches the threshold but never exceeds it
    acc = np.stack(curves)
    ep = eureka_epochs(acc, epochs + 1000, 0.7)  # real epoch numbers, e.g. a finetune's
    np.testing.assert_array_equal(ep, [1020, 1063, np.nan, 1100, np.nan])
    res = eureka_summary(acc, epochs, 0.7)
    assert (res["n_eureka"], res["n_seeds"], res["eureka_ratio"]) == (3, 5, 0.6)
    assert res["mean_eureka_epoch"] == pytest.approx((20 + 63 + 100) / 3)
    assert res["acc_after_eureka"] == pytest.approx(0.95)
    assert res["mean_final_test_acc"] == pytest.approx((3 * 0.95 + 0.55 + 0.7) / 5)
    # Wilson interval of 3/5 from its formula
    z, n, p = 1.959963984540054, 5, 0.6
    centre, half = (p + z * z / (2 * n)) / (1 + z * z / n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert ratio_interval(3, 5) == pytest.approx((centre - half, centre + half), abs=1e-6)
    diverged = acc.copy()
    diverged[0, 30:] = np.nan  # a frozen (diverged) seed that had its Eureka keeps it; NaN is never above
    assert eureka_summary(diverged, epochs, 0.7)["n_eureka"] == 3


def test_eureka_dataset_stage(smoke_raw, tmp_path):
    from pipeline_lib.stages.dataset import build_dataset

    cfg = load_config(smoke_raw)
    build_dataset(cfg, "reasoning", str(tmp_path / "r.h5"))
    ds = read_dataset(tmp_path / "r.h5")
    x, y = ds.x.values, ds.y.values
    np.testing.assert_array_equal(y, eureka_label(x))
    np.testing.assert_array_equal(ds.step1.values, (x[:, 0] % 2 != x[:, 1] % 2))
    assert len(x) == 5 ** 4 and (ds.split.values == "train").sum() == round(0.3 * 5 ** 4)
    test = ds.split.values == "test"
    chance = max(np.mean(y[test] == x[test, 2]), np.mean(y[test] == x[test, 3]))
    assert ds.attrs["task_chance_without_step1"] == pytest.approx(chance)
    build_dataset(cfg, "digits", str(tmp_path / "d.h5"))
    dg = read_dataset(tmp_path / "d.h5")
    assert dg.x.shape == (128 + 64, 256) and dg.step1.dims == ("sample",)
    assert 0.4 < dg.attrs["task_chance_without_step1"] < 0.7  # about 50%: the two candidates
    patches = patchify(dg.x.values[:2], 4)
    assert patches.shape == (2, 16, 16) and float(patches.max()) <= 1.0
    # patch (row 0, col 1) is the image's rows 0-3, columns 4-7
    np.testing.assert_allclose(patches[0, 1].numpy(), dg.x.values[0].reshape(16, 16)[:4, 4:8].ravel() / 16)


def test_a_longer_run_starts_exactly_as_the_shorter_one(smoke_raw):
    """Why a 600-epoch run gives a 10k-epoch run's Eureka epochs when every seed crossed the threshold
    by epoch 600: without a schedule over the run's length, the first epochs are the same computation
    (same initialisation, same per-seed data order). Heat Treatment's schedule stretches with the run."""
    def run(name, epochs):
        cfg, rc, tensors, model = _reasoning_setup(smoke_raw, name, epochs, 64)
        return train_seeds(model, tensors, TrainingPlan.of(rc), torch.device("cpu"))

    short, long = run("r_softmax", 6), run("r_softmax", 12)
    np.testing.assert_array_equal(long.test_acc[:, :7], short.test_acc)
    np.testing.assert_array_equal(long.grads["W_Q"][:, :6], short.grads["W_Q"][:, :6])
    ht_short, ht_long = run("r_ht", 6), run("r_ht", 12)
    assert not np.array_equal(ht_long.test_acc[:, 1:7], ht_short.test_acc[:, 1:])


def test_transformer_run_resumes_bit_identically_with_its_recordings(smoke_raw, tmp_path):
    from pipeline_lib.checkpointing import Checkpointing

    class Stop(Exception):
        pass

    def stop_at_7(epoch, _):
        if epoch == 7:
            raise Stop

    cfg, rc, tensors, model = _reasoning_setup(smoke_raw, "r_ht", 10, 64)
    reference = train_seeds(model, tensors, TrainingPlan.of(rc), torch.device("cpu"))
    ck = Checkpointing(tmp_path / "ck.pt", 5, "key")
    _, _, _, model = _reasoning_setup(smoke_raw, "r_ht", 10, 64)
    with pytest.raises(Stop):
        train_seeds(model, tensors, TrainingPlan.of(rc), torch.device("cpu"), callback=stop_at_7, checkpoint=ck)
    _, _, _, fresh = _reasoning_setup(smoke_raw, "r_ht", 10, 64)
    seen = []
    resumed = train_seeds(fresh, tensors, TrainingPlan.of(rc), torch.device("cpu"),
                          callback=lambda e, _: seen.append(e), checkpoint=ck)
    assert seen[0] == 5
    for name in ("test_acc", "train_loss", "attention", "attention_hist", "temperature"):
        np.testing.assert_array_equal(getattr(resumed, name), getattr(reference, name), err_msg=name)
    for name in ("W_Q", "W_K", "W_V"):
        np.testing.assert_array_equal(resumed.grads[name], reference.grads[name], err_msg=name)


# --- Table 1's W_QKV gradient-scaling row: the optimizer plug-in ----------------------------------------------
def _qkv_model(S=3, seed=0):
    return _perturbed(SeedTransformer(S, 5, 4, 8, 2, 2, 2, vocab=5), scale=0.1, seed=seed)


def test_qkv_scaling_gives_q_k_v_one_mean_gradient_per_seed_and_layer():
    from pipeline_lib.optimizers.adamw_qkv_scaled import scale_qkv_grads

    g = torch.Generator().manual_seed(0)
    grads = [torch.randn(3, 2, 2, 8, 4, generator=g) * s for s in (1e-3, 1e-2, 1e-1)]  # Q << K << V, as in Fig. 5
    before = [t.clone() for t in grads]
    target = sum(t.abs().mean(dim=(2, 3, 4)) for t in before) / 3  # the reference's mean over the fused qkv
    scale_qkv_grads(grads, "mean_grad")
    for t, b in zip(grads, before):
        np.testing.assert_allclose(t.abs().mean(dim=(2, 3, 4)).numpy(), target.numpy(), rtol=1e-5)
        ratio = t / b  # one factor per seed and layer: directions within each matrix are kept
        assert torch.allclose(ratio, ratio[:, :, :1, :1, :1].expand_as(ratio), rtol=1e-5)
    grads = [t.clone() for t in before]
    scale_qkv_grads(grads, "mean_to_value_grad")
    for t in grads:
        np.testing.assert_allclose(t.abs().mean(dim=(2, 3, 4)).numpy(), before[2].abs().mean(dim=(2, 3, 4)).numpy(),
                                   rtol=1e-5)
    assert torch.equal(grads[2], before[2])
    zero = [torch.zeros(1, 1, 1, 2, 2), torch.ones(1, 1, 1, 2, 2), torch.ones(1, 1, 1, 2, 2)]
    scale_qkv_grads(zero)  # a frozen seed's zero gradient stays zero, finite
    assert torch.equal(zero[0], torch.zeros(1, 1, 1, 2, 2)) and torch.isfinite(zero[1]).all()


def test_qkv_scaled_adamw_is_adamw_on_the_rescaled_gradients_with_the_no_decay_group():
    from pipeline_lib.optimizers.adamw_qkv_scaled import scale_qkv_grads
    from pipeline_lib.plumbing.config import OptimizerConfig
    from pipeline_lib.slot_optim import build_optimizer

    x = torch.randint(0, 5, (16, 4))
    y = torch.randint(0, 5, (16,))
    cfg = OptimizerConfig(name="adamw_qkv_scaled", lr=1e-2, weight_decay=0.1, no_weight_decay=("ln1_g", "ln1_b"))
    a, b = _qkv_model(), _qkv_model()
    opt_a = build_optimizer([getattr(a, n) for n in a.param_names()], cfg, [()] * len(a.param_names()), a.param_names(),
                            "pipeline_lib.optimizers.adamw_qkv_scaled")
    ref_cfg = dataclasses.replace(cfg, name="adamw")
    opt_b = build_optimizer([getattr(b, n) for n in b.param_names()], ref_cfg, None, b.param_names())
    for _ in range(3):
        for model, opt in ((a, opt_a), (b, opt_b)):
            opt.zero_grad()
            F.cross_entropy(model(x).reshape(-1, 5), y.repeat(model.S)).backward()
        scale_qkv_grads([b.W_Q.grad, b.W_K.grad, b.W_V.grad])
        opt_a.step()
        opt_b.step()
    for n in a.param_names():
        torch.testing.assert_close(getattr(a, n), getattr(b, n), rtol=1e-6, atol=1e-7, msg=n)
    assert not torch.allclose(a.W_Q, _qkv_model().W_Q)  # it trained
    assert [g["weight_decay"] for g in opt_a.param_groups] == [0.1, 0.0]


def test_qkv_scaling_refuses_a_model_without_attention_naming_the_key():
    from pipeline_lib.plumbing.config import OptimizerConfig
    from pipeline_lib.slot_optim import build_optimizer

    w = torch.nn.Parameter(torch.zeros(2, 3, 3))
    with pytest.raises(ValueError, match="optimizer.name.*W_Q"):
        build_optimizer([w], OptimizerConfig(name="adamw_qkv_scaled"), [("a", "b")], ["W_a"],
                        "pipeline_lib.optimizers.adamw_qkv_scaled")


# --- the CNN control: the seed-batched ResNet ----------------------------------------------------------------
def test_resnet_slots_equal_single_seed_models_and_an_explicit_block():
    from pipeline_lib.models.resnet import SeedResNet, as_inputs

    x = as_inputs(np.random.default_rng(0).integers(0, 17, (6, 256)))
    many = SeedResNet(3, 16, 10, (4, 8), norm_groups=2)
    many.init_seeds([5, 6, 7])
    one = SeedResNet(1, 16, 10, (4, 8), norm_groups=2)
    one.init_seeds([6])
    torch.testing.assert_close(many(x)[1], one(x)[0], rtol=1e-5, atol=1e-6)  # slot 1 is seed 6 alone
    per_seed = x.unsqueeze(0).expand(3, *x.shape).contiguous()  # a batch per seed gives the same
    torch.testing.assert_close(many(per_seed), many(x))
    # the forward pass written out with torch.nn.functional for seed 6 (stem, a block, a strided block with a
    # projection shortcut, pooling, classifier)
    p = {n: getattr(one, n)[0] for n in one.param_names()}
    gn = lambda z, s: F.group_norm(z, 2, p[f"{s[0]}_g{s[1]}"], p[f"{s[0]}_b{s[1]}"], eps=1e-5)  # noqa: E731
    z = F.relu(gn(F.conv2d(x, p["stem_W"], padding=1), ("stem", "")))
    out = gn(F.conv2d(F.relu(gn(F.conv2d(z, p["s1_W1"], padding=1), ("s1", "1"))), p["s1_W2"], padding=1), ("s1", "2"))
    z = F.relu(out + z)
    out = F.relu(gn(F.conv2d(z, p["s2_W1"], stride=2, padding=1), ("s2", "1")))
    out = gn(F.conv2d(out, p["s2_W2"], padding=1), ("s2", "2"))
    z = F.relu(out + gn(F.conv2d(z, p["s2_Ws"], stride=2), ("s2", "s")))
    logits = z.mean(dim=(-2, -1)) @ p["fc_W"] + p["fc_b"]
    torch.testing.assert_close(one(x)[0], logits, rtol=1e-5, atol=1e-6)
    assert one.attention(x) is None and one.internals(x).features.shape == (1, 6, 8)
