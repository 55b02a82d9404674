import numpy as np
import pytest

from pipeline_lib.tasks.sma import sparse_modular_addition, sparse_sum_label


def test_label_is_sum_of_first_k_mod_p():
    d = sparse_modular_addition(p=4, T=12, k=5, n_train=300, n_test=200, seed=1)
    for x, y in [(d.x_train, d.y_train), (d.x_test, d.y_test)]:
        assert x.shape[1] == 12 and x.min() >= 0 and x.max() < 4
        expected = np.array([sum(int(v) for v in row[:5]) % 4 for row in x])
        np.testing.assert_array_equal(y, expected)


def test_tokens_after_k_do_not_change_the_label():
    x = np.array([[1, 2, 3, 0, 0], [1, 2, 3, 3, 1]])
    assert list(sparse_sum_label(x, k=3, p=5)) == [1, 1]


def test_same_seed_same_data_other_seed_other_data():
    a = sparse_modular_addition(4, 12, 5, 256, 64, seed=3)
    b = sparse_modular_addition(4, 12, 5, 256, 64, seed=3)
    c = sparse_modular_addition(4, 12, 5, 256, 64, seed=4)
    np.testing.assert_array_equal(a.x_train, b.x_train)
    np.testing.assert_array_equal(a.x_test, b.x_test)
    assert not np.array_equal(a.x_train, c.x_train)


@pytest.mark.parametrize("p,T,n_train,n_test", [(4, 12, 2048, 1024), (2, 12, 2048, 1024), (2, 8, 100, 100)])
def test_test_set_contains_no_training_sequence(p, T, n_train, n_test):
    d = sparse_modular_addition(p, T, 3, n_train, n_test, seed=0)
    train = {r.tobytes() for r in d.x_train}
    assert not any(r.tobytes() in train for r in d.x_test)
    assert d.attrs["test_train_overlap"] == 0
    assert len(d.x_test) == n_test


def test_overlap_recorded_when_space_is_too_small():
    # 2^4 = 16 sequences; 200 training draws cover all of them, so the test set must overlap.
    d = sparse_modular_addition(2, 4, 2, n_train=200, n_test=10, seed=0)
    train = {r.tobytes() for r in d.x_train}
    actual = sum(r.tobytes() in train for r in d.x_test)
    assert actual == d.attrs["test_train_overlap"] == 10


def test_training_set_sampled_with_replacement():
    d = sparse_modular_addition(2, 12, 5, 2048, 16, seed=0)
    # 2048 uniform draws from 4096 sequences repeat some (expected unique ~1574).
    assert 1400 < d.attrs["n_unique_train"] < 1750
