"""Figures read cleanly: no text drawn for one panel (a title, an axis label, a drawn tick label, a legend, a
text) runs into another panel's frame or texts. The figure stage checks every figure it lays out and writes
what it finds to the job's log; insets and twin axes, which share their panel, are not compared."""
from __future__ import annotations

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


def collisions(fig) -> list[str]:
    """Each text of one panel that runs into another panel's frame or texts, in words, on ``fig`` as it was last
    laid out (``fig.draw_without_rendering()`` lays out a figure never drawn)."""
    renderer = fig._get_renderer()
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
