"""CoGO's algebra (pipeline_lib/cogo_algebra.py): the slides' loss in the Fourier terms r against the model's own
loss and r's ring homomorphism on constructed networks (the figure and its claims: tests/test_figures_synthetic.py)."""
import numpy as np
import pytest

from pipeline_lib import cogo_algebra as ca


@pytest.fixture
def rng():
    return np.random.default_rng(3)


def test_the_fourier_terms_are_numpys_fft_with_the_stated_signs_and_scale(rng):
    net = ca.random_net(rng, 7, 4)
    za, zb, zc = ca.z_terms(net)
    assert np.allclose(za, np.conj(np.fft.fft(net.W_a, axis=1)).T)  # exponent +2 pi i m k / d
    assert np.allclose(zb, np.conj(np.fft.fft(net.W_b, axis=1)).T)
    assert np.allclose(zc, 2 / 49 * np.fft.fft(net.W_c, axis=0))  # exponent -2 pi i m k / d, scale 2 / d^2
    assert np.allclose(za[1:], np.conj(za[1:][::-1]))  # Hermitian: z_{a,k} = conj(z_{a,-k})
    assert np.allclose(za[0], 0)  # zero-mean rows: no zero frequency


@pytest.mark.parametrize("d,q", [(5, 1), (7, 6), (11, 3)])
def test_the_slides_loss_equals_the_models_on_zero_mean_networks(rng, d, q):
    net = ca.random_net(rng, d, q)
    assert ca.loss_from_r(net) == pytest.approx(ca.model_loss(net), rel=1e-12)


def test_the_model_loss_is_the_centred_mse_by_hand(rng):
    d = 5
    net = ca.random_net(rng, d, 2, zero_mean=False)
    total = 0.0
    for a in range(d):
        for b in range(d):
            o = net.W_c @ (net.W_a[:, a] + net.W_b[:, b]) ** 2
            t = np.eye(d)[(a + b) % d] - 1 / d
            total += ((o - o.mean() - t) ** 2).sum()
    assert ca.model_loss(net) == pytest.approx(total / d**2, rel=1e-12)


def test_the_formula_misses_when_the_rows_keep_their_mean(rng):
    net = ca.random_net(rng, 7, 4, zero_mean=False)
    assert abs(ca.loss_from_r(net) - ca.model_loss(net)) > 1e-4


def test_zero_weights_have_the_constant_loss_1_minus_1_over_d():
    d = 7
    net = ca.Net(np.zeros((2, d)), np.zeros((2, d)), np.zeros((d, 2)))
    assert ca.model_loss(net) == pytest.approx(1 - 1 / d) and ca.loss_from_r(net) == pytest.approx(1 - 1 / d)


def test_r_is_a_ring_homomorphism_on_constructed_real_networks(rng):
    n1, n2 = ca.random_net(rng, 11, 3), ca.random_net(rng, 11, 2)
    errs = ca.homomorphism_errors(n1, n2)
    assert errs["add"] < 1e-12 and errs["mul"] < 1e-12 and errs["one"] < 1e-12
    assert errs["token_kronecker"] > 0.1  # the product on the token weights is not the ring's
    prod = ca.mul(n1, n2)
    assert prod.W_a.shape == (6, 11) and np.isrealobj(prod.W_a)
    assert ca.loss_from_r(prod) == pytest.approx(ca.model_loss(prod), rel=1e-12)  # a real network of the model


def test_a_frequency_net_puts_its_nodes_on_one_frequency_and_its_conjugate():
    d, k = 11, 3
    nodes = [(1 + 2j, -0.5j, 0.3 - 1j), (2.0, 1j, -1.0)]
    za, zb, zc = ca.z_terms(ca.frequency_net(d, k, nodes))
    assert np.allclose(za[k], [n[0] for n in nodes]) and np.allclose(zc[k], [n[2] for n in nodes])
    assert np.allclose(zb[d - k], np.conj([n[1] for n in nodes]))  # real weights: the conjugate at -k
    others = [f for f in range(d) if f not in (k, d - k)]
    assert np.allclose(za[others], 0) and np.allclose(zc[others], 0)


def test_the_partial_solutions_lie_in_the_sets_the_slides_say_and_compose_to_a_global_optimizer(rng):
    d = 13
    syn, nu = ca.set_residuals(ca.z_syn(d, 2)), ca.set_residuals(ca.z_nu(d, 2, -1.7))
    assert max(syn["R_c"], syn["R_n"]) < 1e-12 and syn["R_*"] == pytest.approx(3.0)  # r_p[k, k, k] = sum_j w^3j
    assert nu["R_*"] < 1e-12 and nu["R_c"] == pytest.approx(2.0)  # r[-k, -k, k] = 1 + 1
    product = ca.set_residuals(ca.mul(ca.z_syn(d, 2), ca.z_nu(d, 2, -1.7)))
    assert max(product["R_c"], product["R_n"], product["R_*"]) < 1e-12
    f6 = ca.z_f6(d, rng.uniform(0.5, 2.0, (d - 1) // 2))
    assert max(ca.set_residuals(f6).values()) < 1e-12
    assert abs(ca.model_loss(f6)) < 1e-12 and abs(ca.loss_from_r(f6)) < 1e-12  # the MSE's global minimum, 0
    assert ca.model_loss(ca.z_syn(d, 1)) > 0.01  # a partial solution alone is not one
    # a complex nu breaks z_nu's R_* (r_a[k, k, -k] = 1 - nu^2 / conj(nu)^2 != 0): the check can fail
    assert ca.set_residuals(ca.frequency_net(d, 2, [(1, 1, 1), (1j * 0.8 + 0.3, -(1j * 0.8 + 0.3), -1 / (1j * 0.8 + 0.3) ** 2)]))["R_*"] > 0.1


def test_occams_razor_a_zero_loss_path_joins_y_times_z_to_z(rng):
    """The talk's "Occam's Razor" ('Gradient Dynamics', slides 1-2): if z = y * z' and both are global optimal, a
    path of zero loss connects them, and ||e * z'|| <= ||y * z'||. With z' = z_F6 (a global optimizer) and y a unit
    split into three nodes of r-weights w (sum 1, so r(y) = 1 and z is global optimal too), the path y(s) = the
    nodes of weights (1 - s) w + s (1, 0, 0) keeps r(y(s)) = 1: the model's own MSE stays at its minimum 0 all the
    way to e * z' (z' in the first node block, the others zero), while the straight line between the two weight
    vectors leaves it (a barrier), and every y * z' on the path is at least as long as e * z'."""
    d = 11
    zp = ca.z_f6(d, rng.uniform(0.5, 2.0, (d - 1) // 2))

    def times(w):  # y * z' for the unit split into nodes of r-weights w (a node of weight 0 has zero weights)
        return ca.mul(ca.total([ca.scaled(ca.one(d), float(x)) for x in w]), zp)

    def norm2(net):
        return sum(float((x ** 2).sum()) for x in net)

    w = np.array([0.5, 0.3, 0.2])
    e = np.array([1.0, 0.0, 0.0])
    path = [times((1 - s) * w + s * e) for s in np.linspace(0, 1, 11)]
    assert max(abs(ca.model_loss(z)) for z in path) < 1e-12  # zero loss along the path
    end = path[-1]
    assert max(np.abs(a - b).max() for a, b in zip(end, times(e))) < 1e-12
    assert abs(norm2(end) - norm2(zp)) < 1e-9 * norm2(zp)  # e * z' is z' (with zero nodes beside it)
    assert norm2(path[0]) == pytest.approx(norm2(zp) * (w ** (2 / 3)).sum())  # sum w^(2/3) > 1 = sum w
    assert all(norm2(z) >= norm2(end) - 1e-9 for z in path)
    straight = [ca.Net(*((1 - s) * a + s * b for a, b in zip(path[0], end))) for s in (0.25, 0.5, 0.75)]
    assert min(ca.model_loss(z) for z in straight) > 1e-3  # the straight line is no zero-loss path
