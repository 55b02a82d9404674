"""Published numbers cannot go stale: every file `python -m pipeline_lib publish` generates is what it would write
now, from the statistics kept in docs/stats (no results folder, no training); re-scoring kept statistics gives the
figure jobs' own verdicts; and no doc links what a fresh clone lacks."""
import json
import re
import shutil

import pytest

from conftest import REPO
from pipeline_lib import declarations
from pipeline_lib.build import publish


def test_every_generated_file_is_what_publish_writes_now():
    stale = [str(path.relative_to(REPO)) for path, text in publish.generated(REPO).items()
             if not path.exists() or path.read_text() != text]
    assert not stale, (f"{', '.join(stale)} differ from what the current rules, caveats, declarations and kept "
                       "statistics give: run `python -m pipeline_lib publish` (seconds) and commit the result")


def test_the_kept_statistics_are_small_and_name_their_config():
    kept = sorted((REPO / publish.KEPT).glob("*.json"))
    assert kept and sum(p.stat().st_size for p in kept) < 5_000_000
    for path in kept:
        doc = json.loads(path.read_text())
        assert (REPO / doc["config"]).exists() and doc["figures"] and doc["cost"]["jobs"] > 0, path.name


@pytest.mark.workflow
def test_rescoring_the_kept_statistics_of_a_run_gives_its_figures_own_verdicts(smoke_run, tmp_path):
    """The smoke run's statistics kept, then re-scored as `publish` does: every claim's verdict and estimate equal
    to what its ledger job wrote (``claims.json``); and none needs a rerun (the code and config are the ones it ran
    with). Kept with --earlier-as-rerun over a run of another machine, which becomes that machine's rerun; kept so
    again, this machine's run is refused and nothing changes."""
    from pipeline_lib.build.waits import machine

    work, _ = smoke_run
    root = tmp_path / "checkout"
    for part in ("pipeline_lib", "README.md", "workflow"):
        (shutil.copytree if (REPO / part).is_dir() else shutil.copy)(REPO / part, root / part)
    (root / "config").mkdir()
    shutil.copy(work / "config" / "config.yaml", root / "config" / "config.yaml")
    earlier = {**json.loads((REPO / publish.KEPT / "config.json").read_text()), "machine": "CPU Y"}
    earlier["figures"] = {f: {k: v for k, v in s.items() if k != "machine"} for f, s in earlier["figures"].items()}
    publish.write_kept(root / publish.KEPT / "config.json", earlier)
    kept = publish.keep(work / "results", root, earlier=True)  # the earlier run, made on CPU Y, is set aside
    assert json.loads((root / publish.KEPT / "config-rerun.json").read_text()) == {**earlier, "rerun": True}
    assert json.loads(kept.read_text())["machine"] == machine()
    files = {p.name: p.read_bytes() for p in (root / publish.KEPT).iterdir()}
    with pytest.raises(ValueError, match="this machine"):  # this machine's numbers again: refused, nothing changes
        publish.keep(work / "results", root, earlier=True)
    assert {p.name: p.read_bytes() for p in (root / publish.KEPT).iterdir()} == files
    for fig in publish.README_FIGURES:  # the README's figure is the kept run's own drawing
        assert (root / publish.README_IMG / f"{fig}.png").read_bytes() == (work / "results" / "figures" / f"{fig}.png").read_bytes()
    rows, _, rerun = publish.rescore(root, kept)
    scored = {}
    for figure_scores in json.loads((work / "results" / "claims.json").read_text())["claims"].values():
        scored.update(figure_scores)
    assert scored and not rerun
    for r in rows:
        if r["id"] in scored:
            assert (r["verdict"], r["measured"]) == (scored[r["id"]]["verdict"], scored[r["id"]]["measured"]), r["id"]


def test_no_doc_links_a_file_a_fresh_clone_lacks():
    broken = {}
    for md in [REPO / "README.md", REPO / "CHANGELOG.md", REPO / "config" / "README.md", *(REPO / "docs").rglob("*.md")]:
        for target in re.findall(r"\]\(([^)\s]+)\)", md.read_text()):
            if not re.match(r"[a-z]+:", target) and not target.startswith("#"):
                path = (md.parent / target.split("#")[0]).resolve()
                if not path.exists() or (REPO / "results") in path.parents:  # results/ is no clone's
                    broken.setdefault(str(md.relative_to(REPO)), []).append(target)
    assert not broken, broken


def test_a_verified_refactor_restamps_only_statistics_its_old_code_computed(tmp_path):
    """After a refactor the lock verified, kept statistics stamped with the old code of a verified figure take the
    new stamp; another stamp (statistics of yet older code) or a figure the test config does not draw keeps its."""
    class Stamp:  # a Code whose every job has one code param
        def __init__(self, code):
            self.code = code

        def job_code(self, *modules, script=None, data=""):
            return self.code

    (tmp_path / "config").symlink_to(REPO / "config")
    (tmp_path / "docs" / "stats").mkdir(parents=True)
    kept = {"config": "config/config.yaml", "replicate": False, "cost": {},
            "figures": {"fig5_accuracy": {"code": "old", "stats": {}}, "fig2_attention_graph": {"code": "older",
                                                                                              "stats": {}},
                        "fig6_interpolation": {"code": "old", "stats": {}}}}
    publish.write_kept(tmp_path / "docs" / "stats" / "config.json", kept)
    said = publish.restamp(tmp_path, Stamp("old"), Stamp("new"), {"fig5_accuracy", "fig2_attention_graph"})
    figures = json.loads((tmp_path / "docs" / "stats" / "config.json").read_text())["figures"]
    assert said == ["restamped 1 figure(s) of docs/stats/config.json"]
    assert {f: v["code"] for f, v in figures.items()} == {"fig5_accuracy": "new", "fig2_attention_graph": "older",
                                                          "fig6_interpolation": "old"}


def _resolves(stats, path: str) -> bool:
    """Whether a declared ``reads`` path names something in a figure's statistics: keys joined by dots (a key
    may hold dots itself: the longest that fits first), ``*`` any key, a list any of its items."""
    if path == "":
        return True
    if isinstance(stats, list):
        return any(_resolves(x, path) for x in stats)
    if not isinstance(stats, dict):
        return False
    head, _, rest = path.partition(".")
    if head == "*":
        return any(_resolves(v, rest) for v in stats.values())
    return any(path == k or (path.startswith(k + ".") and _resolves(stats[k], path[len(k) + 1:]))
               for k in sorted(stats, key=len, reverse=True))


def test_every_statistic_a_claim_reads_is_in_the_kept_statistics_of_the_default():
    """A claim's ``reads`` names the keys of its figure's statistics in the default config (whose labels the
    declarations use); where the default scores the claim, each must be there, so a renamed statistic cannot
    leave a stale name in the ledger's 'statistics read' column."""
    assert _resolves({"a": {"b.c": [{"d": 1}]}}, "a.b.c.d") and not _resolves({"a": {"b": 1}}, "a.c")
    for name in ("config", "config-replicate"):
        kept = REPO / publish.KEPT / f"{name}.json"
        doc = json.loads(kept.read_text())
        rows, _, _ = publish.rescore(REPO, kept)
        scored = {r["id"] for r in rows if r["verdict"] != "not run"}
        stale = {cid: [r for r in c.get("reads", []) if not _resolves(doc["figures"][c["figure"]]["stats"], r)]
                 for cid, c in declarations.declared_claims().items() if cid in scored}
        assert not {c: r for c, r in stale.items() if r}, f"pipeline_lib/declarations: reads missing in {name}"


def test_a_calibration_config_publishes_its_page_and_no_ledger(tmp_path):
    """Kept statistics holding eureka_calibration: `publish` writes docs/<config>.md with every knob value's Softmax
    ratio and the pick, no claims ledger for it, and leaves the consolidated ledger's verdicts as they were."""
    from pipeline_lib.build.calibration import calibration_markdown

    root = tmp_path / "checkout"
    for part in ("pipeline_lib", "README.md", "docs", "config"):
        (shutil.copytree if (REPO / part).is_dir() else shutil.copy)(REPO / part, root / part)
    rows = [{"value": v, "experiment": f"digits_n{v}", "n_eureka": k, "n_seeds": 10, "ratio": k / 10, "ci_low": 0.1,
             "ci_high": 0.9, "epochs": 300, "seeds": list(range(100, 110))} for v, k in ((1000, 1), (2000, 6), (4000, 10))]
    stats = {"digits": {"knob": "n_train", "target": 0.7, "source": "Table 1 'ViT sqrt(d_k)' 7/10", "default": 4000.0,
                        "rows": rows, "picked": 2000.0, "picked_experiment": "digits_n2000", "picked_ratio": 0.6},
             "summary": "s"}
    cap = {"digits_n2000": {"Softmax": {"final_median": 0.25}}, "summary": "s"}
    kept = {"config": "config/eureka_calibration.yaml", "replicate": False,
            "cost": {"jobs": 3, "job_seconds": 60.0, "peak_rss_mb": 500.0, "results_mb": 1.0, "wall_seconds": 1800.0,
                     "cores": 2},
            "figures": {"eureka_calibration": {"stats": stats, "code": "old", "config_hash": "old"},
                        "eureka_norm_cap": {"stats": cap, "code": "old", "config_hash": "old"}}}
    (root / publish.KEPT / "eureka_calibration.json").write_text(json.dumps(kept))
    before = publish.generated(REPO)[REPO / "docs" / "claims.md"].split("\n", 1)[1]
    out = {p.relative_to(root).as_posix(): text for p, text in publish.generated(root).items()}
    page = out["docs/eureka_calibration.md"]
    assert "docs/claims_eureka_calibration.md" not in out
    assert "Picked: **n_train = 2000**" in page and "| 2000 (picked) | 6/10 = 0.60 | [0.10, 0.90] | 0.10 | 300 | 100-109 | 0.25 |" in page
    assert "| 1000 | 1/10 = 0.10 |" in page and "30 minutes on 2 cores" in page
    assert page.endswith(calibration_markdown(kept)) and "Not reached" not in page  # 0.6 is one seed from 0.7
    stats["digits"]["rows"][1].update(n_eureka=5, ratio=0.5)  # two seeds from the paper's 7/10: not reached
    assert "Picked: **n_train = 2000** (Softmax 0.60). **Not reached:** no value lies within one seed (1/10)" in (
        calibration_markdown(kept))
    stats["digits"]["rows"][1].update(n_eureka=6, ratio=0.6)
    assert "30 minutes on 2 cores (CPU Q): 3 jobs" in calibration_markdown({**kept, "machine": "CPU Q"})
    # kept by other code or settings than the checkout's: the page says which figures a rerun would change
    assert "Statistics of 2 figure(s) of eureka_calibration were computed by other code or settings" in page
    assert "eureka_calibration, eureka_norm_cap." in page
    after = out["docs/claims.md"].split("\n", 1)[1]
    assert after == before  # the verdicts and counts: a calibration adds none


def test_an_overlay_drawing_the_eureka_table_publishes_its_results_page(tmp_path):
    """A kept overlay that draws eureka_table: `publish` writes docs/<config>.md beside its ledger from the kept
    rows (in the figure's column order), the config file's own header, the cap's share per arm in the table's order
    and the run's cost on its machine; a changed row in the kept statistics changes the page (nothing typed)."""
    from pipeline_lib.build.table_page import header_comment, table_markdown
    from pipeline_lib.figures.eureka_table import COLUMNS

    root = tmp_path / "checkout"
    for part in ("pipeline_lib", "README.md", "docs", "config"):
        (shutil.copytree if (REPO / part).is_dir() else shutil.copy)(REPO / part, root / part)
    kept = json.loads((REPO / publish.KEPT / "eureka_table1.json").read_text())
    page = publish.generated(root)[root / "docs" / "eureka_table1.md"]
    assert page.endswith(table_markdown(kept, root, "claims_eureka_table1.md"))
    assert "| " + " | ".join(COLUMNS) + " |" in page
    first = kept["figures"]["eureka_table"]["stats"]["rows"][0]
    assert "| " + " | ".join(first[c] for c in COLUMNS) + " |" in page
    header = header_comment(root / "config" / "eureka_table1.yaml")
    assert header and "```text\n" + "\n".join(header) + "\n```" in page
    cap = [line.split(" | ")[:2] for line in page.split("## Where NormSoftmax's cap binds")[1].splitlines()
           if line.startswith("| digits |")]
    table = [["| digits", r["variant"]] for r in kept["figures"]["eureka_table"]["stats"]["rows"]
             if r["experiment"] == "digits" and r["variant"] in kept["figures"]["eureka_norm_cap"]["stats"]["digits"]]
    assert cap == table
    assert f"({kept['machine']})" in page.split("## Cost")[1]
    kept["figures"]["eureka_table"]["stats"]["rows"][0]["Eureka-ratio"] = "3/10 = 0.30"
    (root / publish.KEPT / "eureka_table1.json").write_text(json.dumps(kept))
    again = publish.generated(root)[root / "docs" / "eureka_table1.md"]
    assert again != page and "| 3/10 = 0.30 |" in again


def test_the_machine_names_the_gpus_the_driver_lists(tmp_path):
    from pipeline_lib.build.waits import machine

    (tmp_path / "cpuinfo").write_text("processor\t: 0\ncpu family\t: 25\nmodel\t\t: 17\nmodel name\t: CPU X\n")
    assert machine(tmp_path) == "CPU X (family 25, model 17)"  # a name without a model number: its generation
    (tmp_path / "cpuinfo").write_text("processor\t: 0\ncpu family\t: 6\nmodel\t\t: 85\nmodel name\t: CPU 9\n")
    assert machine(tmp_path) == "CPU 9"
    (tmp_path / "cpuinfo").write_text("processor\t: 0\nmodel name\t: CPU X\n")
    assert machine(tmp_path) == "CPU X"
    for i, name in enumerate(("GPU Y", "GPU Z")):
        gpu = tmp_path / "driver" / "nvidia" / "gpus" / f"0000:0{i}:00.0"
        gpu.mkdir(parents=True)
        (gpu / "information").write_text(f"Model: \t\t {name}\nIRQ:   \t\t 1\n")
    assert machine(tmp_path) == "CPU X with GPU Y, GPU Z"
    (tmp_path / "driver" / "nvidia" / "gpus" / "0000:02:00.0" / "information").mkdir(parents=True)  # unreadable
    assert machine(tmp_path) == "CPU X with GPU Y, GPU Z"
    (tmp_path / "driver" / "nvidia" / "gpus" / "0000:01:00.0" / "information").write_text("Model: GPU Y\n")
    assert machine(tmp_path) == "CPU X with 2 x GPU Y"


def test_a_rerun_on_another_machine_is_kept_beside_the_first_and_times_the_readme(tmp_path):
    """`publish --keep R --rerun`: the same seeds again on another machine, kept as <config>-rerun.json. It writes
    no ledger of its own; the consolidated ledger names it beside its config (identical statistics move no
    verdict) and the README's cost row takes the run that one invocation timed."""
    root = tmp_path / "checkout"
    for part in ("pipeline_lib", "README.md", "docs", "config"):
        (shutil.copytree if (REPO / part).is_dir() else shutil.copy)(REPO / part, root / part)
    for kept in (root / publish.KEPT).glob("config-rerun*.json"):
        kept.unlink()
    before = publish.generated(root)[root / "docs" / "claims.md"]
    doc = json.loads((REPO / publish.KEPT / "config.json").read_text())
    doc.update(machine="CPU Y", rerun=True, cost={**doc["cost"], "wall_seconds": 5280.0, "cores": 2, "jobs": 7})
    publish.write_kept(root / publish.KEPT / "config-rerun.json", doc)
    out = publish.generated(root)
    assert not any(p.name.startswith("claims_config-rerun") for p in out)
    claims_md = out[root / "docs" / "claims.md"]
    assert "its seeds run again on CPU Y: 88 minutes on 2 cores" in claims_md
    moved = "the same seeds run again"  # the other configs' kept reruns may say it; this identical one must not
    assert claims_md.count(moved) == before.count(moved)  # the same statistics: no verdict moved
    assert claims_md.split("## Counts", 1)[1] == before.split("## Counts", 1)[1]
    first = json.loads((REPO / publish.KEPT / "config.json").read_text())
    chosen = doc if first["cost"]["wall_seconds"] is None else first  # both shared: the default's own timed run first
    where = f" ({chosen['machine']})" if chosen.get("machine") else ""  # the machine it ran on, named
    assert (f"| the full reproduction | {chosen['cost']['wall_seconds'] / 60:.0f} minutes on 2 cores{where}: "
            f"{chosen['cost']['jobs']} jobs") in out[root / "README.md"]
    untimed = json.loads((REPO / publish.KEPT / "config.json").read_text())
    untimed["cost"] = {**untimed["cost"], "wall_seconds": None}
    publish.write_kept(root / publish.KEPT / "config.json", untimed)
    assert "| the full reproduction | 88 minutes on 2 cores (CPU Y): 7 jobs" in publish.generated(root)[root / "README.md"]
    assert json.loads((root / publish.KEPT / "config-rerun.json").read_text())["machine"] == "CPU Y"


def test_a_rerun_on_a_third_machine_is_kept_beside_the_others(tmp_path):
    """A rerun kept on a machine other than the kept reruns' goes to the next free file (<config>-rerun-2.json), and
    one on a machine that already has a rerun replaces that machine's (the consolidated ledger reads every one:
    tests/test_consolidate.py)."""
    from pipeline_lib.build.reruns import rerun_of, rerun_path

    folder = tmp_path
    first = {"config": "config/config.yaml", "replicate": False, "machine": "CPU X", "figures": {}, "cost": {}}
    (folder / "config.json").write_text(json.dumps(first))
    assert rerun_path(folder, "config", "CPU X") == folder / "config-rerun.json"
    (folder / "config-rerun.json").write_text(json.dumps({**first, "machine": "CPU Y"}))
    assert rerun_path(folder, "config", "CPU X") == folder / "config-rerun-2.json"
    (folder / "config-rerun-2.json").write_text(json.dumps({**first, "machine": "CPU X"}))
    assert rerun_path(folder, "config", "CPU X") == folder / "config-rerun-2.json"  # its own, replaced
    assert rerun_path(folder, "config", "CPU Y") == folder / "config-rerun.json"
    assert rerun_path(folder, "config", "CPU Z") == folder / "config-rerun-3.json"
    assert [rerun_of(n) for n in ("config-rerun", "config-rerun-2", "config-replicate-rerun", "config",
                                  "config-rerunx")] == ["config", "config", "config-replicate", None, None]


def test_an_earlier_run_set_aside_as_a_rerun_keeps_its_machine_and_loses_nothing(tmp_path):
    """`publish --keep R --earlier-as-rerun`: the kept run R replaces becomes its machine's rerun, unchanged but
    for the mark. Refused, naming why and writing nothing: no earlier run, an earlier rerun, a run of this machine
    or of none named, figures of it kept from this machine, a rerun of its machine kept already (it would be lost)
    or of this one (the new run would repeat it), --rerun or --figures beside it, and a replicate (the smoke run's
    keep: test_rescoring_the_kept_statistics_of_a_run_gives_its_figures_own_verdicts)."""
    from pipeline_lib.build.kept import earlier_as_rerun

    folder = tmp_path / publish.KEPT
    first = {"config": "config/config.yaml", "replicate": False, "cost": {"jobs": 3}, "machine": "CPU X",
             "figures": {"fig5_accuracy": {"code": "c", "stats": {"a": 1.5}}}, "train_seconds": {"scratch": 12.0}}
    with pytest.raises(FileNotFoundError, match="no earlier kept run"):
        earlier_as_rerun(folder / "config.json", "CPU Z")
    publish.write_kept(folder / "config.json", first)
    with pytest.raises(ValueError, match="made on CPU X, this machine"):
        earlier_as_rerun(folder / "config.json", "CPU X")
    publish.write_kept(folder / "config.json", {k: v for k, v in first.items() if k != "machine"})
    with pytest.raises(ValueError, match="records no machine"):
        earlier_as_rerun(folder / "config.json", "CPU Z")
    publish.write_kept(folder / "config.json", first)
    assert earlier_as_rerun(folder / "config.json", "CPU Z") == folder / "config-rerun.json"
    assert json.loads((folder / "config-rerun.json").read_text()) == {**first, "rerun": True}
    with pytest.raises(ValueError, match="is a rerun already"):
        earlier_as_rerun(folder / "config-rerun.json", "CPU Z")
    with pytest.raises(ValueError, match="already keeps a rerun made on CPU X: its machine's rerun would be lost"):
        earlier_as_rerun(folder / "config.json", "CPU Z")
    (folder / "config-rerun.json").unlink()
    publish.write_kept(folder / "config-rerun.json", {**first, "machine": "CPU Z (family 1)", "rerun": True})
    with pytest.raises(ValueError, match="made on CPU Z .family 1.: the new run would repeat it"):
        earlier_as_rerun(folder / "config.json", "CPU Z")  # an older name of this machine's kind
    (folder / "config-rerun.json").unlink()
    mixed = {**first, "figures": {**first["figures"], "fig6": {"code": "c", "stats": {}, "machine": "CPU Z"}}}
    publish.write_kept(folder / "config.json", mixed)
    with pytest.raises(ValueError, match="fig6 of it on this machine"):
        earlier_as_rerun(folder / "config.json", "CPU Z")
    assert sorted(p.name for p in folder.iterdir()) == ["config.json"]
    for other in ({"rerun": True}, {"only": ["fig5_accuracy"]}):
        with pytest.raises(ValueError, match="not with --rerun or --figures"):
            publish.keep(tmp_path / "results", tmp_path, earlier=True, **other)
    with pytest.raises(ValueError, match="a replicate's rerun is not published"):
        publish.keep(tmp_path / "results", tmp_path, replicate=True, earlier=True)


def test_machine_names_with_and_without_their_details_may_name_one_machine():
    from pipeline_lib.build.kept import same_machine

    assert same_machine("AMD EPYC", "AMD EPYC (family 25, model 17)")
    assert same_machine("AMD EPYC (family 25, model 17)", "AMD EPYC (family 25, model 17)")
    assert not same_machine("AMD EPYC (family 25, model 17)", "AMD EPYC (family 25, model 1)")
    assert not same_machine("Intel(R) Xeon(R) Processor with NVIDIA H200", "Intel(R) Xeon(R) Processor (family 6)")
    assert not same_machine(None, "AMD EPYC") and not same_machine("AMD EPYC", "")


def test_the_readmes_waits_come_from_kept_timings_or_say_none_is_kept(tmp_path):
    """`python -m pipeline_lib timed NAME -- CMD` keeps a succeeding command's wall time in docs/waits.json
    (a failing one keeps nothing) and the README's install, suite and tour rows are generated from it; without
    a kept timing a row says so instead of a number."""
    import sys

    from pipeline_lib.__main__ import main
    from pipeline_lib.build import waits

    root = tmp_path / "checkout"
    for part in ("pipeline_lib", "README.md", "docs", "config"):
        (shutil.copytree if (REPO / part).is_dir() else shutil.copy)(REPO / part, root / part)
    (root / waits.WAITS).unlink(missing_ok=True)
    readme = publish.generated(root)[root / "README.md"]
    for label in waits.ROWS.values():
        assert f"| {label} | not timed: no kept timing" in readme
    rc, _ = waits.timed("tour", [sys.executable, "-c", "import sys; sys.exit(3)"], root)
    assert rc == 3 and not (root / waits.WAITS).exists()  # a failed command keeps nothing
    rc, took = waits.timed("tour", [sys.executable, "-c", "import time; time.sleep(0.2)"], root)
    assert rc == 0 and took >= 0.2
    waits.keep("install", 95.0, "pip install -e .", root)
    kept = waits.read(root)
    assert kept["install"]["seconds"] == 95.0 and kept["install"]["command"] == "pip install -e ."
    readme = publish.generated(root)[root / "README.md"]
    assert f"| {waits.ROWS['install']} | 1.6 minutes on {kept['install']['cores']} cores (" in readme
    # the tour's row states the kept wall time (0.2 s of sleep plus a Python start-up, which a busy machine
    # stretches), in the README's words
    tour = f"| {waits.ROWS['tour']} | {waits.minutes(kept['tour']['seconds'])} on"
    assert kept["tour"]["seconds"] == round(took, 1) and tour in readme
    assert "| the test suite (install included) | not timed" in readme
    with pytest.raises(ValueError, match="no README row named 'lunch'"):
        waits.timed("lunch", [sys.executable, "-c", "raise SystemExit('must not run')"], root)
    with pytest.raises(ValueError, match="cannot run"):
        waits.timed("tour", [str(tmp_path / "no-such-program")], root)
    assert main(["timed", "suite"]) == 2 and main(["timed", "suite", "--what", "x", "--", "true"]) == 2
    (root / "README.md").write_text((root / "README.md").read_text().replace(f"| {waits.ROWS['tour']} |", "| tour |"))
    with pytest.raises(FileNotFoundError, match="no row the tour"):
        publish.generated(root)


def test_keeping_only_named_figures_replaces_theirs_and_nothing_else(tmp_path):
    """`publish --keep R --figures F`: F's statistics, code and commit come from R; every other figure, the run's
    cost and machine stay as kept (F says where it ran, when elsewhere). Refused, each naming why: a figure the
    config does not draw, a config with no kept run, a figure built by other code or settings, --shared (no times
    are kept), and a rerun's file of another machine."""
    from pipeline_lib.build.codes import job_code
    from pipeline_lib.build.waits import machine
    from pipeline_lib.plumbing.values import slice_hash

    root = tmp_path / "checkout"
    for part in ("pipeline_lib", "README.md", "config"):
        (shutil.copytree if (REPO / part).is_dir() else shutil.copy)(REPO / part, root / part)
    (root / publish.KEPT).mkdir(parents=True)
    before = json.loads((REPO / publish.KEPT / "config.json").read_text())
    publish.write_kept(root / publish.KEPT / "config.json", {**before, "machine": "CPU Y"})
    cfg = publish.config_of(root, publish.DEFAULT)
    ours = {"config_hash": slice_hash(cfg.figure_slice("joma_odes")), "code_hash": job_code(cfg, "figure joma_odes"),
            "git_commit": "e" * 40}
    results = tmp_path / "results"
    (results / "figures").mkdir(parents=True)
    sidecar = results / "figures" / "joma_odes.json"
    sidecar.write_text(json.dumps({"stats": {"planted": 1.5}, "provenance": ours}))
    publish.keep(results, root, only=["joma_odes", "joma_odes"])
    after = json.loads((root / publish.KEPT / "config.json").read_text())
    assert after["figures"]["joma_odes"] == {"stats": {"planted": 1.5}, "config_hash": ours["config_hash"],
                                             "code": ours["code_hash"], "commit": "e" * 40, "machine": machine()}
    assert {k: v for k, v in after["figures"].items() if k != "joma_odes"} == \
        {k: v for k, v in before["figures"].items() if k != "joma_odes"}
    assert {k: after[k] for k in ("cost", "train_seconds")} == {k: before[k] for k in ("cost", "train_seconds")}
    assert after["machine"] == "CPU Y"
    with pytest.raises(FileNotFoundError, match="has no figure no_such_figure"):
        publish.keep(results, root, only=["no_such_figure"])
    with pytest.raises(ValueError, match="keeps no times"):
        publish.keep(results, root, only=["joma_odes"], shared=True)
    sidecar.write_text(json.dumps({"stats": {}, "provenance": {**ours, "code_hash": "0" * 16}}))
    with pytest.raises(ValueError, match="not built by this checkout's code"):
        publish.keep(results, root, only=["joma_odes"])
    sidecar.write_text(json.dumps({"stats": {}, "provenance": ours}))
    publish.write_kept(root / publish.KEPT / "config-rerun.json", {**before, "machine": "CPU Y", "rerun": True})
    with pytest.raises(FileNotFoundError, match="no rerun of config/config.yaml kept from this machine"):
        publish.keep(results, root, only=["joma_odes"], rerun=True)  # CPU Y's rerun is not this machine's
    (root / publish.KEPT / "config.json").unlink()
    with pytest.raises(FileNotFoundError, match="no kept run of config/config.yaml"):
        publish.keep(results, root, only=["joma_odes"])


def test_a_rule_that_reads_a_statistic_older_kept_code_lacks_leaves_its_claims_not_run(tmp_path):
    """Kept statistics computed by older code of a figure lack what a new rule reads: its claims are not run,
    naming the figure and the config to rerun, and the figure is listed as needing a rerun (no traceback). The
    same statistics under the figure's current code are a defect, and raise."""
    root = tmp_path / "checkout"
    for part in ("pipeline_lib", "README.md", "config"):
        (shutil.copytree if (REPO / part).is_dir() else shutil.copy)(REPO / part, root / part)
    (root / publish.KEPT).mkdir(parents=True)
    kept = json.loads((REPO / publish.KEPT / "config.json").read_text())
    odes = kept["figures"]["joma_odes"]
    odes["stats"] = {**odes["stats"], "linear": {k: v for k, v in odes["stats"]["linear"].items()
                                                 if k != "salient_share_end"}}
    path = root / publish.KEPT / "config.json"
    publish.write_kept(path, kept)
    with pytest.raises(KeyError, match="salient_share_end"):  # the checkout's own code: not a stale figure
        publish.rescore(root, path)
    odes["code"] = "0" * 16  # computed by other code
    publish.write_kept(path, kept)
    rows, _, stale = publish.rescore(root, path)
    assert "joma_odes" in stale and all(r["verdict"] == "not run" for r in rows if r["figure"] == "joma_odes")
    row = next(r for r in rows if r["id"] == "tian.joma_odes.linear_salient_takes_all")
    assert row["verdict"] == "not run" and "rerun figure joma_odes of config/config.yaml" in row["control"]
    assert next(r for r in rows if r["id"] == "circuits.fig5.curriculum_beats_scratch")["verdict"] != "not run"


def test_a_kept_diagnostic_table_fills_its_pages_block_and_a_missing_one_says_so(tmp_path):
    """A script's ``--keep`` table (kept_tables.keep) is what publish writes into the page's block of that path:
    its rows, the command and the machine; the text around it is the page's own, and a block whose file is not
    kept says so instead of keeping old numbers."""
    from pipeline_lib.build import kept_tables

    page = tmp_path / "docs" / "diagnostics" / "probe.md"
    page.parent.mkdir(parents=True)
    rel = "docs/diagnostics/kept/probe.json"
    page.write_text(f"intro\n<!-- kept {rel}: begin -->\n| old | 0.5 |\n<!-- kept {rel}: end -->\nreading\n"
                    "<!-- kept docs/diagnostics/kept/gone.json: begin -->\n<!-- kept docs/diagnostics/kept/gone.json: end -->\n")
    with pytest.raises(ValueError, match="2 cells"):
        kept_tables.keep(tmp_path / rel, ["seed", "acc"], [["0"]], ["python", "probe.py"])
    kept_tables.keep(tmp_path / rel, ["seed", "acc"], [["0", "0.965"], ["1", "0.518"]], ["python", "probe.py", "--keep"])
    out = kept_tables.pages(tmp_path)
    assert list(out) == [page]
    text = out[page]
    assert text.startswith("intro\n") and "\nreading\n" in text and "| old |" not in text
    assert "`python probe.py --keep` on " in text and "| seed | acc |\n|---|---|\n| 0 | 0.965 |\n| 1 | 0.518 |\n" in text
    assert "*Not measured: no `docs/diagnostics/kept/gone.json` is kept" in text
    page.write_text(text)
    assert kept_tables.pages(tmp_path)[page] == text  # filled again from the same file: unchanged
    # a table read from logs kept earlier names them, not the machine that read them, as its source
    kept_tables.keep(tmp_path / rel, ["seed", "acc"], [["0", "0.9"]], ["python", "probe.py", "--table"], source="3 logs")
    assert "date" not in json.loads((tmp_path / rel).read_text())  # read again another day: the same file
    text = kept_tables.pages(tmp_path)[page]
    assert f"`python probe.py --table` read from 3 logs; `{rel}`:" in text and " on " not in text.split("| seed")[0]


def test_the_distance_3_table_reads_each_logs_last_evaluation_and_says_where_a_run_stopped_early(tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("spp", REPO / "docs" / "diagnostics" / "shortest_path_positions.py")
    spp = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(spp)
    head = "# python docs/diagnostics/shortest_path_positions.py '{\"steps\": 24000, \"far\": true%s}'\n"
    line = ("step %d 9s test loss %.3f acc %.3f seq-correct by distance {1: 1.0, 'all test, d=3 (n=2569)': 0.8, "
            "'all test, d=4 (n=224)': 0.7, 'greedy path, d=3': %.3f, 'greedy path, d=4': 0.728%s}\n")
    train = ", 'train greedy path, d=3 (n=10610)': 0.957"
    (tmp_path / "I_64k.log").write_text(head % ', "n_graphs": 64000' + line % (4000, 0.5, 0.9, 0.1, train)
                                        + line % (24000, 0.042, 0.983, 0.931, train))
    (tmp_path / "J_16k.log").write_text(head % "" + line % (8000, 0.2, 0.95, 0.6, ""))
    columns, rows = spp.table(sorted(tmp_path.glob("*.log")))
    assert len(columns) == 8 and rows == [
        ["I", "64,000", "24k", "0.042", "0.983", "0.931 (2,569)", "0.957 (10,610)", "0.728 (224)"],
        ["J", "16,000", "8k of 24k", "0.200", "0.950", "0.600 (2,569)", "not measured", "0.728 (224)"]]
