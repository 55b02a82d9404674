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


def test_training_draws_are_independent_and_the_test_set_disjoint_from_all():
    from pipeline_lib.tasks.sma import sparse_modular_addition_draws

    d2 = sparse_modular_addition_draws(2, 12, 5, 512, 64, draws=4, seed=0)
    d4 = sparse_modular_addition_draws(4, 12, 5, 512, 64, draws=4, seed=0)
    ds = d4.to_dataset()
    assert list(np.unique(ds.draw.values)) == [-1, 0, 1, 2, 3]
    assert (ds.draw.values[ds.split.values == "test"] == -1).all()
    draws = [d4.x_train[d4.draw == i] for i in range(4)]
    assert all(len(x) == 512 for x in draws)
    assert not np.array_equal(draws[0], draws[1])
    # the moduli's draws are not coupled (one generator per (seed, p, draw)): x_p2 != x_p4 // 2
    assert np.mean(d2.x_train == d4.x_train // 2) < 0.6
    train = {r.tobytes() for r in d4.x_train}
    assert not any(r.tobytes() in train for r in d4.x_test) and d4.attrs["test_train_overlap"] == 0
    np.testing.assert_array_equal(d4.y_train, d4.x_train[:, :5].sum(1) % 4)


def test_the_shared_draw_is_unchanged_by_the_draws_option():
    """Without draws the dataset is the one drawn from the seed alone (its p = 2 and p = 4 sets coupled:
    x_p2 == x_p4 // 2, stated beside the claims that use them)."""
    d2 = sparse_modular_addition(2, 12, 5, 256, 32, seed=0)
    d4 = sparse_modular_addition(4, 12, 5, 256, 32, seed=0)
    assert (d2.x_train == d4.x_train // 2).all()
    assert "draw" not in d4.to_dataset().coords


def test_first_k_patterns_enumerate_every_prefix_in_base_p_followed_by_zeros():
    """The authors' Fig. 4 inputs: pattern i's first k tokens are i in base p, most significant first."""
    from pipeline_lib.tasks.sma import first_k_patterns

    x = first_k_patterns(4, 5, 12)
    assert x.shape == (1024, 12) and (x[:, 5:] == 0).all()
    assert len({row.tobytes() for row in x}) == 1024
    assert x[1, :5].tolist() == [0, 0, 0, 0, 1] and x[4, :5].tolist() == [0, 0, 0, 1, 0]
    assert (x[:, :5] @ 4 ** np.arange(4, -1, -1) == np.arange(1024)).all()
    sums = first_k_patterns(2, 5, 12)[:, :5].sum(1)
    assert np.bincount(sums).tolist() == [1, 5, 10, 10, 5, 1]  # binomial(5, s) patterns per count


def test_copies_repeat_the_original_sequences_and_keep_their_labels():
    """Sec. II.a's [x_1, x_2]: each input is the sparse-modular-addition sequence twice, its label unchanged, so
    that either copy decides it."""
    from pipeline_lib.tasks import sma_copies

    ds = sma_copies.generate(sma_copies.Params(p=4, T=8, k=5, n_train=64, n_test=32, copies=2, seed=3))
    original = sparse_modular_addition(4, 8, 5, 64, 32, seed=3)
    x = ds.x.values
    assert x.shape == (96, 16)
    np.testing.assert_array_equal(x[:, :8], np.concatenate([original.x_train, original.x_test]))
    np.testing.assert_array_equal(x[:, :8], x[:, 8:])
    np.testing.assert_array_equal(ds.y.values, sparse_sum_label(x[:, 8:], 5, 4))
    assert ds.attrs["task_copies"] == 2 and ds.attrs["task_task"] == "sparse_modular_addition_copies"
