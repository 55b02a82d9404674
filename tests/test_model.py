import math

import numpy as np
import pytest
import torch

from pipeline_lib.models.circuit import CircuitModel


def paper_forward(m: CircuitModel, s: int, seq) -> np.ndarray:
    """The circuits paper's equations for one sequence and one seed, written out in float64."""
    P = {n: getattr(m, n)[s].detach().double().numpy() for n in m.param_names()}
    W_U = P["W_E"] if m.tied_unembed else P["W_U"]
    rms = lambda v: v / np.sqrt(np.mean(v**2) + 1e-6)  # noqa: E731
    z = [rms(P["W_E"][tok] + P["P"][t]) for t, tok in enumerate(seq)]
    logits_att = np.array([zt @ P["w_Q"] / m.tau for zt in z])
    s_att = np.exp(logits_att - logits_att.max())
    s_att /= s_att.sum()
    z_A = sum(s_att[t] * (P["W_V"] @ z[t]) for t in range(len(seq)))
    zbar = rms(z_A)
    gelu = lambda u: 0.5 * u * (1 + np.vectorize(math.erf)(u / math.sqrt(2)))  # noqa: E731
    z_O = zbar + P["W_2"].T @ gelu(P["W_1"] @ zbar)
    return W_U @ z_O


@pytest.mark.parametrize("tied", [False, True])
@pytest.mark.parametrize("vocab,p", [(4, 4), (6, 3)])
def test_forward_equals_paper_equations(tied, vocab, p):
    m = CircuitModel(n_seeds=3, vocab=vocab, T=7, d=8, tau=1.7, tied_unembed=tied)
    m.init_seeds([0, 5, 9])
    x = torch.randint(0, p, (5, 7), generator=torch.Generator().manual_seed(0))
    fast, ref = m(x).detach(), m.forward_reference(x).detach()
    for s in range(3):
        for b in range(5):
            expected = paper_forward(m, s, x[b].tolist())
            np.testing.assert_allclose(fast[s, b].numpy(), expected, atol=2e-5)
            np.testing.assert_allclose(ref[s, b].numpy(), expected, atol=2e-5)


def test_per_seed_inputs_match_shared_inputs():
    m = CircuitModel(2, 4, 6, 8)
    m.init_seeds([0, 1])
    x = torch.randint(0, 4, (10, 6))
    torch.testing.assert_close(m(x), m(x.expand(2, 10, 6).clone()))


def test_internals_are_named_and_consistent():
    m = CircuitModel(2, 4, 6, 8)
    m.init_seeds([0, 1])
    x = torch.randint(0, 4, (10, 6))
    out = m.internals(x)
    assert out.attention.shape == (2, 10, 6) and out.z_A.shape == (2, 10, 8) and out.logits.shape == (2, 10, 4)
    torch.testing.assert_close(out.attention.sum(-1), torch.ones(2, 10))
    torch.testing.assert_close(m.attention(x), out.attention)
    torch.testing.assert_close(out.logits, m(x), atol=1e-5, rtol=1e-5)


def test_default_temperature_is_sqrt_d_and_tied_has_no_W_U():
    m = CircuitModel(1, 4, 3, 16, tied_unembed=True)
    assert m.tau == pytest.approx(4.0)
    assert m.W_U is None and "W_U" not in m.param_names()


def test_seed_initialisation_depends_only_on_the_seed():
    a, b = CircuitModel(3, 4, 5, 8), CircuitModel(1, 4, 5, 8)
    a.init_seeds([2, 7, 11])
    b.init_seeds([7])
    for n in a.param_names():
        torch.testing.assert_close(getattr(a, n)[1], getattr(b, n)[0], rtol=0, atol=0)
    assert not torch.equal(a.W_E[0], a.W_E[1])
