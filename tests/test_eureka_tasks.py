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


def test_no_position_digits_swap_each_rows_tiles_half_the_time_and_keep_the_rule():
    fixed = eureka_digits(n_train=400, n_test=50, seed=2)
    moved = eureka_digits(n_train=400, n_test=50, seed=2, positions="random")
    np.testing.assert_array_equal(moved.y_train, fixed.y_train)  # the same draws, the same labels
    np.testing.assert_array_equal(moved.latent_train, fixed.latent_train)
    a, b = fixed.x_train.reshape(-1, 2, 8, 2, 8), moved.x_train.reshape(-1, 2, 8, 2, 8)  # (n, row, y, col, x)
    swapped = np.zeros((400, 2), dtype=bool)
    for row in (0, 1):
        same = np.all(a[:, row] == b[:, row], axis=(1, 2, 3))
        crossed = np.all(a[:, row, :, ::-1] == b[:, row], axis=(1, 2, 3))  # the two tiles exchanged
        assert np.all(same | crossed), row  # every row is either kept or has its tiles exchanged
        swapped[:, row] = crossed & ~same
    assert np.all(np.abs(swapped.mean(0) - 0.5) < 5 * math.sqrt(0.25 / 400))  # about half of each row
    assert 0.15 < (swapped[:, 0] & swapped[:, 1]).mean() < 0.35  # independent rows: about a quarter both
    with pytest.raises(ValueError, match="'positions'"):
        eureka_digits(n_train=4, n_test=4, positions="shuffled")


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


def _fake_sets(root, n=40):
    """Small MNIST / FashionMNIST stand-ins in the IDX format: every image a distinct pattern, so a tile
    of a composed image names its source."""
    from pipeline_lib.tasks.eureka_mnist import FILES, write_idx

    rng = np.random.default_rng(0)
    sources = {}
    for name in ("mnist", "fashion_mnist"):
        (root / name).mkdir(parents=True)
        for split in ("train", "test"):
            images = rng.integers(0, 256, (n, 28, 28), dtype=np.uint8)
            labels = np.arange(n) % 10
            write_idx(root / name / FILES[split][0], images)
            write_idx(root / name / FILES[split][1], labels)
            sources[name, split] = (images, labels)
    return sources


def test_mnist_task_reads_idx_files_and_composes_as_the_paper(tmp_path):
    from pipeline_lib.tasks.eureka_mnist import eureka_mnist, quantised, read_idx

    sources = _fake_sets(tmp_path)
    images, labels = sources["mnist", "train"]
    from pipeline_lib.tasks.eureka_mnist import FILES

    np.testing.assert_array_equal(read_idx(tmp_path / "mnist" / FILES["train"][0]), images)
    d = eureka_mnist(n_train=60, n_test=30, seed=3, root=tmp_path, download=False)
    assert d.x_train.shape == (60, 56 * 56) and d.x_train.max() <= 16
    for x, y, q, split in ((d.x_train, d.y_train, d.latent_train, "train"), (d.x_test, d.y_test, d.latent_test, "test")):
        img = x.reshape(-1, 56, 56)
        digits, fashion = sources["mnist", split], sources["fashion_mnist", split]
        for i in range(len(x)):
            tiles = [img[i, :28, :28], img[i, :28, 28:], img[i, 28:, :28], img[i, 28:, 28:]]  # TL, TR, BL, BR
            for t, (pool, labels), k in zip(tiles, (digits, fashion, fashion, digits), range(4)):
                match = [j for j in range(len(pool)) if np.array_equal(quantised(pool[j]), t)]
                assert match and labels[match[0]] == q[i, k]  # each tile is a source image of its set and class
        assert set(np.unique(q[:, [0, 3]])) <= {1, 2}
        np.testing.assert_array_equal(y, np.where(q[:, 0] == q[:, 3], q[:, 1], q[:, 2]))


def test_mnist_task_missing_or_broken_files_name_what_to_do(tmp_path):
    from pipeline_lib.tasks.eureka_mnist import eureka_mnist, read_idx, write_idx

    with pytest.raises(FileNotFoundError, match="'download' is false"):
        eureka_mnist(n_train=4, n_test=4, root=tmp_path, download=False)
    bad = tmp_path / "bad.gz"
    write_idx(bad, np.zeros((2, 2)))
    raw = bad.read_bytes()
    import gzip

    with gzip.open(bad, "wb") as fh:
        fh.write(b"\x01\x02" + gzip.decompress(raw)[2:])
    with pytest.raises(ValueError, match="not an IDX file"):
        read_idx(bad)


def test_mnist_task_trains_a_vit_through_the_dataset_stage(tmp_path, smoke_raw):
    from pipeline_lib.models import build_run_model, run_inputs
    from pipeline_lib.plumbing.config import load_config
    from pipeline_lib.plumbing.errors import ConfigError
    from pipeline_lib.tasks.eureka_mnist import Params, generate

    _fake_sets(tmp_path)
    ds = generate(Params(n_train=16, n_test=8, root=str(tmp_path), download=False, positions="random"))
    assert ds.x.shape == (24, 3136) and 0 < ds.attrs["task_chance_without_step1"] < 1
    smoke_raw["datasets"]["mnist_t"] = {"task": "eureka_mnist", "n_train": 16, "n_test": 8, "root": str(tmp_path)}
    smoke_raw["models"]["mnist_vit"] = {"kind": "vit", "d": 8, "n_heads": 2, "depth": 2, "patch": 7}
    smoke_raw["runs"]["m"] = {"dataset": "mnist_t", "model": "mnist_vit", "epochs": 1, "seeds": 2, "n_probe": 4}
    cfg = load_config(smoke_raw)
    model = build_run_model(cfg.run_spec("m"))
    model.init_seeds([0, 1])
    x = run_inputs(cfg.run_spec("m"), ds.x.values[:5])
    assert x.shape == (5, 64, 49) and model(x).shape == (2, 5, 10)  # 8 x 8 patches of 7 x 7 pixels
    smoke_raw["models"]["mnist_vit"]["patch"] = 5
    with pytest.raises(ConfigError, match=r"3136 pixels\) is not divisible into 5x5 patches"):
        load_config(smoke_raw)


def test_the_test_configs_stand_in_files_are_what_write_stand_ins_writes(tmp_path):
    from pathlib import Path

    from pipeline_lib.tasks.eureka_mnist import write_stand_ins

    write_stand_ins(tmp_path)
    shipped = Path(__file__).resolve().parents[1] / ".test" / "data"
    files = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.gz"))
    assert len(files) == 8
    for rel in files:
        assert (shipped / rel).read_bytes() == (tmp_path / rel).read_bytes(), rel
