"""Tian's algebra of solutions: the modular-addition task, the quadratic MLP and its centred MSE, the
Fourier analysis and the factorisation of order-4/6 solutions, and GaLore. Every check compares with
an independent formula or a constructed case whose answer is known."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from pipeline_lib.analysis import fourier
from pipeline_lib.analysis.gradient_rank import picked, stable_rank
from pipeline_lib.engine import train_seeds
from pipeline_lib.models.quadratic_mlp import QuadraticMLP
from pipeline_lib.optimizers import galore_adam
from pipeline_lib.optimizers.galore_adam import GaLoreAdam, build, is_matrix
from pipeline_lib.plumbing.config import (
    ConfigError,
    OptimizerConfig,
    RunConfig,
    ScheduleConfig,
    TrainingPlan,
    load_config,
)
from pipeline_lib.slot_optim import optimizer_state_size
from pipeline_lib.tasks import modular_addition as ma

# -- task ----------------------------------------------------------------------------------------------

def test_dataset_holds_every_pair_once_split_disjoint_with_the_right_labels():
    ds = ma.generate(ma.Params(d=11, train_fraction=0.9, seed=3))
    x, y, split = ds.x.values, ds.y.values, ds.split.values
    assert len(x) == 121 and len({tuple(p) for p in x}) == 121  # every pair, once
    assert (split == "train").sum() == round(0.9 * 121) and (split == "test").sum() == 121 - round(0.9 * 121)
    np.testing.assert_array_equal(y, (x[:, 0] + x[:, 1]) % 11)
    other = ma.generate(ma.Params(d=11, train_fraction=0.9, seed=4))
    assert not np.array_equal(other.x.values, x)  # the split depends on the seed


# -- model and loss --------------------------------------------------------------------------------------

def _direct(Wa, Wb, Wc, x, y):
    """float64 per-sample loss and its gradient, written out by hand (no autograd)."""
    d = Wa.shape[1]
    B = len(x)
    gA, gB, gC = np.zeros_like(Wa), np.zeros_like(Wb), np.zeros_like(Wc)
    loss = 0.0
    P = np.eye(d) - 1.0 / d
    for (a, b), c in zip(x, y):
        pre = Wa[:, a] + Wb[:, b]
        h = pre ** 2
        o = Wc @ h
        t = np.eye(d)[c] - 1.0 / d
        r = P @ o - t
        loss += r @ r / B
        # the reference's form of the same loss: |o_zm|^2 - 2 o_zm[c] + 1 - 1/d
        o_zm = o - o.mean()
        assert np.isclose(r @ r, o_zm @ o_zm - 2 * o_zm[c] + 1 - 1.0 / d)
        g_o = 2.0 / B * r  # r is already centred, so P r = r
        gC += np.outer(g_o, h)
        g_pre = 2 * pre * (Wc.T @ g_o)
        gA[:, a] += g_pre
        gB[:, b] += g_pre
    return loss, gA, gB, gC


def test_model_loss_and_gradient_match_the_direct_formula():
    d, q, S = 7, 16, 2
    model = QuadraticMLP(S, d, q).double()
    model.init_seeds([0, 1])
    x, y = ma.all_pairs(d)
    x, y = x[::3], y[::3]
    loss, acc = model.loss_acc(model(torch.as_tensor(x)), torch.as_tensor(y))
    loss.sum().backward()
    for s in range(S):
        Wa, Wb, Wc = (getattr(model, n)[s].detach().numpy() for n in ("W_a", "W_b", "W_c"))
        ref, gA, gB, gC = _direct(Wa, Wb, Wc, x, y)
        assert loss[s].item() == pytest.approx(ref, rel=1e-12)
        np.testing.assert_allclose(model.W_a.grad[s].numpy(), gA, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(model.W_b.grad[s].numpy(), gB, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(model.W_c.grad[s].numpy(), gC, rtol=1e-10, atol=1e-12)
        o = Wc @ ((Wa[:, x[:, 0]] + Wb[:, x[:, 1]]) ** 2)
        assert acc[s].item() == pytest.approx(np.mean(o.argmax(0) == y))


def test_init_is_uniform_within_one_over_sqrt_fan_in_and_per_seed():
    model = QuadraticMLP(2, 23, 512)
    model.init_seeds([5, 6])
    for name, fan_in in (("W_a", 23), ("W_b", 23), ("W_c", 512)):
        w = getattr(model, name).detach()
        assert w.abs().max() <= 1 / np.sqrt(fan_in) and w.abs().max() > 0.95 / np.sqrt(fan_in)
    alone = QuadraticMLP(1, 23, 512)
    alone.init_seeds([6])
    torch.testing.assert_close(alone.W_c[0], model.W_c[1], rtol=0, atol=0)


def _rc(epochs=30, seeds=(0, 1, 2), opt=None):
    return RunConfig(name="r", dataset="d", model="m", epochs=epochs, seeds=tuple(seeds), batch_size="full",
                     optimizer=opt or OptimizerConfig(name="adam", lr=1e-2, weight_decay=5e-5),
                     record_weights=ScheduleConfig(0, 0, 10), record_attention=ScheduleConfig(0, 0, 0), log_every=1000,
                     checkpoint_every=0)


def _tensors(d=7):
    ds = ma.generate(ma.Params(d=d))
    tr = ds.split.values == "train"
    x, y = torch.as_tensor(ds.x.values), torch.as_tensor(ds.y.values)
    return {"x_train": x[tr], "y_train": y[tr], "x_test": x[~tr], "y_test": y[~tr], "probe_x": x[~tr][:4]}


DIMS = {"W_a": ("hidden", "token"), "W_b": ("hidden", "token"), "W_c": ("class", "hidden")}


def _train(seeds, opt=None, epochs=30):
    torch.set_num_threads(1)
    model = QuadraticMLP(len(seeds), 7, 16)
    model.init_seeds(list(seeds))
    rec = train_seeds(model, _tensors(), TrainingPlan.of(_rc(epochs, seeds, opt)), torch.device("cpu"),
                      param_dims=DIMS)
    return model, rec


@pytest.mark.parametrize("opt", [None, OptimizerConfig(name="galore_adam", lr=1e-2, weight_decay=5e-5,
                                                        options=(("rank", 3), ("update_gap", 7)))])
def test_batched_seeds_equal_sequential_training(opt):
    _, together = _train([0, 1, 2], opt)
    assert together.attention is None  # the model has no attention to record
    assert np.abs(together.train_loss[:, -1] - together.train_loss[:, 0]).min() > 0.05  # training moved
    for i, seed in enumerate([0, 1, 2]):
        _, alone = _train([seed], opt)
        np.testing.assert_allclose(together.train_loss[i], alone.train_loss[0], rtol=1e-5, atol=1e-7)
        for name, w in together.weights.items():
            np.testing.assert_allclose(w[:, i], alone.weights[name][:, 0], rtol=1e-4, atol=1e-6)


# -- Fourier analysis ---------------------------------------------------------------------------------------

def test_fourier_coefficients_match_numpys_fft_and_a_pure_cosine():
    rng = np.random.default_rng(0)
    d, q = 11, 5
    Wa, Wb, Wc = rng.normal(size=(q, d)), rng.normal(size=(q, d)), rng.normal(size=(d, q))
    A, B, C = fourier.fourier_coefficients(Wa, Wb, Wc)
    np.testing.assert_allclose(A, np.fft.fft(Wa, axis=1).T / d, atol=1e-12)
    np.testing.assert_allclose(B, np.fft.fft(Wb, axis=1).T / d, atol=1e-12)
    np.testing.assert_allclose(C, np.fft.ifft(Wc, axis=0), atol=1e-12)
    # node 0 a pure cosine of frequency 3 and amplitude 0.4: |A[3]| = |A[d-3]| = 0.2, nothing else
    m = np.arange(d)
    Wa[0] = 0.4 * np.cos(2 * np.pi * 3 * m / d + 0.7)
    A, _, _ = fourier.fourier_coefficients(Wa, Wb, Wc)
    expected = np.zeros(d)
    expected[[3, d - 3]] = 0.2
    np.testing.assert_allclose(np.abs(A[:, 0]), expected, atol=1e-12)
    assert fourier.orders(A[:, :1], 0.05).tolist() == [0, 0, 1, 0, 0]
    assert fourier.node_frequencies(A[:, :1], 0.05).tolist() == [3]


def _product(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The product '*' of partial solutions: columns u_a (.) v_b, a-major (3 x (2 * v's columns))."""
    return np.concatenate([u[:, [a]] * v for a in range(u.shape[1])], axis=1)


XI = np.exp(1j * np.pi / 4)
W3 = np.exp(2j * np.pi / 3)
NU = np.exp(1j * np.pi / 5)
ORDER4 = _product(np.array([[1, 1j], [1, -1j], [1, 1]]), np.array([[1, XI], [1, 1 / (XI * 1j)], [1, 1j]]))
ORDER6 = _product(np.array([[1, NU], [1, -NU], [1, -1 / NU ** 2]]), np.array([[1, W3, W3.conjugate()]] * 3))


def _scramble(F: np.ndarray, seed: int) -> np.ndarray:
    """What a trained network shows: nodes in any order, a complex scale per row, and (-1, -1, 1)
    sign flips of some nodes (they leave a node's contribution unchanged)."""
    rng = np.random.default_rng(seed)
    F = F[:, rng.permutation(F.shape[1])] * (rng.uniform(0.5, 2, (3, 1)) * np.exp(1j * rng.uniform(0, 6.28, (3, 1))))
    flip = rng.random(F.shape[1]) < 0.5
    F[:2, flip] *= -1
    return F


@pytest.mark.parametrize("F,kind", [(ORDER4, "nu_i*xi"), (ORDER6, "nu*syn")])
def test_a_constructed_solution_factorises_with_zero_error_and_its_type(F, kind):
    for seed in range(3):
        err, ok, found = fourier.factorise(_scramble(F, seed))
        assert err < 1e-9 and ok and found == kind, (seed, err, found)


@pytest.mark.parametrize("F", [ORDER4, ORDER6])
def test_the_error_grows_with_a_perturbation(F):
    rng = np.random.default_rng(1)
    noise = rng.normal(size=F.shape) + 1j * rng.normal(size=F.shape)
    errs = [fourier.factorise(_scramble(F, 0) + eps * noise)[0] for eps in (0.0, 1e-3, 1e-2)]
    assert errs[0] < 1e-9 and errs[1] > 1e-5, errs
    assert 3 < errs[2] / errs[1] < 30, errs  # small perturbations: the error grows in proportion (to first order)
    assert not fourier.factorise(F + 0.5 * noise)[1]  # far from the construction: not factorable


def test_analysis_finds_the_planted_frequencies_and_the_table_counts_them():
    """Weights whose Fourier coefficients are planted: frequency 1 of order 4 (ORDER4), frequency 2 of
    order 6 (ORDER6), frequency 3 of order 5 (not 4/6), the rest empty; d = 9 (4 frequencies)."""
    d, q = 9, 20
    A = np.zeros((d, q), complex)
    B, C = A.copy(), A.copy()
    blocks = [(1, _scramble(ORDER4, 0)), (2, _scramble(ORDER6, 1)), (3, 0.3 * np.ones((3, 5)))]
    col = 0
    for k, F in blocks:
        F = F / np.abs(F).max() * 0.3
        for row, X in enumerate((A, B, C)):
            X[k, col:col + F.shape[1]] = F[row]
        col += F.shape[1]
    # real weights whose transform is (A, B, C): put the conjugate at d - k
    for X in (A, B, C):
        X[d - np.arange(1, 5)] = X[1:5].conj()
    m = np.arange(d)
    E = np.exp(2j * np.pi * np.outer(m, m) / d)
    Wa, Wb = (np.real(E @ X).T for X in (A, B))  # W[j, m] = sum_k A[k, j] e^{2 pi i m k / d}
    Wc = np.real(E.conj() @ C) * 1.0  # W_c[m, j] = sum_k C[k, j] e^{-2 pi i m k / d}
    A2, B2, C2 = fourier.fourier_coefficients(Wa, Wb, Wc)
    np.testing.assert_allclose(A2, A, atol=1e-12)
    np.testing.assert_allclose(C2, C, atol=1e-12)
    res = fourier.analyse(A2, B2, C2, 0.05, 0.1)
    assert res["q_k"].tolist() == [4, 6, 5, 0]
    assert res["sol_type"].tolist()[:2] == [fourier.TYPES.index("nu_i*xi"), fourier.TYPES.index("nu*syn")]
    assert res["fact_error"][0] < 1e-9 and res["fact_error"][1] < 1e-9 and np.isnan(res["fact_error"][2:]).all()
    row = fourier.table_row(res["q_k"], res["fact_error"], res["factorable"], res["sol_type"])
    assert row["pct_not_46"] == 25.0  # frequency 3 (order 5) of 4
    assert row["nonfact_4"] == 0 and row["nonfact_6"] == 0
    assert row["sol_nu_i*xi"] == 50 and row["sol_nu*syn"] == 50 and row["sol_other"] == 0


# -- GaLore -------------------------------------------------------------------------------------------------

def _params(seed=0, shapes=((3, 6, 4), (3, 4, 6), (3, 5))):
    g = torch.Generator().manual_seed(seed)
    return [torch.nn.Parameter(torch.randn(s, generator=g)) for s in shapes]


def _steps(opt, params, n=5, seed=1):
    g = torch.Generator().manual_seed(seed)
    for _ in range(n):
        for p in params:
            p.grad = torch.randn(p.shape, generator=g)
        opt.step()


def test_galore_at_full_rank_with_an_sgd_base_is_sgd():
    a, b = _params(), _params()
    _steps(GaLoreAdam(a, lr=0.1, rank=100, update_gap=2, scale=1.0, base="sgd"), a)  # projector renewed twice
    _steps(torch.optim.SGD(b, lr=0.1), b)
    for x, y in zip(a, b):
        torch.testing.assert_close(x, y, rtol=1e-5, atol=1e-6)
    c = _params()
    _steps(GaLoreAdam(c, lr=0.1, rank=1, update_gap=2, scale=1.0, base="sgd"), c)
    assert not torch.allclose(c[0], b[0], atol=1e-3)  # a real projection (rank 1) is not SGD


def test_galore_adam_on_a_projected_gradient_follows_the_formula():
    """One step on a (1, 6, 4) matrix: R = G Vh[:r]^T, Adam's first (bias-corrected) step is
    lr R / (|R| + eps'), projected back and scaled."""
    p = torch.nn.Parameter(torch.zeros(1, 6, 4, dtype=torch.float64))
    G = torch.randn(1, 6, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    p.grad = G.clone()
    GaLoreAdam([p], lr=0.1, rank=2, scale=0.25, eps=1e-6).step()
    _, _, Vh = torch.linalg.svd(G[0], full_matrices=False)
    P = Vh[:2]
    R = G[0] @ P.T
    # the reference adds eps to sqrt(v) before the bias correction: eps / sqrt(1 - beta2) after it
    expected = -0.1 * 0.25 * (R / (R.abs() + 1e-6 / np.sqrt(1 - 0.999))) @ P
    torch.testing.assert_close(p[0].detach(), expected)


def test_galore_state_has_the_rank_r_shapes():
    params = _params(shapes=((3, 6, 4), (3, 4, 6), (3, 5), (3, 1, 2, 8, 4)))
    opt = GaLoreAdam(params, lr=0.1, rank=2)
    _steps(opt, params, n=1)
    st = [opt.state[p] for p in params]
    assert st[0]["projector"].shape == (3, 2, 4) and st[0]["exp_avg"].shape == (3, 6, 2)  # m >= n: right
    assert st[1]["projector"].shape == (3, 4, 2) and st[1]["exp_avg"].shape == (3, 2, 6)  # m < n: left
    assert "projector" not in st[2] and st[2]["exp_avg"].shape == (3, 5)  # a vector: plain Adam
    assert st[3]["projector"].shape == (3, 1, 2, 2, 4)  # a stack of per-head matrices
    size = optimizer_state_size(opt)
    adam = torch.optim.Adam(_params(shapes=((3, 6, 4), (3, 4, 6), (3, 5), (3, 1, 2, 8, 4))))
    for p in adam.param_groups[0]["params"]:
        p.grad = torch.ones_like(p)
    adam.step()
    assert size["elements"] < optimizer_state_size(adam)["elements"]
    assert size["bytes"] == 4 * size["elements"]


def test_galore_projects_matrices_by_their_dim_names():
    assert is_matrix(("hidden", "token")) and is_matrix(("layer", "head", "d_model", "d_head"))
    assert not is_matrix(("layer", "d_model")) and not is_matrix(("d_model",))
    params = _params(shapes=((2, 1, 8), (2, 8, 4)))
    opt = build(params, OptimizerConfig(name="galore_adam", lr=0.1, options=(("rank", 2),)),
                [("layer", "d_model"), ("d_model", "d_mlp")])
    _steps(opt, params, n=1)
    assert "projector" not in opt.state[params[0]] and opt.state[params[1]]["projector"].shape == (2, 2, 4)


def test_the_projector_is_recomputed_every_update_gap_steps():
    p = _params(shapes=((1, 6, 4),))
    opt = GaLoreAdam(p, lr=0.1, rank=2, update_gap=3)
    seen = []
    g = torch.Generator().manual_seed(0)
    for _ in range(7):
        p[0].grad = torch.randn(p[0].shape, generator=g)
        opt.step()
        seen.append(opt.state[p[0]]["projector"].clone())
    changed = [not torch.equal(a, b) for a, b in zip(seen, seen[1:])]
    assert changed == [False, False, True, False, False, True]  # steps 0, 3, 6


# -- gradient rank --------------------------------------------------------------------------------------------

def test_stable_rank_of_known_matrices():
    eye = torch.eye(5, dtype=torch.float64)[None]
    assert stable_rank(eye).item() == pytest.approx(5.0)
    u = torch.randn(6, 1, dtype=torch.float64)
    assert stable_rank((u @ u.T)[None]).item() == pytest.approx(1.0)
    assert stable_rank(torch.diag(torch.tensor([2.0, 1.0], dtype=torch.float64))[None]).item() == pytest.approx(1.25)
    assert picked(100, 5).tolist() == [0, 25, 50, 74, 99] and picked(3, 40).tolist() == [0, 1, 2]


# -- config -------------------------------------------------------------------------------------------------

def _raw(opt):
    return {"device": "cpu", "datasets": {"d": {"task": "modular_addition", "d": 7}},
            "models": {"m": {"kind": "quadratic_mlp", "q": 8}},
            "runs": {"r": {"dataset": "d", "model": "m", "epochs": 2, "n_probe": 4, "optimizer": opt}}}


def test_galore_keys_are_read_into_the_optimizer_options():
    cfg = load_config(_raw({"name": "galore_adam", "rank": 3, "scale": 0.5}))
    assert dict(cfg.runs["r"].optimizer.options) == {"rank": 3, "scale": 0.5}
    assert "rank" not in load_config(_raw({"name": "adam"})).raw["runs"]["r"]["optimizer"]  # no default leaks


@pytest.mark.parametrize("opt,words", [
    ({"name": "adam", "rank": 4}, ["runs.r.optimizer.rank", "galore_adam"]),
    ({"name": "galore_adam"}, ["runs.r.optimizer", "rank"]),
    ({"name": "galore_adam", "rank": 0}, ["runs.r.optimizer.rank"]),
    ({"name": "lion"}, ["runs.r.optimizer.name", "galore_adam"]),
])
def test_bad_optimizer_settings_fail_naming_the_key(opt, words):
    with pytest.raises(ConfigError) as err:
        load_config(_raw(opt))
    assert all(w in str(err.value) for w in words), str(err.value)


def test_attention_entropy_of_a_model_without_attention_is_refused_at_config_time(smoke_raw):
    smoke_raw["analyses"]["attention_sparsity"]["runs"].append("cogo_d7")
    with pytest.raises(ConfigError, match="analyses.attention_sparsity.runs.*cogo_d7.*without attention"):
        load_config(smoke_raw)


def test_per_head_slices_are_projected_as_one_matrix():
    dims_q, dims_o = ("layer", "head", "d_model", "d_head"), ("layer", "head", "d_head", "d_model")
    t = torch.randn(3, 1, 4, 8, 2)  # (seed, layer, head, d_model, d_head)
    m = galore_adam.to_matrix(t, dims_q)
    assert m.shape == (3, 1, 8, 8)
    torch.testing.assert_close(m[:, :, :, 2:4], t[:, :, 1])  # head 1's columns, side by side with the others
    torch.testing.assert_close(galore_adam.from_matrix(m, dims_q, t.shape), t)
    o = torch.randn(3, 1, 4, 2, 8)
    assert galore_adam.to_matrix(o, dims_o).shape == (3, 1, 8, 8)
    torch.testing.assert_close(galore_adam.from_matrix(galore_adam.to_matrix(o, dims_o), dims_o, o.shape), o)
    params = [torch.nn.Parameter(torch.randn(3, 1, 4, 8, 2))]
    opt = build(params, OptimizerConfig(name="galore_adam", lr=0.1, options=(("rank", 3),)), [dims_q])
    _steps(opt, params, n=1)
    assert opt.state[params[0]]["projector"].shape == (3, 1, 3, 8)  # rank 3 of the 8 x 8 merged matrix


def test_coupled_weight_decay_at_full_rank_with_an_sgd_base_is_sgd_with_l2():
    a, b = _params(), _params()
    _steps(GaLoreAdam(a, lr=0.1, rank=100, scale=1.0, base="sgd", weight_decay=0.05, weight_decay_mode="coupled"), a)
    _steps(torch.optim.SGD(b, lr=0.1, weight_decay=0.05), b)
    for x, y in zip(a, b):
        torch.testing.assert_close(x, y, rtol=1e-5, atol=1e-6)


def test_the_artifact_names_each_factors_kind_so_that_others_can_be_told_apart():
    """A constructed nu*syn frequency records its factors as order-2-nu and order-3-syn; a product whose order-3
    factor is off the syn pattern still factorises but is 'other', its kinds saying why; the figure counts the
    'others' of the solved seeds per pair of kinds."""
    import xarray as xr

    from pipeline_lib.figures.cogo_table import others_breakdown

    err, ok, found, kinds = fourier.factorise_kinds(_scramble(ORDER6, 0))
    assert ok and found == "nu*syn" and kinds == ("order-2-nu", "order-3-syn")
    rot = np.exp(0.4j)
    off = _product(np.array([[1, NU], [1, -NU], [1, -1 / NU ** 2]]),  # rows of the order-3 factor no longer equal
                   np.array([[1, W3, W3.conjugate()], [1, W3 * rot, W3.conjugate() / rot],
                             [1, W3 / rot, W3.conjugate() * rot]]))
    err, ok, found, kinds = fourier.factorise_kinds(_scramble(off, 1))
    assert err < 1e-9 and ok and found == "other" and kinds[0] == "order-2-nu" and kinds[1] != "order-3-syn", kinds
    code = fourier.FACTOR_KINDS.index
    S, n = 2, 3
    an = xr.Dataset({"solved": (("seed",), [True, False]),
                     "factorable": (("seed", "snapshot", "freq"), np.ones((S, 1, n))),
                     "sol_type": (("seed", "snapshot", "freq"), np.array([[[3, 2, 3]], [[3, 3, 3]]])),
                     "factor_kind_2": (("seed", "snapshot", "freq"), np.full((S, 1, n), code("order-2-nu"))),
                     "factor_kind_3": (("seed", "snapshot", "freq"), np.array([[[7, 5, 7]], [[7, 7, 7]]]))})
    assert fourier.TYPES[3] == "other" and fourier.FACTOR_KINDS[7] == "order-3-unknown"
    assert others_breakdown(an) == {"order-2-nu x order-3-unknown": 2}  # the unsolved seed is left out
