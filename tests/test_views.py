"""The interactive views (pipeline_lib.figures.views): thinning, their rows, a self-contained page, and a
real headless Chromium that renders one and changes it on a click."""
import html
import json
import re
import subprocess

import numpy as np
import xarray as xr

from conftest import chromium_path
from pipeline_lib.figures import fig5_accuracy, views
from pipeline_lib.figures.style import ARM_COLORS


def test_thinning_keeps_each_phase_log_spaced_and_both_sides_of_a_switch():
    epochs = np.arange(0, 10001)
    idx = views.thin_epochs(epochs, keep=50, always=[3000])
    kept = epochs[idx]
    assert kept[0] == 0 and kept[-1] == 10000 and {2999, 3000, 3001} <= set(kept)
    assert len(kept) <= 2 * 50 + 1 and np.all(np.diff(kept) > 0)
    # log-spaced from each phase's start: dense after the switch, sparse late in it
    assert np.sum((kept > 3000) & (kept <= 3100)) > np.sum((kept > 9000) & (kept <= 10000))
    assert list(views.thin_epochs(np.arange(5), keep=50)) == [0, 1, 2, 3, 4]  # short runs keep every epoch


def test_curve_rows_are_long_form_on_the_thinned_epochs_without_nans():
    acc = np.array([[0.1, 0.5, np.nan], [0.2, 0.6, 0.9]])
    ds = xr.Dataset({"test_acc": (("seed", "epoch"), acc)}, coords={"seed": [3, 4], "epoch": [0, 1, 2]})
    rows = views.curve_rows({"arm": ds}, {"test_acc": "test"}, {})
    assert len(rows) == 5 and {"arm": "arm", "seed": 4, "set": "test", "epoch": 2, "value": 0.9} in rows


def _fig5_view(tmp_path, jump_epochs):
    """Fig. 5's view of two arms of 4 seeds over 101 epochs (curriculum switching at 50)."""
    e = np.arange(101)
    acc = lambda jumps: np.stack([np.where(e >= j, 1.0, 0.25) for j in jumps])  # noqa: E731
    arms = {label: xr.Dataset({m: (("seed", "epoch"), acc(jumps)) for m in fig5_accuracy.METRICS},
                              coords={"seed": np.arange(4), "epoch": e}) for label, jumps in jump_epochs.items()}
    switches = {"curriculum": [50]}
    stats = fig5_accuracy.fig5_stats(arms, switches, 0.9)
    path = tmp_path / "view.html"
    size = fig5_accuracy.write_view(arms, switches, stats, str(path))
    return path, size


def test_a_view_is_one_self_contained_page(tmp_path):
    path, size = _fig5_view(tmp_path, {"scratch": [200] * 4, "curriculum": [60, 61, 70, 200]})
    page = path.read_text()
    assert size == len(page.encode()) < 3_000_000
    assert not re.search(r"<script[^>]+src=", page)  # no library fetched from anywhere: inlined
    assert "vegaEmbed(" in page and "Fig. 5" in page
    spec = json.loads(re.search(r"vegaEmbed\('#view', (\{.*\}), \{actions", page, re.S)[1].replace("<\\/", "</"))
    assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/")
    data = spec["data"]["values"]
    assert data.count("\nm,") == 3  # three curriculum seeds reach 0.9 after the switch: three diamonds
    assert data.count("\ns,") == 2  # the switch, in the train and in the test panel


# Waits for the view, counts its lines, clicks one arm's entry in the legend, counts again; errors and
# console errors are collected; the result is written into the page for --dump-dom.
CLICK_AN_ARM = r"""<script>
const seen = {errors: []};
window.addEventListener('error', e => seen.errors.push(String(e.message)));
const consoleError = console.error; console.error = (...a) => { seen.errors.push(a.join(' ')); consoleError(...a); };
window.addEventListener('load', async () => {
  try {
    await window.viewReady;
    const count = () => document.querySelectorAll('#view .mark-line path').length;
    seen.legend = [...document.querySelectorAll('#view .role-legend-label text')].map(t => t.textContent);
    seen.colors = [...document.querySelectorAll('#view .role-legend-symbol path')].map(p => p.getAttribute('fill'));
    seen.before = count();
    const labels = [...document.querySelectorAll('#view .role-legend-label text')];
    const entry = ARM === null ? labels[0] : labels.find(t => t.textContent === ARM);
    entry.dispatchEvent(new MouseEvent('click', {bubbles: true}));
    await new Promise(r => setTimeout(r, 300));
    seen.after = count();
  } catch (e) { seen.errors.push(String(e)); }
  const pre = document.createElement('pre'); pre.id = 'probe-result'; pre.textContent = JSON.stringify(seen);
  document.body.appendChild(pre);
});
</script>"""


def _in_chromium(view, script: str, tmp_path, tag: str) -> dict:
    """What headless Chromium saw on ``view`` (an HTML file) with ``script`` added before its end: the JSON the
    script writes into ``<pre id="probe-result">``."""
    page = view.read_text()
    end = page.rfind("</body>")
    probe = tmp_path / f"{tag}-{view.name}"
    probe.write_text(page[:end] + script + page[end:])
    cmd = [chromium_path(), "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=30000",
           f"--user-data-dir={tmp_path / ('profile-' + tag + '-' + view.stem)}", "--dump-dom", probe.as_uri()]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    m = re.search(r'<pre id="probe-result">(.*?)</pre>', res.stdout, re.S)
    assert m, res.stderr[-2000:]
    return json.loads(html.unescape(m[1]))


def click_an_arm(view, arm: str | None, tmp_path) -> dict:
    """What headless Chromium saw on ``view`` (an HTML file) before and after a click on ``arm`` in its legend
    (None: its first entry)."""
    return _in_chromium(view, CLICK_AN_ARM.replace("ARM", json.dumps(arm)), tmp_path, "probe")


def test_a_view_renders_in_headless_chromium_and_a_click_on_an_arm_shows_it_alone(tmp_path):
    path, _ = _fig5_view(tmp_path, {"scratch": [200] * 4, "curriculum": [60, 61, 70, 200]})
    seen = click_an_arm(path, "curriculum", tmp_path)
    # the legend in the arms' order, each arm the static figures' colour of its place
    assert seen["errors"] == [] and seen["legend"] == ["scratch", "curriculum"]
    assert [c.lower() for c in seen["colors"]] == [c.lower() for c in ARM_COLORS[:2]]
    # per arm and panel: 4 seed lines and the median; after the click, the curriculum's alone
    assert (seen["before"], seen["after"]) == (2 * 2 * 5, 2 * 5)


def test_the_eureka_view_has_a_panel_pair_per_experiment_and_marks_each_eureka_epoch(tmp_path):
    from pipeline_lib.figures import eureka_accuracy

    e = np.arange(60)
    rows = {exp: {arm: xr.Dataset({v: (("seed", "epoch"), np.stack([np.where(e >= j, 1.0, 0.5) for j in jumps]))
                                   for v in ("train_acc", "test_acc", "train_loss", "test_loss")},
                                  coords={"seed": [0, 1], "epoch": e})
                  for arm, jumps in (("Softmax", (40, 99)), ("NormSoftmax", (10, 20)))}
            for exp in ("reasoning", "reasoning_lr5e4")}
    stats = eureka_accuracy.eureka_accuracy_stats(rows, {x: 0.5 for x in rows}, {x: 0.7 for x in rows})
    path = tmp_path / "eureka.html"
    eureka_accuracy.write_view(rows, stats, {x: 0.7 for x in rows}, str(path))
    page = path.read_text()
    data = json.loads(re.search(r"vegaEmbed\('#view', (\{.*\}), \{actions", page, re.S)[1].replace("<\\/", "</"))
    values = data["data"]["values"]
    assert values.count("\nm,") == 2 * 3  # per experiment: Softmax's one seed that jumps, NormSoftmax's two
    assert all(f"{x}: {part}" in values for x in rows for part in ("train", "test"))


def _atlas_script(steps: str) -> str:
    """A script for an atlas view: ``steps`` (JavaScript run once the view is ready, with ``view``, ``seen``,
    ``fills()``: the map's cell colours, ``text()``: its label, and ``settle()``: the view run again) record what
    they see into ``seen``, which the page then shows in ``<pre id="probe-result">``, with any error."""
    return r"""<script>
const seen = {errors: []};
window.addEventListener('error', e => seen.errors.push(String(e.message)));
const consoleError = console.error; console.error = (...a) => { seen.errors.push(a.join(' ')); consoleError(...a); };
const fills = () => [...document.querySelectorAll('#view .mark-rect path')].map(p => p.getAttribute('fill'))
  .filter(f => f.startsWith('rgb('));  // the map's cells (the ticks are red, the legend a gradient)
const text = () => [...document.querySelectorAll('#view .mark-text text')].map(t => t.textContent).join(' ');
const menu = name => [...document.querySelectorAll('#view select')].find(s => s.name === name);
const tokens = view => {  // [probe, position, token] of every cell of the map, as its tooltip names them
  const out = [];
  (function walk(n) {
    if (!n) return;
    if (n.marktype === 'rect') (n.items || []).forEach(i => i.datum && 'token' in i.datum
      && out.push([Number(i.datum.probe), i.datum.position, i.datum.token]));
    (n.items || []).forEach(walk);
  })(view.scenegraph().root);
  return out;
};
window.addEventListener('load', async () => {
  try {
    const view = await window.viewReady;
    const settle = async () => { await view.runAsync(); await new Promise(r => setTimeout(r, 300)); };
""" + steps + r"""
  } catch (e) { seen.errors.push(String(e)); }
  const pre = document.createElement('pre'); pre.id = 'probe-result'; pre.textContent = JSON.stringify(seen);
  document.body.appendChild(pre);
});
</script>"""


# the atlas: the rects' fills, then the slider moved to its last step through its own input element, then the seed
# menu set to its last option; each read after the view has run
MOVE_THE_SLIDER = _atlas_script(r"""
    seen.before = fills(); seen.label_before = text(); seen.tokens = tokens(view);
    const slider = document.querySelector('#view input[type=range]');
    slider.value = slider.max; slider.dispatchEvent(new Event('input', {bubbles: true}));
    await settle();
    seen.after = fills(); seen.label_after = text();
    const seeds = menu('seed');
    seeds.value = seeds.options[seeds.options.length - 1].value; seeds.dispatchEvent(new Event('change', {bubbles: true}));
    await settle();
    seen.other_seed = fills(); seen.label_seed = text();""")


def move_the_slider(view, tmp_path) -> dict:
    """What headless Chromium saw on an atlas view before and after moving its epoch slider and its seed menu."""
    return _in_chromium(view, MOVE_THE_SLIDER, tmp_path, "slide")


def _atlas(seeds=(0, 1), epochs=(0, 1, 2, 5, 10, 20)):
    """A run's trajectory whose probe attention moves from uniform to one-hot on position (seed + probe) % 4
    over the epochs, seed 1 a step ahead of seed 0 in its transition."""
    E, P, Q = len(epochs), 3, 4
    att = np.zeros((len(seeds), E, P, Q))
    for i, s in enumerate(seeds):
        for k in range(E):
            t = k / (E - 1)
            for p in range(P):
                att[i, k, p] = (1 - t) / Q
                att[i, k, p, (s + p) % Q] += t
    acc = np.array([[0.5 if k < 3 + i else 1.0 for k in range(E)] for i in range(len(seeds))])
    return xr.Dataset({"attention": (("seed", "epoch", "probe", "position"), att),
                       "attention_recorded": ("epoch", np.ones(E, bool)),
                       "probe_x": (("probe", "token_position"), np.arange(P * (Q - 1)).reshape(P, Q - 1)),
                       "test_acc": (("seed", "epoch"), acc)},
                      coords={"seed": list(seeds), "epoch": list(epochs)})


def test_the_atlas_reads_tokens_and_transitions_and_fits():
    from pipeline_lib.figures import attention_atlas

    a = attention_atlas.read_atlas(_atlas(), threshold=0.9)
    assert a.token.values[1].tolist() == ["CLS", "3", "4", "5"]  # CLS first: one more position than tokens
    assert a.transition.values.tolist() == [5.0, 10.0]  # the first epoch with test accuracy above 0.9
    cells, epochs, marks, counts = attention_atlas.atlas_rows({"r": a}, keep=40)
    assert len(cells) == 2 * 6 * 3  # seeds x kept epochs x probes
    assert cells[-1]["w"] == "0 0 0 100" and cells[0]["w"] == "25 25 25 25"  # one-hot on (1 + 2) % 4 at the end
    assert [(m["seed"], m["k"], m["epoch"]) for m in marks] == [(0, 3, 5), (1, 4, 10)]
    assert [e["epoch"] for e in epochs] == [0, 1, 2, 5, 10, 20]
    assert counts == [{"key": "r|rec", "n": 6}]
    # with heads: one view per layer's head, on the snapshots' epochs, each seed's transition kept among them
    cells, epochs, marks, counts = attention_atlas.atlas_rows({"r": a}, keep=40, heads={"r": _heads()})
    assert [c["key"] for c in counts] == ["r|rec", "r|1.1", "r|1.2"] and [c["n"] for c in counts] == [6, 3, 3]
    assert len(cells) == 2 * 6 * 3 + 2 * (2 * 3 * 3)  # + heads x seeds x snapshots x probes
    head2 = [c["w"] for c in cells if c["view"] == "1.2" and c["seed"] == 0 and c["probe"] == 0]
    assert head2 == ["0 0 100 0"] * 3  # head 2 of the planted snapshots: one-hot on position 2
    assert [e["epoch"] for e in epochs if e["key"].startswith("r|1.1|")] == [0, 10, 20]


def _heads(seeds=(0, 1), epochs=(0, 10, 20)):
    """Per-head attention of the atlas's run at three snapshots: head 1 uniform, head 2 one-hot on position 2."""
    h = np.zeros((len(seeds), len(epochs), 1, 2, 3, 4))
    h[:, :, 0, 0] = 0.25
    h[:, :, 0, 1, :, 2] = 1.0
    return xr.DataArray(h, dims=("seed", "epoch", "layer", "head", "probe", "position"),
                        coords={"seed": list(seeds), "epoch": list(epochs)})


def test_the_atlas_renders_in_headless_chromium_and_the_slider_and_seed_change_it(tmp_path):
    from pipeline_lib.figures import attention_atlas

    a = attention_atlas.read_atlas(_atlas(), threshold=0.9)
    path = tmp_path / "attention_atlas.html"
    attention_atlas.write_view({"r": a}, 0.9, str(path))
    seen = move_the_slider(path, tmp_path)
    assert seen["errors"] == []
    assert len(seen["before"]) == 3 * 4 and len(set(seen["before"])) == 1  # epoch 0: uniform, one colour
    assert len(seen["after"]) == 3 * 4 and len(set(seen["after"])) == 2  # last epoch: one-hot, two colours
    assert seen["other_seed"] != seen["after"]  # seed 1's one-hot positions are shifted by one
    assert "epoch 0 " in seen["label_before"] and "epoch 20 " in seen["label_after"] and "seed 1" in seen["label_seed"]
    # the tooltip's token of each cell is the one at that key position (CLS first), probe 1 holding tokens 3, 4, 5
    assert [t for p, _, t in sorted(seen["tokens"], key=lambda c: (c[0], c[1])) if p == 1] == ["CLS", "3", "4", "5"]


def test_the_atlas_menu_of_heads_shows_a_head_recomputed_from_the_snapshots(tmp_path):
    from pipeline_lib.figures import attention_atlas

    a = attention_atlas.read_atlas(_atlas(), threshold=0.9)
    path = tmp_path / "attention_atlas.html"
    attention_atlas.write_view({"r": a}, 0.9, str(path), heads={"r": _heads()})
    seen = choose_a_head(path, "1.2", tmp_path)
    assert seen["errors"] == [] and seen["options"] == ["rec", "1.1", "1.2"]
    assert len(set(seen["before"])) == 1 and len(set(seen["after"])) == 2  # recorded at epoch 0: uniform; head 2: one-hot
    # the slider at its end (index 5) holds head 2's last snapshot (index 2, epoch 20)
    assert "epoch 20 " in seen["label_end"] and len(seen["end"]) == 3 * 4


# the atlas's attention menu: the rects' fills, then the menu set to a head, then the slider moved to its end
CHOOSE_A_HEAD = _atlas_script(r"""
    seen.before = fills();
    const views = menu('view');
    seen.options = [...views.options].map(o => o.value);
    views.value = HEAD; views.dispatchEvent(new Event('change', {bubbles: true}));
    await settle();
    seen.after = fills();
    const slider = document.querySelector('#view input[type=range]');
    slider.value = slider.max; slider.dispatchEvent(new Event('input', {bubbles: true}));
    await settle();
    seen.end = fills(); seen.label_end = text();""")


def choose_a_head(view, head: str, tmp_path) -> dict:
    """What headless Chromium saw on an atlas view before and after choosing ``head`` in its attention menu, and
    with the slider then moved to its end."""
    return _in_chromium(view, CHOOSE_A_HEAD.replace("HEAD", json.dumps(head)), tmp_path, "head")


def test_the_views_script_is_built_once_per_version_of_vl_convert(tmp_path, monkeypatch):
    import vl_convert

    from pipeline_lib.plumbing import remembered

    built = []
    real = vl_convert.javascript_bundle
    monkeypatch.setattr(vl_convert, "javascript_bundle", lambda: built.append(1) or real())
    monkeypatch.setenv(remembered.ENV, str(tmp_path))
    views._bundle.cache_clear()
    try:
        first = views._bundle()
        views._bundle.cache_clear()  # as a new process would
        assert views._bundle() == first and "vegaEmbed" in first and len(built) == 1
        monkeypatch.setattr(views.metadata, "version", lambda name: "0.0.0")  # another vl_convert: built anew
        views._bundle.cache_clear()
        assert views._bundle() == first and len(built) == 2
    finally:
        views._bundle.cache_clear()
