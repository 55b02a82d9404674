"""The claims rule and `--config replicate=true` through the real snakemake CLI, on a slice of the smoke config
(the Fig. 5 runs and figure: seconds, where the whole smoke DAG would take minutes)."""
import csv
import json

import pytest
import xarray as xr
import yaml

from conftest import REPO, SMOKE, hash_tree, load_yaml, snakemake

pytestmark = pytest.mark.workflow

RUNS = ("scratch_p4", "pretrain_p2", "curriculum_p2_p4")  # Fig. 5's arms without the paper-code ones


@pytest.mark.long
def test_the_ledger_and_a_replicate_of_the_fig5_slice(tmp_path):
    """One test, two checks on one run of the slice (under pytest-xdist a module fixture would run in every
    worker that takes one of its tests). Slow: the slice and its replicate run for real, to compare ledgers."""
    work = _fig5_slice(tmp_path)
    _the_default_target_writes_the_ledger_from_the_figures_scores(work)
    _a_replicate_uses_other_seeds_and_data_and_writes_only_under_its_folder(work)


def _fig5_slice(tmp_path):
    raw = load_yaml(SMOKE)
    keep = {r: raw["runs"][r] for r in RUNS}
    cfg = {"device": "cpu", "datasets": {d: raw["datasets"][d] for d in {r["dataset"] for r in keep.values()}},
           "models": {m: raw["models"][m] for m in {r["model"] for r in keep.values()}}, "runs": keep,
           "figures": {"fig5_accuracy": {"arms": {"scratch": "scratch_p4", "curriculum": "curriculum_p2_p4"}}}}
    work = tmp_path / "claims"
    (work / "config").mkdir(parents=True)
    (work / "config" / "config.yaml").write_text(yaml.safe_dump(cfg))
    res = snakemake(work)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-3000:]
    return work


def _scores(work) -> dict[str, dict]:
    """Figure -> its claims' scores, as the ledger job scored them (``results/claims.json``)."""
    return json.loads((work / "results" / "claims.json").read_text())["claims"]


def _rows(path):
    with open(path, newline="") as fh:
        return {r["id"]: r for r in csv.DictReader(fh)}


def _the_default_target_writes_the_ledger_from_the_figures_scores(work):
    rows = _rows(work / "results" / "claims.csv")
    fig5 = _scores(work)["fig5_accuracy"]
    assert fig5 and all(rows[cid]["verdict"] == s["verdict"] for cid, s in fig5.items())
    assert rows["circuits.fig5.curriculum_beats_scratch_paper_code"]["verdict"] == "not run"  # no such arm here
    drawn = {cid for cid, r in rows.items() if r["figure"] != "fig5_accuracy"}
    assert drawn and all(rows[c]["verdict"] == "not run" for c in drawn)
    assert (work / "results" / "claims.md").read_text().startswith("# Claims")


def _a_replicate_uses_other_seeds_and_data_and_writes_only_under_its_folder(work):
    before = {p: h for p, h in hash_tree(work / "results").items() if not p.startswith("replication/")}
    res = snakemake(work, "--config", "replicate=true")
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-3000:]
    after = {p: h for p, h in hash_tree(work / "results").items() if not p.startswith("replication/")}
    assert after == before  # nothing of the original results is written over
    rep = work / "results" / "replication"
    for run in RUNS:
        with xr.open_dataset(work / "results" / "runs" / run / "trajectory.h5", engine="h5netcdf") as a, \
             xr.open_dataset(rep / "runs" / run / "trajectory.h5", engine="h5netcdf") as b:
            assert not set(a.seed.values.tolist()) & set(b.seed.values.tolist())
    for d in ("sma_p2_T12", "sma_p4_T12"):
        with xr.open_dataset(work / "results" / "datasets" / f"{d}.h5", engine="h5netcdf") as a, \
             xr.open_dataset(rep / "datasets" / f"{d}.h5", engine="h5netcdf") as b:
            assert not (a.x.values == b.x.values).all()  # another data draw
    table = _rows(rep / "claims.csv")
    original = _rows(work / "results" / "claims.csv")
    assert set(table) == set(original)
    for cid, row in table.items():
        assert row["verdict"] == original[cid]["verdict"]  # the original's columns, copied
        assert row["replicate_verdict"] and (row["agrees"] in ("yes", "no") or row["why"].startswith("not run"))
    assert _rows(rep / "claims_own.csv")  # the replicate's own ledger beside the comparison
    from test_workflow import planned_jobs

    assert planned_jobs(snakemake(work, "--config", "replicate=true", "-n")) == {}  # complete, and stays so
    assert planned_jobs(snakemake(work, "-n")) == {}  # the original is untouched by the replicate


def test_a_replicate_before_its_original_says_what_to_run_first(tmp_path):
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.yaml").write_text(SMOKE.read_text())
    res = snakemake(tmp_path, "--config", "replicate=true", "-n")
    out = res.stdout + res.stderr
    assert res.returncode != 0 and "MissingInputException" not in out
    assert "results/claims.csv, which does not exist: run the original first" in out, out[-2000:]
    one = snakemake(tmp_path, "--config", "replicate=true", "-n", "fig5_accuracy")  # no ledger: nothing to compare
    assert one.returncode == 0 and "fig5_accuracy" in one.stdout, (one.stdout + one.stderr)[-2000:]


def test_every_claim_scored_by_the_test_config_can_go_both_ways(smoke_run):
    """Each claim's score records the rule that gave its verdict and the numbers it read: the record re-derives
    the verdict, and the claim's statistic moved across its rule (synthetic input) scores it "not reproduced" on
    one side and "reproduced" on the other, or, where the test config's few seeds cannot reach it, the best it can
    (the ledger then says "at best ..." beside the verdict). A verdict set by a guard (the claim's precondition fails on these
    numbers, e.g. no control seed has a Eureka-moment) names why and is the only other kind allowed."""
    from pipeline_lib import claims

    work, _ = smoke_run
    scored, guarded = {}, {}
    assert claims.crossings(claims.rates_exceed(3, 3, 0, 3).rule)[0] == "partial"  # 3 seeds: never disjoint
    for fig, scores in sorted(_scores(work).items()):
        for cid, s in scores.items():
            if s["verdict"] == "not run":
                continue
            assert s.get("rule"), f"{cid} ({fig}): verdict {s['verdict']!r} without the rule that gave it"
            guard = s["rule"]["kind"] == "guard" or any(p["kind"] == "guard" for p in s["rule"]["args"].get("parts", []))
            (guarded if guard else scored)[cid] = s
    assert len(scored) >= 50, sorted(scored)
    rows = {r["id"]: r for r in csv.DictReader(open(work / "results" / "claims.csv"))}
    for cid, s in scored.items():
        assert claims.evaluate(s["rule"]) == s["verdict"], (cid, s["rule"])
        best, worst = claims.crossings(s["rule"])
        assert worst == "not reproduced", (cid, s["rule"])
        # a rule that cannot say "reproduced" with the test config's few seeds says so beside its verdict
        assert best == "reproduced" or rows[cid]["caveats"].startswith(f"at best {best}"), (cid, s["rule"])
    for cid, s in guarded.items():  # a guard says why, and its verdict is re-derived from its record
        assert claims.evaluate(s["rule"]) == s["verdict"], (cid, s["rule"])
        assert all(g["args"]["why"] for g in [s["rule"], *s["rule"]["args"].get("parts", [])] if g["kind"] == "guard")


def test_each_claim_names_the_statistics_it_reads_and_they_exist(smoke_run):
    """A claim's ``reads`` are dotted paths into its figure's statistics (the sidecar's ``stats``): for every claim
    the test config scores, each path names at least one number there (a renamed statistic fails here)."""
    from pipeline_lib import declarations
    from pipeline_lib.claims import read_stat

    work, _ = smoke_run
    sides = {p.stem: json.loads(p.read_text()) for p in (work / "results" / "figures").glob("*.json")}
    scores = _scores(work)
    checked, missing = 0, []
    for cid, decl in declarations.declared_claims().items():
        side = sides.get(decl["figure"])
        if side is None or scores.get(decl["figure"], {}).get(cid, {}).get("verdict", "not run") == "not run":
            continue
        assert decl.get("reads"), f"{cid}: no statistics named"
        for path in decl["reads"]:
            checked += 1
            if not read_stat(side["stats"], path, any_label=True):
                missing.append(f"{cid}: {decl['figure']}:{path}")
    assert checked >= 100 and not missing, missing
    stats = {"a": {"x": {"n": 1}, "y": {"n": 2}}, "below_0.05": [3], "summary": "s"}
    assert read_stat(stats, "a.*.n") == [1, 2] and read_stat(stats, "below_0.05") == [[3]] and not read_stat(stats, "b")
    assert read_stat(stats, "a.z.n", any_label=True) == [1, 2] and not read_stat(stats, "a.z.m", any_label=True)
    assert not read_stat(stats, "a.typo", any_label=True)  # a statistic's own name is never a label


def _shipped_labels() -> set[str]:
    """Every name a shipped config gives under ``analyses`` (experiments, arms, runs): the labels a placeholder
    may name although the test config lacks them."""
    names: set[str] = set()

    def walk(node) -> None:
        if isinstance(node, dict):
            names.update(map(str, node))
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
    for path in (REPO / "config").glob("*.yaml"):
        walk((load_yaml(path) or {}).get("analyses", {}))
    return names


def _resolve(stats: dict, path: str) -> tuple[bool, set[str]]:
    """Whether ``path`` names a value in ``stats`` when a key absent at its level is read as a label of another
    config (every entry there), and those absent keys."""
    *labels, name = path.split(".")
    nodes, absent = [stats], set()
    for part in labels:
        nxt = []
        for node in (n for n in nodes if isinstance(n, dict)):
            if part in node:
                nxt.append(node[part])
            else:
                absent.add(part)
                nxt.extend(v for v in node.values() if isinstance(v, dict))
        nodes = nxt
    return any(isinstance(n, dict) and name in n for n in nodes), absent


def test_caveat_placeholders_name_statistics_that_exist(smoke_run):
    """A caveat's ``{figure:path}`` names a statistic of that figure, under the test config's labels or under
    labels a shipped config gives its analyses: a renamed statistic, a mistyped statistic group or label fails
    here. The ledger the test config wrote holds no unfilled placeholder."""
    from pipeline_lib import declarations
    from pipeline_lib.caveats import PLACEHOLDER

    work, _ = smoke_run
    sides = {p.stem: json.loads(p.read_text()) for p in (work / "results" / "figures").glob("*.json")}
    known = _shipped_labels()
    checked, missing = 0, []
    for cid, decl in declarations.declared_claims().items():
        for figure, path in (m for c in decl.get("caveats", []) for m in PLACEHOLDER.findall(c)):
            if figure in sides:
                checked += 1
                found, absent = _resolve(sides[figure]["stats"], path)
                if not found or absent - known:
                    missing.append(f"{cid}: {figure}:{path} (unknown: {sorted(absent - known)})")
    assert checked >= 50 and not missing, (checked, missing)
    stats = {"arms": {"reasoning": {"Softmax": {"lr": 1}}}}
    assert _resolve(stats, "arms.reasoning.Softmax.lr") == (True, set())
    assert _resolve(stats, "arms.digits.Softmax.lr") == (True, {"digits"})  # a label of another config
    assert _resolve(stats, "armz.reasoning.Softmax.lr")[1] == {"armz"} and "armz" not in known  # a typo
    assert not _resolve(stats, "arms.reasoning.Softmax.lrr")[0]
    with open(work / "results" / "claims.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rows and not [r["id"] for r in rows if PLACEHOLDER.search(r["caveats"])]
