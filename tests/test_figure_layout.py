"""Figures read cleanly: no text drawn for one panel (title, axis label, a drawn tick label, legend, text)
runs into another panel's frame or texts, in every figure of the test config (insets and twin axes, which
share their panel, excepted). The figure stage checks each figure it lays out and writes what it finds to
the job's log; the smoke run's logs are read here."""
import re

import pytest
from matplotlib.figure import Figure

from pipeline_lib.plumbing.config import load_config
from pipeline_lib.stages import figure as figure_stage
from pipeline_lib.stages.figure import save_figure
from pipeline_lib.stages.figure_layout import collisions


def overlaps(fig: Figure) -> list[str]:
    fig.draw_without_rendering()
    return collisions(fig)


def test_the_check_sees_a_title_running_into_the_next_panel():
    fig = Figure(figsize=(4, 2))
    left, right = fig.subplots(1, 2)
    left.set_title("a title far too long for its own narrow panel")
    assert any("panel 0 runs into" in p for p in overlaps(fig))
    tidy = Figure(figsize=(8, 2), layout="constrained")
    a, b = tidy.subplots(1, 2)
    a.set_title("short")
    b.set_ylabel("loss")
    assert overlaps(tidy) == []


def test_the_figure_stage_logs_each_collision_and_a_clean_figure_as_clean(tmp_path, capsys, monkeypatch):
    crowded = Figure(figsize=(4, 2), layout="constrained")
    left, _ = crowded.subplots(1, 2)
    left.set_title("a title far too long for its own narrow panel, and longer")
    out = {ext: str(tmp_path / f"crowded.{ext}") for ext in ("pdf", "png", "json")}
    save_figure(crowded, {}, {}, out["pdf"], out["png"], out["json"])
    log = capsys.readouterr().err
    n = int(re.search(r"layout of crowded: 2 axes, (\d+) texts running into another panel", log)[1])
    assert n > 0 and log.count("runs into") == n and "a title far too long" in log
    tidy = Figure(figsize=(8, 2), layout="constrained")
    a, b = tidy.subplots(1, 2)
    a.set_title("short")
    save_figure(tidy, {}, {}, out["pdf"], out["png"].replace("crowded", "tidy"), out["json"])
    assert "layout of tidy: 2 axes, 0 texts running into another panel" in capsys.readouterr().err
    monkeypatch.setattr(figure_stage, "collisions", lambda fig: 1 / 0)  # a check that fails keeps the figure
    save_figure(tidy, {}, {}, out["pdf"], out["png"].replace("crowded", "odd"), out["json"])
    assert "layout of odd: not checked (ZeroDivisionError" in capsys.readouterr().err


@pytest.mark.workflow
def test_no_text_of_one_panel_runs_into_another_in_any_figure_of_the_test_config(smoke_run):
    """Every figure job of the smoke run logged its layout, with no collision."""
    work, _ = smoke_run
    cfg = load_config(__import__("yaml").safe_load((work / "smoke.yaml").read_text()))
    problems, unchecked = {}, []
    for name in cfg.raw["figures"]:
        log = (work / cfg.paths.log("figures", name)).read_text()
        found = re.search(rf"layout of {name}: \d+ axes, (\d+) texts running into another panel", log)
        if found is None:
            unchecked.append(name)
        elif int(found[1]):
            problems[name] = log[found.start():].splitlines()[:6]
    assert len(cfg.raw["figures"]) > 20 and not unchecked and not problems, (unchecked, problems)
