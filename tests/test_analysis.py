import numpy as np
import pytest
import torch

from pipeline_lib.analysis.clusters import count_clusters
from pipeline_lib.analysis.interpolation import barrier_height, interpolate, t_grid
from pipeline_lib.analysis.param_embed import embed_points
from pipeline_lib.analysis.probes import chance_accuracy, choose_snapshots, probe_accuracy
from pipeline_lib.models.circuit import CircuitModel
from pipeline_lib.tasks.sma import sma_targets


def test_t_grid_contains_both_endpoints():
    ts = t_grid(-0.25, 1.25, 61)
    assert len(ts) >= 61 and ts[0] == -0.25 and ts[-1] == 1.25
    assert 0.0 in ts and 1.0 in ts
    assert 0.0 in t_grid(-0.3, 1.3, 7) and 1.0 in t_grid(-0.3, 1.3, 7)


def test_barrier_height_of_a_known_bump():
    ts = t_grid(-0.25, 1.25, 61)
    loss = np.stack([1 + 2 * np.exp(-((ts - 0.5) ** 2) / 0.01), 0.5 + 0 * ts])  # bump of 2 / flat
    np.testing.assert_allclose(barrier_height(ts, loss), [2.0, 0.0], atol=1e-6)


def test_interpolation_endpoints_are_the_two_models():
    torch.manual_seed(0)
    a, b = CircuitModel(2, 4, 5, 8), CircuitModel(2, 4, 5, 8)
    a.init_seeds([0, 1])
    b.init_seeds([5, 6])
    x = torch.randint(0, 4, (64, 5))
    y = torch.randint(0, 4, (64,))
    theta = lambda m: {n: getattr(m, n).detach().numpy().copy() for n in m.param_names()}  # noqa: E731
    ta, tb = theta(a), theta(b)
    from pipeline_lib.losses import per_seed_loss_acc
    la, lb = per_seed_loss_acc(a(x), y)[0].detach().numpy(), per_seed_loss_acc(b(x), y)[0].detach().numpy()
    ts = np.array([0.0, 0.5, 1.0])
    res = interpolate(CircuitModel(2, 4, 5, 8), ta, tb, ts, {"train": (x, y)})
    np.testing.assert_allclose(res["train_loss"][:, 0], la, atol=1e-6)
    np.testing.assert_allclose(res["train_loss"][:, 2], lb, atol=1e-6)
    assert not np.allclose(res["train_loss"][:, 1], la)


def test_probe_separable_site_is_decoded_shuffled_is_chance():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 4, 2000)
    centers = rng.normal(size=(4, 16)) * 4
    x = centers[y] + rng.normal(size=(2000, 16))
    assert probe_accuracy(x[:1000], y[:1000], x[1000:], y[1000:]) >= 0.99
    shuffled = rng.permutation(y)
    acc = probe_accuracy(x[:1000], shuffled[:1000], x[1000:], shuffled[1000:])
    chance = chance_accuracy(shuffled[:1000], shuffled[1000:])
    assert abs(acc - 0.25) < 0.06 and abs(chance - 0.25) < 0.06


def test_sma_targets():
    x = np.array([[0, 1, 0, 3, 2], [2, 2, 1, 0, 0]])
    t = sma_targets(x, k=3, p=4)
    assert list(t["label"]) == [1, 1] and list(t["sum_k"]) == [1, 5] and list(t["zeros_k"]) == [2, 0]
    assert list(t["token_2"]) == [0, 1] and "token_3" not in t


def test_choose_snapshots_is_bounded_and_keeps_ends():
    assert choose_snapshots(5, 12) == [0, 1, 2, 3, 4]
    idx = choose_snapshots(45, 8)
    assert idx[0] == 0 and idx[-1] == 44 and len(idx) <= 9 and idx == sorted(set(idx))


@pytest.mark.parametrize("n_true", [2, 6, 16])
def test_count_clusters_finds_separated_blobs(n_true):
    rng = np.random.default_rng(1)
    angles = np.linspace(0, 2 * np.pi, n_true, endpoint=False)
    centers = np.stack([np.cos(angles), np.sin(angles)], 1) * 10
    pts = centers[rng.integers(0, n_true, 800)] + rng.normal(scale=0.2, size=(800, 2))
    assert count_clusters(pts, k_max=24)[0] == n_true


def test_count_clusters_of_collapsed_points_is_one():
    assert count_clusters(np.zeros((50, 2)))[0] == 1


def test_embed_points_shapes_and_pca_axes():
    rng = np.random.default_rng(0)
    # points along a line in 100-D plus small noise: PCA's first axis carries the line
    s = np.linspace(-1, 1, 40)
    X = np.outer(s, rng.normal(size=100)) * 10 + rng.normal(scale=0.01, size=(40, 100))
    tsne, pca = embed_points(X, perplexity=30, seed=0)
    assert tsne.shape == (40, 2) and pca.shape == (40, 2)
    assert abs(np.corrcoef(pca[:, 0], s)[0, 1]) > 0.999
    assert np.isfinite(tsne).all()


def test_count_clusters_counts_exact_points_as_clusters():
    """z_A that maps each sum to one exact point (Fig. 4's ideal): as many clusters as distinct points (k may reach
    the number of distinct points)."""
    pts = np.repeat(np.stack([np.arange(6.0), np.arange(6.0) ** 2], 1), [2, 5, 10, 10, 5, 2], axis=0)
    assert count_clusters(pts, k_max=24)[0] == 6


def test_single_step_change_is_the_attention_derivative_along_minus_the_unit_gradient():
    """The analysis' finite step against the formula: d attention / d eta along -g / |g|, i.e. -(J g) / |g| with J
    the attention's Jacobian (autograd), per seed; and the parameters come back unchanged."""
    from pipeline_lib.analysis.single_step import attention_change
    from pipeline_lib.losses import per_seed_loss_acc

    model = CircuitModel(n_seeds=2, vocab=4, T=6, d=8).double()
    model.init_seeds([0, 1])
    x, y = torch.tensor([[1, 3, 0, 1, 3, 0]]), torch.tensor([2])
    before = [p.detach().clone() for p in model.parameters()]
    change, norm = attention_change(model, x, y, 1e-6)
    assert all(torch.equal(a, p) for a, p in zip(before, model.parameters()))
    params = [p for p in model.parameters()]
    grads = torch.autograd.grad(per_seed_loss_acc(model(x), y)[0].sum(), params)
    for s in range(2):
        g = [gr[s] for gr in grads]
        g_norm = torch.sqrt(sum((v ** 2).sum() for v in g))
        assert float(norm[s]) == pytest.approx(float(g_norm), rel=1e-9)
        for t in range(6):
            jac = torch.autograd.grad(model.attention(x)[s, 0, t], params, allow_unused=True)  # W_V, MLP: unused
            expected = -sum((j[s] * v).sum() for j, v in zip(jac, g) if j is not None) / g_norm
            assert float(change[s, t]) == pytest.approx(float(expected), rel=1e-4, abs=1e-9)
    assert float(change.sum(1).abs().max()) < 1e-6  # attention sums to one: its changes sum to zero
