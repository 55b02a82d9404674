"""Stage of the ``claims`` rule: every declared claim, scored where its figure ran, into one ledger.

Reads only the figures' sidecars (``results/figures/<figure>.json``), scores each figure's claims from its
statistics (:func:`pipeline_lib.scoring.score_figure`, as ``publish`` re-scores the kept ones) and reads the
declarations (:func:`pipeline_lib.declarations.declared_claims`); never trains, never opens an artifact. Writes

- ``claims.json``: every figure's scores with the job's provenance (its code: the scoring modules), the
  ledger's numbers as a program reads them;
- ``claims.csv`` / ``claims.md``: one row per claim (:data:`COLUMNS`), the Markdown grouped by ledger group (a
  source's own statements, its authors' released code, the project's own claims) with the count of each verdict,
  each claim's origin, landmark and the source's words, and a link to each row's figure;
- ``claims_coverage.md``: per source, every result it states and the claims that score it with their verdicts,
  or why none does (:func:`coverage_markdown`);
- ``claims/<paper>.csv`` and ``claims/<paper>.rst`` (:meth:`pipeline_lib.plumbing.paths.Paths.claims_paper`): one table per paper for ``snakemake --report`` (the
  ``.rst`` is its caption, each row linking its figure in the report).

In a replicate (config key ``replicate``), ``claims.csv`` holds both results side by side and whether the
replicate agrees (:func:`compare`).
"""
from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path

from ..caveats import fill_caveat
from ..claims import VERDICTS, at_best, not_run
from ..declarations import declaration_files, declared_claims
from ..plumbing.paths import Paths
from ..plumbing.store import atomic_path, provenance
from ..scoring import score_figure

COLUMNS = ["id", "group", "paper", "origin", "landmark", "quote", "claim", "reference", "measured", "ci_low", "ci_high",
           "n_seeds", "control", "verdict", "caveats", "figure", "statistic", "reads", "test"]
_DECLARED = ("id", "group", "paper", "origin", "landmark", "quote", "claim", "reference", "figure", "statistic", "test",
             "not_tested_as_stated")
REPLICATE_COLUMNS = ["id", "paper", "claim", "measured", "ci_low", "ci_high", "n_seeds", "verdict",
                     "replicate_measured", "replicate_ci_low", "replicate_ci_high", "replicate_n_seeds",
                     "replicate_verdict", "agrees", "knife_edge", "why"]


def read_sidecars(sidecars: dict[str, str]) -> dict[str, dict]:
    """Figure -> its sidecar (figure name -> sidecar path, the figures this config draws)."""
    return {fig: json.loads(Path(path).read_text()) for fig, path in sidecars.items()}


def scored(sides: dict[str, dict], params: dict) -> dict[str, dict]:
    """Figure -> its sidecar with its ``claims`` scored from its ``stats`` (``params``: figure -> its config
    block, ``Config.figures``)."""
    return {fig: {**side, "claims": score_figure(fig, side["stats"], params[fig])} for fig, side in sides.items()}


def summaries(sides: dict[str, dict]) -> dict[str, str]:
    """Figure -> the one-line summary of the numbers it states (its sidecar's ``stats.summary``)."""
    return {fig: side["stats"].get("summary", "") for fig, side in sides.items()}


def collect(sides: dict[str, dict]) -> list[dict]:
    """One row per declared claim: its declaration and its score from the sidecar of its figure (figure name ->
    sidecar with its claims scored, :func:`scored`); a claim whose figure is not drawn is ``not run``. The caveats' placeholders
    are filled from these sidecars' statistics (:func:`fill_caveat`)."""
    stats = {fig: side.get("stats", {}) for fig, side in sides.items()}
    scored: dict[str, dict] = {}
    for side in sides.values():
        scored.update(side.get("claims", {}))
    rows = []
    for cid, decl in declared_claims().items():
        s = scored.get(cid)
        if s is None:
            why = "figure not drawn by this config" if decl["figure"] not in sides else "not scored"
            s = not_run(f"{why} ({decl['figure']})")
        as_stated = [f"not tested as stated: {decl['not_tested_as_stated']}"] if decl.get("not_tested_as_stated") else []
        rows.append({**{k: decl.get(k, "") for k in _DECLARED}, **s,
                     "caveats": " / ".join([*as_stated, *at_best(s),
                                            *(fill_caveat(c, stats) for c in decl.get("caveats", []))]),
                     "reads": "; ".join(decl.get("reads", []))})
    return rows


def _cell(v) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def write_csv(path: str, columns: list[str], rows: list[dict]) -> None:
    with atomic_path(path) as tmp, open(tmp, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(columns)
        w.writerows([[_cell(r.get(c)) for c in columns] for r in rows])


def read_csv(path: str) -> list[dict]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def counts(rows: list[dict], by: str = "group") -> dict[str, dict[str, int]]:
    """group (or ``by``) -> verdict -> number of claims (every verdict present, zeros included)."""
    out: dict[str, dict[str, int]] = {}
    for r in rows:
        out.setdefault(r[by], dict.fromkeys(VERDICTS, 0))[r["verdict"]] += 1
    return out


def md_cell(text) -> str:
    return _cell(text).replace("|", "\\|").replace("\n", " ")


def measured_text(r: dict) -> str:
    m = _cell(r["measured"])
    if r.get("ci_low") is not None and r.get("ci_high") is not None:
        m += f" [{_cell(r['ci_low'])}, {_cell(r['ci_high'])}]"
    return m


def source_words(r: dict) -> str:
    """What the claim scores: the source's words where it quotes them, else the claim in a few words."""
    return f"\u201c{r['quote']}\u201d" if r.get("quote") else r["claim"]


def _figure_link(fig: str, figures_dir: str | None) -> str:
    return f"[{fig}]({figures_dir}/{fig}.png)" if figures_dir else f"`{fig}`"


def markdown(rows: list[dict], figures_dir: str | None = "figures", figure_summaries: dict[str, str] | None = None) -> str:
    """The ledger as Markdown: verdict counts per group (a source's own statements, its authors' code, the
    project's own claims), one table per group, then what each drawn figure measured (its sidecar's summary).
    ``figures_dir``: where the rows link their figures (None: no link, for a ledger published without them)."""
    total = counts(rows)
    lines = ["# Claims", "", "Every claim the workflow scores: where the source states it and in which words, the "
             "reference value as the source prints it, the statistic measured on this results folder (95% interval: "
             "Wilson for counts, Student's t for means, bootstrap for medians), its control, the verdict and what a "
             "reader must know beside it. A source's rows count only its own statements (or its authors' released "
             "code); the project's extensions are counted apart. Where each result of a source is scored: "
             "[claims_coverage.md](claims_coverage.md). Generated by the `claims` rule; do not edit.", "",
             "| group | " + " | ".join(VERDICTS) + " |", "|---|" + "---:|" * len(VERDICTS)]
    lines += [f"| {g} | " + " | ".join(str(c[v]) for v in VERDICTS) + " |" for g, c in total.items()]
    for group in total:
        lines += ["", f"## {group}", "", "| id | the source's words (or the claim) | landmark | reference (as printed) | "
                  "statistic (epoch, metric, set) | measured [95% CI] | seeds | control | verdict | beside the verdict | "
                  "figure: statistics read |", "|---|---|---|---|---|---|---:|---|---|---|---|"]
        for r in rows:
            if r["group"] == group:
                link = _figure_link(r["figure"], figures_dir) + (
                    ": " + md_cell(r["reads"]) if r.get("reads") else "")
                lines.append("| " + " | ".join(md_cell(x) for x in (r["id"], source_words(r), r["landmark"], r["reference"],
                                                                  r.get("statistic") or "-", measured_text(r),
                                                                  r["n_seeds"], r["control"],
                                                                  r["verdict"], r.get("caveats") or "-")) + f" | {link} |")
    if figure_summaries:
        lines += ["", "## What each figure measured", ""]
        lines += [f"- {_figure_link(fig, figures_dir)}: {md_cell(text)}" for fig, text in figure_summaries.items()]
    return "\n".join(lines) + "\n"


NOT_RESULTS = ("method", "motivation")  # statements a source's results list keeps for context, not counted


def coverage(rows: list[dict]) -> dict[str, dict]:
    """Per source (key): ``title``, ``results`` (each result it states with the verdicts of the claims that
    score it, or why none does) and ``counts``: results scored here (a claim of it not ``not run``), scored by a
    proxy (the result's ``proxy`` says why its claims test something near it, not it; also a result that only the
    project's own claims score, or only claims not tested as stated), declared but not run here
    (an overlay config, a GPU), not covered."""
    verdict = {r["id"]: r["verdict"] for r in rows}
    own = {r["id"] for r in rows if r.get("origin") == "extension"}
    loose = {r["id"]: r["not_tested_as_stated"] for r in rows if r.get("not_tested_as_stated")}
    out = {}
    for key, doc in declaration_files().items():
        if "results" not in doc:
            continue
        results, n = [], dict.fromkeys(("scored here", "scored by a proxy", "declared, not run here", "not covered"), 0)
        for res in doc["results"]:
            ids = res.get("claims") or []
            verdicts = {i: verdict.get(i, "not declared") for i in ids}
            if res.get("kind") in NOT_RESULTS:
                results.append({**res, "status": f"not a result ({res['kind']})", "verdicts": verdicts})
                continue
            scored = [i for i in ids if verdict.get(i, "not run") != "not run"]
            if scored and all(i in loose for i in scored) and not res.get("proxy"):  # no rule tests the words
                res = {**res, "proxy": "not tested as stated: " + "; ".join(loose[i] for i in scored)}
            if not ids:
                status = "not covered"
            elif scored:
                if not res.get("proxy") and all(i in own for i in scored):  # only the project's own bars
                    res = {**res, "proxy": "only the project's own rows score it (origin extension: another task, "
                                           "model or bar than the source's; their landmarks say which)"}
                status = "scored by a proxy" if res.get("proxy") else "scored here"
            else:
                status = "declared, not run here"
            n[status] += 1
            results.append({**res, "status": status, "verdicts": verdicts})
        out[key] = {"title": doc["source"]["title"], "results": results, "counts": n}
    return out


def coverage_markdown(rows: list[dict], where: str = "on this results folder", made: str = "the `claims` rule"
                      ) -> str:
    """The coverage table of every source: each result it states (landmark, its words, the value it prints) ->
    the claims that score it with their verdicts (``where``: whose verdicts), or why none does."""
    cov = coverage(rows)
    lines = ["# Coverage: every result the sources state, and what scores it", "",
             "Per source, each figure, table and sentence that states a result, with the claims of the ledger "
             f"that score it and their verdicts {where}, or why none does. 'Declared, not run here': "
             "its claims need an overlay config or hardware this run did not use, or their precondition fails on "
             "these numbers (the ledger's control column says which). 'Scored by a proxy': its claims test "
             "something near the statement, not the statement (the note says what). A source's settings and "
             f"motivation are listed for context and not counted as results. Generated by {made}; do not edit.", "",
             "| source | results stated | scored here | scored by a proxy | declared, not run here | not covered |",
             "|---|---:|---:|---:|---:|---:|"]
    for c in cov.values():
        lines.append(f"| {c['title']} | {sum(c['counts'].values())} | " + " | ".join(str(v) for v in c["counts"].values())
                     + " |")
    for c in cov.values():
        lines += ["", f"## {c['title']}", "", "| landmark | the source's words | value printed | kind | scored by | "
                  "status | note |", "|---|---|---|---|---|---|---|"]
        for r in c["results"]:
            scored = "; ".join(f"{i} ({v})" for i, v in r["verdicts"].items()) or f"- ({r.get('not_covered', '')})"
            note = "; ".join(x for x in (f"proxy: {r['proxy']}" if r.get("proxy") else "", r.get("note") or "") if x)
            lines.append("| " + " | ".join(md_cell(x) for x in (r["landmark"], r.get("quote") or "-", r.get("value") or "-",
                                                              r.get("kind") or "-", scored, r["status"], note or "-"))
                         + " |")
    return "\n".join(lines) + "\n"


def _rst(text) -> str:
    return re.sub(r"([\\*`_|\[\]<>])", r"\\\1", _cell(text))


def paper_caption(paper: str, rows: list[dict], drawn: set[str]) -> str:
    """The report caption of one paper's claims: an rst list-table, each row linking its figure where the
    report has it (a figure this config draws)."""
    c = counts(rows, "paper")[paper]
    out = ["{% raw %}", _rst(f"Claims of {paper}: " + ", ".join(f"{n} {v}" for v, n in c.items() if n)) + ".", "",
           ".. list-table::", "   :header-rows: 1", "",
           "   * - claim", "     - source", "     - measured [95% CI]", "     - control", "     - verdict",
           "     - figure"]
    for r in rows:
        fig = f"`{r['figure']}.png`_" if r["figure"] in drawn else _rst(r["figure"])
        cells = [f"{source_words(r)} ({r['id']})", f"{r['landmark']} ({r['origin']})",
                 measured_text(r) + f" ({_cell(r['n_seeds']) or '-'} seeds)", r["control"],
                 r["verdict"] + (f"; {r['caveats']}" if r.get("caveats") else "")]
        out.append("   * - " + _rst(cells[0]))
        out += [f"     - {_rst(x) or '-'}" for x in cells[1:]]
        out.append(f"     - {fig}")
    return "\n".join(out + ["{% endraw %}", ""])


def write_ledger(rows: list[dict], csv_path: str, md_path: str, paths: Paths | None = None,
                 drawn: set[str] = frozenset(), figure_summaries: dict[str, str] | None = None) -> None:
    """The ledger; with ``paths``, also each paper's table and report caption (:meth:`Paths.claims_paper`)."""
    write_csv(csv_path, COLUMNS, rows)
    with atomic_path(md_path) as tmp:
        Path(tmp).write_text(markdown(rows, figure_summaries=figure_summaries))
    if paths is None:
        return
    for paper in counts(rows, "paper"):
        mine = [r for r in rows if r["paper"] == paper]
        write_csv(paths.claims_paper(paper, ".csv"), COLUMNS, mine)
        with atomic_path(paths.claims_paper(paper, ".rst")) as tmp:
            Path(tmp).write_text(paper_caption(paper, mine, drawn))


def as_float(v) -> float:
    """A cell as a float: NaN where it is empty, None or not a number ("inf" reads as infinity)."""
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def consistent(m: float, lo: float, hi: float, m2: float, lo2: float, hi2: float) -> tuple[str, str]:
    """Whether two estimates of one statistic agree, whatever their verdicts: a two-sample comparison with each
    standard error read off its 95% interval (half its width / 1.96): |m - m2| <= 1.96 sqrt(se^2 + se2^2).
    Without intervals only equal estimates agree. ("yes" | "no", why)."""
    if any(math.isnan(x) for x in (m, m2)):
        return "", "no estimate in " + ("both" if math.isnan(m) and math.isnan(m2) else
                                         "the original" if math.isnan(m) else "the replicate")
    if any(math.isnan(x) for x in (lo, hi, lo2, hi2)):
        same = m == m2
        return ("yes" if same else "no"), f"no interval: estimates {'equal' if same else 'differ'} ({m:.4g}, {m2:.4g})"
    se = math.hypot((hi - lo) / (2 * 1.96), (hi2 - lo2) / (2 * 1.96))
    d = abs(m - m2)
    ok = d <= 1.96 * se if se > 0 else d == 0
    return ("yes" if ok else "no"), f"|difference| {d:.3g} {'<=' if ok else '>'} 1.96 x combined se {se:.3g}"


def compare(original: list[dict], replicate: list[dict]) -> list[dict]:
    """Claim by claim, the replicate beside the original. They agree when their estimates are consistent
    (:func:`consistent`), whatever the verdict labels say; ``why`` gives the comparison. A verdict is
    *knife-edge* when the estimates agree but the labels differ: the noise between two draws of the same
    experiment moves it across its rule. A claim not run in either is not compared."""
    by_id = {r["id"]: r for r in original}
    out = []
    for rep in replicate:
        orig = by_id.get(rep["id"], {"measured": None, "ci_low": None, "ci_high": None, "n_seeds": None,
                                     "verdict": "not run"})
        if "not run" in (orig["verdict"], rep["verdict"]):
            agrees, why = "", "not run in " + ("both" if orig["verdict"] == rep["verdict"] else
                                               "the original" if orig["verdict"] == "not run" else "the replicate")
        else:
            agrees, why = consistent(*(as_float(orig[k]) for k in ("measured", "ci_low", "ci_high")),
                                     *(as_float(rep[k]) for k in ("measured", "ci_low", "ci_high")))
            if orig["verdict"] != rep["verdict"]:
                why += f"; verdict {orig['verdict']} -> {rep['verdict']}"
        out.append({"id": rep["id"], "paper": rep["paper"], "claim": rep["claim"],
                    **{k: orig[k] for k in ("measured", "ci_low", "ci_high", "n_seeds", "verdict")},
                    **{f"replicate_{k}": rep[k] for k in ("measured", "ci_low", "ci_high", "n_seeds", "verdict")},
                    "agrees": agrees, "knife_edge": "yes" if agrees == "yes" and orig["verdict"] != rep["verdict"]
                    else "", "why": why})
    return out


def replicate_markdown(rows: list[dict], made: str = "the `claims` rule of a replicate") -> str:
    compared = [r for r in rows if r["agrees"]]
    agree = sum(r["agrees"] == "yes" for r in compared)
    edge = [r["id"] for r in rows if r.get("knife_edge") == "yes"]
    lines = ["# Claims: replicate against the original", "",
             f"{agree} of {len(compared)} claims scored in both agree: their estimates are consistent (a two-sample "
             "comparison, each standard error read off its 95% interval), whatever their verdicts. "
             f"{len(edge)} verdicts are knife-edge: the estimates agree but the verdicts differ, so the noise between "
             "two draws of one experiment moves them across their rule" + (f" ({', '.join(edge)})" if edge else "")
             + f". Generated by {made}; do not edit.", "",
             "| id | original [95% CI] | verdict | replicate [95% CI] | verdict | agrees | knife-edge | why |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        o = measured_text({k: as_float(r[k]) if r[k] not in ("", None) else None for k in ("measured", "ci_low", "ci_high")})
        p = measured_text({k: as_float(r[f"replicate_{k}"]) if r[f"replicate_{k}"] not in ("", None) else None
                       for k in ("measured", "ci_low", "ci_high")})
        lines.append("| " + " | ".join(md_cell(x) for x in (r["id"], o, r["verdict"], p, r["replicate_verdict"],
                                                          r["agrees"] or "-", r.get("knife_edge") or "-", r["why"]))
                     + " |")
    return "\n".join(lines) + "\n"


def run_claims(sidecars: dict[str, str], params: dict, csv_path: str, md_path: str, paths: Paths | None = None,
               original: str | None = None, code: str = "") -> list[dict]:
    """The ``claims`` rule: the ledger of this results folder (``params``: figure -> its config block); with
    ``original`` (the ledger of the results this folder replicates) ``csv_path``/``md_path`` hold the
    side-by-side comparison instead, and this folder's own ledger goes to ``claims_own.csv`` / ``.md`` beside
    them. ``claims.json`` beside ``csv_path`` keeps every figure's scores with ``code`` in its provenance."""
    sides = scored(read_sidecars(sidecars), params)
    rows, said = collect(sides), summaries(sides)
    with atomic_path(str(Path(csv_path).with_suffix(".json"))) as tmp:
        attrs = provenance({}, sidecars.values(), device="none", code=code)
        Path(tmp).write_text(json.dumps({"claims": {fig: side["claims"] for fig, side in sorted(sides.items())},
                                         "provenance": attrs}, indent=2, sort_keys=True))
    with atomic_path(str(Path(md_path).with_name(Path(md_path).stem + "_coverage.md"))) as tmp:
        Path(tmp).write_text(coverage_markdown(rows))
    if original is None:
        write_ledger(rows, csv_path, md_path, paths, drawn=set(sidecars), figure_summaries=said)
        return rows
    own = [str(Path(p).with_name(Path(p).stem + "_own" + Path(p).suffix)) for p in (csv_path, md_path)]
    write_ledger(rows, *own, paths, drawn=set(sidecars), figure_summaries=said)
    table = compare(read_csv(original), [{k: _cell(v) for k, v in r.items()} for r in rows])
    write_csv(csv_path, REPLICATE_COLUMNS, table)
    with atomic_path(md_path) as tmp:
        Path(tmp).write_text(replicate_markdown(table))
    return table


def counts_table(rows: list[dict]) -> str:
    """Verdict counts per group as a Markdown table (what the README shows): a source's own statements, its
    authors' released code, the project's own claims."""
    lines = ["| claims of | " + " | ".join(VERDICTS) + " | claims |", "|---|" + "---:|" * (len(VERDICTS) + 1)]
    for group, c in counts(rows).items():
        lines.append(f"| {group} | " + " | ".join(str(c[v]) for v in VERDICTS) + f" | {sum(c.values())} |")
    return "\n".join(lines)
