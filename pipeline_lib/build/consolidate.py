"""The consolidated ledger: one verdict per claim over every config whose statistics are kept.

Each kept config (``docs/stats/<config>.json``) scores some claims; :func:`consolidate` takes, per claim, the
*best evidence*: the config closest to the source's own recipe and scale that scores it (the order of
``precedence.yaml``; within one line, the score on more seeds), and shows the other configs' verdicts beside it.

A config with a kept replicate (the same config on disjoint seeds and another data draw) gives one verdict per
claim only where its two runs give the same one (:func:`decide`). Where they differ while their estimates agree
(a knife-edge: the noise between two draws decides the label), the claim is scored on both runs pooled where the
rule's inputs pool (estimates with intervals: inverse-variance; counts: summed), else it is *undecided*, with
the number of seeds at which the pooled interval would clear the rule's boundary. Where the two estimates
differ beyond their noise, it is undecided too: the draws disagree, and more seeds of one draw cannot settle it.
"""
from __future__ import annotations

import math
from pathlib import Path

import yaml

from ..claim_rules import evaluate
from ..stages.claims import consistent, md_cell, measured_text, source_words
from .cost import cost_text

PRECEDENCE = Path(__file__).with_name("precedence.yaml")
ORDER = ("reproduced", "partial", "not reproduced", "undecided", "not run")
MAX_SEEDS = 10_000  # no search for seeds beyond this: "more than 10000"


def ranks(path: Path = PRECEDENCE) -> dict[str, int]:
    """Config name -> its line in the precedence file (0 first)."""
    return {c: i for i, line in enumerate(yaml.safe_load(path.read_text())) for c in line["configs"]}


def _num(x) -> float:
    return math.nan if x in (None, "") or isinstance(x, str) else float(x)


def _pool_pair(v1, b1, v2, b2) -> tuple[float, float] | None:
    """Two estimates, each with one end of its 95% interval: their inverse-variance mean and its interval end
    (None where either lacks a width)."""
    v1, b1, v2, b2 = map(_num, (v1, b1, v2, b2))
    w1, w2 = abs(v1 - b1), abs(v2 - b2)
    if any(math.isnan(x) for x in (w1, w2)) or 0 in (w1, w2):
        return None
    a1, a2 = 1 / w1**2, 1 / w2**2
    v = (a1 * v1 + a2 * v2) / (a1 + a2)
    return v, v + math.copysign((a1 + a2) ** -0.5, b1 - v1)


# per rule kind: the (value, interval end) pairs that pool; the rest of the arguments must be equal
_PAIRS = {"above": [("value", "low")], "below": [("value", "high")], "exceeds": [("value", "low"), ("control",
          "control_high")], "near": [("value", "low"), ("value", "high")], "agrees": [("value", "low"),
          ("value", "high")]}
_COUNTS = {"share_holds": ("k", "n"), "rates_exceed": ("k", "n", "k0", "n0")}


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
    if kind not in _PAIRS or any(x[k] != y[k] for k in x if k not in {e for p in _PAIRS[kind] for e in p}):
        return None
    out = dict(x)
    for value, end in _PAIRS[kind]:
        pair = _pool_pair(x[value], x[end], y[value], y[end])
        if pair is None:
            return None
        out[value], out[end] = pair
    return {"kind": kind, "args": out}


def _scaled(rule: dict, f: float) -> dict:
    """The rule as ``f`` times the seeds would give it, at the same estimate: intervals narrowed by sqrt(f),
    counts multiplied by f."""
    kind, x = rule["kind"], dict(rule["args"])
    if kind == "weakest":
        return {"kind": kind, "args": {"parts": [_scaled(p, f) for p in x["parts"]]}}
    if kind in _COUNTS:
        return {"kind": kind, "args": {**x, **{k: round(x[k] * f) for k in _COUNTS[kind]}}}
    for value, end in _PAIRS.get(kind, []):
        x[end] = x[value] + (x[end] - x[value]) / math.sqrt(f)
    return {"kind": kind, "args": x}


def seeds_to_decide(rule: dict, n: int) -> int | None:
    """The fewest seeds at which ``rule`` (scored on ``n``), at the same estimate, gives reproduced or not
    reproduced rather than partial; None beyond :data:`MAX_SEEDS` or where no seed count changes it."""
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


def decide(a: dict, b: dict) -> dict:
    """One claim of a config and of its replicate -> the verdict they support together: ``verdict``, ``why`` and
    ``knife_edge`` (the estimates agree, the labels differ), with the pooled estimate where there is one."""
    va, vb = a["verdict"], b["verdict"]
    if va == vb:
        return {"verdict": va, "why": f"replicate {vb}" if va != "not run" else "", "knife_edge": False}
    if "not run" in (va, vb):
        return {"verdict": va, "why": f"replicate {vb}", "knife_edge": False}
    agree, how = consistent(*(_num(a.get(k)) for k in ("measured", "ci_low", "ci_high")),
                            *(_num(b.get(k)) for k in ("measured", "ci_low", "ci_high")))
    n = (a.get("n_seeds") or 0) + (b.get("n_seeds") or 0)
    if agree != "yes":
        return {"verdict": "undecided", "knife_edge": False,
                "why": f"{va} here, {vb} on the replicate, whose estimate differs beyond their noise ({how}): the "
                       "two draws disagree"}
    rule = pooled(a.get("rule"), b.get("rule"))
    if rule is not None:
        verdict = evaluate(rule)
        if verdict != "partial":
            return {"verdict": verdict, "knife_edge": True, "pooled": rule,
                    "why": f"knife-edge: {va} here, {vb} on the replicate, estimates agree ({how}); scored on "
                           f"both pooled ({n} seeds)"}
        need = seeds_to_decide(rule, n)
        more = f"about {need} seeds would decide it" if need else f"more than {MAX_SEEDS} seeds would not decide it"
        return {"verdict": "undecided", "knife_edge": True, "pooled": rule,
                "why": f"knife-edge: {va} here, {vb} on the replicate, estimates agree ({how}); pooled ({n} seeds) "
                       f"still partial; at the pooled estimate {more}"}
    return {"verdict": "undecided", "knife_edge": True,
            "why": f"knife-edge: {va} here, {vb} on the replicate, estimates agree ({how}); its rule does not pool "
                   "(no interval), so no seed count is computed"}


def consolidate(ledgers: dict[str, list[dict]], replicates: dict[str, list[dict]],
                rank: dict[str, int] | None = None) -> list[dict]:
    """Per declared claim (every ledger holds every claim, in one order): the best evidence over ``ledgers``
    (config name -> its rows), each config's verdict first decided with its replicate's rows where
    ``replicates`` has them. Each row: the claim's declaration fields, ``verdict``, ``config``, ``measured``,
    ``ci_low``, ``ci_high``, ``n_seeds``, ``why`` and ``others`` ([(config, verdict)] of the other scoring
    configs)."""
    rank = ranks() if rank is None else rank
    order = sorted(ledgers, key=lambda c: (rank.get(c, len(rank)), c))
    by_config = {c: {r["id"]: r for r in rows} for c, rows in ledgers.items()}
    rep = {c: {r["id"]: r for r in rows} for c, rows in replicates.items()}
    out = []
    for row in next(iter(ledgers.values())):
        cid, scored = row["id"], []
        for c in order:
            r = by_config[c][cid]
            d = decide(r, rep[c][cid]) if c in rep else {"verdict": r["verdict"], "why": "", "knife_edge": False}
            if d["verdict"] != "not run":
                scored.append((c, r, d))
        if not scored:
            c = "config" if "config" in by_config else order[0]
            out.append({**by_config[c][cid], "config": "-", "why": by_config[c][cid]["control"], "others": [],
                        "knife_edge": False})
            continue
        first = rank.get(scored[0][0], len(rank))
        c, r, d = max((s for s in scored if rank.get(s[0], len(rank)) == first),
                      key=lambda s: (s[1].get("n_seeds") or 0, -order.index(s[0])))
        others = [(o, od["verdict"]) for o, _, od in scored if o != c]
        why = [d["why"]] if d["why"] else []
        if any(v != d["verdict"] for _, v in others):
            why.append("configs differ: " + ", ".join(f"{o} {v}" for o, v in others if v != d["verdict"]))
        out.append({**r, "verdict": d["verdict"], "config": c, "why": "; ".join(why), "others": others,
                    "knife_edge": d["knife_edge"]})
    return out


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


def _config_row(name: str, kept: dict, ledger: str, replication: str | None, rep: dict | None) -> str:
    cost = kept["cost"]
    commits = sorted({f["commit"][:7] for f in kept["figures"].values()})
    also = f"; its replicate: [{replication}]({replication}), {cost_text(rep['cost'])}" if replication else ""
    return (f"| `{kept['config']}` | {len(kept['figures'])} | {', '.join(commits)} | [{ledger}]({ledger}) | "
            f"{cost_text(cost)}{also} |")


def consolidated_markdown(rows: list[dict], configs: list[tuple], not_kept: list[str]) -> str:
    """The consolidated ledger: how it is made, the kept configs with their cost, the counts per group, then one
    table per source (``configs``: (name, kept statistics, its ledger's file name, its replicate comparison's or
    None, the replicate's kept statistics or None); ``not_kept``: published ledgers that are not re-scored)."""
    lines = ["# Claims: does it reproduce?", "",
             "One verdict per claim over every config whose run left its statistics in `docs/stats/`, re-scored "
             "under the current rules by `python -m pipeline_lib publish`. Where several configs score a claim, "
             "the verdict is the best evidence: the config closest to the source's own recipe and scale "
             "(`pipeline_lib/build/precedence.yaml` gives the order and its reasons), then the one with more "
             "seeds; the others' verdicts stand beside it, and where they differ the last column says so. Where a "
             "config's replicate (disjoint seeds, another data draw) gives another verdict although the two "
             "estimates agree, the noise decides the label: the claim is scored on both runs pooled where its rule "
             "pools, else it is *undecided*, with the number of seeds that would decide it; where the two "
             "estimates differ beyond their noise it is undecided too.", "",
             "| config | figures | kept from commit | its own ledger | cost of one clean run |", "|---|---:|---|---|---|"]
    lines += [_config_row(*c) for c in configs]
    if not_kept:
        lines += ["", "Published ledgers not in this one (scored before their statistics were kept; each says how "
                  "to publish it): " + ", ".join(f"[{n}]({n})" for n in not_kept) + "."]
    lines += ["", "## Counts", "", counts_table(rows)]
    for paper in dict.fromkeys(r["paper"] for r in rows):
        mine = [r for r in rows if r["paper"] == paper]
        c = counts(mine, "paper")[paper]
        lines += ["", f"## {paper}", "", ", ".join(f"{n} {v}" for v, n in c.items() if n) + ".", "",
                  "| id | the source's words or the claim | landmark | verdict | config | measured [95% CI] | seeds | "
                  "also scored by | why |", "|---|---|---|---|---|---|---:|---|---|"]
        for r in mine:
            lines.append("| " + " | ".join(md_cell(x) for x in (
                r["id"], source_words(r), r["landmark"], r["verdict"], r["config"], measured_text(r) if r["config"] != "-"
                else "-", r.get("n_seeds") if r["config"] != "-" else "-",
                ", ".join(f"{o} ({v})" for o, v in r["others"]) or "-", r["why"] or "-")) + " |")
    return "\n".join(lines) + "\n"
