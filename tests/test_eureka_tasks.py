"""Foundations of the Eureka-moments issue: the two-step tasks and the attention variants."""
import math

import numpy as np
import pytest
import torch

from pipeline_lib.attention import attention_weights, heat_treatment_beta
from pipeline_lib.tasks import chance_without_step1
from pipeline_lib.tasks.eureka_digits import digits_step1, eureka_digits
from pipeline_lib.tasks.eureka_reasoning import eureka_label, eureka_reasoning, eureka_step1


def test_reasoning_task_labels_sizes_and_split():
    d = eureka_reasoning(n=10, train_fraction=0.3, seed=0)
    assert len(d.x_train) + len(d.x_test) == 11**4 and len(d.x_train) == round(0.3 * 11**4)
    train = {r.tobytes() for r in d.x_train}
    assert not any(r.tobytes() in train for r in d.x_test)
    for x, y in [(d.x_train, d.y_train), (d.x_test, d.y_test)]:
        a, b, c, dd = x.T
        np.testing.assert_array_equal(y, np.where(a % 2 != b % 2, c, dd))
    assert list(eureka_step1(np.array([[1, 2, 0, 0], [2, 4, 0, 0]]))) == [1, 0]
    assert list(eureka_label(np.array([[1, 2, 7, 9], [2, 4, 7, 9]]))) == [7, 9]


def test_chance_without_step1_is_six_elevenths():
    d = eureka_reasoning(10, 0.3, seed=0)
    x = np.concatenate([d.x_train, d.x_test])
    y = np.concatenate([d.y_train, d.y_test])
    # exactly: 61/121 same-parity pairs answered right by "always d", plus 60/121 * 1/11 where c == d
    assert chance_without_step1(y, x[:, 2:4]) == pytest.approx(61 / 121 + 60 / 121 / 11)
    assert abs(chance_without_step1(y, x[:, 2:4]) - 6 / 11) < 0.005


def test_digits_task_quadrants_labels_and_disjoint_sources():
    from sklearn.datasets import load_digits

    d = eureka_digits(n_train=300, n_test=200, seed=1)
    assert d.x_train.shape == (300, 256) and d.x_test.shape == (200, 256)
    digits = load_digits()
    src = {img.astype(np.int64).tobytes(): i for i, img in enumerate(digits.images)}
    used = []
    for x, y, q in [(d.x_train, d.y_train, d.latent_train), (d.x_test, d.y_test, d.latent_test)]:
        img = x.reshape(-1, 16, 16)
        quads = [img[:, :8, :8], img[:, :8, 8:], img[:, 8:, :8], img[:, 8:, 8:]]  # TL, TR, BL, BR
        ids = np.array([[src[qd[i].tobytes()] for qd in quads] for i in range(len(x))])
        np.testing.assert_array_equal(digits.target[ids], q)
        assert set(np.unique(q[:, [0, 3]])) <= {1, 2}
        np.testing.assert_array_equal(y, np.where(digits_step1(q) == 1, q[:, 1], q[:, 2]))
        used.append(set(ids.ravel()))
    assert not used[0] & used[1]  # no source image in both train and test
    same = digits_step1(d.latent_test).mean()
    assert 0.35 < same < 0.65  # the first step is not predictable from priors


def _scores():
    return torch.randn(2, 4, 5, 7, generator=torch.Generator().manual_seed(0)) * 3  # (batch, head, q, k)


@pytest.mark.parametrize("tau", [math.sqrt(16), 1 / 3])
def test_softmax_with_temperature(tau):
    s = _scores()
    expected = torch.exp(s / tau) / torch.exp(s / tau).sum(-1, keepdim=True)
    torch.testing.assert_close(attention_weights(s, "softmax", tau), expected)


@pytest.mark.parametrize("variant", ["normsoftmax", "normsoftmax_var"])
@pytest.mark.parametrize("tau", [4.0, 0.5])
def test_normsoftmax_against_the_formula(variant, tau):
    s = _scores().double()
    out = attention_weights(s, variant, tau)
    for idx in np.ndindex(*s.shape[:-1]):
        row = s[idx].numpy()
        spread = row.std(ddof=1) if variant == "normsoftmax" else row.var()
        z = row / min(spread, tau)
        expected = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
        np.testing.assert_allclose(out[idx].numpy(), expected, rtol=1e-10)


def test_unknown_variant_names_the_allowed_ones():
    with pytest.raises(ValueError, match="softmax, normsoftmax, normsoftmax_var"):
        attention_weights(_scores(), "sparsemax", 1.0)


def test_heat_treatment_schedule_endpoints_and_monotonicity():
    epochs, d_head = 1000, 16
    betas = [heat_treatment_beta(e, epochs, d_head) for e in range(epochs + 1)]
    assert betas[0] == pytest.approx(3.0)
    assert betas[500] == pytest.approx(1 / math.sqrt(d_head)) and betas[-1] == pytest.approx(0.25)
    assert all(b1 >= b2 for b1, b2 in zip(betas, betas[1:]))  # never rises
    assert betas[250] == pytest.approx(0.25 + (3 - 0.25) / 2)  # half-cosine midpoint
    assert len(set(betas[500:])) == 1  # constant in the second half
