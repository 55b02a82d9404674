"""`snakemake --report` on the smoke results: every configured figure under its paper, with its
caption and measured numbers; and the report rendered by a real headless Chromium."""
import html
import json
import re
import shutil
import struct
import subprocess
import zipfile

import pytest

from conftest import chromium_path, load_yaml, snakemake
from pipeline_lib import declarations
from pipeline_lib.plumbing import registry

pytestmark = pytest.mark.workflow


def _embedded(page: str, var: str):
    """A JSON object the report embeds as ``var <name> = {...};``."""
    m = re.search(rf"var {var} = (\{{.*?\}});\s*</script>", page, re.S)
    assert m, f"report has no {var}"
    return json.loads(m[1])


def _text(fragment: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


@pytest.fixture(scope="module")
def native_report(smoke_run, tmp_path_factory):
    work, _ = smoke_run
    out = tmp_path_factory.mktemp("report") / "report.html"
    res = snakemake(work, "--report", str(out))
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-3000:]
    return work, out


def test_native_report_files_every_figure_under_its_paper_with_caption_and_numbers(native_report):
    work, out = native_report
    page = out.read_text()
    results, categories = _embedded(page, "results"), _embedded(page, "categories")
    figures = load_yaml(work / "config" / "config.yaml")["figures"]
    assert set(categories) == {"Easing Optimization Paths — a Circuit Perspective", "Eureka-Moments in Transformers",
                               "Tian — training dynamics of attention (Scan&Snap, JoMA)",
                               "Tian — algebraic structure of solutions (CoGO, GaLore)",
                               "Tian — shortest-path transformer and the Spectral Line Navigator", "Claims",
                               "Every run",  # run_curves: every run's curves, under no paper
                               "Across the sources — attention over training",  # attention_atlas: runs of any source
                               "Local learning coefficient"}  # llc_trajectories: the workflow's own claims
    papers = {c["paper"] for c in declarations.declared_claims().values()}
    assert set(categories["Claims"]) == papers  # one table per paper, under its name
    for paper in papers:  # ... whose caption lists the paper's claims, each with its verdict
        (path,) = categories["Claims"][paper]
        caption = _text(results[path]["caption"])
        ids = [cid for cid, c in declarations.declared_claims().items() if c["paper"] == paper]
        assert all(cid in caption for cid in ids), paper
    for fig in figures:
        paper = registry.report_category(fig)
        filed = [p for sub in categories[paper].values() for p in sub]
        path = f"results/figures/{fig}.png"
        assert path in filed, (fig, paper)
        entry = results[path]
        assert entry["labels"] == {"figure": fig, "view": "static"}
        caption = _text(entry["caption"])
        side = json.loads((work / "results" / "figures" / f"{fig}.json").read_text())
        assert "Measured: " + " ".join(side["stats"]["summary"].split()) in caption, fig
        assert side["provenance"]["code_hash"] in caption
        text = (registry.plugin("figure", fig).path.parents[2] / "workflow" / "report" / f"{fig}.txt")
        if text.exists():  # the existing caption text, its first sentence at least
            assert " ".join(text.read_text().split())[:80] in caption, fig
        assert entry["data_uri"].startswith("data:image/png;") and ";base64," in entry["data_uri"]
        if ".html" in registry.plugin("figure", fig).get("EXTRA_OUTPUTS", []):  # its interactive view beside it
            view = f"results/figures/{fig}.html"
            assert view in filed and results[view]["labels"] == {"figure": fig, "view": "interactive"}, (fig, paper)


def test_each_view_of_the_test_config_renders_in_chromium_and_a_click_changes_it(smoke_run, tmp_path):
    from test_views import click_an_arm, move_the_slider

    work, _ = smoke_run
    views = sorted((work / "results" / "figures").glob("*.html"))
    assert views, "the test config draws no interactive view"
    for view in views:
        if view.stem == "attention_atlas":  # its interaction: the epoch slider and the seed menu
            seen = move_the_slider(view, tmp_path)
            assert seen["errors"] == [] and seen["before"] and seen["after"] != seen["before"], (view.name, seen)
            continue
        seen = click_an_arm(view, None, tmp_path)
        assert seen["errors"] == [], (view.name, seen["errors"])
        assert 0 < seen["after"] < seen["before"], (view.name, seen)


def test_native_report_has_no_restructuredtext_messages(native_report):
    """docutils renders a markup problem into the page as "System Message: WARNING/2 ..." (or ERROR/3, ...): on
    the front page (the workflow description) or in any caption, every one of them is a defect a reader sees."""
    _, out = native_report
    page = html.unescape(out.read_text())
    for pattern in ("System Message", r"\b(?:INFO|WARNING|ERROR|SEVERE)/\d"):
        found = [page[max(m.start() - 80, 0):m.end() + 120] for m in re.finditer(pattern, page)]
        assert not found, found[:3]


def test_report_zip_and_a_report_of_missing_results_names_the_file(smoke_run, tmp_path):
    work, _ = smoke_run
    res = snakemake(work, "--report", str(tmp_path / "report.zip"))
    assert res.returncode == 0, res.stderr[-3000:]
    names = zipfile.ZipFile(tmp_path / "report.zip").namelist()
    assert any(n.endswith("report.html") for n in names)
    figures = load_yaml(work / "config" / "config.yaml")["figures"]
    assert {n.rsplit("/", 1)[1] for n in names if n.endswith(".png")} == {f"{fig}.png" for fig in figures}
    empty = tmp_path / "empty"
    (empty / "config").mkdir(parents=True)
    shutil.copy(work / "config" / "config.yaml", empty / "config" / "config.yaml")
    bad = snakemake(empty, "--report", str(tmp_path / "r.html"))
    said = bad.stdout + bad.stderr  # names the first missing result: a figure or a claims table
    assert bad.returncode != 0 and ("results/figures/" in said or "results/claims/" in said) and "not exist" in said


# -- a real browser -------------------------------------------------------------------------------

# Drives the report as a user does (back to the results menu, a category, then each figure's view
# and its info panel), then writes what it saw into the page for --dump-dom.
PROBE = r"""<script>
window.addEventListener('load', () => { setTimeout(async () => {
  const sleep = ms => new Promise(r => setTimeout(r, ms));
  const out = {categories: {}, images: {}, captions: {}, broken: []};
  for (const cat of Object.keys(categories)) {
    app.setView({navbarMode: "menu"}); await sleep(300);
    app.showCategory(cat); await sleep(600);
    out.categories[cat] = document.querySelector('#app').innerText;
  }
  for (const [path, entry] of Object.entries(results)) {
    if (!path.endsWith('.png')) continue;  // the claims tables are CSV files
    app.setView({content: "img", contentPath: entry.data_uri, resultPath: path}); await sleep(300);
    app.showResultInfo(path); await sleep(300);
    const img = [...document.querySelectorAll('img')].find(i => i.getAttribute('src') === entry.data_uri);
    out.images[path] = img ? [img.complete, img.naturalWidth, img.naturalHeight] : null;
    out.captions[path] = document.querySelector('#app').innerText;
    for (const i of document.querySelectorAll('img'))
      if (!(i.complete && i.naturalWidth > 0)) out.broken.push(path + ': ' + (i.getAttribute('src') || '').slice(0, 60));
  }
  const pre = document.createElement('pre'); pre.id = 'probe-result'; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
}, 500); });
</script>"""

SHOW_FIG5 = r"""<script>
window.addEventListener('load', () => { setTimeout(() => {
  const path = Object.keys(results).find(p => p.endsWith('fig5_accuracy.png'));
  app.setView({content: "img", contentPath: results[path].data_uri, resultPath: path});
  app.showResultInfo(path);
}, 500); });
</script>"""


def _with_script(page: str, script: str) -> str:
    end = page.rfind("</body>")  # the last one: the page's scripts hold "</body>" in strings
    return page[:end] + script + page[end:]


def _headless(chromium, *args, timeout=120):
    cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=60000", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def test_report_renders_with_its_images_in_headless_chromium(native_report, tmp_path):
    chromium = chromium_path()
    work, out = native_report
    page = out.read_text()
    figures = load_yaml(work / "config" / "config.yaml")["figures"]
    probe = tmp_path / "probe.html"
    probe.write_text(_with_script(page, PROBE))
    res = _headless(chromium, f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", probe.as_uri())
    m = re.search(r'<pre id="probe-result">(.*?)</pre>', res.stdout, re.S)
    assert m, res.stderr[-2000:]
    seen = json.loads(html.unescape(m[1]))
    assert seen["broken"] == []
    for fig in figures:
        path = f"results/figures/{fig}.png"
        complete, width, height = seen["images"][path]
        # the image the browser decoded is the figure's PNG, and not a collapsed one (a table figure of one row is
        # about 70 px high at 150 dpi, so no bar of a plot's height)
        png = (work / path).read_bytes()
        assert complete and (width, height) == struct.unpack(">II", png[16:24]), (fig, seen["images"][path])
        assert width > 300 and height > 50, (fig, seen["images"][path])
        paper = registry.report_category(fig)
        assert fig in seen["categories"][paper], (fig, paper)
        summary = json.loads((work / "results" / "figures" / f"{fig}.json").read_text())["stats"]["summary"]
        assert " ".join(summary.split())[:40] in " ".join(seen["captions"][path].split()), fig
    # and a screenshot of Fig. 5 in the report: a real image, not a blank page
    show = tmp_path / "fig5.html"
    show.write_text(_with_script(page, SHOW_FIG5))
    shot = tmp_path / "fig5.png"
    _headless(chromium, f"--user-data-dir={tmp_path / 'profile2'}", f"--screenshot={shot}",
              "--window-size=1400,1000", show.as_uri())
    import matplotlib.image as mpimg

    pixels = mpimg.imread(shot)
    assert pixels.shape[:2] == (1000, 1400)
    assert len({tuple(p) for p in pixels[::7, ::7, :3].reshape(-1, 3).round(2)}) > 50  # a plot's many colours
