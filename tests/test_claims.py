"""The claims machinery: verdict rules, intervals, the ledger, the replicate's config and its comparison."""
import csv
import json
import math

import pytest

from conftest import REPO, SMOKE, load_yaml
from pipeline_lib import caveats, claims, declarations
from pipeline_lib.build import consolidate as consolidating
from pipeline_lib.build import publish as publishing
from pipeline_lib.plumbing import registry
from pipeline_lib.plumbing.config import load_config, seed_list
from pipeline_lib.plumbing.paths import Paths
from pipeline_lib.plumbing.replicate import replicate_config, seed_offset
from pipeline_lib.stages import claims as ledger

# -- verdict rules: each can flip ----------------------------------------------------------------------------

def test_above_needs_the_interval_for_reproduced_and_flips_at_the_threshold():
    assert claims.above(0.8, 0.6, 0.5) == "reproduced"
    assert claims.above(0.8, 0.4, 0.5) == "partial"
    assert claims.above(0.45, 0.3, 0.5) == "not reproduced"
    assert claims.above(math.nan, 0.3, 0.5) == "not run"
    assert claims.below(0.2, 0.4, 0.5) == "reproduced" and claims.below(0.2, 0.6, 0.5) == "partial"
    assert claims.below(0.7, 0.9, 0.5) == "not reproduced"


def test_exceeds_compares_intervals_against_the_control():
    p, lo, _ = claims.rate(10, 10)
    p0, _, hi0 = claims.rate(0, 10)
    assert claims.exceeds(p, lo, p0, hi0) == "reproduced"
    p, lo, _ = claims.rate(4, 10)
    assert claims.exceeds(p, lo, p0, hi0) == "partial"  # 4/10 [0.17, 0.69] overlaps 0/10 [0, 0.28]
    assert claims.exceeds(*claims.rate(3, 10)[:2], *claims.rate(3, 10)[::2]) == "not reproduced"  # equal shares


def test_near_is_an_equivalence_test_within_the_declared_tolerance():
    assert claims.near(1.0, math.nan, math.nan, 1.05, 0.1) == "partial"  # no interval (one seed): not shown
    assert claims.near(1.0, 1.0, 1.0, 1.05, 0.1) == "reproduced"  # a value known exactly: a zero-width interval
    assert claims.near(1.0, math.nan, math.nan, 1.2, 0.1) == "not reproduced"
    assert claims.near(1.0, 0.98, 1.02, 1.05, 0.1) == "reproduced"  # the whole interval within 1.05 +- 0.1
    assert claims.near(1.0, 0.7, 1.3, 1.05, 0.1) == "partial"  # the estimate within, its interval not shown
    # a wide interval reaching the reference is no evidence of a match: fewer seeds never give a better verdict
    assert claims.near(1.0, 0.7, 1.3, 1.2, 0.1) == "not reproduced"
    assert claims.above(float("nan"), 0.3, 0.5) == claims.above(__import__("numpy").float32("nan"), 0.3, 0.5)


def test_share_holds_over_cases():
    assert claims.share_holds(5, 5) == "reproduced"
    assert claims.share_holds(9, 10) == "partial"  # Wilson [0.60, 0.98]: a majority, shown
    assert claims.share_holds(3, 5) == "not reproduced" and claims.share_holds(8, 10) == "not reproduced"
    assert claims.share_holds(0, 0) == "not run"


def test_partial_needs_one_standard_error_on_the_claimed_side():
    # se read off the interval: (0.8 - 0.4) / 1.96 = 0.204; margins 0.3 and 0.1
    assert claims.above(0.8, 0.4, 0.5) == "partial" and claims.above(0.6, 0.2, 0.5) == "not reproduced"
    assert claims.exceeds(0.6, 0.2, 0.5, 0.9) == "not reproduced"  # margin 0.1 < combined se 0.29
    assert claims.above(0.6, math.nan, 0.5) == "partial"  # no interval: the estimate alone


def test_agrees_is_an_equivalence_test_within_its_margin():
    margin = claims.printed_margin(1.88, 0.01)  # the source prints 47.07 +- 1.88
    assert margin == pytest.approx(1.959964 * 1.88 + 0.005)
    assert claims.agrees(46.5, 45.0, 48.0, 47.07, margin) == "reproduced"  # [45.0, 48.0] within 47.07 +- 3.69
    assert claims.agrees(44.9, 40.4, 49.4, 47.07, margin) == "partial"  # the mean within, the interval not
    assert claims.agrees(40.0, 39.0, 41.0, 47.07, margin) == "not reproduced"  # 7.07 beyond the margin
    # fewer seeds, the same mean: a wider interval never agrees better
    assert claims.agrees(46.5, 43.0, 50.0, 47.07, margin) == "partial"
    assert claims.agrees(47.0, math.nan, math.nan, 47.0, claims.printed_margin(0.0, 1.0)) == "partial"  # no interval
    assert claims.agrees(47.6, math.nan, math.nan, 47.0, claims.printed_margin(0.0, 1.0)) == "not reproduced"
    assert claims.agrees(math.nan, 0, 1, 47.0, 0.5) == "not run"


def _verdict_rates(draw, n_draws=400):
    out = {v: 0 for v in claims.VERDICTS}
    for i in range(n_draws):
        out[str(draw(i))] += 1
    return {v: c / n_draws for v, c in out.items()}


def _kind_cases():
    """Per rule kind: a draw of a planted effect of the claimed size and a draw of the null, from seed i."""
    import numpy as np

    n = 10

    def means(effect):
        return lambda i: claims.above(*claims.mean_interval(np.random.default_rng(i).normal(effect, 1.0, n))[:2], 0.0)

    def below(effect):
        return lambda i: claims.below(*claims.mean_interval(np.random.default_rng(i).normal(-effect, 1.0, n))[::2], 0.0)

    def two(effect):
        def draw(i):
            rng = np.random.default_rng(i)
            m, lo, _ = claims.mean_interval(rng.normal(effect, 1.0, n))
            m0, _, hi0 = claims.mean_interval(rng.normal(0.0, 1.0, n))
            return claims.exceeds(m, lo, m0, hi0)
        return draw

    def rates(p, p0):
        def draw(i):
            rng = np.random.default_rng(i)
            return claims.rates_exceed(rng.binomial(n, p), n, rng.binomial(n, p0), n)
        return draw

    def every(p):
        return lambda i: claims.share_holds(np.random.default_rng(i).binomial(n, p), n)

    def near(offset):  # tolerance 0.1 around 1.0; the statistic's noise 0.02 per seed
        def draw(i):
            m, lo, hi = claims.mean_interval(np.random.default_rng(i).normal(1.0 + offset, 0.02, n))
            return claims.near(m, lo, hi, 1.0, 0.1)
        return draw

    def agree(offset):  # the source prints 47.07 +- 1.88 (drawn with that error); ours: 10 seeds of sd 1, precise
        def draw(i):  # enough for an equivalence test to show agreement within the source's own half-width
            m, lo, hi = claims.mean_interval(np.random.default_rng(i).normal(47.07 + offset, 1.0, n))
            printed = 47.07 + np.random.default_rng(10_000 + i).normal(0, 1.88)
            return claims.agrees(m, lo, hi, printed, claims.printed_margin(1.88, 0.01))
        return draw

    # effect sizes over 10 seeds: 1.5 sd against a threshold (the t interval's half-width is 0.72 sd); 2 sd between
    # two arms (disjoint intervals need about 1.44 sd: a 1.5 sd difference is scored reproduced only ~58% of the
    # time, which is what the ledger's "at best partial" note is for); shares 0.95 vs 0.1 (0.95 vs 0.2: 79%); a null far enough for
    # each kind to be told apart (the agreement's: 4 combined standard errors)
    return {"above": (means(1.5), means(0.0)), "below": (below(1.5), below(0.0)), "exceeds": (two(2.0), two(0.0)),
            "rates_exceed": (rates(0.95, 0.1), rates(0.5, 0.5)), "share_holds": (every(1.0), every(0.5)),
            "near": (near(0.0), near(0.3)), "agrees": (agree(0.0), agree(4 * math.hypot(1.88, 1 / math.sqrt(n))))}


@pytest.mark.parametrize("kind", ["above", "below", "exceeds", "rates_exceed", "share_holds", "near", "agrees"])
def test_each_rule_kind_scores_a_planted_effect_reproduced_and_a_null_not(kind):
    planted, null = _kind_cases()[kind]
    hit, miss = _verdict_rates(planted), _verdict_rates(null)
    assert hit["reproduced"] >= 0.8, (kind, hit)
    assert miss["not reproduced"] >= 0.8 and miss["reproduced"] <= 0.05, (kind, miss)


def test_every_rule_kind_records_its_numbers_and_can_be_moved_both_ways():
    made = [claims.above(0.7, 0.6, 0.5), claims.below(0.2, 0.3, 0.5), claims.exceeds(0.9, 0.8, 0.1, 0.2),
            claims.near(1.0, 0.97, 1.03, 1.0, 0.05), claims.agrees(47.0, 45.0, 49.0, 47.07, 3.69),
            claims.share_holds(7, 10), claims.rates_exceed(9, 10, 1, 10),
            claims.weakest(claims.above(0.7, 0.6, 0.5), claims.below(0.7, 0.8, 0.9))]
    assert {v.rule["kind"] for v in made} == set(claims.KINDS) | {"weakest"}
    for v in made:
        assert claims.evaluate(json.loads(json.dumps(v.rule))) == v  # the record re-derives the verdict
        assert claims.crossings(v.rule) == ("reproduced", "not reproduced"), v.rule
    with pytest.raises(claims.ClaimError, match="cannot be moved"):
        claims.crossings(claims.guard("not reproduced", "no seed").rule)
    assert claims.score(0.5, (0.1, 0.9), 10, "c", made[0])["rule"]["kind"] == "above"


def test_intervals_match_their_formulas():
    from scipy import stats

    v = [0.1, 0.4, 0.35, 0.8, 0.5]
    m, lo, hi = claims.mean_interval(v)
    ref = stats.t.interval(0.95, len(v) - 1, loc=sum(v) / len(v), scale=stats.sem(v))
    assert m == pytest.approx(0.43) and (lo, hi) == pytest.approx(ref)
    assert claims.mean_interval([1.0, math.nan]) [0] == 1.0 and math.isnan(claims.mean_interval([1.0])[1])
    med, lo, hi = claims.median_interval(v)
    assert med == 0.4 and min(v) <= lo <= med <= hi <= max(v)
    assert claims.median_interval(v) == (med, lo, hi)  # fixed resampling seed
    assert claims.rate(4, 10)[1:] == pytest.approx((0.168, 0.687), abs=1e-3)  # Wilson, textbook value


def test_score_refuses_an_unknown_verdict_and_scores_are_checked():
    with pytest.raises(claims.ClaimError, match="verdict"):
        claims.score(1.0, verdict="yes")
    with pytest.raises(claims.ClaimError, match="undeclared"):
        claims.check_scores("fig", ["a"], {"b": claims.not_run("x")})
    out = claims.check_scores("fig", ["a", "b"], {"a": claims.score(0.5, (0.1, 0.9), 10, "c", "partial")})
    assert out["b"]["verdict"] == "not run" and out["a"]["verdict"] == "partial"


def test_a_malformed_claim_declaration_names_its_figure(tmp_path):
    with pytest.raises(claims.ClaimError, match="exactly the fields"):
        claims.check_declared("figures/x.py", [{"id": "a", "claim": "b"}])
    decl = dict.fromkeys(claims.PLUGIN_FIELDS, "text")
    with pytest.raises(claims.ClaimError, match="non-empty"):
        claims.check_declared("figures/x.py", [{**decl, "source": " "}])


# -- the declarations ----------------------------------------------------------------------------------------

def test_every_declared_claim_is_complete_unique_and_filed_under_its_figures_paper():
    declared = declarations.declared_claims()
    assert declared, "no claim is declared"
    for cid, c in declared.items():
        assert cid.split(".")[0] in {"circuits", "eureka", "tian", "llc"}, cid  # llc: the workflow's own LLC questions
        assert c["paper"] == registry.report_category(c["figure"])
        assert all(c[f].strip() for f in claims.REQUIRED_FIELDS)
        # a source's row holds only the source's statements and its authors' code, each quoting where it says so
        own = c["source_key"] == declarations.OWN
        assert c["origin"] in (claims.OWN_ORIGINS if own else claims.SOURCE_ORIGINS), cid
        assert own or c["group"].startswith(declarations.declaration_files()[c["source_key"]]["source"]["short"]), cid
        assert c["origin"] != "source" or c["quote"].strip(), cid


# the words by which a statistic says when it reads (final, best, at a step, over training) or that no training
# is involved; a statistic written "as <claim id> ..." reads as that claim's does
WHEN = ("final", "last", "epoch", "step", "snapshot", "switch", "initiali", "untrained", "over training", "no training",
        "end of training")


def test_every_statistic_says_when_it_reads_and_the_ledger_prints_it(tmp_path, monkeypatch):
    declared = declarations.declared_claims()

    def says_when(cid: str, seen=()) -> bool:
        text = declared[cid]["statistic"]
        if any(w in text.lower() for w in WHEN):
            return True
        ref = text.split()[1].rstrip(":,") if text.startswith("as ") else None
        return ref in declared and ref not in seen and says_when(ref, seen + (cid,))

    silent = [cid for cid in declared if not says_when(cid)]
    assert not silent, f"statistics that name no epoch (final, best, at a step) in pipeline_lib/declarations: {silent}"
    fig = declared[next(iter(declared))]["figure"]
    monkeypatch.setattr(ledger, "score_figure", lambda figure, stats, params: {})
    ledger.run_claims({fig: _sidecar(tmp_path, fig)}, {fig: None}, str(tmp_path / "claims.csv"),
                      str(tmp_path / "claims.md"), Paths(str(tmp_path)))
    md = (tmp_path / "claims.md").read_text()
    assert "| statistic (epoch, metric, set) |" in md
    assert all(ledger.md_cell(c["statistic"]) in md for c in declared.values())


def test_every_result_a_source_states_is_listed_with_the_claims_that_score_it():
    declared = declarations.declared_claims()
    docs = declarations.declaration_files()
    assert {"circuits", "eureka", "tian", "own"} <= set(docs)
    for key, doc in docs.items():
        if key == declarations.OWN:
            continue
        assert doc["results"], key
        for res in doc["results"]:
            assert all(i in declared for i in res.get("claims", [])), res
            assert res.get("claims") or res["not_covered"].strip()
    # every claim of a source's own statements scores some result the source states
    covered = {i for d in docs.values() for res in d.get("results", []) for i in res.get("claims", [])}
    assert [cid for cid, c in declared.items() if c["origin"] == "source" and cid not in covered] == []


def test_a_declaration_file_is_checked_naming_the_claim(tmp_path):
    good = {"id": "x.y.z", "figure": "fig5_accuracy", "origin": "source", "landmark": "Sec. 1", "quote": "words",
            "reference": "none printed", "claim": "c", "statistic": "s", "control": "k", "test": "t",
            "reads": ["arm.successes"]}
    doc = lambda *cs, **kw: {"source": {"key": "x", "title": "X"}, "claims": list(cs), **kw}  # noqa: E731
    claims.check_declaration_file("x.yaml", doc(good, results=[{"landmark": "Fig. 1", "claims": ["x.y.z"]}]),
                                  own=False, figures={"fig5_accuracy"})
    cases = [({**good, "quote": ""}, False, "quotes its words"), ({**good, "origin": "extension"}, False, "allowed in this file"),
             ({**good, "origin": "source"}, True, "allowed in this file"), ({**good, "figure": "nope"}, False, "no figure"),
             ({**good, "origin": "extension"}, True, "extends"), ({**good, "landmark": " "}, False, "landmark"),
             ({**good, "rule": "x"}, False, "allowed fields"), ({**good, "reads": []}, False, "reads must list"),
             ({**good, "reads": "arm.successes"}, False, "reads must list")]
    for claim, own, match in cases:
        with pytest.raises(claims.ClaimError, match=match):
            claims.check_declaration_file("x.yaml", doc(claim), own=own, figures={"fig5_accuracy"})
    with pytest.raises(claims.ClaimError, match="either claims or not_covered"):
        claims.check_declaration_file("x.yaml", doc(good, results=[{"landmark": "Fig. 1"}]), own=False,
                                      figures={"fig5_accuracy"})


def test_a_caveats_placeholders_are_filled_from_this_configs_statistics():
    stats = {"eureka_table": {"arms": {"reasoning": {"Softmax": {"epochs": 600, "lr": 0.002, "n_seeds": 10},
                                                     "HT": {"epochs": 600, "lr": 0.0005}}}}}
    fill = caveats.fill_caveat
    assert fill("{eureka_table:arms.reasoning.Softmax.epochs} epochs at {eureka_table:arms.reasoning.Softmax.lr}",
                stats) == "600 epochs at 0.002"
    assert fill("{eureka_table:arms.reasoning.*.lr}", stats) == "0.002 or 0.0005"  # several values: each once
    assert fill("{eureka_table:arms.reasoning.*.epochs}", stats) == "600"
    # a figure this config does not draw, or a path that names nothing in it
    assert fill("{eureka_accuracy:arms.reasoning.Softmax.lr}", stats) == caveats.NOT_IN_CONFIG
    assert fill("{eureka_table:arms.digits.Softmax.lr}", stats) == caveats.NOT_IN_CONFIG
    assert fill("no placeholder: 2e-3", stats) == "no placeholder: 2e-3"
    assert caveats.check_caveat("{eureka_table:arms.x.lr} and {eureka_accuracy:a}", {"eureka_table"}) \
        == "placeholder names no figure 'eureka_accuracy'"
    assert caveats.check_caveat("{eureka_table:arms.x.lr}", {"eureka_table"}) == ""
    assert caveats.check_caveat("lr {arms.x.lr}", {"eureka_table"}) == "a brace outside a placeholder {<figure>:<dotted path>}"


def test_a_malformed_caveat_placeholder_is_refused_naming_the_file_and_claim(tmp_path, monkeypatch):
    src = declarations.DECLARATIONS / "eureka.yaml"
    text = src.read_text()
    cid = "eureka.accuracy.reasoning_plateau_then_jump"
    assert "{eureka_table:arms.reasoning.Softmax.lr}" in text
    for bad, why in (("{eureka_tabel:arms.reasoning.Softmax.lr}", "names no figure 'eureka_tabel'"),
                     ("{arms.reasoning.Softmax.lr}", "a brace outside a placeholder")):
        for p in declarations.DECLARATIONS.glob("*.yaml"):
            (tmp_path / p.name).write_text(p.read_text())
        (tmp_path / "eureka.yaml").write_text(text.replace("{eureka_table:arms.reasoning.Softmax.lr}", bad, 1))
        monkeypatch.setattr(declarations, "DECLARATIONS", tmp_path)
        declarations.declaration_files.cache_clear()
        try:
            with pytest.raises(declarations.PluginError, match=f"eureka.yaml: claim '{cid}': caveat .*{why}"):
                declarations.declaration_files()
        finally:
            monkeypatch.undo()
            declarations.declaration_files.cache_clear()


def test_ledger_rows_state_the_configs_own_settings(tmp_path):
    """A declared caveat's placeholders are filled from the sidecars of the config that wrote the ledger."""
    declared = declarations.declared_claims()
    cid = "eureka.accuracy.reasoning_plateau_then_jump"
    assert any(caveats.PLACEHOLDER.search(c) for c in declared[cid]["caveats"])
    rows = []
    for epochs in (600, 10000):
        stats = {"arms": {"reasoning": {"Softmax": {"epochs": epochs, "lr": 0.002}}}, "summary": ""}
        side = {"stats": stats, "claims": {}, "provenance": {}}
        rows.append({r["id"]: r for r in ledger.collect({"eureka_table": side, "eureka_accuracy": side})}[cid])
    assert f"{600} epochs at learning rate 0.002" in rows[0]["caveats"]
    assert f"{10000} epochs at learning rate 0.002" in rows[1]["caveats"]
    assert "{" not in rows[0]["caveats"] + rows[1]["caveats"]


# -- the ledger -----------------------------------------------------------------------------------------------

def _sidecar(tmp_path, fig):
    path = tmp_path / f"{fig}.json"
    path.write_text(json.dumps({"stats": {"summary": "planted summary"}, "provenance": {}}))
    return str(path)


def test_ledger_has_a_row_per_declared_claim_and_marks_undrawn_figures_not_run(tmp_path, monkeypatch):
    declared = declarations.declared_claims()
    fig = declared[next(iter(declared))]["figure"]
    mine = [cid for cid, c in declared.items() if c["figure"] == fig]
    scores = {cid: claims.score(0.9, (0.8, 1.0), 10, "control 0.1", "reproduced") for cid in mine}
    monkeypatch.setattr(ledger, "score_figure", lambda figure, stats, params: scores if figure == fig else {})
    rows = ledger.run_claims({fig: _sidecar(tmp_path, fig)}, {fig: None}, str(tmp_path / "claims.csv"),
                             str(tmp_path / "claims.md"), Paths(str(tmp_path)))
    assert [r["id"] for r in rows] == list(declared)
    by_id = {r["id"]: r for r in rows}
    assert all(by_id[c]["verdict"] == "reproduced" for c in mine)
    others = [r for r in rows if r["figure"] != fig]
    assert all(r["verdict"] == "not run" and "not drawn" in r["control"] for r in others)
    with open(tmp_path / "claims.csv", newline="") as fh:
        table = list(csv.DictReader(fh))
    assert list(table[0])[:8] == ["id", "group", "paper", "origin", "landmark", "quote", "claim", "reference"]
    assert len(table) == len(declared)
    md = (tmp_path / "claims.md").read_text()
    assert f"[{fig}](figures/{fig}.png)" in md and md.count("\n## ") == len(ledger.counts(rows)) + 1
    assert f"## What each figure measured\n\n- [{fig}](figures/{fig}.png): planted summary" in md
    papers = sorted((tmp_path / "claims").glob("*.rst"))
    assert len(papers) == len(ledger.counts(rows, "paper"))
    cov = (tmp_path / "claims_coverage.md").read_text()  # the coverage table: this figure's claims scored here
    assert all(f"{c} (reproduced)" in cov for c in mine if any(c in r.get("claims", []) for d in
               declarations.declaration_files().values() for r in d.get("results", [])))
    assert any(f"`{fig}.png`_" in p.read_text() for p in papers)  # a drawn figure is linked in the report


def test_the_per_paper_report_captions_render_without_rst_messages(tmp_path):
    from docutils.core import publish_doctree
    from docutils.nodes import system_message

    declared = declarations.declared_claims()
    figs = {c["figure"] for c in declared.values()}
    rows = ledger.collect({})
    for paper in ledger.counts(rows, "paper"):
        text = ledger.paper_caption(paper, [r for r in rows if r["paper"] == paper], drawn=figs)
        body = text.replace("{% raw %}", "").replace("{% endraw %}", "")
        links = "".join(f"\n.. _{f}.png: javascript:void(0)\n" for f in figs)  # the report's file targets
        tree = publish_doctree(body + links, settings_overrides={"report_level": 5, "halt_level": 5})
        assert [m.astext() for m in tree.findall(system_message)] == [], paper


# -- replication ----------------------------------------------------------------------------------------------

def _all_seeds(raw, section):
    from pipeline_lib.plumbing.replicate import _seed_values

    return set(_seed_values(raw[section]))


@pytest.mark.parametrize("path", [SMOKE, "config/config.yaml"])
def test_a_replicate_shares_no_seed_and_no_data_seed_and_writes_no_default_path(path):
    from conftest import REPO

    cfg = load_config(load_yaml(REPO / path))
    rep = load_config(replicate_config(cfg.raw))
    run_seeds = {s for r in cfg.runs.values() for s in r.seeds}
    rep_seeds = {s for r in rep.runs.values() for s in r.seeds}
    assert run_seeds and rep_seeds and not run_seeds & rep_seeds
    assert all(len(rep.runs[n].seeds) == len(cfg.runs[n].seeds) for n in cfg.runs)
    data = {n: d["seed"] for n, d in cfg.raw["datasets"].items()}
    assert all(rep.raw["datasets"][n]["seed"] != s for n, s in data.items())
    offset = seed_offset(cfg.raw)
    assert offset > max(run_seeds | set(data.values()))
    # every path the replicate writes lies under <results>/replication, none is a path of the original
    root = cfg.raw["results"]
    assert rep.raw["results"] == f"{root}/replication" and rep.raw["replicate_of"] == root
    orig_paths = {cfg.paths.trajectory(r) for r in cfg.runs} | {cfg.paths.dataset(d) for d in cfg.datasets}
    rep_paths = {rep.paths.trajectory(r) for r in rep.runs} | {rep.paths.dataset(d) for d in rep.datasets}
    assert not orig_paths & rep_paths and all(p.startswith(f"{root}/replication/") for p in rep_paths)
    assert replicate_config(rep.raw) == rep.raw  # a replicate is not replicated again


def test_replicate_keeps_finetune_chains_and_shown_seeds_consistent(smoke_raw):
    cfg = load_config(smoke_raw)
    rep = load_config(replicate_config(cfg.raw))
    for name, run in rep.runs.items():
        if run.init_from:
            assert set(run.seeds) <= set(rep.runs[run.init_from].seeds), name
    for fig, block in rep.raw["figures"].items():
        if isinstance(block.get("seeds"), list):
            assert set(block["seeds"]) & {s for r in rep.runs.values() for s in r.seeds}, fig


def test_compare_agrees_when_the_estimates_are_consistent_whatever_the_verdicts():
    base = {"paper": "P", "claim": "c", "n_seeds": "10"}
    orig = [{**base, "id": "a", "measured": "0.9", "ci_low": "0.6", "ci_high": "1", "verdict": "reproduced"},
            {**base, "id": "b", "measured": "0.5", "ci_low": "0.2", "ci_high": "0.8", "verdict": "partial"},
            {**base, "id": "c", "measured": "0.9", "ci_low": "0.8", "ci_high": "1", "verdict": "reproduced"},
            {**base, "id": "d", "measured": "", "ci_low": "", "ci_high": "", "verdict": "not run"},
            {**base, "id": "e", "measured": "1", "ci_low": "0.7225", "ci_high": "1", "verdict": "reproduced"}]
    rep = [{**base, "id": "a", "measured": "0.8", "ci_low": "0.55", "ci_high": "0.95", "verdict": "reproduced"},
           {**base, "id": "b", "measured": "0.6", "ci_low": "0.3", "ci_high": "0.9", "verdict": "reproduced"},
           {**base, "id": "c", "measured": "0.2", "ci_low": "0.05", "ci_high": "0.5", "verdict": "not reproduced"},
           {**base, "id": "d", "measured": "0.2", "ci_low": "0.05", "ci_high": "0.5", "verdict": "partial"},
           # 10/10 -> 6/10, both 'reproduced': the same label, estimates that differ
           {**base, "id": "e", "measured": "0.6", "ci_low": "0.3127", "ci_high": "0.8318", "verdict": "reproduced"}]
    out = {r["id"]: r for r in ledger.compare(orig, rep)}
    assert out["a"]["agrees"] == "yes" and "<=" in out["a"]["why"]
    assert out["b"]["agrees"] == "yes" and "verdict partial -> reproduced" in out["b"]["why"]
    assert out["c"]["agrees"] == "no"
    assert out["d"]["agrees"] == "" and "original" in out["d"]["why"]
    assert out["e"]["agrees"] == "no" and ">" in out["e"]["why"]
    assert ledger.consistent(0.5, math.nan, math.nan, 0.5, math.nan, math.nan)[0] == "yes"
    assert ledger.consistent(0.5, math.nan, math.nan, 0.6, math.nan, math.nan)[0] == "no"
    assert out["b"]["knife_edge"] == "yes"  # consistent estimates, different labels
    assert [r for r, o in out.items() if o["knife_edge"]] == ["b"]  # c's labels differ with its estimates
    md = ledger.replicate_markdown(list(out.values()))
    assert "2 of 4 claims scored in both agree" in md and "1 verdicts are knife-edge" in md and "(b)" in md


def test_seed_counts_expand_to_lists():
    raw = {"runs": {"a": {"seeds": 3}, "b": {"seeds": [0, 4]}}, "datasets": {"d": {"seed": 0}}}
    rep = replicate_config(raw)
    assert seed_list(rep["runs"]["a"]["seeds"]) == (100, 101, 102) and rep["runs"]["b"]["seeds"] == [100, 104]
    assert rep["datasets"]["d"]["seed"] == 100


def test_publish_rescores_kept_statistics_into_the_ledger_and_the_readme(tmp_path):
    """No results folder: the kept statistics of the default config (here none of its figures, so every claim is
    'not run') re-scored into docs/claims.md, the coverage table and the README's counts and cost rows."""
    import shutil

    for part in ("pipeline_lib", "config", "workflow"):
        shutil.copytree(REPO / part, tmp_path / part, ignore=shutil.ignore_patterns("__pycache__"))
    cost = {"jobs": 2, "job_seconds": 120.5, "peak_rss_mb": 1250.0, "results_mb": 3.0, "wall_seconds": 3930.5,
            "cores": 2}
    (tmp_path / publishing.KEPT).mkdir(parents=True)
    (tmp_path / publishing.KEPT / "config.json").write_text(json.dumps({"config": "config/config.yaml",
                                                                        "cost": cost, "figures": {}}))
    from pipeline_lib.build.cost import COST_BEGIN, COST_END
    from pipeline_lib.build.waits import ROWS

    readme = tmp_path / "README.md"
    waits = "".join(f"| {label} | typed |\n" for label in ROWS.values())  # generated from docs/waits.json (none here)
    readme.write_text(f"intro\n{publishing.README_BEGIN}\nstale\n{publishing.README_END}\n{COST_BEGIN}\n| step | wait |"
                      f"\n| --- | --- |\n| the full reproduction | about 2 hours |\n{waits}| the tests | 8 minutes |\n"
                      f"{COST_END}\nrest\n")
    said = publishing.publish(tmp_path)
    assert said == ["wrote docs/claims_default.md", "wrote docs/claims.md", "wrote docs/claims_coverage.md",
                    "wrote README.md"]
    text = readme.read_text()
    rows = ledger.collect({})
    assert "stale" not in text and text.startswith("intro\n") and text.endswith("rest\n")
    assert consolidating.counts_table(consolidating.consolidate({"config": rows}, {})) in text
    assert "| the tests | 8 minutes |" in text and "| typed |" not in text  # a row of its own: left as written
    assert "| the full reproduction | 66 minutes on 2 cores: 2 jobs, 120 job-seconds, the largest job 1.25 GB" in text
    for name in ("claims.md", "claims_default.md"):
        docs = (tmp_path / "docs" / name).read_text()
        assert docs.startswith("<!-- generated by `python -m pipeline_lib publish` from docs/stats/config.json")
        assert "](figures/" not in docs  # no link to a figure a clone lacks
    assert publishing.publish(tmp_path) == ["every generated file is up to date"]
    assert "no replicate kept" in (tmp_path / "docs" / "claims.md").read_text()
    (tmp_path / publishing.KEPT / "config-replicate.json").write_text(json.dumps(
        {"config": "config/config.yaml", "replicate": True, "cost": cost, "figures": {}}))
    assert publishing.publish(tmp_path) == ["wrote docs/claims_replication.md", "wrote docs/claims.md",
                                            "wrote docs/claims_coverage.md"]
    assert "its replicate: [claims_replication.md]" in (tmp_path / "docs" / "claims.md").read_text()
    (tmp_path / publishing.KEPT / "config.json").unlink()
    with pytest.raises(FileNotFoundError, match="no kept statistics of config/config.yaml.*publish --keep results"):
        publishing.publish(tmp_path)
    with pytest.raises(FileNotFoundError, match="not finished"):
        publishing.keep(tmp_path / "nowhere", tmp_path)


def test_the_readme_shows_the_counts_of_the_consolidated_ledger():
    """README and docs/claims.md are refreshed together by `python -m pipeline_lib publish`: never apart."""
    readme = (REPO / "README.md").read_text()
    block = readme.split(publishing.README_BEGIN)[1].split(publishing.README_END)[0]
    table = (REPO / "docs" / "claims.md").read_text().split("## Counts\n\n")[1].split("\n\n")[0]
    assert table.count("\n") > 3 and block.strip() == table.strip()


def test_the_full_reproductions_cost_is_measured_from_the_run(tmp_path):
    from pipeline_lib.build.cost import cost_row, run_cost

    results = tmp_path / "results"
    (results / "benchmarks" / "train").mkdir(parents=True)
    head = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
    for name, s, rss in (("a", 100.5, 300.0), ("b", 20.0, 1250.0)):
        (results / "benchmarks" / "train" / f"{name}.tsv").write_text(head + f"{s}\t0:01:40\t{rss}\t1\t1\t1\t0\t0\t90\t1\n")
    cost = run_cost(results, tmp_path)  # no Snakemake log: the job time alone, and no wall time
    assert cost["jobs"] == 2 and cost["job_seconds"] == 120.5 and cost["peak_rss_mb"] == 1250.0 and cost["wall_seconds"] is None
    log = tmp_path / ".snakemake" / "log"
    log.mkdir(parents=True)
    (log / "2026-01-01T000000.1.snakemake.log").write_text("Provided cores: 2\n...\n3 of 3 steps (100%) done\n"
                                                          "Elapsed time: 1:05:30.5\n")
    (log / "2026-01-02T000000.1.snakemake.log").write_text("Provided cores: 2\n1 of 3 steps (33%) done\n")  # interrupted
    (log / "2026-01-03T000000.1.snakemake.log").write_text("Provided cores: 2\n1 of 1 steps (100%) done\n"
                                                          "Elapsed time: 0:00:02.1\n")  # one target rebuilt later
    text = cost_row(run_cost(results, tmp_path))
    assert text.startswith("| the full reproduction | 66 minutes on 2 cores: 2 jobs, 120 job-seconds, the largest job 1.25 GB")
    assert "upper bounds" not in text  # a run kept as shared (publish --keep R --shared) says its times are bounds
    assert "66 minutes on 1 core:" in cost_row({**run_cost(results, tmp_path), "cores": 1})
    assert cost_row({**run_cost(results, tmp_path), "shared": True}).endswith(
        "MB of results (measured while the machine ran other work too: the times are upper bounds) (the kept run's "
        "benchmark files and Snakemake log) |")
    assert "66 minutes on 2 cores (AMD EPYC (family 25, model 17)): 2 jobs" in cost_row(  # the machine, where known
        run_cost(results, tmp_path), "AMD EPYC (family 25, model 17)")
    # a run refreshed in pieces: the largest log ran fewer steps than there are jobs, so no wall time is claimed
    (results / "benchmarks" / "train" / "c.tsv").write_text(head + "3599.5\t0:01:40\t1.0\t1\t1\t1\t0\t0\t90\t1\n")
    (results / "benchmarks" / "train" / "d.tsv").write_text(head + "0.0\t0:00:00\t1.0\t1\t1\t1\t0\t0\t90\t1\n")
    assert run_cost(results, tmp_path)["wall_seconds"] is None  # 3 steps, 4 jobs
    assert cost_row(run_cost(results, tmp_path)).startswith(
        "| the full reproduction | no log of one invocation that ran every job (the largest ran 3 steps in 66 minutes "
        "on 2 cores; the jobs added since ran on their own): 4 jobs, 3,720 job-seconds")


def test_a_run_stopped_and_resumed_takes_its_invocations_wall_times_together(tmp_path):
    """A run stopped before its end (a time limit, Ctrl-C) and resumed: no one log ran every job, but the
    invocations ran them in turn (the first planned every step; the last finished what it planned), so their wall
    times together are the run's; where an earlier invocation finished every step it planned, or the steps do not
    add up, no wall time is claimed."""
    from pipeline_lib.build.cost import _invocations, cost_text, run_cost

    results = tmp_path / "results"
    (results / "benchmarks" / "train").mkdir(parents=True)
    head = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
    for name in "abcd":
        (results / "benchmarks" / "train" / f"{name}.tsv").write_text(head + "10\t0:00:10\t1.0\t1\t1\t1\t0\t0\t90\t1\n")
    log = tmp_path / ".snakemake" / "log"
    log.mkdir(parents=True)

    def write(day, done, planned, minutes, cores=16):
        (log / f"2026-01-{day}T000000.1.snakemake.log").write_text(
            f"Provided cores: {cores}\n{done - 1} of {planned} steps (1%) done\n{done} of {planned} steps (9%) done\n"
            f"Elapsed time: 0:{minutes}:00\n")

    write("01", 3, 5, 7)  # stopped after 3 of its 5 steps (4 jobs and the target 'all')
    write("02", 2, 2, 1)  # resumed: the other 2
    cost = run_cost(results, tmp_path)
    assert (cost["wall_seconds"], cost["cores"], cost["invocations"]) == (480, 16, 2)
    assert cost_text(cost, "CPU X with GPU Y").startswith(
        "8 minutes on 16 cores (CPU X with GPU Y) in 2 invocations, each resuming where the last stopped: 4 jobs")
    write("02", 1, 2, 1)  # the second stopped too: no invocation finished the run
    assert run_cost(results, tmp_path)["wall_seconds"] is None
    write("02", 3, 3, 1)  # more steps than the first left: another run, not a resumption of it
    assert run_cost(results, tmp_path)["wall_seconds"] is None
    write("02", 2, 2, 1, cores=8)  # resumed on other cores: no one number of cores to name
    assert run_cost(results, tmp_path)["wall_seconds"] is None
    (log / "2026-01-01T000000.1.snakemake.log").write_text(  # Snakemake's decimal percentages, near 0% and 100%
        "Provided cores: 16\n1 of 300 steps (0.3%) done\n3 of 300 steps (1.0%) done\nElapsed time: 0:07:00\n")
    assert _invocations(log)[0] == (3, 300, 420.0, 16)
    (log / "2026-01-01T000000.1.snakemake.log").write_text(  # killed: no elapsed time, so no sum of wall times
        "Provided cores: 16\n3 of 300 steps (1.0%) done\n")
    assert run_cost(results, tmp_path)["wall_seconds"] is None
    write("01", 3, 5, 7)
    write("02", 2, 2, 1)
    write("00", 5, 5, 9)  # an earlier full run in the same folder: the resumption is not told apart from it
    assert run_cost(results, tmp_path)["wall_seconds"] == 540 and "invocations" not in run_cost(results, tmp_path)


def test_a_runs_wall_time_comes_from_its_own_configs_log(tmp_path):
    """Configs run in one working folder leave their logs side by side: the default, an overlay and the
    default's replicate each take the wall time of their own invocation, never another's."""
    from pipeline_lib.build.cost import run_cost

    results = tmp_path / "results"
    (results / "benchmarks" / "train").mkdir(parents=True)
    head = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
    (results / "benchmarks" / "train" / "a.tsv").write_text(head + "10\t0:00:10\t1.0\t1\t1\t1\t0\t0\t90\t1\n")
    log = tmp_path / ".snakemake" / "log"
    log.mkdir(parents=True)
    for day, command, steps, minutes in (("01", "snakemake --cores 2", 1, 10),
                                         ("02", "snakemake --cores 2 --configfile config/cogo_cpu.yaml", 9, 20),
                                         ("03", "snakemake --cores 2 --config replicate=true", 1, 30),
                                         ("04", "snakemake --configfile=/abs/config/shortest_path_long.yaml", 1, 40),
                                         ("05", "snakemake --configfile config/config.yaml config/eureka_table1.yaml "
                                                "--cores 2", 1, 50)):
        (log / f"2026-01-{day}T000000.1.snakemake.log").write_text(
            f"  Command: {command}\nProvided cores: 2\n{steps} of {steps} steps (100%) done\n"
            f"Elapsed time: 0:{minutes}:00\n")
    wall = {(c, r): run_cost(results, tmp_path, None, c, r)["wall_seconds"]
            for c, r in (("config/config.yaml", False), ("config/cogo_cpu.yaml", False), ("config/config.yaml", True),
                         ("config/own_circuit.yaml", False), ("config/shortest_path_long.yaml", False),
                         ("config/eureka_table1.yaml", False))}
    assert wall == {("config/config.yaml", False): 600, ("config/cogo_cpu.yaml", False): 1200,
                    ("config/config.yaml", True): 1800, ("config/own_circuit.yaml", False): None,
                    ("config/shortest_path_long.yaml", False): 2400, ("config/eureka_table1.yaml", False): 3000}
    # the forms a command may take: a target after the config file, --config=..., True, --configfiles
    from pipeline_lib.build.cost import _ran

    def ran(command, config="config/config.yaml", replicate=False):
        return _ran(f"  Command: {command}\n", config, replicate)

    assert ran("snakemake --configfile config/config.yaml fig5_accuracy --cores 2")
    assert ran("snakemake --config=replicate=true", replicate=True) and ran("snakemake --config replicate=True",
                                                                             replicate=True)
    assert ran("snakemake --configfiles config/cogo_cpu.yaml", "config/cogo_cpu.yaml")
    assert not ran("snakemake --configfile config/cogo_cpu.yaml fig5_accuracy")


def test_the_full_reproductions_cost_counts_the_default_configs_jobs_only(tmp_path):
    """An overlay run into the same results folder (its own runs, analyses and figures) is not the full
    reproduction: its benchmark files are left out of the README's cost."""
    from pipeline_lib.build.cost import config_benchmarks, run_cost
    from pipeline_lib.plumbing.config import load_config_file

    only = config_benchmarks(load_config_file(REPO / "config" / "config.yaml"))
    assert {"train/scratch_p4.tsv", "dataset/sma_p4_T12.tsv", "figures/fig5_accuracy.tsv", "claims/claims.tsv",
            "probes/scratch_p4.tsv"} <= only
    head = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
    for rel, s in (("train/scratch_p4.tsv", 10.0), ("train/digits_resnet_overlay.tsv", 1000.0)):
        (tmp_path / "benchmarks" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "benchmarks" / rel).write_text(head + f"{s}\t0:00:10\t1.0\t1\t1\t1\t0\t0\t90\t1\n")
    for run, size in (("scratch_p4", 2_000_000), ("digits_resnet_overlay", 5_000_000)):  # and their outputs' size
        (tmp_path / "runs" / run).mkdir(parents=True)
        (tmp_path / "runs" / run / "weights.h5").write_bytes(b"0" * size)
    mine, every = run_cost(tmp_path, tmp_path, only), run_cost(tmp_path, tmp_path)
    assert mine["job_seconds"] == 10.0 and every["job_seconds"] == 1010.0
    assert 2.0 <= mine["results_mb"] < 2.1 and every["results_mb"] >= 7.0


def test_training_starts_with_the_longest_chain_measured_by_the_kept_runs(tmp_path):
    """The scheduling priority of a training run is the measured seconds of the longest training chain it starts
    (its own and its init_from descendants'); a recipe none measured is estimated from its work (steps, slots,
    tokens) at the measured runs' median rate; a run whose recipe changed is not given the old recipe's seconds."""
    import copy

    from pipeline_lib.build.cost import (
        dataset_priorities,
        measured_seconds,
        recipe_digest,
        train_priorities,
        train_seconds,
        work,
    )
    from pipeline_lib.plumbing import jobs

    raw = load_yaml(SMOKE)
    cfg = load_config(copy.deepcopy(raw))
    chain = [r for r, rc in cfg.runs.items() if rc.init_from is not None and cfg.runs[rc.init_from].init_from is None]
    child = chain[0]
    parent = cfg.runs[child].init_from
    other = next(r for r in cfg.runs if r not in (child, parent) and cfg.runs[r].init_from is None
                 and not any(rc.init_from == r for rc in cfg.runs.values()))
    head = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
    (tmp_path / "benchmarks" / "train").mkdir(parents=True)
    for run, s in ((parent, 100.0), (child, 400.0), (other, 450.0)):
        (tmp_path / "benchmarks" / "train" / f"{run}.tsv").write_text(head + f"{s}\t0:00:10\t1.0\t1\t1\t1\t0\t0\t90\t1\n")
    kept = train_seconds(tmp_path, cfg)
    assert kept[parent] == [100.0, recipe_digest(cfg, parent)] and len(kept) == 3
    (tmp_path / "stats").mkdir()
    (tmp_path / "stats" / "config.json").write_text(json.dumps({"train_seconds": kept}))
    # a run that shared its machine (publish --keep --shared), later by name, does not override free cores' seconds
    slow = {r: [s * 3, d] for r, (s, d) in kept.items()}
    (tmp_path / "stats" / "zz.json").write_text(json.dumps({"cost": {"shared": True}, "train_seconds": slow}))
    measured = measured_seconds(tmp_path / "stats")
    assert measured[recipe_digest(cfg, parent)] == 100.0
    prio = train_priorities(cfg, measured)
    grandchildren = max((prio[r] for r, rc in cfg.runs.items() if rc.init_from == child), default=0)
    assert prio[parent] == 100 + 400 + grandchildren > prio[other] == 450  # the chain goes first
    assert prio[child] == 400 + grandchildren
    # the other runs: estimated at the median measured rate (seconds per unit of work)
    rates = sorted(s / work(cfg, r) for r, s in ((parent, 100), (child, 400), (other, 450)))
    lone = [r for r in cfg.runs if r not in (child, parent, other)
            and not any(rc.init_from == r for rc in cfg.runs.values())]
    assert all(prio[r] == round(rates[1] * work(cfg, r)) for r in lone)
    assert len({work(cfg, r) for r in lone}) > 1
    # work: a step's fixed cost plus the tokens it reads over every slot; an online task's epoch is one step
    rc = cfg.runs[parent]
    shape = cfg.dataset_shape(rc.dataset)
    batch = shape["n_train"] if rc.batch_size == "full" else rc.batch_size
    steps = rc.epochs * (-(-shape["n_train"] // batch))
    assert work(cfg, parent) == steps * (1 + len(rc.slots()) * batch * shape["T"] / 1e4)
    online = next((r for r in cfg.runs if jobs.online(cfg, r)), None)
    assert online is None or work(cfg, online) == cfg.runs[online].epochs * (
        1 + len(cfg.runs[online].slots()) * cfg.runs[online].batch_size * cfg.dataset_shape(cfg.runs[online].dataset)["T"] / 1e4)
    # another recipe for `other` (more epochs): its old seconds no longer apply
    raw["runs"][other]["epochs"] = cfg.runs[other].epochs * 3
    changed = load_config(copy.deepcopy(raw))
    assert recipe_digest(changed, other) != recipe_digest(cfg, other)
    assert train_priorities(changed, measured)[other] != 450
    assert train_priorities(cfg, {}) and measured_seconds(tmp_path / "absent") == {}
    # a dataset goes just before the highest-priority run that reads it (Snakemake passes no priority upstream)
    data = dataset_priorities(cfg, prio)
    assert data[cfg.runs[parent].dataset] == max(prio[r] for r, rc in cfg.runs.items()
                                                 if rc.dataset == cfg.runs[parent].dataset) + 1
    assert all(data[d] >= 1 for d in {rc.dataset for rc in cfg.runs.values()})


def test_at_best_notes_a_rule_that_cannot_say_reproduced_with_its_seeds():
    nan = math.nan
    note = claims.at_best(claims.score(0.7, (nan, nan), 1, "", claims.above(0.7, nan, 0.5)))
    assert note and note[0].startswith("at best partial with 1 seeds")  # no interval: never "reproduced"
    assert claims.at_best(claims.rate_exceeds(3, 3, 0, 3, "c"))[0].startswith("at best partial with 3 seeds")
    assert claims.at_best(claims.rate_exceeds(10, 10, 0, 10, "c")) == []  # 10/10 vs 0/10 can clear it
    assert claims.at_best(claims.score(0, (0, 0), 3, "", claims.guard("not reproduced", "no seed"))) == []
    assert claims.at_best(claims.score(0, (0, 0), 3, "", claims.weakest(claims.guard("not run", "x"),
                                                                          claims.above(1, 0.9, 0.5)))) == []


def test_coverage_counts_a_result_scored_by_a_proxy_apart_and_prints_why(monkeypatch):
    """A result whose claims test something near it (``proxy``) is 'scored by a proxy', not 'scored here', and its
    row prints why; the same result without ``proxy`` counts as scored here."""
    doc = {"source": {"title": "A source"}, "results": [
        {"landmark": "Sec. 1", "quote": "q", "kind": "empirical", "claims": ["a.b"], "proxy": "toy task only"},
        {"landmark": "Sec. 2", "quote": "r", "kind": "empirical", "claims": ["a.b"], "note": "a plain note"}]}
    monkeypatch.setattr(ledger, "declaration_files", lambda: {"a": doc})
    rows = [{"id": "a.b", "verdict": "reproduced"}]
    cov = ledger.coverage(rows)["a"]
    assert cov["counts"] == {"scored here": 1, "scored by a proxy": 1, "declared, not run here": 0, "not covered": 0}
    md = ledger.coverage_markdown(rows)
    assert "| scored by a proxy | proxy: toy task only |" in md and "| scored here | a plain note |" in md
