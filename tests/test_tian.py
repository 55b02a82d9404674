"""Tian's attention dynamics: the Scan&Snap and JoMA tasks and models, training on fresh samples, the
analyses and their controls (each control is a case where the measured quantity must come out at a
known value, so an analysis that computed something else would fail)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from pipeline_lib.analysis.attention_sparsity import attention_layers, normalised_entropy
from pipeline_lib.analysis.gradient_rank import stable_rank
from pipeline_lib.analysis.joma import estimate_terms, joma_estimate, normalised_correlation, v_ranks, v_row_norms
from pipeline_lib.analysis.scan_snap import entropy, summarise, token_attention
from pipeline_lib.batches import FreshSamples
from pipeline_lib.engine import train_seeds
from pipeline_lib.models import seed_generator
from pipeline_lib.models.joma import JomaModel
from pipeline_lib.models.scan_snap import ScanSnapModel
from pipeline_lib.plumbing.config import (
    ConfigError,
    OptimizerConfig,
    RunConfig,
    ScheduleConfig,
    TrainingPlan,
    load_config,
)
from pipeline_lib.tasks import joma as joma_task
from pipeline_lib.tasks import scan_snap as ss_task

SS = ss_task.Params(n_test=64)


def _run_cfg(steps=8, batch=16, seeds=(0,), lr=1.0, lr_ratio=(), sweep=(), momentum=0.9, dense=None):
    dense = steps if dense is None else dense
    return RunConfig(name="r", dataset="d", model="m", epochs=steps, seeds=tuple(seeds), batch_size=batch,
                     optimizer=OptimizerConfig(name="sgd", lr=lr, momentum=momentum, lr_ratio=tuple(lr_ratio)),
                     record_weights=ScheduleConfig(dense, 0, 0), record_attention=ScheduleConfig(0, 0, 0),
                     sweep=tuple(sweep), log_every=1000)


def _train_scan_snap(rc, init="zero", params=SS):
    ds = ss_task.generate(params)
    slots = rc.slots()
    seeds = [s["run_seed"] for s in slots]
    model = ScanSnapModel(len(slots), ds.attrs["task_M"], init)
    model.init_seeds(seeds)
    x = torch.as_tensor(ds.x.values)
    gens = [seed_generator(s, "data") for s in seeds]
    source = FreshSamples(ss_task.sampler(ds, gens), rc.batch_size, gens, torch.device("cpu"))
    rec = train_seeds(model, {"x_test": x, "y_test": torch.as_tensor(ds.y.values), "probe_x": x[:4]},
                      TrainingPlan.of(rc, tuple(slots), per_slot=True), torch.device("cpu"), source=source)
    return ds, model, rec


# -- generators --------------------------------------------------------------------------------------

def test_scan_snap_samples_follow_the_class_weights():
    ds = ss_task.generate(SS)
    g = torch.Generator().manual_seed(1)
    n = 4000
    x, y, cls = ss_task.draw(torch.as_tensor(ds.probs.values), torch.as_tensor(ds.last_token.values),
                             torch.as_tensor(ds.next_token.values), n, SS.T, g)
    assert (x[:, -1] == torch.as_tensor(ds.last_token.values)[cls]).all()
    assert (y == torch.as_tensor(ds.next_token.values)[cls]).all()
    assert abs(float((cls == 0).float().mean()) - 0.5) < 4 * np.sqrt(0.25 / n)
    weights = np.r_[np.ones(10), np.linspace(0.1, 1, 10)]
    for c in (0, 1):
        ctx = x[cls == c, :-1].numpy().ravel()
        support = np.r_[np.arange(10), 10 + 10 * c + np.arange(10)]
        counts = np.bincount(ctx, minlength=34)
        assert counts.sum() == counts[support].sum()  # nothing outside the class's support
        p = weights / weights.sum()
        freq = counts[support] / len(ctx)
        assert np.all(np.abs(freq - p) < 5 * np.sqrt(p * (1 - p) / len(ctx)))  # binomial tolerance
    assert ds.attrs["task_M"] == 34 and np.isclose(float(ds.probs[0, :10].sum()), 10 / 15.5)


def test_joma_frequencies():
    X = joma_task.frequencies(joma_task.Params(x="gaussian"))
    assert X.shape == (20, 20) and np.allclose(X.sum(0), 1)
    # the distinct rows are the gaussian bumps, up to each column's normalisation
    bump = np.exp(-((np.arange(10)[:, None] - np.arange(20)[None] * 10 / 20) ** 2) / 30)
    scale = X[:10] / bump
    assert np.allclose(scale, scale[0:1])
    U = joma_task.frequencies(joma_task.Params(x="uniform"))
    assert np.allclose(U.sum(0), 1) and not np.allclose(U[:10] / bump, (U[:10] / bump)[0:1])


def test_joma_draws_give_each_seed_its_own_x_and_keep_the_shared_x_unchanged():
    shared = joma_task.generate(joma_task.Params(x="uniform"))
    assert np.array_equal(shared.X.values, joma_task.frequencies(joma_task.Params(x="uniform")))
    ds = joma_task.generate(joma_task.Params(x="uniform", draws=3))
    assert ds.X.dims == ("x_draw", "token", "class") and ds.xbar.shape == (3, 20)
    assert not np.allclose(ds.X[0], ds.X[1]) and np.allclose(ds.X.sum("token"), 1)
    for i in range(3):  # draw i's training rows are its K samples, X[:, k] with label k
        rows = (ds.draw == i).values
        assert np.array_equal(ds.x.values[rows], ds.X.values[i].T) and np.array_equal(ds.y.values[rows], np.arange(20))
    assert np.allclose(ds.xbar.values, ds.X.values.mean(-1))
    test = (ds.split == "test").values
    assert np.array_equal(ds.x.values[test], ds.X.values[0].T)


def test_joma_analysis_gives_each_slot_its_draws_xbar():
    from pipeline_lib.analysis.joma import slot_xbar

    ds = joma_task.generate(joma_task.Params(draws=3))
    # a run of seeds (4, 7, 9): seed 7 is the run's second seed, so it trains on (and is read with) draw 1
    assert np.array_equal(slot_xbar(ds, np.array([7, 9, 4]), (4, 7, 9)), ds.xbar.values[[1, 2, 0]])
    shared = joma_task.generate(joma_task.Params())
    assert slot_xbar(shared, np.array([0, 1]), (0, 1)).shape == (20,)


@pytest.mark.parametrize("kind", ["exp", "linear"])
def test_joma_unnormalised_attention_matches_the_talks_formula(kind):
    Mc, d, K, T = 5, 8, 4, 0.5
    model = JomaModel(1, Mc, d, K, T, init_std=0.3, attention=kind).double()
    model.init_seeds([3])
    X = torch.rand(Mc, K, dtype=torch.float64) + 0.1
    b = model.internals(X.T).attention[0]
    z = model.z[0].detach()
    want = X.T * (torch.exp(z / T) if kind == "exp" else z / T)  # b_l = x_l e^{z_l/T} or x_l z_l/T
    torch.testing.assert_close(b.detach(), want)


@pytest.mark.parametrize("kind", ["exp", "linear"])
def test_joma_invariants_hold_under_small_steps_and_the_other_form_does_not(kind):
    """Theorem 1's exp/linear invariant with two step sizes (rho = eta_z/eta_W = 3) on a short float64 SGD run at
    a small step (close to the gradient flow): the gap stays under 1% of z's movement; the other kind's form and
    the unscaled (rho = 1) form do not."""
    from pipeline_lib.analysis.joma import estimate_terms, invariant_sides

    Mc, d, K, T, rho = 6, 9, 5, 0.5, 3.0
    model = JomaModel(1, Mc, d, K, T, init_std=0.3, attention=kind).double()
    model.init_seeds([0])
    X = torch.rand(Mc, K, dtype=torch.float64, generator=torch.Generator().manual_seed(0)) + 0.1
    X = X / X.sum(0)
    opt = torch.optim.SGD([{"params": [model.z], "lr": 0.02 * rho}, {"params": [model.W], "lr": 0.02}])
    zs, Ws = [], []
    for _ in range(400):
        zs.append(model.z.detach().clone().numpy())
        Ws.append(model.W.detach().clone().numpy())
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(X.T)[0], torch.arange(K)).backward()
        opt.step()
    z, W = np.stack(zs), np.stack(Ws)
    zhat1 = estimate_terms(W, model.embeddings().numpy().astype(np.float64), np.zeros(Mc), T)[0]

    def violation(form, r):  # as a share of the movement of that form's own left side
        lhs, rhs = invariant_sides(form, z, zhat1, T, np.array([r]))
        return np.linalg.norm(lhs - rhs, axis=-1).max() / np.linalg.norm(lhs - lhs[0], axis=-1).max()

    other = "linear" if kind == "exp" else "exp"
    assert violation(kind, rho) < 0.01
    assert violation(other, rho) > 0.1 and violation(kind, 1.0) > 0.1


def test_joma_flow_steps_stop_at_the_first_rise_of_the_loss():
    from pipeline_lib.analysis.joma import flow_steps

    loss = np.array([[3.0, 2.9, 2.8, 2.85, 2.0], [3.0, 2.0, 1.0, 0.5, 0.4], [3.0, 3.0 * (1 + 1e-7), 2.0, 1.0, 0.5],
                     [3.0, 2.0, np.nan, np.nan, np.nan]])
    # a rise at step 3; never (the whole run: 4 steps); a rise below float32 resolution does not count; a loss that
    # is no longer finite ends the flow
    assert flow_steps(loss).tolist() == [2, 4, 4, 1]


# -- models against the per-sample formulas (float64) ----------------------------------------------------

def test_scan_snap_model_matches_the_per_sample_formula():
    torch.manual_seed(0)
    M, T = 9, 6
    model = ScanSnapModel(2, M, "uniform").double()
    model.init_seeds([0, 1])
    x = torch.randint(0, M, (2, 5, T))
    y = torch.randint(0, M, (2, 5))
    logits = model(x)
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, M), y.reshape(-1), reduction="sum")
    loss.backward()
    for s in range(2):
        Z, Y = model.Z[s].detach().clone().requires_grad_(), model.Y[s].detach().clone().requires_grad_()
        total = 0
        for b in range(5):
            seq = x[s, b]
            a = torch.softmax(torch.stack([Z[seq[-1], seq[t]] for t in range(T - 1)]), 0)
            h = sum(a[t] * torch.nn.functional.one_hot(seq[t], M).double() for t in range(T - 1))
            h = h / h.norm()
            out = Y @ h
            torch.testing.assert_close(out, logits[s, b])
            total = total - torch.log_softmax(out, 0)[y[s, b]]
        total.backward()
        torch.testing.assert_close(Z.grad, model.Z.grad[s])
        torch.testing.assert_close(Y.grad, model.Y.grad[s])


def test_joma_model_matches_the_per_sample_formula():
    Mc, d, K, T = 5, 8, 4, 0.5
    model = JomaModel(2, Mc, d, K, T, init_std=0.3).double()
    model.init_seeds([0, 1])
    X = torch.rand(Mc, K, dtype=torch.float64) + 0.1
    X = X / X.sum(0)
    logits = model(X.T)
    # the engine's loss: the sum over seeds of each seed's mean
    (torch.nn.functional.cross_entropy(logits.reshape(-1, K), torch.arange(K).repeat(2), reduction="sum") / K).backward()
    for s in range(2):
        z, W = model.z[s].detach().clone().requires_grad_(), model.W[s].detach().clone().requires_grad_()
        total = 0
        for k in range(K):
            b = torch.exp(z / T) * X[:, k]
            b = b / b.sum()
            f = torch.zeros(d, dtype=torch.float64)
            f[:Mc] = b
            f[Mc] = 1.0  # the query's embedding, the residual
            out = f @ W
            torch.testing.assert_close(out, logits[s, k])
            total = total - torch.log_softmax(out, 0)[k]
        (total / K).backward()
        torch.testing.assert_close(z.grad, model.z.grad[s])
        torch.testing.assert_close(W.grad, model.W.grad[s])


# -- optimizer and fresh-sample training----------------------------------------------------------------------

def test_batched_seeds_and_sweep_cells_equal_separate_runs():
    rc = _run_cfg(steps=5, seeds=(0, 1, 2), sweep=(("lr", (0.5, 2.0)), ("lr_ratio.Y", (1.0, 5.0))))
    _, model, rec = _train_scan_snap(rc, init="uniform")
    slots = rc.slots()
    assert len(slots) == 12
    assert {k: slots[4][k] for k in ("run_seed", "lr", "lr_ratio")} == {"run_seed": 1, "lr": 0.5, "lr_ratio": {"Y": 5.0}}
    for i in (0, 4, 11):
        s = slots[i]
        alone = _run_cfg(steps=5, seeds=(s["run_seed"],), lr=s["lr"], lr_ratio=tuple(s["lr_ratio"].items()))
        _, m1, r1 = _train_scan_snap(alone, init="uniform")
        torch.testing.assert_close(m1.Z[0], model.Z[i], rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(m1.Y[0], model.Y[i], rtol=1e-5, atol=1e-6)
        assert np.allclose(r1.train_loss[0], rec.train_loss[i], rtol=1e-5)


def test_scan_snap_training_reduces_the_loss_from_ln_M():
    _, _, rec = _train_scan_snap(_run_cfg(steps=10, seeds=(0, 1)))
    assert np.allclose(rec.train_loss[:, 0], np.log(34), atol=1e-5)  # zero init: uniform logits
    assert (rec.train_loss[:, -1] < 0.5).all()


# -- controls -----------------------------------------------------------------------------------------

def test_zero_init_gives_z_an_exactly_zero_first_gradient():
    ds = ss_task.generate(SS)
    model = ScanSnapModel(2, 34, "zero")
    model.init_seeds([0, 1])
    x, y = ss_task.sampler(ds, [seed_generator(s, "data") for s in (0, 1)])(32)
    torch.nn.functional.cross_entropy(model(x).reshape(-1, 34), y.reshape(-1)).backward()
    assert torch.count_nonzero(model.Z.grad) == 0 and torch.count_nonzero(model.Y.grad) > 0


def test_lr_z_zero_keeps_the_distinct_entropy_at_its_initial_value():
    rc = _run_cfg(steps=10, seeds=(0, 1), lr_ratio=(("Z", 0.0),))
    ds, model, rec = _train_scan_snap(rc)
    c = token_attention(rec.weights["Z"].astype(np.float64), ds.probs.values, ds.last_token.values)
    ent = summarise(c, ds.distinct.values, ds.common.values)["distinct_entropy"]  # (step, seed)
    init = entropy(np.linspace(0.1, 1, 10) / np.linspace(0.1, 1, 10).sum())
    assert np.isclose(init, 2.151, atol=5e-4)
    assert np.allclose(ent, init, atol=1e-9)
    # and with lr_Z = 1 it moves (so the check above can fail)
    _, _, rec1 = _train_scan_snap(_run_cfg(steps=10, seeds=(0, 1)))
    c1 = token_attention(rec1.weights["Z"].astype(np.float64), ds.probs.values, ds.last_token.values)
    assert (summarise(c1, ds.distinct.values, ds.common.values)["distinct_entropy"][-1] < init - 0.01).all()


def test_token_attention_at_zero_z_is_the_class_distribution():
    ds = ss_task.generate(SS)
    c = token_attention(np.zeros((34, 34)), ds.probs.values, ds.last_token.values)
    assert np.allclose(c, ds.probs.values)
    parts = summarise(c, ds.distinct.values, ds.common.values)
    assert np.allclose(parts["common_mass"], 10 / 15.5) and np.allclose(parts["top_distinct"], 1 / 15.5)


def test_entropy_of_uniform_attention_is_one_and_of_one_hot_zero():
    uniform = torch.full((2, 3, 7), 1 / 7)
    one_hot = torch.nn.functional.one_hot(torch.randint(0, 7, (2, 3)), 7).float()
    torch.testing.assert_close(normalised_entropy(uniform), torch.ones(2, 3))
    torch.testing.assert_close(normalised_entropy(one_hot), torch.zeros(2, 3))
    # a circuit-style (S, B, keys) tensor becomes one layer of one head and one query
    assert attention_layers(uniform)[0].shape == (2, 3, 1, 1, 7)


def test_joma_estimate_on_a_hand_computed_case():
    # d = 3, M_c = 2, K = 2, U = [I; 0], T = 0.5: V = W[:2]
    W = np.array([[1.0, 2.0], [0.0, 1.0], [3.0, 0.0]])
    xbar = np.array([0.25, 0.75])
    z1, z2 = estimate_terms(W, np.eye(3, 3), xbar, 0.5)
    assert np.allclose(z1, [5.0, 1.0])  # (1 + 4) / 1, (0 + 1) / 1
    assert np.allclose(z2, [-0.25 * 15, -0.75 * 15])  # |W|_F^2 = 15
    z = np.array([[0.1, 0.2], [0.5, 0.7]])
    est = joma_estimate(z, np.stack([np.zeros_like(W), W]), np.eye(3, 3), xbar, 0.5)
    assert np.allclose(est["zhat"][0], z[0])  # C makes zhat(0) = z(0)
    assert np.allclose(est["zhat"][1], z[0] + np.array([5.0 - 3.75, 1.0 - 11.25]))
    assert np.isclose(normalised_correlation(np.array([1.0, 2, 3]), np.array([2.0, 4, 6])), 1.0)
    assert np.isclose(normalised_correlation(np.array([1.0, 2, 3]), np.array([3.0, 2, 1])), -1.0)


def test_joma_estimate_tracks_z_and_a_shuffled_v_does_not():
    Mc, d, K = 20, 30, 20
    X = torch.as_tensor(joma_task.frequencies(joma_task.Params(x="gaussian")), dtype=torch.float32)
    model = JomaModel(1, Mc, d, K, 0.5)
    model.init_seeds([0])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    zs, Ws = [], []
    for _ in range(2000):
        zs.append(model.z.detach().clone().numpy())
        Ws.append(model.W.detach().clone().numpy())
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(X.T)[0], torch.arange(K)).backward()
        opt.step()
    z, W = np.stack(zs).astype(np.float64), np.stack(Ws).astype(np.float64)
    U, xbar = model.embeddings().numpy().astype(np.float64), X.numpy().mean(1).astype(np.float64)
    est = joma_estimate(z, W, U, xbar, 0.5)
    assert est["nc"][-1, 0] > 0.95
    rng = np.random.default_rng(0)
    shuffled = []
    for _ in range(200):  # the estimate built for the wrong tokens: V's token rows and xbar permuted alike
        perm = rng.permutation(Mc)
        ends = [0, -1]  # step 0 sets C; the last step is compared
        shuffled.append(joma_estimate(z[ends], W[ends][:, :, np.r_[perm, np.arange(Mc, d)]], U, xbar[perm], 0.5)["nc"][-1, 0])
    # a permuted vector's centred cosine with a fixed one has mean 0 (std ~ 1/sqrt(M_c - 1) per draw, so
    # ~0.016 for the mean of 200): 0.1 is six of those
    assert abs(np.mean(shuffled)) < 0.1


# -- config ------------------------------------------------------------------------------------------

def _raw(run_extra: dict, task="scan_snap"):
    dataset = {"task": "scan_snap", "T": 8, "n_test": 8} if task == "scan_snap" else \
        {"task": "sparse_modular_addition", "p": 2, "T": 4, "k": 2, "n_train": 8, "n_test": 8}
    model = {"kind": "scan_snap"} if task == "scan_snap" else {"kind": "circuit", "d": 4}
    run = {"dataset": "d", "model": "m", "epochs": 2, "batch_size": 4, "optimizer": {"name": "sgd", "lr": 1.0}}
    run.update(run_extra)
    return {"device": "cpu", "datasets": {"d": dataset}, "models": {"m": model}, "runs": {"r": run}}


@pytest.mark.parametrize("task,extra,words", [
    ("scan_snap", {"optimizer": {"name": "adam"}, "sweep": {"lr": [1.0, 2.0]}}, ["runs.r.optimizer.name", "sgd"]),
    ("scan_snap", {"batch_size": "full"}, ["runs.r.batch_size", "fresh samples"]),
    ("sma", {"optimizer": {"name": "adam"}, "sweep": {"momentum": [0.0, 0.9]}}, ["runs.r.sweep.momentum", "sgd"]),
    ("sma", {"sweep": {}}, ["runs.r.sweep"]),
    ("scan_snap", {"sweep": {"lr": [-1.0]}}, ["runs.r.sweep.lr"]),
])
def test_bad_online_settings_fail_naming_the_key(task, extra, words):
    with pytest.raises(ConfigError) as err:
        load_config(_raw(extra, task))
    assert all(w in str(err.value) for w in words), str(err.value)


def test_a_ratio_for_a_parameter_the_model_lacks_names_the_key():
    with pytest.raises(ConfigError, match=r"runs\.r\.optimizer\.lr_ratio\.Q.*allowed: Y, Z"):
        load_config(_raw({"optimizer": {"name": "sgd", "lr": 1.0, "lr_ratio": {"Q": 2.0}}}))
    with pytest.raises(ValueError, match="lr_ratio.*Q"):  # and the trainer too, for a config built by hand
        _train_scan_snap(_run_cfg(steps=1, lr_ratio=(("Q", 2.0),)))


def test_v_ranks_are_one_for_a_rank_one_v_and_track_the_change_per_step():
    rng = np.random.default_rng(0)
    U = np.eye(8, 6)  # d = 8, M_c = 5 context tokens and the query
    u, w = rng.normal(size=5), rng.normal(size=4)
    W = np.zeros((3, 2, 8, 4))  # (step, seed, d, K)
    W[1, :, :5] = np.outer(u, w)  # rank one
    W[2, :, :5] = np.outer(u, w) + rng.normal(size=(5, 4))  # full rank after a random step
    W[:, :, 5:] = rng.normal(size=(3, 2, 3, 4))  # rows outside the context tokens are not V's
    v, vdot = v_ranks(W, U, 5)
    assert np.isnan(v[0]).all() and np.allclose(v[1], 1.0) and (v[2] > 1.5).all()
    assert np.isnan(vdot[0]).all() and np.allclose(vdot[1], 1.0) and (vdot[2] > 1.5).all()
    rows = v_row_norms(W, U, 5)  # (step, seed, M_c): the rows of V = U_c^T W, the rows outside the context not read
    assert rows.shape == (3, 2, 5) and np.allclose(rows[1, 0], np.abs(u) * np.linalg.norm(w))
    assert np.allclose(rows[2, 1], np.linalg.norm(W[2, 1, :5], axis=-1)) and (rows[0] == 0).all()
    M = rng.normal(size=(6, 6))
    sv = np.linalg.svd(M, compute_uv=False)
    assert float(stable_rank(torch.as_tensor(M))) == pytest.approx((sv**2).sum() / sv[0] ** 2)
