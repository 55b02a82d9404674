"""The consolidated ledger: one verdict per claim over every config whose statistics are kept.

Each kept config (``docs/stats/<config>.json``) scores some claims; :func:`consolidate` takes, per claim, the
*best evidence*: the config closest to the source's own recipe and scale that scores it (the lines of
``precedence.yaml``; within one line, the score on more seeds, then the order written), and shows the other
configs' verdicts beside it.

A config with a kept replicate (the same config on disjoint seeds and another data draw) gives one verdict per
claim only where its two runs give the same one (:func:`decide`). Where they differ while their estimates agree
(a knife-edge: the noise between two draws decides the label), the claim's own rule is evaluated on both runs
pooled, where its inputs pool: estimates with intervals by inverse variance (each standard error read off its
interval, a two-sided one taken as symmetric), counts summed. This assumes the two runs are independent draws of
one statistic (a replicate moves every seed and data draw, so a control is drawn anew too) and that a count
counts seeds or runs (a count of table cells or pairs pools as if they were new ones). Where the pooled verdict is
still partial, or the rule does not pool (no interval, a literal or guard part, arguments other than the
estimates that differ between the runs), the claim is *undecided*, with the number of seeds at which the pooled
interval would clear the rule's boundary where that can be computed. Where the two estimates differ beyond their
noise, it is undecided too: the draws disagree, and more seeds of one draw cannot settle it.

A count verdict (``share_holds``, ``rates_exceed``, counting seeds) that leaving out any one seed would change, or
that rests on a single seed, is undecided as well (:func:`one_seed_decides`, on both runs' counts where a replicate
agrees): one seed decides it, so one CPU's rounding in that seed's training can flip it. A rule on means is not
checked so (its record holds the interval, not the seeds' values).
"""
from __future__ import annotations

import math
from pathlib import Path

import yaml

from ..claim_rules import evaluate
from ..stages.claims import as_float, consistent, md_cell, measured_text, source_words
from ..stats import wilson_interval
from .cost import cost_text

PRECEDENCE = Path(__file__).with_name("precedence.yaml")
ORDER = ("reproduced", "partial", "not reproduced", "undecided", "not tested as stated", "not run")
MAX_SEEDS = 10_000  # no search for seeds beyond this: "more than 10000"


def ranks(path: Path = PRECEDENCE) -> dict[str, tuple[int, int]]:
    """Config name -> (its line in the precedence file, its place in the line), 0 first."""
    return {c: (i, j) for i, line in enumerate(yaml.safe_load(path.read_text())) for j, c in enumerate(line["configs"])}


def _inverse_variance(pairs: list[tuple[float, float]]) -> tuple[float, float] | None:
    """(estimate, half-width of its 95% interval) of each run -> their inverse-variance mean and its half-width;
    None where a half-width is missing or zero."""
    if any(math.isnan(v) or math.isnan(w) or w <= 0 for v, w in pairs):
        return None
    weights = [w**-2 for _, w in pairs]
    return sum(a * v for a, (v, _) in zip(weights, pairs)) / sum(weights), sum(weights) ** -0.5


def _pool_end(x: dict, y: dict, value: str, end: str) -> dict | None:
    """Pool an estimate with one end of its interval (``low`` for "above", ``high`` for "below")."""
    out = _inverse_variance([(as_float(r[value]), abs(as_float(r[value]) - as_float(r[end]))) for r in (x, y)])
    if out is None:
        return None
    v, w = out
    return {value: v, end: v + math.copysign(w, as_float(x[end]) - as_float(x[value]))}


def _pool_both(x: dict, y: dict) -> dict | None:
    """Pool an estimate with both ends of its interval, taken as symmetric around it."""
    out = _inverse_variance([(as_float(r["value"]), (as_float(r["high"]) - as_float(r["low"])) / 2) for r in (x, y)])
    return None if out is None else {"value": out[0], "low": out[0] - out[1], "high": out[0] + out[1]}


# per rule kind: how its estimates pool (the other arguments must be equal in both runs)
_POOL = {"above": (("value", "low"),), "below": (("value", "high"),), "exceeds": (("value", "low"),
         ("control", "control_high")), "near": "both", "agrees": "both"}
_COUNTS = {"share_holds": ("k", "n"), "rates_exceed": ("k", "n", "k0", "n0")}


def _estimates(kind: str) -> set[str]:
    return {"value", "low", "high"} if _POOL[kind] == "both" else {k for pair in _POOL[kind] for k in pair}


def pooled(a: dict | None, b: dict | None) -> dict | None:
    """The rule record of two runs' rules pooled (see the module docstring); None where they do not pool."""
    if not a or not b or a.get("kind") != b.get("kind"):
        return None
    kind, x, y = a["kind"], a["args"], b["args"]
    if kind == "weakest":
        if len(x["parts"]) != len(y["parts"]):
            return None
        parts = [pooled(p, q) for p, q in zip(x["parts"], y["parts"])]
        return None if None in parts else {"kind": kind, "args": {"parts": parts}}
    if kind in _COUNTS:
        keys = _COUNTS[kind]
        if any(x[k] != y[k] for k in x if k not in keys):
            return None
        return {"kind": kind, "args": {**x, **{k: x[k] + y[k] for k in keys}}}
    if kind not in _POOL or any(x[k] != y[k] for k in x if k not in _estimates(kind)):
        return None
    parts = [_pool_both(x, y)] if _POOL[kind] == "both" else [_pool_end(x, y, v, e) for v, e in _POOL[kind]]
    if None in parts:
        return None
    return {"kind": kind, "args": {**x, **{k: v for p in parts for k, v in p.items()}}}


def _scaled(rule: dict, f: float) -> dict:
    """The rule as ``f`` times the seeds would give it, at the same estimate: intervals narrowed by sqrt(f),
    counts multiplied by f."""
    kind, x = rule["kind"], dict(rule["args"])
    if kind == "weakest":
        return {"kind": kind, "args": {"parts": [_scaled(p, f) for p in x["parts"]]}}
    if kind in _COUNTS:
        return {"kind": kind, "args": {**x, **{k: round(x[k] * f) for k in _COUNTS[kind]}}}
    ends = (("value", "low"), ("value", "high")) if _POOL.get(kind) == "both" else _POOL.get(kind, ())
    for value, end in ends:
        x[end] = x[value] + (x[end] - x[value]) / math.sqrt(f)
    return {"kind": kind, "args": x}


def seeds_to_decide(rule: dict, n: int) -> int | None:
    """The fewest seeds at which ``rule`` (scored on ``n``), at the same estimate, gives reproduced or not
    reproduced rather than partial; None beyond :data:`MAX_SEEDS`, where no seed count changes it, or without
    a seed count."""
    if not n or n <= 0:
        return None
    if evaluate(rule) in ("reproduced", "not reproduced"):
        return n
    m = n
    while m < MAX_SEEDS:
        m = min(MAX_SEEDS, m * 2)
        if evaluate(_scaled(rule, m / n)) != "partial":
            lo, hi = m // 2, m
            while hi - lo > 1:
                mid = (lo + hi) // 2
                lo, hi = (lo, mid) if evaluate(_scaled(rule, mid / n)) != "partial" else (mid, hi)
            return hi
    return None


def _pooled_estimate(a: dict, b: dict, rule: dict | None = None) -> dict:
    """The row's estimate over both runs, for display: where each run's estimate is its count rule's share
    (``share_holds``, ``rates_exceed``: k/n), the pooled count's share with its Wilson interval, as the pooled rule
    scores it; else the inverse-variance mean (intervals taken as symmetric)."""
    shares = [(r.get("rule") or {}).get("args", {}) for r in (a, b)]  # each run's estimate its k/n?
    if rule and rule.get("kind") in _COUNTS and all(x.get("n") and math.isclose(
            as_float(r.get("measured")), x["k"] / x["n"]) for x, r in zip(shares, (a, b))):
        k, n = rule["args"]["k"], rule["args"]["n"]
        return dict(zip(("measured", "ci_low", "ci_high"), (k / n, *wilson_interval(k, n))))
    out = _inverse_variance([(as_float(r.get("measured")), (as_float(r.get("ci_high")) - as_float(r.get("ci_low"))) / 2)
                             for r in (a, b)])
    return {} if out is None else {"measured": out[0], "ci_low": out[0] - out[1], "ci_high": out[0] + out[1]}


def decide(a: dict, b: dict) -> dict:
    """One claim of a config and of its replicate -> the verdict they support together: ``verdict``, ``why``,
    ``knife_edge`` (the estimates agree, the labels differ) and, where they were pooled, the pooled rule
    (``pooled``) with the estimate shown for it (``measured``, ``ci_low``, ``ci_high`` and both runs' ``n_seeds``)."""
    va, vb = a["verdict"], b["verdict"]
    na, nb = a.get("n_seeds"), b.get("n_seeds")
    both = {"n_seeds": na + nb} if na and nb else {}
    if va == vb:
        return {"verdict": va, "why": f"replicate {vb}" if va != "not run" else "", "knife_edge": False}
    if "not run" in (va, vb):
        one, where = (vb, "the original") if va == "not run" else (va, "the replicate")
        return {"verdict": one, "knife_edge": False, "from_replicate": va == "not run",
                "why": f"not run on {where} ({(a if va == 'not run' else b)['control']}): one run's verdict"}
    agree, how = consistent(*(as_float(a.get(k)) for k in ("measured", "ci_low", "ci_high")),
                            *(as_float(b.get(k)) for k in ("measured", "ci_low", "ci_high")))
    n = both.get("n_seeds")
    labels = f"{va} here, {vb} on the replicate"
    if agree == "no":
        return {"verdict": "undecided", "knife_edge": False,
                "why": f"{labels}, and the estimates differ beyond their noise ({how}): the two draws disagree"}
    if agree != "yes":
        return {"verdict": "undecided", "knife_edge": False, "why": f"{labels}; {how}, nothing to pool"}
    rule = pooled(a.get("rule"), b.get("rule"))
    if rule is None:
        return {"verdict": "undecided", "knife_edge": True,
                "why": f"knife-edge: {labels}, estimates agree ({how}); its rule does not pool (no interval, a "
                       "guard, or arguments besides the estimates that differ between the runs), so no seed count "
                       "is computed"}
    verdict, seeds = evaluate(rule), f"{n} seeds" if n else "no seed count"
    estimate = _pooled_estimate(a, b, rule)
    shown = {**(both if estimate else {}), **estimate, "pooled": rule}
    if verdict != "partial":
        return {"verdict": verdict, "knife_edge": True, **shown,
                "why": f"knife-edge: {labels}, estimates agree ({how}); scored on both pooled ({seeds})"}
    if rule["kind"] == "share_holds":
        more = "a share short of every case stays partial however many are added"
    else:
        need = seeds_to_decide(rule, n)
        more = (f"at the pooled estimate about {need} seeds would decide it" if need else
                "no seed count is computed (none recorded)" if not n else
                f"at the pooled estimate more than {MAX_SEEDS} seeds would not decide it")
    return {"verdict": "undecided", "knife_edge": True, **shown,
            "why": f"knife-edge: {labels}, estimates agree ({how}); pooled ({seeds}) still partial; {more}"}


def _decided_on(d: dict, r: dict, replicate: dict | None) -> tuple[dict | None, int | None]:
    """The rule record and seeds a consolidated verdict rests on: the pooled rule where the knife-edge was pooled;
    both runs' counts summed where a replicate gave the same verdict (and the counts pool); else the shown row's."""
    if d.get("pooled"):
        return d["pooled"], d.get("n_seeds")
    if d.get("from_replicate"):  # the replicate's row is the one shown: nothing to pool it with
        return r.get("rule"), r.get("n_seeds")
    if replicate and replicate.get("verdict") == r.get("verdict") and r.get("n_seeds") and replicate.get("n_seeds"):
        both = pooled(r.get("rule"), replicate.get("rule"))
        if both is not None:
            return both, r["n_seeds"] + replicate["n_seeds"]
    return r.get("rule"), r.get("n_seeds")


def one_seed_decides(rule: dict | None, n_seeds) -> str | None:
    """Whether leaving out one seed changes a count verdict (``share_holds``, ``rates_exceed``) whose count is of
    seeds (its record's ``of``: a count of runs, steps or settings is not checked): the new verdict and counts,
    else None. A rule on means is not checked here (its record holds the interval, not the seeds' values)."""
    if not rule or rule.get("kind") not in ("share_holds", "rates_exceed") or not n_seeds:
        return None
    args = rule["args"]
    if args.get("of", "seeds") != "seeds":
        return None
    k, n = int(args["k"]), int(args["n"])
    now = evaluate(rule)
    if n == 1:
        return f"it rests on one seed ({k} of 1)"
    sides = ([("k", "n", " of the share claimed higher"), ("k0", "n0", " of the share claimed lower")]
             if rule["kind"] == "rates_exceed" else [("k", "n", "")])
    for kk_, nn_, whose in sides:
        k, n = int(args[kk_]), int(args[nn_])
        for kk in (k - 1, k):  # leave out a seed that holds, then one that does not
            if n > 1 and 0 <= kk and (kk < k or k < n):
                moved = evaluate({"kind": rule["kind"], "args": {**args, kk_: kk, nn_: n - 1}})
                if moved != now:
                    which = "that holds" if kk < k else "that does not hold"
                    return f"leaving out one seed{whose} {which} gives {moved} ({kk} of {n - 1})"
    return None


def machine_decides(row: dict, rerun: dict | None, where: str) -> str | None:
    """Whether the same seeds of the same config, run again elsewhere (``where``: another CPU or library build),
    give another verdict: why, else None. Training numerics differ between machines in their last digits, so
    such a verdict rests on a seed's rounding, as a knife-edge between two draws does on their noise."""
    if rerun is None or "not run" in (row["verdict"], rerun["verdict"]) or rerun["verdict"] == row["verdict"]:
        return None
    return (f"the same seeds run again ({where}) give {rerun['verdict']} ({measured_text(rerun)}) against "
            f"{row['verdict']} here: the machine's rounding decides it")


def consolidate(ledgers: dict[str, list[dict]], replicates: dict[str, list[dict]],
                rank: dict[str, tuple[int, int]] | None = None,
                reruns: dict[str, list[tuple[str, list[dict]]]] | None = None) -> list[dict]:
    """Per declared claim (every ledger holds every claim, in one order): the best evidence over ``ledgers``
    (config name -> its rows), each config's verdict first decided with its replicate's rows where
    ``replicates`` has them (:func:`decide`; its pooled estimate and seeds are shown). Each row: the claim's
    declaration fields, ``verdict``, ``config``, ``measured``, ``ci_low``, ``ci_high``, ``n_seeds``, ``why``,
    ``knife_edge`` and ``others`` ([(config, verdict)] of the other scoring configs). ``reruns``: config name ->
    [(where it ran again, its rows)]: the same config and seeds run again (on other CPUs or library builds); a
    verdict that one of them does not repeat is undecided (:func:`machine_decides`)."""
    rank = ranks() if rank is None else rank
    last = (len(rank), 0)
    order = sorted(ledgers, key=lambda c: (rank.get(c, last), c))
    by_config = {c: {r["id"]: r for r in rows} for c, rows in ledgers.items()}
    rep = {c: {r["id"]: r for r in rows} for c, rows in replicates.items()}
    again = {c: [(where, {r["id"]: r for r in rows}) for where, rows in runs] for c, runs in (reruns or {}).items()}
    out = []
    for row in next(iter(ledgers.values())):
        cid, scored = row["id"], []
        for c in order:
            r = by_config[c][cid]
            d = decide(r, rep[c][cid]) if c in rep else {"verdict": r["verdict"], "why": "", "knife_edge": False}
            if d["verdict"] != "not run":
                shown = rep[c][cid] if d.get("from_replicate") else r
                scored.append((c, {**shown, **{k: d[k] for k in ("measured", "ci_low", "ci_high", "n_seeds")
                                               if k in d}}, d))
        if not scored:
            c = "config" if "config" in by_config else order[0]
            out.append({**by_config[c][cid], "config": "-", "why": not_run_reasons([(o, by_config[o][cid]["control"])
                                                                                     for o in order]),
                        "others": [], "knife_edge": False})
            continue
        line = rank.get(scored[0][0], last)[0]
        c, r, d = max((s for s in scored if rank.get(s[0], last)[0] == line),
                      key=lambda s: (s[1].get("n_seeds") or 0, -order.index(s[0])))
        others = [(o, od["verdict"]) for o, _, od in scored if o != c]
        why = [d["why"]] if d["why"] else []
        why += [f"{o}, closer to the source's recipe, cannot score it: {g['rule']['args']['why']}"  # its numbers
                for o in order if rank.get(o, last)[0] < line and _guarded((g := by_config[o][cid]))]
        rule, n = _decided_on(d, r, rep.get(c, {}).get(cid))
        moved = next((m for where, rows in again.get(c, []) if (m := machine_decides(r, rows.get(cid), where))), None)
        if moved and d["verdict"] in ("reproduced", "partial", "not reproduced"):
            why.append(moved)
            d = {**d, "verdict": "undecided", "knife_edge": True}
        flip = one_seed_decides(rule, n) if d["verdict"] in ("reproduced", "partial", "not reproduced") else None
        if flip:  # the label rests on one seed: as a knife-edge between two draws, neither label on its own
            why.append(f"one seed decides it: {d['verdict']} here, {flip}")
            d = {**d, "verdict": "undecided", "knife_edge": True}
        if any(v != d["verdict"] for _, v in others):
            why.append("configs differ: " + ", ".join(f"{o} {v}" for o, v in others if v != d["verdict"]))
        if r.get("not_tested_as_stated"):  # whatever its rule gives, the label would claim more than it tested
            why.insert(0, f"scored, it would be {d['verdict']}; but {r['not_tested_as_stated']}")
            d = {**d, "verdict": "not tested as stated"}
        out.append({**r, "verdict": d["verdict"], "config": c, "why": "; ".join(why), "others": others,
                    "knife_edge": d["knife_edge"]})
    return out


def _guarded(row: dict) -> bool:
    """Whether a config's row is not run because the claim's precondition fails on its numbers (a guard: e.g. the
    control is saturated), rather than because the config does not draw what the claim reads."""
    return row["verdict"] == "not run" and (row.get("rule") or {}).get("kind") == "guard"


def not_run_reasons(reasons: list[tuple[str, str]]) -> str:
    """Why no config scores a claim: each distinct reason once, with the configs that give it (``reasons``:
    (config, its not-run reason) in precedence order); the configs that do not draw the claim's figure are named
    only where no config draws it."""
    grouped: dict[str, list[str]] = {}
    for config, why in reasons:
        grouped.setdefault(why, []).append(config)
    drawn = {why: configs for why, configs in grouped.items() if not why.startswith("figure not drawn")}
    return "; ".join(f"{why} ({', '.join(configs)})" for why, configs in (drawn or grouped).items())


def counts(rows: list[dict], by: str = "group") -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for r in rows:
        out.setdefault(r[by], dict.fromkeys(ORDER, 0))[r["verdict"]] += 1
    return out


def counts_table(rows: list[dict]) -> str:
    """The consolidated verdict counts per group (the README's table)."""
    lines = ["| claims of | " + " | ".join(ORDER) + " | claims |", "|---|" + "---:|" * (len(ORDER) + 1)]
    for group, c in counts(rows).items():
        lines.append(f"| {group} | " + " | ".join(str(c[v]) for v in ORDER) + f" | {sum(c.values())} |")
    return "\n".join(lines)


def _config_row(kept: dict, ledger: str, replication: str | None, rep: dict | None, reruns: list | None = None) -> str:
    cost = kept["cost"]
    commits = sorted({f["commit"][:7] for f in kept["figures"].values()})
    also = (f"; its replicate: [{replication}]({replication}), {cost_text(rep['cost'])}" if replication else
            "; no replicate kept, so its verdicts are not checked against a second draw")
    for rerun in reruns or []:
        also += (f"; its seeds run again on {rerun.get('machine', 'another machine')}: {cost_text(rerun['cost'])}")
    return (f"| `{kept['config']}` | {len(kept['figures'])} | {', '.join(commits)} | [{ledger}]({ledger}) | "
            f"{cost_text(cost, kept.get('machine'))}{also} |")


def consolidated_markdown(rows: list[dict], configs: list[tuple], not_kept: list[str]) -> str:
    """The consolidated ledger: how it is made, the kept configs with their cost, the counts per group, then one
    table per source (``configs``: (kept statistics, its ledger's file name, its replicate comparison's or
    None, the replicate's kept statistics or None, its reruns' kept statistics); ``not_kept``: published ledgers that are not re-scored)."""
    lines = ["# Claims: does it reproduce?", "",
             "One verdict per claim over every config whose run left its statistics in `docs/stats/`, re-scored "
             "under the current rules by `python -m pipeline_lib publish`. Where several configs score a claim, "
             "the verdict is the best evidence: the config closest to the source's own recipe and scale "
             "(`pipeline_lib/build/precedence.yaml` gives the order and its reasons), then the one with more "
             "seeds; the others' verdicts stand beside it, and where they differ the last column says so. Where a "
             "config's replicate (disjoint seeds, another data draw) gives another verdict although the two "
             "estimates agree, the noise decides the label: the claim is scored on both runs pooled where its rule "
             "pools (the row then shows the pooled estimate and both runs' seeds); where the pooled verdict is "
             "still partial or the rule does not pool, it is *undecided*, with the number of seeds that would "
             "decide it where that can be computed; where the two estimates differ beyond their noise it is "
             "undecided too. A count verdict (a share of seeds, or two shares) that leaving out any one seed would "
             "change, or that rests on one seed, is undecided as well: one seed, or one CPU's rounding in it, "
             "decides it. Where a config's seeds were run again on another machine and give another verdict there, "
             "the machine's rounding decides it: undecided too. A claim whose rule tests less than its sentence "
             "says (its declaration's `not_tested_as_stated`) is *not tested as stated*, whatever that rule gives, "
             "with the rule's verdict and what it misses in the last column.", "",
             "| config | figures | kept from commit | its own ledger | what its kept run cost (wall time from its own invocation's log) |", "|---|---:|---|---|---|"]
    lines += [_config_row(*c) for c in configs]
    if not_kept:
        lines += ["", "Published ledgers not in this one (scored before their statistics were kept; each says how "
                  "to publish it): " + ", ".join(f"[{n}]({n})" for n in not_kept) + "."]
    lines += ["", "## Counts", "", counts_table(rows)]
    for paper in dict.fromkeys(r["paper"] for r in rows):
        lines += ["", f"## {paper}"]
        for group, mine in counts_by(rows, paper).items():  # whose claim it is: a source's, its code's, or ours
            c = counts(mine, "group")[group]
            lines += ["", f"### {group}", "", ", ".join(f"{n} {v}" for v, n in c.items() if n) + ".", "",
                      "| id | the source's words or the claim | landmark | verdict | config | statistic (epoch, metric, "
                      "set) | measured [95% CI] | seeds | also scored by | why |",
                      "|---|---|---|---|---|---|---|---:|---|---|"]
            lines += [_consolidated_row(r) for r in mine]
    return "\n".join(lines) + "\n"


def counts_by(rows: list[dict], paper: str) -> dict[str, list[dict]]:
    """The rows of one report category (``paper``) by their counts' group, the sources' own statements first."""
    mine = [r for r in rows if r["paper"] == paper]
    groups = sorted(dict.fromkeys(r["group"] for r in mine), key=lambda g: g.startswith("The project's own"))
    return {g: [r for r in mine if r["group"] == g] for g in groups}


def _consolidated_row(r: dict) -> str:
    return "| " + " | ".join(md_cell(x) for x in (
        r["id"], source_words(r), r["landmark"], r["verdict"], r["config"], r.get("statistic") or "-",
        measured_text(r) if r["config"] != "-" else "-", r.get("n_seeds") if r["config"] != "-" else "-",
        ", ".join(f"{o} ({v})" for o, v in r["others"]) or "-", r["why"] or "-")) + " |"
