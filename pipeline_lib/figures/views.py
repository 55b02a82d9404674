"""Interactive views beside the static figures: Vega-Lite charts built with altair, written as one
self-contained HTML file each (the Vega, Vega-Lite and Vega-Embed libraries inlined from vl-convert's
bundle, so a view opens without a server or a network) and filed in ``snakemake --report`` next to the
figure's PNG. A figure module writes its view in ``build`` to ``outputs[".html"]`` (``EXTRA_OUTPUTS``).

:func:`seed_bands` is the view of a figure's arms over training: per arm and set the median bold, the
interquartile band shaded and every seed a thin line that a click picks out (double click: all again); a
click on an arm in the legend shows that arm alone; switches dashed and each seed's transition marked.
Epochs are thinned, log-spaced within each phase (:func:`thin_epochs`), to keep a view small.
"""
from __future__ import annotations

import csv
import functools
import hashlib
import html
import io
import json
from importlib import metadata

import numpy as np
import xarray as xr

from .style import ARM_COLORS

VIEW_EPOCHS = 80  # log-spaced epochs kept per phase of a curve at most (and the epoch before a switch)
# the report embeds a view as a base64 data URI, which Chromium refuses beyond 2 MiB (2,097,152 characters): a
# page stays under 3/4 of that, thinning its epochs further where it must (:func:`write_fitting`)
MAX_VIEW_BYTES = 1_500_000


def thin_epochs(epochs: np.ndarray, keep: int = VIEW_EPOCHS, always=()) -> np.ndarray:
    """Indices of about ``keep`` epochs per phase, log-spaced from the phase's start (its first and last epoch
    among them): the phases are split at the epochs in ``always`` (a switch), whose epoch before stays too, so
    both sides of the jump do. Sorted."""
    n = len(epochs)
    starts = [0] + [int(np.flatnonzero(epochs == e)[0]) for e in always if np.any(epochs == e)]
    ends = starts[1:] + [n]
    idx = [np.arange(start, end) if end - start <= keep else
           np.unique(np.round(np.geomspace(1, end - start, keep)).astype(int) - 1 + start)
           for start, end in zip(starts, ends) if end > start]
    return np.unique(np.concatenate(idx + [np.array([max(s - 1, 0) for s in starts[1:]], dtype=int)]))


def curve_rows(arms: dict[str, xr.Dataset], variables: dict[str, str], switches: dict[str, list[int]],
               digits: int = 3, keep: int = VIEW_EPOCHS) -> list[dict]:
    """Long-form rows (arm, seed, set, epoch, value) of each arm's ``variables`` (variable -> the set's
    label), on :func:`thin_epochs` (``keep`` per phase); NaN values left out."""
    rows = []
    for label, ds in arms.items():
        idx = thin_epochs(ds.epoch.values, keep, always=switches.get(label, []))
        epochs = ds.epoch.values[idx].tolist()
        for var, set_label in variables.items():
            values = np.round(ds[var].transpose("seed", "epoch").values[:, idx].astype(float), digits)
            for seed, row in zip(ds.seed.values.tolist(), values):
                rows += [{"arm": label, "seed": seed, "set": set_label, "epoch": e, "value": v}
                         for e, v in zip(epochs, row.tolist()) if not np.isnan(v)]
    return rows


def seed_bands(rows: list[dict], value: str, marks: list[dict] = (), switches: list[dict] = (),
               sets: list[str] | None = None, columns: int | None = None):
    """The seed-band chart of :func:`curve_rows`' rows, one panel per set: per arm the median and the
    interquartile band over seeds and every seed thin, against epoch on a linear axis. ``marks``: points (arm, seed, set, epoch, value) drawn
    on the seed lines (each seed's transition); ``switches``: (arm, epoch) drawn as dashed rules; ``columns``: the
    panels wrapped into rows of that many (default: one row)."""
    import altair as alt

    arm = alt.selection_point(fields=["arm"], bind="legend", name="arm")
    seed = alt.selection_point(fields=["arm", "seed"], on="click", clear="dblclick", name="seed")
    x = alt.X("epoch:Q", title="epoch")
    y = alt.Y("value:Q", title=value, scale=alt.Scale(domain=[0, 1]) if value == "accuracy" else alt.Undefined)
    # one dataset for every layer (a faceted layer chart needs it at the top), each layer its own kind of row
    # (c: curve, m: mark, s: switch), each arm by its number, its label computed from it (a smaller page)
    labels = list(dict.fromkeys(r["arm"] for r in [*rows, *marks, *switches]))
    # each arm the colour of its place, as in the static figures (Vega's default scheme gives two arms of five
    # neighbouring blues)
    palette = [ARM_COLORS[i % len(ARM_COLORS)] for i in range(len(labels))]
    color = alt.Color("arm:N", title="arm (click: this arm alone)", scale=alt.Scale(domain=labels, range=palette))
    number = {label: i for i, label in enumerate(labels)}
    data = [{**r, "kind": kind, "a": number[r["arm"]]} for kind, part in (("c", rows), ("m", marks), ("s", switches))
            for r in part]
    base = alt.Chart(inline_csv(data, ("kind", "a", "seed", "set", "epoch", "value")))
    curves = base.transform_filter(alt.datum.kind == "c")
    band = curves.transform_aggregate(q1="q1(value)", q3="q3(value)", groupby=["arm", "set", "epoch"]).mark_area(
        opacity=0.25).encode(x=x, y=alt.Y("q1:Q", title=value), y2="q3:Q", color=color)
    lines = curves.mark_line(strokeWidth=0.8).encode(
        x=x, y=y, color=color, detail="seed:N",
        opacity=alt.condition(seed, alt.value(0.9), alt.value(0.15)),
        tooltip=["arm:N", "seed:N", "epoch:Q", alt.Tooltip("value:Q", title=value, format=".3f")]).add_params(seed)
    median = curves.transform_aggregate(median="median(value)", groupby=["arm", "set", "epoch"]).mark_line(
        strokeWidth=2.5).encode(x=x, y=alt.Y("median:Q", title=value), color=color)
    points = base.transform_filter(alt.datum.kind == "m").mark_point(filled=True, size=30, shape="diamond").encode(
        x=x, y=alt.Y("value:Q", title=value), color=color,
        tooltip=["arm:N", "seed:N", alt.Tooltip("epoch:Q", title="transition epoch")])
    rules = base.transform_filter(alt.datum.kind == "s").mark_rule(strokeDash=[4, 3]).encode(
        x=x, color=color, tooltip=["arm:N", alt.Tooltip("epoch:Q", title="switch")])
    chart = alt.layer(band, lines, median, points, rules).transform_calculate(
        arm=f"{json.dumps(labels)}[datum.a]").transform_filter(arm).properties(width=300, height=220)
    if columns:  # the panels wrapped into rows of ``columns``
        return chart.facet(facet=alt.Facet("set:N", title=None, sort=sets), columns=columns).add_params(arm)
    return chart.facet(column=alt.Column("set:N", title=None, sort=sets)).add_params(arm)


def inline_csv(rows: list[dict], fields: tuple[str, ...]):
    """The rows as inline CSV data (a third of the size of a JSON list of objects); a missing field is empty,
    which Vega reads as null; ``a`` (an arm's number), ``seed``, ``epoch`` and ``value`` are parsed as numbers."""
    import altair as alt

    out = io.StringIO()
    writer = csv.DictWriter(out, fields, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    parse = {f: "number" for f in ("a", "seed", "epoch", "value") if f in fields}
    return alt.Data(values=out.getvalue(), format=alt.DataFormat(type="csv", parse=parse))


@functools.cache
def _bundle() -> str:
    """Vega, Vega-Lite and vega-embed as one script: built by vl_convert (2 s), remembered on disk per version of
    vl_convert (:mod:`pipeline_lib.plumbing.remembered`)."""
    import vl_convert

    from ..plumbing import remembered

    try:
        key = hashlib.sha256(f"vl_convert {metadata.version('vl-convert-python')}".encode()).hexdigest()
    except metadata.PackageNotFoundError:  # not installed as a distribution: not remembered
        key = None
    text = remembered.recall("view-scripts", key)
    if text is None:
        text = vl_convert.javascript_bundle()
        remembered.keep("view-scripts", key, text)
    return text


def write_view(chart, path: str, title: str, note: str = "") -> int:
    """Write ``chart`` (an altair chart) as one self-contained HTML page at ``path``: its title, ``note`` (how
    to use it) and the chart, the libraries inlined; ``window.viewReady`` resolves to the rendered Vega view
    (the report's browser test drives it). Returns the file's size in bytes."""
    spec = json.dumps(chart.to_dict(), separators=(",", ":")).replace("</", "<\\/")  # no "</script>" inside
    page = (f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{html.escape(title)}</title>\n'
            f"<script>{_bundle()}</script></head>\n<body style=\"font-family: sans-serif\">\n"
            f"<h3>{html.escape(title)}</h3><p>{html.escape(note)}</p><div id=\"view\"></div>\n"
            f"<script>window.viewReady = vegaEmbed('#view', {spec}, {{actions: false, renderer: 'svg'}}).then(r => r.view);</script>\n"
            "</body></html>\n")
    with open(path, "w") as fh:
        fh.write(page)
    return len(page.encode())


def write_fitting(chart_of, path: str, title: str, note: str = "", keep: int = VIEW_EPOCHS) -> int:
    """:func:`write_view` of ``chart_of(keep)`` (a chart on ``keep`` epochs per phase), halving ``keep`` until the
    page fits :data:`MAX_VIEW_BYTES`; the note says how many epochs it kept. Returns the page's size."""
    while True:
        size = write_view(chart_of(keep), path, title, f"{note} Up to {keep} epochs per phase, log-spaced.")
        if size <= MAX_VIEW_BYTES or keep <= 5:
            return size
        keep //= 2
