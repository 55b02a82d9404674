"""``python -m pipeline_lib publish``: the published ledgers, coverage table and the README's generated blocks,
re-scored from the statistics kept in the repository, with no results folder and no training.

A finished run of a published config leaves its figures' statistics in ``docs/stats/<config>.json`` (``publish
--keep RESULTS``): each figure's ``stats`` (what its claims read) with the config slice and code it was computed
with, and the run's cost. Publishing re-scores every claim from them (each figure's ``score_claims``, as the
ledger job does: :mod:`pipeline_lib.scoring`) under the current rules, caveats and declarations, so a change of any of those re-publishes
in seconds. A figure whose code changed since its statistics were kept, or whose config slice did, is named in
the ledger's head as needing a rerun. ``tests/test_published.py`` fails when a generated file differs from what
this writes now.
"""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from ..claims import not_run
from ..declarations import figure_claims
from ..plumbing.config import load_config, read_config_file, standalone_files
from ..plumbing.replicate import replicate_config
from ..plumbing.values import slice_hash
from ..stages.claims import collect, compare, coverage_markdown, markdown, replicate_markdown, scored, summaries
from .bench_page import measured_pages
from .calibration import calibration_markdown, is_calibration
from .codes import job_code, job_code_or_none
from .consolidate import consolidate, consolidated_markdown, counts_table
from .cost import COST_BEGIN, COST_END, config_benchmarks, cost_row, run_cost, train_seconds
from .kept import earlier_as_rerun, write_kept
from .lock import ROOT, read_lock
from .reruns import RERUN, rerun_of, rerun_path, reruns_of
from .table_page import has_table_page, table_markdown
from .waits import ROWS as WAIT_ROWS
from .waits import machine
from .waits import read as read_waits
from .waits import row as wait_row

KEPT = Path("docs") / "stats"
README_BEGIN, README_END = "<!-- claims-counts: begin -->", "<!-- claims-counts: end -->"
DEFAULT = "config/config.yaml"
README_IMG = Path("docs") / "img"  # the figures the README shows, copied from the default's kept run
README_FIGURES = ("fig5_accuracy",)


def config_of(root: Path, path: str, replicate: bool = False):
    """A config as ``snakemake --configfile <path>`` reads it: a standalone file alone, another merged into the
    default (mappings key by key); with ``replicate``, its replicate (``--config replicate=true``)."""
    def merged(base, extra):
        out = dict(base)
        for k, v in extra.items():
            out[k] = merged(base[k], v) if isinstance(v, dict) and isinstance(base.get(k), dict) else v
        return out

    raw = read_config_file(root / path) or {}
    if path != DEFAULT and not standalone_files([root / path]):
        raw = merged(read_config_file(root / DEFAULT), raw)
    cfg = load_config(raw)
    return load_config(replicate_config(cfg.raw)) if replicate else cfg


def _workdir(results: Path, cfg) -> Path:
    """The folder Snakemake ran in: ``results`` less the config's own results path (``results/<overlay>``)."""
    results = Path(results).resolve()
    for _ in Path(cfg.raw["results"]).parts:
        results = results.parent
    return results


def kept_name(config: str, replicate: bool = False) -> str:
    """The name of a config's kept statistics (``docs/stats/<name>.json``): its file's stem, ``-replicate``
    added for its replicate."""
    return Path(config).stem + ("-replicate" if replicate else "")


def keep(results: Path, root: Path = ROOT, config: str = DEFAULT, replicate: bool = False, rerun: bool = False,
         shared: bool = False, only: list[str] | None = None, earlier: bool = False) -> Path:
    """Keep the statistics of a finished run of ``config`` (its results folder ``results``; with ``replicate``,
    the replicate's ``<results>/replication``) in ``docs/stats``, with the run's cost (its benchmark files and,
    where one invocation ran every job, its Snakemake log) and the machine it ran on. ``rerun``: the same config
    and seeds run again on another machine, kept beside the first run and any other machine's (:func:`.rerun_path`)
    to check which verdicts the machine's rounding decides, not to replace it. ``shared``: the machine ran other
    work during the run, so its times are upper bounds (said beside them).
    ``only``: these figures' statistics replace theirs in the config's kept file and nothing else of it changes
    (e.g. after ``snakemake joma_odes`` rebuilt one figure whose code changed and that needs no training: the kept
    run's cost, machine and other figures stay those of the run that made them). ``earlier``: the kept run this one
    replaces, made on another machine, stays beside it as that machine's rerun (:func:`.kept.earlier_as_rerun`)."""
    if earlier and (rerun or only):
        raise ValueError("--earlier-as-rerun sets aside the config's kept run that a whole new run replaces: "
                         "not with --rerun or --figures")
    if replicate and (rerun or earlier):
        raise ValueError("a replicate's rerun is not published (reruns are the same seeds again; a replicate's "
                         "are disjoint): not --replicate with --rerun or --earlier-as-rerun")
    cfg = config_of(root, config, replicate)
    name = kept_name(config, replicate)
    out = rerun_path(root / KEPT, name, machine()) if rerun else root / KEPT / f"{name}.json"
    only = list(dict.fromkeys(only or []))
    kept = _kept_for_figures(out, cfg, config, only, rerun, shared) if only else None
    figures = {}
    for fig in only or cfg.raw["figures"]:
        path = Path(results) / "figures" / f"{fig}.json"
        if not path.exists():
            raise FileNotFoundError(f"{path}: the run of {config} is not finished (snakemake {fig})")
        side = json.loads(path.read_text())
        figures[fig] = {"stats": side["stats"], "config_hash": side["provenance"]["config_hash"],
                        "code": side["provenance"]["code_hash"], "commit": side["provenance"]["git_commit"]}
    here = machine()
    if kept is not None:
        for fig in only:
            if stale_figures({"figures": {fig: figures[fig]}}, cfg):
                raise ValueError(f"{Path(results) / 'figures' / f'{fig}.json'} was not built by this checkout's code "
                                 f"and {config}'s settings of {fig}: rebuild it (snakemake {fig}) before keeping it")
            if here != kept.get("machine"):  # the rest of the file ran elsewhere: say where this figure did
                figures[fig]["machine"] = here
        kept["figures"].update(figures)
        write_kept(out, kept)
        _readme_figures(root, Path(results), config, replicate, rerun, only)
        return out
    cost = run_cost(Path(results), _workdir(results, cfg), config_benchmarks(cfg), config, replicate)
    if shared:
        cost["shared"] = True
    new = {"config": config, "replicate": replicate, "cost": cost, "machine": here,
           **({"rerun": True} if rerun else {}), "figures": figures, "train_seconds": train_seconds(Path(results), cfg)}
    if earlier:  # after every check and read of the new run, so that a refusal or failure changes nothing
        earlier_as_rerun(out, here)
    write_kept(out, new)
    _readme_figures(root, Path(results), config, replicate, rerun, README_FIGURES)
    return out


def _readme_figures(root: Path, results: Path, config: str, replicate: bool, rerun: bool, figures) -> None:
    """The README's figures among ``figures``: the default run's own drawing, kept with its statistics."""
    if config == DEFAULT and not replicate and not rerun:
        (root / README_IMG).mkdir(parents=True, exist_ok=True)
        for fig in (f for f in figures if f in README_FIGURES):
            shutil.copyfile(results / "figures" / f"{fig}.png", root / README_IMG / f"{fig}.png")


def _kept_for_figures(out: Path, cfg, config: str, only: list[str], rerun: bool, shared: bool) -> dict:
    """The kept file that ``only``'s figures go into, after the checks that they may: each is one of the config's
    figures, the file exists, ``shared`` is not asked for (the figures' cost is not kept) and a rerun's file (another
    machine's numbers) is not given this machine's."""
    unknown = sorted(set(only) - set(cfg.raw["figures"]))
    if unknown:
        raise FileNotFoundError(f"{config} has no figure {', '.join(unknown)} (its figures: "
                                f"{', '.join(cfg.raw['figures'])})")
    if not out.exists() and rerun:
        raise FileNotFoundError(f"{out}: no rerun of {config} kept from this machine ({machine()}) to replace "
                                "figures in (a rerun's figures stand for the machine that ran them); keep a whole "
                                "rerun first (without --figures)")
    if not out.exists():
        raise FileNotFoundError(f"{out}: no kept run of {config} to replace figures in; keep a whole run first "
                                "(without --figures)")
    if shared:
        raise ValueError("--shared says the kept run's times are upper bounds; --figures keeps no times")
    return json.loads(out.read_text())  # a rerun's file is this machine's own (rerun_path): never another's


def restamp(root: Path, before, after, verified: set[str]) -> list[str]:
    """After a refactor the lock verified (every artifact of the test config, whose figures are ``verified``,
    identical under the code ``before`` and ``after``, :class:`.lock.Code`), a figure's kept statistics computed
    by ``before``'s code are what ``after``'s computes: their code stamp becomes ``after``'s, so publishing does
    not name them as needing a rerun. One line per kept file restamped."""
    said = []
    for path in sorted((root / KEPT).glob("*.json")):
        kept = json.loads(path.read_text())
        cfg = config_of(root, kept["config"], kept.get("replicate", False))
        moved = []
        for fig, k in kept["figures"].items():
            if fig not in verified:
                continue
            new = job_code(cfg, f"figure {fig}", after)
            if k["code"] == job_code_or_none(cfg, f"figure {fig}", before) != new:
                k["code"] = new
                moved.append(fig)
        if moved:
            write_kept(path, kept)
            said.append(f"restamped {len(moved)} figure(s) of {path.relative_to(root).as_posix()}")
    return said


def _digest(*texts: str) -> str:
    return hashlib.sha256("\0".join(texts).encode()).hexdigest()[:12]


def rescore(root: Path, kept_path: Path) -> tuple[list[dict], dict[str, str], list[str]]:
    """The ledger rows of one kept config, scored now; the figures' summaries; the figures whose statistics were
    computed by other code or another config slice than the checkout's (they need a rerun)."""
    kept = json.loads(kept_path.read_text())
    cfg = config_of(root, kept["config"], kept.get("replicate", False))
    stale = stale_figures(kept, cfg)
    sides = {}
    for fig, k in kept["figures"].items():
        if fig not in cfg.figures:  # kept, but the config no longer draws it
            why = f"{kept['config']} no longer draws {fig}; its kept statistics are not scored"
            sides[fig] = {"stats": k["stats"], "claims": {cid: not_run(why) for cid in figure_claims(fig)}}
            continue
        try:
            sides.update(scored({fig: {"stats": k["stats"]}}, cfg.figures))
        except KeyError as exc:  # a rule reads a statistic its figure's code did not compute when these were kept
            if fig not in stale:
                raise
            why = (f"the statistics kept for {fig} (commit {k['commit'][:7]}) lack {exc}, which a rule of this "
                   f"figure reads, so none of its claims is scored: rerun figure {fig} of {kept['config']} and keep it")
            sides[fig] = {"stats": k["stats"], "claims": {cid: not_run(why) for cid in figure_claims(fig)}}
    return collect(sides), summaries(sides), stale


def stale_figures(kept: dict, cfg) -> list[str]:
    """The kept figures whose code or config slice is not the checkout's (or that the config no longer draws)."""
    return [fig for fig, k in kept["figures"].items()
            if fig not in cfg.figures or k["code"] != job_code(cfg, f"figure {fig}")
            or k["config_hash"] != slice_hash(cfg.figure_slice(fig))]


SCORING = ("pipeline_lib.claims", "pipeline_lib.claim_rules", "pipeline_lib.caveats", "pipeline_lib.stages.claims",
           "pipeline_lib.scoring", "pipeline_lib.figures.")


def _scoring_digest(root: Path) -> str:
    """The digest of the code that scores kept statistics: the lock's digests of the rules, the ledger, the scoring
    modules and the figure modules they import."""
    lock = read_lock(root)
    return _digest(*(f"{m} {lock[m][0]}" for m in sorted(lock) if m.startswith(SCORING)))


def _made_from(root: Path) -> str:
    """The digests of the declarations and of the scoring code, which every generated file names."""
    decl = sorted((root / "pipeline_lib" / "declarations").glob("*.yaml"))
    return f"the declarations ({_digest(*(p.read_text() for p in decl))}) and the scoring code ({_scoring_digest(root)})"


def _head(kept: list[Path], root: Path, code: str, needs_rerun: dict[str, list[str]]) -> str:
    """The generated file's first line: what it was made from (each kept statistics file's digest, and ``code``:
    :func:`_made_from`), then the figures that need a rerun (their code or config changed since they were kept)."""
    made = ("<!-- generated by `python -m pipeline_lib publish` from "
            + ", ".join(f"{p.relative_to(root).as_posix()} ({_digest(p.read_text())})" for p in kept)
            + f", {code}; do not edit -->\n")
    for name, figs in needs_rerun.items():
        made += (f"\n> Statistics of {len(figs)} figure(s) of {name} were computed by other code or settings than "
                 f"the checkout's, so their rows may change on a rerun: " + ", ".join(figs) + ".\n")
    return made


def _block(text: str, begin: str, end: str, new: str, where: str) -> str:
    if begin not in text or end not in text:
        raise FileNotFoundError(f"{where} has no {begin} ... {end} block")
    head, rest = text.split(begin, 1)
    return head + begin + new + end + rest.split(end, 1)[1]


def ledger_path(root: Path, name: str) -> Path:
    """A kept config's own published ledger: ``docs/claims_<config>.md`` (the default's: ``claims_default.md``);
    its replicate's comparison: ``docs/claims_replication.md`` (the default's) or ``claims_<config>_replication.md``."""
    base = name.removesuffix("-replicate")
    stem = "default" if base == Path(DEFAULT).stem else base
    if base != name:
        return root / "docs" / ("claims_replication.md" if stem == "default" else f"claims_{stem}_replication.md")
    return root / "docs" / f"claims_{stem}.md"


STALE = "<!-- publish: not re-scored -->"


def _not_kept(root: Path, written: set[Path]) -> dict[Path, str]:
    """The published pages of a config that ``publish`` does not generate, each opened by a note saying so: its
    ledger while its statistics are not kept (scored from a results folder by the rules it then had), and
    its results page (``docs/<config>.md``, numbers copied from one run)."""
    out = {}
    for path in sorted((root / "docs").glob("*.md")):
        name = path.stem.removeprefix("claims_")
        replication = path == ledger_path(root, Path(DEFAULT).stem + "-replicate")
        if path in written or not (replication or (root / "config" / f"{name}.yaml").exists()):
            continue
        text = path.read_text()
        if text.startswith(STALE):
            text = text.split("\n\n", 1)[1]
        again = (f"The settings it describes are those of the run it was scored on, which may differ from the "
                 f"config's. To publish it: `snakemake --cores all --configfile config/{name}.yaml`, then `python -m "
                 f"pipeline_lib publish --keep <its results folder> --config config/{name}.yaml`.")
        if replication:
            note = ("Not re-scored: the replicate's statistics are not kept in `docs/stats/`, so `publish` does not "
                    "regenerate this comparison, and the ledgers it compares may follow other rules than the current "
                    "ones. To publish it: "
                    "`snakemake --cores all --config replicate=true`, then `python -m pipeline_lib publish --keep "
                    "results/replication --replicate`.")
        elif path.stem.startswith("claims_"):
            note = ("Not re-scored: this config's statistics are not kept in `docs/stats/`, so `publish` does not "
                    "regenerate this ledger: its rules, caveats and landmarks may differ from the current ones, and it "
                    f"is not in the consolidated ledger ([claims.md](claims.md)). {again}")
        else:
            ledger = ledger_path(root, name).name
            note = (f"The numbers on this page were copied from one run's results folder and no rerun refreshes "
                    f"them; the verdicts of `config/{name}.yaml` are in [{ledger}]({ledger}) "
                    + ("(re-scored from its kept statistics)." if ledger_path(root, name) in written else
                       f"(not re-scored either). {again}"))
        out[path] = f"{STALE}\n> {note}\n\n" + text
    return out


def generated(root: Path = ROOT) -> dict[Path, str]:
    """Every file ``publish`` writes, with its text, from the statistics kept in ``docs/stats``: each kept
    config's ledger (:func:`ledger_path`) and its replicate's comparison (a calibration config: its page
    ``docs/<config>.md`` instead, :mod:`.calibration`), the consolidated ledger
    ``docs/claims.md`` with its coverage table ``docs/claims_coverage.md``, the README's counts and cost rows, and
    the note opening each published ledger that is not re-scored, and the benchmark's tables in
    ``docs/performance.md`` (:mod:`.bench_page`) and the diagnostics' kept tables (:mod:`.kept_tables`)."""
    root = Path(root)
    paths = {p.stem: p for p in sorted((root / KEPT).glob("*.json"))}
    if Path(DEFAULT).stem not in paths:
        raise FileNotFoundError(f"{root / KEPT}: no kept statistics of {DEFAULT}; keep them from a finished run "
                                "with `python -m pipeline_lib publish --keep results`")
    kept = {name: json.loads(p.read_text()) for name, p in paths.items()}
    code = _made_from(root)
    out, ledgers, replicates, reruns, needs_rerun = {}, {}, {}, {}, {}
    for name, path in paths.items():
        if is_calibration(kept[name]):  # a calibration scores no claim: its page, not a ledger
            cfg = config_of(root, kept[name]["config"], False)
            stale = stale_figures(kept[name], cfg)
            out[root / "docs" / f"{name}.md"] = (_head([path], root, code, {name: stale} if stale else {})
                                                 + calibration_markdown(kept[name]))
            continue
        rows, said, stale = rescore(root, path)
        if stale:
            needs_rerun[name] = stale
        if rerun_of(name):  # the same seeds again elsewhere: it marks what the machine decides, no ledger
            reruns[name] = (f"on {kept[name].get('machine', 'another machine')}", rows)
        elif kept[name].get("replicate"):
            replicates[name.removesuffix("-replicate")] = rows
        else:
            ledgers[name] = rows
            head = _head([path], root, code, {name: stale} if stale else {})
            out[ledger_path(root, name)] = head + markdown(rows, figures_dir=None, figure_summaries=said)
            if has_table_page(kept[name]) and name != Path(DEFAULT).stem:  # an overlay's table: its results page
                out[root / "docs" / f"{name}.md"] = head + table_markdown(kept[name], root, ledger_path(root, name).name)
    for base, rows in replicates.items():
        if base not in ledgers:
            raise FileNotFoundError(f"{paths[base + '-replicate']}: a replicate's statistics without its "
                                    f"original's (docs/stats/{base}.json)")
        out[ledger_path(root, base + "-replicate")] = (
            _head([paths[base], paths[base + "-replicate"]], root, code, {})
            + replicate_markdown(compare(ledgers[base], rows), made="`python -m pipeline_lib publish`"))
    for name in reruns:
        if rerun_of(name) not in ledgers:
            raise FileNotFoundError(f"{paths[name]}: a rerun's statistics without its original's "
                                    f"(docs/stats/{rerun_of(name)}.json)")
    rows = consolidate(ledgers, replicates, reruns={b: [reruns[n] for n in reruns_of(reruns, b)] for b in ledgers})
    head = _head(list(paths.values()), root, code, needs_rerun)
    configs = [(kept[name], ledger_path(root, name).name,
                ledger_path(root, name + "-replicate").name if name in replicates else None,
                kept.get(name + "-replicate"), [kept[n] for n in reruns_of(kept, name)]) for name in ledgers]
    out.update(_not_kept(root, set(out)))
    stale = sorted(p.name for p in out if p.name.startswith("claims_") and out[p].startswith(STALE))
    out[root / "docs" / "claims.md"] = head + consolidated_markdown(rows, configs, stale)
    out[root / "docs" / "claims_coverage.md"] = head + coverage_markdown(rows, where="in the consolidated ledger",
                                                                         made="`python -m pipeline_lib publish`")
    out[root / "README.md"] = _readme(root, rows, kept)
    out.update(measured_pages(root))
    return out


def _readme(root: Path, rows: list[dict], kept: dict[str, dict]) -> str:
    """The README with its generated blocks: the consolidated counts, and the full reproduction's cost from the
    default config's kept run if one invocation timed it, else its rerun's if one did, else the default's pieces;
    the install, suite and tour from their kept timings (:mod:`.waits`)."""
    readme = (root / "README.md").read_text()
    readme = _block(readme, README_BEGIN, README_END, "\n" + counts_table(rows) + "\n", "README.md")
    block = readme.split(COST_BEGIN, 1)[1].split(COST_END, 1)[0] if COST_BEGIN in readme else ""
    default = Path(DEFAULT).stem  # its own run first, then its reruns in the order they were kept
    timed = [(kept[n]["cost"], kept[n].get("machine")) for n in [default, *reruns_of(kept, default)] if n in kept]
    clean = next((c for c in timed if c[0].get("wall_seconds") is not None and not c[0].get("shared")),
                 next((c for c in timed if c[0].get("wall_seconds") is not None), timed[0]))  # one clean invocation first
    waits = read_waits(root)
    missing = [label for label in WAIT_ROWS.values() if f"| {label} |" not in block]
    if missing:
        raise FileNotFoundError(f"README.md: its {COST_BEGIN} block has no row " + ", ".join(missing))
    rows_now = "\n".join(cost_row(*clean) if line.startswith("| the full reproduction |")
                         else next((wait_row(n, waits) for n, label in WAIT_ROWS.items()
                                    if line.startswith(f"| {label} |")), line) for line in block.split("\n"))
    return _block(readme, COST_BEGIN, COST_END, rows_now, "README.md")


def publish(root: Path = ROOT, keep_from: Path | None = None, config: str = DEFAULT,
            replicate: bool = False, rerun: bool = False, shared: bool = False,
            only: list[str] | None = None, earlier: bool = False) -> list[str]:
    """Write every generated file (:func:`generated`), after keeping a finished run's statistics (``keep_from``;
    with ``replicate``, its replicate's; with ``only``, just those figures'; with ``earlier``, the kept run it
    replaces set aside as its machine's rerun); what it did."""
    reruns = set((root / KEPT).glob(f"*{RERUN}*.json"))
    said = ([f"kept {keep(keep_from, root, config, replicate, rerun, shared, only, earlier)}"
             + (f" (figures {', '.join(only)})" if only else "")] if keep_from is not None else [])
    said += [f"kept the run it replaces as {p.relative_to(root).as_posix()}, its machine's rerun"
             for p in sorted(set((root / KEPT).glob(f"*{RERUN}*.json")) - reruns) if earlier]
    for path, text in generated(root).items():
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            said.append(f"wrote {path.relative_to(root)}")
    return said or ["every generated file is up to date"]
