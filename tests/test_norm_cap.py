"""Analysis norm_cap: the share of attention rows on which NormSoftmax's cap min(sigma, tau) binds, read
off the attention weights alone, checked against the scores it is defined on."""
import pytest
import torch
import torch.nn.functional as F

from pipeline_lib.analysis.norm_cap import binds, log_weight_spread
from pipeline_lib.attention import attention_weights
from pipeline_lib.models.transformer import SeedTransformer


def _scores(scale: float, n_rows: int = 400, n_keys: int = 17) -> torch.Tensor:
    """Rows of scores whose standard deviations spread over about [0.1, 10] x ``scale``."""
    g = torch.Generator().manual_seed(0)
    spread = torch.logspace(-1, 1, n_rows)[:, None] * scale
    return torch.randn(n_rows, n_keys, generator=g) * spread


@pytest.mark.parametrize("tau", [1 / 3, 2.0, 8.0])
def test_normsoftmax_binds_exactly_where_sigma_exceeds_tau(tau):
    s = _scores(tau)
    sigma = s.std(-1)
    clear = (sigma - tau).abs() > 0.01 * tau  # rows at the edge are decided by rounding, not by the rule
    got = binds(attention_weights(s, "normsoftmax", tau))
    assert torch.equal(got[clear], (sigma > tau)[clear])
    assert 0.2 < got.double().mean() < 0.8  # both kinds of rows are present: the check can fail either way


def test_unbound_rows_spread_exactly_one_and_softmax_reads_sigma_over_tau():
    s = _scores(0.05)  # sigma far below tau = 2: NormSoftmax never binds, Softmax never would
    torch.testing.assert_close(log_weight_spread(attention_weights(s, "normsoftmax", 2.0)),
                               torch.ones(len(s), dtype=torch.float64), atol=1e-5, rtol=0)
    torch.testing.assert_close(log_weight_spread(attention_weights(s, "softmax", 2.0)),
                               s.double().std(-1) / 2.0, atol=1e-5, rtol=1e-4)
    assert not binds(attention_weights(s, "normsoftmax", 2.0)).any()


@pytest.mark.parametrize("variant", ["softmax", "normsoftmax"])
def test_a_model_s_attention_gives_the_share_its_scores_give(variant):
    """On a transformer's first layer: binds() of the attention it returns equals sigma(q.k) > tau of the
    scores recomputed from its weights, with Q and K scaled so that both kinds of rows occur."""
    m = SeedTransformer(2, n_classes=11, n_tokens=6, d_model=32, n_heads=2, depth=1, vocab=11, variant=variant)
    m.init_seeds([0, 1])
    with torch.no_grad():
        m.W_Q.mul_(10)  # sigma about 100 times its initial 0.02-0.07: either side of tau = sqrt(16) = 4
        m.W_K.mul_(10)
    x = torch.randint(0, 11, (64, 6), generator=torch.Generator().manual_seed(1))
    zn = F.layer_norm(m._embed(x), (m.d,), eps=1e-5)
    q = torch.einsum("sbtd,shde->sbhte", zn, m.W_Q[:, 0])
    k = torch.einsum("sbtd,shde->sbhte", zn, m.W_K[:, 0])
    sigma = torch.einsum("sbhte,sbhue->sbhtu", q, k).std(-1)
    tau = m.temperature()
    clear = (sigma - tau).abs() > 0.01 * tau
    got = binds(m.internals(x).attention[0])
    assert torch.equal(got[clear], (sigma > tau)[clear])
    assert 0.05 < got.double().mean() < 0.95
