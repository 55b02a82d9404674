"""The benchmark's baseline is the same model: a plain single-seed module built from slot i of the
engine's model computes the same logits, and one case of the benchmark runs and reports a ratio."""
import functools
import sys

import pytest
import torch

from conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
import bench  # noqa: E402  (benchmarks/ is not a package: its CLI is `python benchmarks/bench.py`)


@pytest.mark.parametrize("model_name", ["circuit", "reasoning"])
def test_plain_baseline_computes_the_engine_models_function(model_name):
    torch.manual_seed(0)
    _, _, tensors, model = bench._setup(model_name, 3, "full", 1, "cpu")
    x = tensors["x_test"][:64]
    with torch.no_grad():
        engine = model(x)  # (S, B, C)
        for i in range(3):
            plain = bench.plain_module(model, i)
            torch.testing.assert_close(plain(x), engine[i], rtol=1e-5, atol=1e-5)
    # and it is a different function per slot (the comparison above can fail)
    assert (engine[0] - engine[1]).abs().max() > 1e-2


def test_plain_baseline_refuses_a_model_it_does_not_implement():
    _, _, _, model = bench._setup("circuit", 1, "full", 1, "cpu")
    model.architecture = "paper_code"
    with pytest.raises(ValueError, match="paper_text"):
        bench.plain_module(model, 0)


def test_one_case_reports_engine_baseline_and_ratio():
    row = bench.run_case("circuit", 2, "full", epochs=2, threads=1, device="cpu")
    assert row["engine_ms_per_seed_epoch"] > 0 and row["baseline_ms_per_seed_epoch"] > 0
    assert row["ratio"] == pytest.approx(row["baseline_ms_per_seed_epoch"] / row["engine_ms_per_seed_epoch"])
    assert row["peak_rss_mb"] > 0 and row["steps_per_epoch"] == 1


def test_profile_reports_where_each_sides_time_goes():
    """--profile: both sides' operators after the warm-up epoch (a profiler schedule that recorded
    nothing gave empty lists once), the engine's matrix products within its total, and the ceiling."""
    row = bench.run_case("circuit", 2, "full", epochs=1, threads=1, device="cpu", profile_epochs=2)
    eng, base = row["engine_profile"], row["baseline_profile"]
    for prof in (eng, base):
        assert prof["epochs_recorded"] == 2  # the warm-up interval not among them
        assert prof["top"] and 0 < prof["matmul_ms"] <= prof["total_ms"]
    assert "aten::bmm" in [op for op, _, _ in eng["top"]]  # the seed-batched model's products
    assert "aten::mm" in [op for op, _, _ in base["top"]]  # the plain module's
    assert row["ratio_ceiling"] == pytest.approx(row["baseline_ms_per_seed_epoch"] / eng["matmul_ms"])
    table = bench._table([row]) + bench._profiles([row])
    assert "ratio ceiling" in table and "aten::bmm" in table


@pytest.mark.parametrize("model_name", ["circuit", "reasoning"])
def test_the_adapter_side_is_the_plain_module_seed_batched_from_the_engines_initialisation(model_name):
    _, _, tensors, model = bench._setup(model_name, 3, "full", 1, "cpu")
    x = tensors["x_test"][:64]
    with torch.no_grad():
        torch.testing.assert_close(bench.adapter_model(model)(x), model(x), rtol=1e-5, atol=1e-5)


def test_one_case_with_the_adapter_reports_its_time_and_both_ratios():
    row = bench.run_case("circuit", 2, "full", epochs=1, threads=1, device="cpu", adapter=True)
    assert row["adapter_ms_per_seed_epoch"] > 0
    assert row["adapter_ratio"] == pytest.approx(row["baseline_ms_per_seed_epoch"] / row["adapter_ms_per_seed_epoch"])
    assert row["engine_over_adapter"] == pytest.approx(row["adapter_ms_per_seed_epoch"] / row["engine_ms_per_seed_epoch"])
    assert "baseline/adapter" in bench._table([row])


def test_the_compiled_adapter_and_the_adapters_ceiling_are_reported(monkeypatch):
    """--compiled: the adapter with the module kind's compile key, its compilation outside the timed
    epochs; --profile: the adapter's ceiling, the baseline over its own matrix products. What is tested is the
    benchmark's bookkeeping, so torch.compile runs its graphs through AOTAutograd without inductor's C++ kernels
    (a fifth of the time; inductor's numbers: tests/test_module_model.py)."""
    monkeypatch.setattr(torch, "compile", functools.partial(torch.compile, backend="aot_eager"))
    row = bench.run_case("circuit", 2, "full", epochs=1, threads=1, device="cpu", compiled=True, profile_epochs=1)
    # the compilation happened in the first epoch, not timed: it took longer than a timed epoch
    assert 0 < row["compiled_ms_per_seed_epoch"] * 2 / 1000 < row["compile_s"]
    assert row["compiled_ratio"] == pytest.approx(row["baseline_ms_per_seed_epoch"] / row["compiled_ms_per_seed_epoch"])
    assert row["adapter_ceiling"] == pytest.approx(row["baseline_ms_per_seed_epoch"]
                                                   / row["baseline_profile"]["matmul_ms"])
    assert row["compiled_ceiling"] == pytest.approx(row["baseline_ms_per_seed_epoch"]
                                                    / row["compiled_profile"]["matmul_ms"])
    assert "aten::bmm" in [op for op, _, _ in row["compiled_profile"]["top"]]  # vmap's batched products
    table = bench._table([row]) + bench._profiles([row])
    assert "baseline/compiled" in table and "adapter ceiling" in table and "compiled ceiling" in table
