"""The seed-batched transformer of the Eureka issue: shapes, seed independence, equations, variants,
Heat-Treatment temperature and the Q/K/V gradient summary."""
import math

import pytest
import torch
import torch.nn.functional as F

from pipeline_lib.attention import attention_weights
from pipeline_lib.models.transformer import SeedTransformer


def _tokens(S=2, **kw):
    m = SeedTransformer(S, n_classes=11, n_tokens=4, d_model=16, n_heads=4, depth=2, vocab=11, **kw)
    m.init_seeds(list(range(S)))
    return m, torch.randint(0, 11, (6, 4), generator=torch.Generator().manual_seed(0))


def test_shapes_for_tokens_and_patches():
    m, x = _tokens()
    out = m.internals(x)
    assert out.logits.shape == (2, 6, 11) and out.cls.shape == (2, 6, 16)
    assert len(out.attention) == 2 and out.attention[0].shape == (2, 6, 4, 5, 5)
    vit = SeedTransformer(3, n_classes=10, n_tokens=16, d_model=32, n_heads=4, patch_dim=16)
    vit.init_seeds([0, 1, 2])
    assert vit(torch.rand(5, 16, 16)).shape == (3, 5, 10)


def test_slot_i_is_seed_i_alone():
    m, x = _tokens(S=3)
    m.init_seeds([4, 9, 2])
    single = SeedTransformer(1, 11, 4, 16, 4, depth=2, vocab=11)
    single.init_seeds([9])
    torch.testing.assert_close(m(x)[1], single(x)[0])


def reference_forward(m: SeedTransformer, s: int, x: torch.Tensor) -> torch.Tensor:
    """One seed, written with torch's own layer_norm and scaled_dot_product_attention (scale 1/sqrt(e))."""
    p = {n: getattr(m, n)[s] for n in m.param_names()}
    z = torch.cat([p["cls"].expand(x.shape[0], 1, -1), p["W_E"][x]], 1) + p["P"]
    for layer in range(m.L):
        zn = F.layer_norm(z, (m.d,), p["ln1_g"][layer], p["ln1_b"][layer], eps=1e-5)
        heads = []
        for h in range(m.H):
            q, k, v = (zn @ p[w][layer, h] for w in ("W_Q", "W_K", "W_V"))
            heads.append(F.scaled_dot_product_attention(q, k, v) @ p["W_O"][layer, h])
        z = z + sum(heads)
        zn = F.layer_norm(z, (m.d,), p["ln2_g"][layer], p["ln2_b"][layer], eps=1e-5)
        z = z + F.gelu(zn @ p["W_1"][layer] + p["b_1"][layer]) @ p["W_2"][layer] + p["b_2"][layer]
    cls = F.layer_norm(z[:, 0], (m.d,), p["lnf_g"], p["lnf_b"], eps=1e-5)
    return cls @ p["W_cls"] + p["b_cls"]


def test_softmax_forward_equals_an_independent_reference():
    m, x = _tokens()
    with torch.no_grad():
        for n in m.param_names():  # non-trivial gains and biases too
            getattr(m, n).add_(torch.randn_like(getattr(m, n)) * 0.1)
    for s in range(2):
        torch.testing.assert_close(m(x)[s], reference_forward(m, s, x), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("variant", ["softmax", "normsoftmax", "normsoftmax_var"])
def test_attention_uses_the_configured_normalisation(variant):
    m, x = _tokens(variant=variant, tau=0.7)
    zn = F.layer_norm(m._embed(x), (m.d,), eps=1e-5)  # layer 0, gains 1 and biases 0 after init
    q = torch.einsum("sbtd,shde->sbhte", zn, m.W_Q[:, 0])
    k = torch.einsum("sbtd,shde->sbhte", zn, m.W_K[:, 0])
    expected = attention_weights(torch.einsum("sbhte,sbhue->sbhtu", q, k), variant, 0.7)
    torch.testing.assert_close(m.internals(x).attention[0], expected)


def test_heat_treatment_beta_overrides_the_temperature():
    m, x = _tokens()
    base = m.internals(x).attention[0]
    m.beta = 3.0
    hot = m.internals(x).attention[0]
    m.beta, m.tau = None, 1 / 3.0
    torch.testing.assert_close(hot, m.internals(x).attention[0])  # beta=3 is tau=1/3
    assert not torch.allclose(base, hot)
    assert m.tau != math.sqrt(m.e)


def test_grad_summary_on_a_model_with_known_gradients():
    m, x = _tokens()
    with torch.no_grad():  # q = k = 0: scores are 0 whatever W_Q, W_K are, so their gradients vanish
        m.W_Q.zero_()
        m.W_K.zero_()
    y = torch.randint(0, 11, (6,))
    F.cross_entropy(m(x).reshape(-1, 11), y.repeat(2)).backward()
    g = m.grad_summary()
    assert g["W_Q"].shape == (2, 2, 4)
    assert torch.count_nonzero(g["W_Q"]) == 0 and torch.count_nonzero(g["W_K"]) == 0
    assert (g["W_V"] > 0).all()
    torch.testing.assert_close(g["W_V"][1, 0, 2], m.W_V.grad[1, 0, 2].abs().mean())
