"""Figures read cleanly: no text drawn for one panel (title, axis label, a drawn tick label, legend, text)
runs into another panel's frame or texts, in every figure of the test config (insets and twin axes, which
share their panel, excepted)."""
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from pipeline_lib.plumbing import registry
from pipeline_lib.plumbing.config import load_config
from pipeline_lib.plumbing.jobs import FIGURE_OUTPUTS, figure_outputs

SLACK = 1.0  # square pixels of overlap tolerated (antialiasing)


def drawn_texts(ax, renderer) -> list:
    """(text, bbox) of every text matplotlib draws for an axes: titles, axis labels and the labels of the ticks
    it draws (those inside the view; none for an axes turned off), legend texts and the axes' own texts."""
    texts = [ax.title, ax._left_title, ax._right_title]
    for axis in (ax.xaxis, ax.yaxis):
        if not ax.axison or not axis.get_visible():
            continue
        texts.append(axis.label)
        for tick in axis._update_ticks():
            texts += [t for t in (tick.label1, tick.label2) if t.get_visible()]
        texts.append(axis.offsetText)
    legend = ax.get_legend()
    if legend is not None and legend.get_visible():
        texts += [*legend.get_texts(), legend.get_title()]
    texts += list(ax.texts)
    out = []
    for t in texts:
        s = t.get_text()
        if t.get_visible() and isinstance(s, str) and s.strip():
            bb = t.get_window_extent(renderer)
            if bb.width > 0 and bb.height > 0:
                out.append((s[:40], bb))
    return out


def _area(a, b) -> float:
    w, h = min(a.x1, b.x1) - max(a.x0, b.x0), min(a.y1, b.y1) - max(a.y0, b.y0)
    return w * h if w > 0 and h > 0 else 0.0


def overlaps(fig: Figure) -> list[str]:
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    axes = [a for a in fig.axes if a.get_visible()]
    frames = [a.get_window_extent(renderer) for a in axes]
    texts = [drawn_texts(a, renderer) for a in axes]
    found = []
    for i in range(len(axes)):
        for j in range(len(axes)):
            if i == j or _area(frames[i], frames[j]) > 0:  # the same panel (an inset, a twin axis)
                continue
            for s, bb in texts[i]:
                if _area(bb, frames[j]) > SLACK:
                    found.append(f"{s!r} of panel {i} runs into panel {j}")
                found += [f"{s!r} of panel {i} runs into {s2!r} of panel {j}" for s2, bb2 in texts[j]
                          if i < j and _area(bb, bb2) > SLACK]
    return found


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


@pytest.mark.workflow
def test_no_text_of_one_panel_runs_into_another_in_any_figure_of_the_test_config(smoke_run, tmp_path, monkeypatch):
    work, _ = smoke_run
    monkeypatch.chdir(work)  # the config's paths are relative to the run's working directory
    cfg = load_config(__import__("yaml").safe_load((work / "smoke.yaml").read_text()))
    problems = {}
    for name in cfg.raw["figures"]:
        extra = {ext: str(tmp_path / f"{name}{ext}") for ext in figure_outputs(name)[len(FIGURE_OUTPUTS):]}
        fig, _ = registry.load("figure", name).build(cfg, cfg.figures[name], cfg.paths, extra)
        found = overlaps(fig)
        if found:
            problems[name] = found[:5]
    assert len(cfg.raw["figures"]) > 20 and not problems, problems
