"""The benchmark's baseline is the same model: a plain single-seed module built from slot i of the
engine's model computes the same logits, and one case of the benchmark runs and reports a ratio."""
import functools
import json
import subprocess
import sys

import pytest
import torch

from conftest import REPO
from pipeline_lib.build import bench_page

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
    table = bench_page.table([row]) + bench_page.profiles([row])
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
    assert "baseline/adapter" in bench_page.table([row])


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
    table = bench_page.table([row]) + bench_page.profiles([row])
    assert "baseline/compiled" in table and "adapter ceiling" in table and "compiled ceiling" in table


def _row(**extra):
    row = {"model": "circuit", "batch": "full", "seeds": 10, "threads": 1, "device": "cpu", "peak_rss_mb": 470.0,
           "engine_ms_per_seed_epoch": 6.44, "baseline_ms_per_seed_epoch": 27.1, "engine_seed_steps_per_s": 155.3,
           "baseline_seed_steps_per_s": 36.9, "ratio": 27.1 / 6.44}
    return row | extra


def test_keep_writes_the_rows_with_their_command_and_publish_fills_that_block_only(tmp_path, monkeypatch):
    """``--keep NAME``: the cases' rows, the command and the machine in docs/bench/NAME.json; the page's block of
    that name is filled from it, and a block whose run is not kept says how to make one."""
    page = tmp_path / bench_page.PAGE
    page.parent.mkdir(parents=True)
    page.write_text("intro\n<!-- bench cpu: begin -->\nold\n<!-- bench cpu: end -->\nmiddle\n"
                    "<!-- bench gpu: begin -->\n<!-- bench gpu: end -->\n")
    row = _row()
    monkeypatch.setattr(bench, "ROOT", tmp_path)
    monkeypatch.setattr(bench.subprocess, "run", lambda cmd, **kw: subprocess.CompletedProcess(
        cmd, 0, stdout="compiling\n" + json.dumps(row) + "\n", stderr=""))
    assert bench.main(["--model", "circuit", "--batch", "full", "--seeds", "10", "--keep", "cpu"]) == 0
    kept = json.loads((tmp_path / bench_page.BENCH / "cpu.json").read_text())
    assert kept["rows"] == [row] and kept["machine"] and kept["torch"] == torch.__version__
    assert kept["command"] == "python benchmarks/bench.py --model circuit --batch full --seeds 10 --keep cpu"
    text = bench_page.page(tmp_path)
    cpu = text.split("<!-- bench cpu: begin -->")[1].split("<!-- bench cpu: end -->")[0]
    assert "old" not in cpu and kept["command"] in cpu and "| circuit | full | 10 | 6.44 | 27.10 | 155 | 37 | 4.2x | 470 |" in cpu
    gpu = text.split("<!-- bench gpu: begin -->")[1]
    assert gpu.startswith("\n*Not measured: no `docs/bench/gpu.json` is kept") and "`--keep gpu`" in gpu
    assert text.startswith("intro\n") and "\nmiddle\n" in text
    page.write_text(text)
    assert bench_page.page(tmp_path) == text  # filled again from the same run: the same page
    page.write_text(text.replace("<!-- bench gpu: end -->", "<!-- bench gpu:end -->"))  # a mistyped marker
    with pytest.raises(ValueError, match="docs/performance.md: '<!-- bench gpu: begin -->' is not one half"):
        bench_page.page(tmp_path)


def test_a_kept_runs_profile_names_each_sides_largest_operators_without_the_compiled_graphs_hash(tmp_path):
    top = [["aten::bmm", 3.3, 25.0], ["## Call CompiledFxGraph fvoyirs7zq ##", 3.1, 1.0], ["aten::gelu", 0.4, 2.0],
           ["aten::add", 0.1, 9.0]]
    row = _row(engine_profile={"total_ms": 6.2, "matmul_ms": 3.3, "top": top}, ratio_ceiling=27.1 / 3.3)
    bench_page.keep("prof", [row], ["--profile", "3", "--keep", "prof"], tmp_path)
    block = bench_page.block(tmp_path, "prof")
    assert "ratio ceiling" in block and "8.2x" in block
    assert "a compiled graph" in block and "CompiledFxGraph" not in block
    assert "aten::gelu" in block and "aten::add" not in block  # the three largest only


def test_keep_refuses_a_name_that_is_not_a_file_name_before_any_case_runs(monkeypatch, capsys):
    monkeypatch.setattr(bench.subprocess, "run", lambda *a, **k: pytest.fail("a case ran"))
    with pytest.raises(SystemExit) as exit_:
        bench.main(["--keep", "../cpu"])
    assert exit_.value.code == 2 and "docs/bench/<name>.json" in capsys.readouterr().err
