"""The consolidated ledger: per claim the best evidence over the kept configs (the closest to the source first,
then more seeds), and a verdict that one replicate's noise cannot flip: pooled where the rule pools, undecided
with the seeds that would decide it where it does not."""
import math

import pytest

from conftest import REPO
from pipeline_lib import claims
from pipeline_lib.build import consolidate as con
from pipeline_lib.stages import claims as ledger
from pipeline_lib.stats import wilson_interval


def _above(value, low, n=10, threshold=0.5):
    """A claim "value above threshold" scored on n seeds, as a figure's score_claims returns it."""
    return claims.score(value, (low, value + (value - low)), n, "control", claims.above(value, low, threshold))


def _ledger(scores: dict[str, dict]) -> list[dict]:
    """Every declared claim not run, but the ones given."""
    rows = ledger.collect({})
    return [{**r, **scores.get(r["id"], {})} for r in rows]


def test_the_precedence_file_orders_real_configs_once_each():
    rank = con.ranks()
    lines = __import__("yaml").safe_load(con.PRECEDENCE.read_text())
    assert len(rank) == sum(len(line["configs"]) for line in lines) and all(line["why"] for line in lines)
    assert all((REPO / "config" / f"{c}.yaml").exists() for c in rank), sorted(rank)
    # the paper's own recipe first; of the reasoning runs, the paper's length (10K epochs) before a wider model
    # trained shorter (eureka_long: 3000 epochs), whatever their seed counts
    assert rank["eureka_paper"][0] < rank["eureka_10k"][0] < rank["eureka_long"][0] < rank["config"][0]
    assert rank["config"][0] < rank["own_circuit"][0]
    assert rank["config"][0] == rank["cogo_cpu"][0] and rank["config"] < rank["cogo_cpu"]  # one line: the order written


def test_a_closer_config_whose_numbers_fail_the_precondition_is_said_beside_the_verdict():
    """A config closer to the source that cannot score a claim on its numbers (a guard: e.g. its control is
    saturated) leaves the verdict to a farther one, and the row says so; one that does not draw the claim does
    not."""
    a = ledger.collect({})[0]["id"]
    saturated = claims.score(1.0, (0.6, 1.0), 5, "control", claims.guard("not run", "the control's ratio is 1"))
    ledgers = {"near": _ledger({a: saturated}), "absent": _ledger({}), "far": _ledger({a: _above(0.4, 0.3)})}
    rank = {"near": (0, 0), "absent": (0, 1), "far": (1, 0)}
    row = {r["id"]: r for r in con.consolidate(ledgers, {}, rank=rank)}[a]
    assert row["config"] == "far" and row["verdict"] == "not reproduced"
    assert "near, closer to the source's recipe, cannot score it: the control's ratio is 1" in row["why"]
    assert "absent" not in row["why"]
    ledgers["near"] = _ledger({})  # not drawn there: nothing to say
    assert "closer" not in {r["id"]: r for r in con.consolidate(ledgers, {}, rank=rank)}[a]["why"]


def test_best_evidence_is_the_closest_config_then_the_one_with_more_seeds():
    ids = [r["id"] for r in ledger.collect({})][:3]
    a, b, c = ids
    ledgers = {"near": _ledger({a: _above(0.6, 0.55, n=5)}),
               "near_more": _ledger({a: _above(0.4, 0.3, n=10), b: _above(0.7, 0.6, n=3)}),
               "far": _ledger({a: _above(0.4, 0.3, n=50), b: _above(0.4, 0.35, n=50)})}
    rows = {r["id"]: r for r in con.consolidate(ledgers, {}, rank={"near": (0, 0), "near_more": (0, 1),
                                                                     "far": (1, 0)})}
    # a: both near configs score it; the one with more seeds wins, the others stand beside it
    assert rows[a]["config"] == "near_more" and rows[a]["verdict"] == "not reproduced"
    assert dict(rows[a]["others"]) == {"near": "reproduced", "far": "not reproduced"}
    assert "configs differ: near reproduced" in rows[a]["why"]
    # b: the closer config wins however few its seeds
    assert rows[b]["config"] == "near_more" and rows[b]["verdict"] == "reproduced" and rows[b]["n_seeds"] == 3
    assert rows[c]["verdict"] == "not run" and rows[c]["config"] == "-"
    # an unlisted config comes after every listed one
    rows = {r["id"]: r for r in con.consolidate(ledgers, {}, rank={"far": (0, 0)})}
    assert rows[a]["config"] == "far"
    # equal seeds on one line: the order written, not the alphabet
    even = {"zeta": _ledger({a: _above(0.6, 0.55)}), "alpha": _ledger({a: _above(0.4, 0.3)})}
    rows = {r["id"]: r for r in con.consolidate(even, {}, rank={"zeta": (0, 0), "alpha": (0, 1)})}
    assert rows[a]["config"] == "zeta"


def test_a_claim_no_config_scores_gives_each_drawing_configs_reason():
    c = [r["id"] for r in ledger.collect({})][2]
    why_near = claims.not_run("no 'settings' rows configured")
    why_far = claims.not_run("no seed learned p = 4")
    ledgers = {"near": _ledger({c: why_near}), "far": _ledger({c: why_far}), "other": _ledger({}),
               "same": _ledger({c: why_near})}
    rows = {r["id"]: r for r in con.consolidate(ledgers, {}, rank={"other": (0, 0), "near": (1, 0), "far": (2, 0),
                                                                     "same": (2, 1)})}
    assert rows[c]["verdict"] == "not run" and rows[c]["config"] == "-"
    assert rows[c]["why"] == "no 'settings' rows configured (near, same); no seed learned p = 4 (far)"
    # where no config draws the figure, that is the reason, with every config
    rows = {r["id"]: r for r in con.consolidate({"other": _ledger({}), "none": _ledger({})}, {},
                                                rank={"other": (0, 0), "none": (0, 1)})}
    assert rows[c]["why"].startswith("figure not drawn by this config") and rows[c]["why"].endswith("(other, none)")


def test_a_replicate_pools_into_the_consolidated_row_with_both_runs_seeds():
    a, b = [r["id"] for r in ledger.collect({})][:2]
    rows = {r["id"]: r for r in con.consolidate(
        {"config": _ledger({a: _above(0.6, 0.45), b: _above(0.7, 0.6)})},
        {"config": _ledger({a: _above(0.62, 0.52), b: _above(0.71, 0.61)})}, rank={"config": (0, 0)})}
    assert rows[a]["verdict"] == "reproduced" and rows[a]["knife_edge"] and rows[a]["n_seeds"] == 20
    assert 0.6 < rows[a]["measured"] < 0.62 and rows[a]["ci_low"] > 0.5  # the pooled estimate, not the original's
    assert rows[b]["verdict"] == "reproduced" and not rows[b]["knife_edge"] and rows[b]["measured"] == 0.7
    assert rows[b]["n_seeds"] == 10 and rows[b]["why"] == "replicate reproduced"


def test_a_knife_edge_is_scored_on_both_runs_pooled():
    a, b = _above(0.6, 0.45), _above(0.62, 0.52)  # partial and reproduced; the estimates agree
    assert (a["verdict"], b["verdict"]) == ("partial", "reproduced")
    d = con.decide(a, b)
    # inverse-variance pooling of the two estimates, each standard error read off its interval
    w = (0.15 ** -2 + 0.10 ** -2) ** -0.5
    v = (0.6 * 0.15 ** -2 + 0.62 * 0.10 ** -2) * w ** 2
    args = d["pooled"]["args"]
    assert args["value"] == pytest.approx(v) and args["low"] == pytest.approx(v - w)
    assert d["knife_edge"] and d["verdict"] == "reproduced" and "20 seeds" in d["why"]
    # the same labels on both runs: nothing to decide
    assert con.decide(a, _above(0.61, 0.46)) == {"verdict": "partial", "why": "replicate partial", "knife_edge": False}


def test_draws_that_disagree_or_a_rule_that_does_not_pool_leave_it_undecided():
    d = con.decide(_above(0.3, 0.25), _above(0.9, 0.85))
    assert d["verdict"] == "undecided" and not d["knife_edge"] and "differ beyond their noise" in d["why"]
    guard = lambda v, m: claims.score(m, (m - 0.1, m + 0.1), 10, "c", claims.guard(v, "precondition"))  # noqa: E731
    d = con.decide(guard("reproduced", 0.6), guard("partial", 0.61))
    assert d["verdict"] == "undecided" and d["knife_edge"] and "does not pool" in d["why"]
    # one run not run: the other's verdict, said to be one run's
    d = con.decide(claims.not_run("no seed learned"), _above(0.8, 0.6))
    assert d["verdict"] == "reproduced" and "not run on the original (no seed learned)" in d["why"]


def test_a_lopsided_interval_pools_around_one_estimate():
    """A bootstrap interval of a median is rarely symmetric: the pooled value is one, with both ends around it."""
    def near(m, lo, hi):
        return claims.score(m, (lo, hi), 10, "c", claims.near(m, lo, hi, 1.0, 0.05))
    x, y = near(1.04, 0.9, 1.3), near(1.1, 1.05, 1.6)  # partial (the estimate within 0.05) and not reproduced
    d = con.decide(x, y)
    args = d["pooled"]["args"]
    w = ((0.2 ** -2 + 0.275 ** -2) ** -0.5)  # half-widths (high - low) / 2
    v = (1.04 * 0.2 ** -2 + 1.1 * 0.275 ** -2) * w ** 2
    assert args["value"] == pytest.approx(v) and args["low"] == pytest.approx(v - w) and args["high"] == \
        pytest.approx(v + w)
    assert args["low"] < args["value"] < args["high"]


def test_no_seed_count_gives_no_seed_estimate_and_no_crash():
    a, b = _above(0.6, 0.45, n=None), _above(0.62, 0.52, n=None)  # partial, reproduced; intervals over graphs
    assert con.seeds_to_decide(a["rule"], None) is None and con.seeds_to_decide(a["rule"], 0) is None
    d = con.decide(a, b)
    assert d["verdict"] == "reproduced" and "(no seed count)" in d["why"] and "n_seeds" not in d


def test_counts_pool_by_summing_and_a_share_that_stays_partial_is_undecided():
    every, most = (claims.score(*claims.rate(k, 10)[:1], claims.rate(k, 10)[1:], 10, "c", claims.share_holds(k, 10))
                   for k in (10, 9))
    assert (every["verdict"], most["verdict"]) == ("reproduced", "partial")
    d = con.decide(every, most)
    assert d["pooled"]["args"] == {"k": 19, "n": 20, "low_share": 0.5, "of": "seeds"}
    assert d["verdict"] == "undecided" and "stays partial however many" in d["why"]  # k < n at any count
    # shown as the pooled rule scores it: 19/20 with its Wilson interval (never past 1), not a mean of two intervals
    assert (d["measured"], d["ci_low"], d["ci_high"]) == pytest.approx((0.95, *wilson_interval(19, 20)))
    assert d["ci_high"] < 1


def test_a_pooled_count_whose_rows_show_another_estimate_keeps_the_inverse_variance_mean():
    """A count rule whose rows show another statistic than k/n (e.g. a median, scored by the share of seeds past a
    bar): the shown estimate pools those rows, not the count."""
    def row(k, median):
        return claims.score(median, (median - 0.1, median + 0.1), 10, "c", claims.share_holds(k, 10))

    d = con.decide(row(10, 0.8), row(9, 0.82))
    assert d["pooled"]["args"]["k"] == 19 and d["measured"] == pytest.approx(0.81)


def test_seeds_to_decide_is_where_the_interval_clears_the_boundary():
    rule = _above(0.6, 0.45)["rule"]  # half-width 0.15 on 10 seeds; 0.1 above the threshold
    n = con.seeds_to_decide(rule, 10)
    assert n == math.ceil(10 * (0.15 / 0.1) ** 2) == 23  # 0.15 sqrt(10 / n) < 0.1
    assert claims.evaluate(con._scaled(rule, n / 10)) == "reproduced"
    assert claims.evaluate(con._scaled(rule, (n - 1) / 10)) == "partial"
    assert con.seeds_to_decide(_above(0.8, 0.6)["rule"], 10) == 10  # decided already


def test_counts_table_has_an_undecided_column():
    rows = [{"group": "g", "verdict": v} for v in ("reproduced", "undecided", "undecided", "not run")]
    table = con.counts_table(rows)
    assert "| undecided |" in table.splitlines()[0] and "| g | 1 | 0 | 0 | 2 | 0 | 1 | 4 |" in table


def test_a_claim_not_tested_as_stated_is_counted_apart_whatever_its_rule_gives():
    """A declaration's ``not_tested_as_stated``: the consolidated verdict says so, with the rule's own verdict and
    the reason first in the row's why, for any label its rule gives (here: reproduced, and a null's not
    reproduced); a claim no config scores stays not run; its own ledger's row keeps the rule's verdict, the
    reason first among the caveats."""
    from pipeline_lib import declarations

    marked = [c for c, d in declarations.declared_claims().items() if d.get("not_tested_as_stated")]
    assert marked
    cid, why = marked[0], declarations.declared_claims()[marked[0]]["not_tested_as_stated"]
    for value, verdict in ((0.9, "reproduced"), (0.3, "not reproduced")):
        own = {r["id"]: r for r in _ledger({cid: _above(value, value - 0.05)})}[cid]
        assert own["verdict"] == verdict and own["caveats"].startswith(f"not tested as stated: {why}")
        row = {r["id"]: r for r in con.consolidate({"config": _ledger({cid: _above(value, value - 0.05)})}, {},
                                                   rank={"config": (0, 0)})}[cid]
        assert row["verdict"] == "not tested as stated" and row["why"].startswith(f"scored, it would be {verdict}; but {why}")
    idle = {r["id"]: r for r in con.consolidate({"config": _ledger({})}, {}, rank={"config": (0, 0)})}[cid]
    assert idle["verdict"] == "not run"
    table = con.counts_table([{"group": "g", "verdict": "not tested as stated"}])
    assert "| not tested as stated | not run |" in table.splitlines()[0] and "| g | 0 | 0 | 0 | 0 | 1 | 0 | 1 |" in table


def test_a_count_verdict_that_one_seed_decides_is_undecided():
    """Leave-one-seed-out on a count rule: every seed holding stays; one failing seed of ten flips partial to
    reproduced when left out; a single seed is one seed; counts of something else (n not the seeds) and rules on
    means are not checked."""
    from pipeline_lib.claim_rules import rates_exceed, share_holds

    def rule(v):
        return v.rule

    assert con.one_seed_decides(rule(share_holds(10, 10)), 10) is None
    assert con.one_seed_decides(rule(share_holds(0, 10)), 10) is None
    assert "gives reproduced (9 of 9)" in con.one_seed_decides(rule(share_holds(9, 10)), 10)
    assert "rests on one seed" in con.one_seed_decides(rule(share_holds(1, 1)), 1)
    assert con.one_seed_decides(rule(share_holds(9, 10, of="settings")), 30) is None  # a count of settings
    assert con.one_seed_decides(rule(rates_exceed(9, 10, 0, 10)), 10) is None  # far apart either way
    assert con.one_seed_decides(rule(rates_exceed(6, 10, 1, 10)), 10)  # at the Wilson boundary
    assert con.one_seed_decides({"kind": "exceeds", "args": {}}, 10) is None
    ids = [r["id"] for r in ledger.collect({})][:2]
    a, b = ids
    score = {"measured": 0.9, "ci_low": 0.6, "ci_high": 0.98, "n_seeds": 10, "control": "",
             "verdict": "partial", "rule": rule(share_holds(9, 10))}
    full = {**score, "verdict": "reproduced", "rule": rule(share_holds(10, 10)), "measured": 1.0}
    rows = {r["id"]: r for r in con.consolidate({"config": _ledger({a: score, b: full})}, {})}
    assert rows[a]["verdict"] == "undecided" and "one seed decides it" in rows[a]["why"]
    assert rows[b]["verdict"] == "reproduced"
    # with an agreeing replicate the check reads both runs' counts: 18 of 20 left one out is 18 of 19, partial
    rep = {"config": _ledger({a: score, b: full})}
    rows = {r["id"]: r for r in con.consolidate({"config": _ledger({a: score, b: full})}, rep)}
    assert rows[a]["verdict"] == "partial" and "one seed decides" not in rows[a]["why"]
    # a verdict only the replicate gives (the original not run) rests on the replicate's seeds alone
    one = {**full, "n_seeds": 1, "rule": rule(share_holds(1, 1))}
    rows = {r["id"]: r for r in con.consolidate({"config": _ledger({})}, {"config": _ledger({a: one, b: score})})}
    assert rows[a]["verdict"] == "undecided" and "rests on one seed" in rows[a]["why"]
    assert rows[b]["verdict"] == "undecided" and "(9 of 9)" in rows[b]["why"]


def test_a_verdict_the_same_seeds_do_not_repeat_on_another_machine_is_undecided():
    """The same config and seeds run again elsewhere (a rerun, not a replicate): a claim it gives another verdict
    is undecided, naming the machine and its estimate; one it repeats, or does not run, keeps its verdict; the
    rerun's seeds never pool with the first run's (they are the same seeds)."""
    a, b, c = [r["id"] for r in ledger.collect({})][:3]
    first = _ledger({a: _above(0.6, 0.52), b: _above(0.7, 0.6), c: _above(0.7, 0.6)})
    again = _ledger({a: _above(0.58, 0.48), b: _above(0.71, 0.61)})  # a: reproduced -> partial; c: not run
    rows = {r["id"]: r for r in con.consolidate({"config": first}, {}, reruns={"config": [("on CPU X", again)]})}
    assert rows[a]["verdict"] == "undecided" and rows[a]["knife_edge"]
    assert "run again (on CPU X) give partial (0.58 [0.48, 0.68]) against reproduced here" in rows[a]["why"] and rows[a]["n_seeds"] == 10
    assert rows[b]["verdict"] == "reproduced" and rows[b]["why"] == ""
    assert rows[c]["verdict"] == "reproduced"
    assert {r["id"]: r["verdict"] for r in con.consolidate({"config": first}, {})}[a] == "reproduced"  # no rerun
    same = _ledger({a: _above(0.6, 0.52), b: _above(0.7, 0.6)})  # a second machine that repeats every verdict
    rows = {r["id"]: r for r in con.consolidate({"config": first}, {}, reruns={"config": [("on CPU Y", same),
                                                                                          ("on CPU X", again)]})}
    assert rows[a]["verdict"] == "undecided" and "(on CPU X)" in rows[a]["why"] and "CPU Y" not in rows[a]["why"]
    assert rows[b]["verdict"] == "reproduced"


def test_each_source_section_lists_whose_claims_apart_the_sources_first():
    """Within a source's section the project's own claims (which may quote the source's sentence they extend)
    stand under their own heading, after the source's statements and its authors' code, so a verdict is never
    read as the source's when it is ours."""
    rows = con.consolidate({"config": _ledger({})}, {}, rank={"config": (0, 0)})
    md = con.consolidated_markdown(rows, [], [])
    for paper in dict.fromkeys(r["paper"] for r in rows):
        section = md.split(f"\n## {paper}\n", 1)[1].split("\n## ", 1)[0]
        heads = [line[4:] for line in section.splitlines() if line.startswith("### ")]
        mine = {r["group"] for r in rows if r["paper"] == paper}
        assert set(heads) == mine and len(heads) == len(mine), paper  # one heading per group, each once
        own = [h.startswith("The project's own") for h in heads]
        assert own == sorted(own), heads  # the sources' groups first
        for h in heads:  # every row under a heading belongs to its group
            table = section.split(f"### {h}\n", 1)[1].split("\n### ", 1)[0]
            ids = [line.split(" | ")[0][2:] for line in table.splitlines() if line.startswith("| ") and "---" not in line][1:]
            assert ids and all({r["id"]: r for r in rows}[i]["group"] == h for i in ids), h
