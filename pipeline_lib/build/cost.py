"""What a finished run cost, measured from its own files: the benchmark file of every job (seconds, peak
resident memory) and the Snakemake log of the invocation that finished it (wall time, cores), with the size
of the results folder. ``python -m pipeline_lib publish`` writes it into the README's table of waits, so
the number there is always the last published run's, never a typed one."""
from __future__ import annotations

import csv
import re
from pathlib import Path

from .codes import job_modules

COST_BEGIN, COST_END = "<!-- run-cost: begin -->", "<!-- run-cost: end -->"


DEFAULT_CONFIG = "config.yaml"  # the default config's file name: a run of it names no other --configfile


def _ran(text: str, configfile: str | None, replicate: bool) -> bool:
    """Whether a Snakemake log's command ran ``configfile`` (the default config: no other --configfile) and, with
    ``replicate``, its replicate (``--config replicate=true``); any command where ``configfile`` is None."""
    if configfile is None:
        return True
    command = re.search(r"^\s*Command: (.*)$", text, re.M)
    if command is None:
        return False
    words = command.group(1).split()
    replicated = any(re.fullmatch(r"(?:--config=)?replicate=(?:true|1|yes)", w, re.I) for w in words)
    if replicated != replicate:
        return False
    given, taking = [], False
    for w in words:  # --configfile(s) A [B ...] or --configfile=A: every config file it names (not a target)
        flag, _, value = w.partition("=")
        if flag in ("--configfile", "--configfiles") and value:
            given.append(Path(value).name)
        taking = flag in ("--configfile", "--configfiles") and not value or (taking and not w.startswith("-"))
        if taking and not w.startswith("-") and w.endswith((".yaml", ".yml", ".json")):
            given.append(Path(w).name)
    name = Path(configfile).name
    return name in given if name != DEFAULT_CONFIG else all(g == DEFAULT_CONFIG for g in given)


def _invocations(log_dir: Path, configfile: str | None = None, replicate: bool = False) -> list[tuple[int, int, float, int]]:
    """(steps done, steps planned, wall seconds, cores) of each Snakemake log in ``log_dir``, oldest first, among
    the logs of runs of ``configfile`` (and of its replicate with ``replicate``): a folder shared by several
    configs holds their logs side by side. An invocation stopped before its end (a time limit, Ctrl-C) counts the
    steps it finished."""
    out = []
    for path in sorted(log_dir.glob("*.snakemake.log")):
        text = path.read_text(errors="replace")
        if not _ran(text, configfile, replicate):
            continue
        done = re.findall(r"^(\d+) of (\d+) steps \(\d+(?:\.\d+)?%\) done", text, re.M)  # 0.3%, 99.7%: decimals
        elapsed = re.search(r"^Elapsed time: (?:(\d+) days?, )?(\d+):(\d+):(\d+(?:\.\d+)?)", text, re.M)
        cores = re.search(r"^Provided cores: (\d+)", text, re.M)
        if done and cores:  # a killed invocation (SIGKILL, out of memory) writes no elapsed time: its wall is None
            wall = None
            if elapsed:
                d, h, m, s = elapsed.groups()
                wall = int(d or 0) * 86400 + int(h) * 3600 + int(m) * 60 + float(s)
            out.append((int(done[-1][0]), int(done[-1][1]), wall, int(cores.group(1))))
    return out


def _finished_log(runs: list[tuple[int, int, float, int]]) -> tuple[int, float, int] | None:
    """(steps, wall seconds, cores) of the invocation among ``runs`` (:func:`_invocations`) that finished the most
    steps with every step done (the full run, not a later invocation that rebuilt one target; the newest of
    equals)."""
    best: tuple[int, float, int] | None = None
    for done, planned, wall, cores in runs:
        if done == planned and wall is not None and (best is None or done >= best[0]):
            best = (done, wall, cores)
    return best


def _resumed(runs: list[tuple[int, int, float, int]], jobs: int) -> dict | None:
    """Where no one invocation ran every job: the invocations (``runs``, :func:`_invocations`) that ran them in
    turn, each resuming where the last stopped (a time limit, Ctrl-C), so that their steps add up to the jobs and
    only the last finished every step it planned: their number, their summed wall time and their cores. Else None,
    also where one of them has no wall time (killed before Snakemake could write it) or they ran on different
    numbers of cores."""
    if not runs or runs[-1][0] != runs[-1][1] or any(d == p for d, p, _, _ in runs[:-1]):
        return None
    if any(w is None for _, _, w, _ in runs) or len({c for *_, c in runs}) > 1:
        return None
    if sum(d for d, _, _, _ in runs) < jobs or runs[0][1] != sum(d for d, _, _, _ in runs):
        return None
    return {"invocations": len(runs), "wall_seconds": sum(w for _, _, w, _ in runs), "cores": runs[0][3]}


def config_benchmarks(cfg) -> set[str]:
    """The benchmark files (``<rule folder>/<name>.tsv``, relative to ``benchmarks/``) of a config's jobs: what
    its run costs, without the jobs of an overlay run into the same folder."""
    folder = {"dataset": "dataset", "train": "train", "figure": "figures", "claims": "claims"}
    out = set()
    for job in job_modules(cfg):
        kind, _, name = job.partition(" ")
        out.add(f"{folder.get(kind, kind)}/{name or 'claims'}.tsv")
    return out


def benchmark_rows(path: Path) -> list[tuple[float, float]]:
    """One job's benchmark file (Snakemake's ``benchmark:``): per repeat, its seconds and peak resident MB (0 where
    Snakemake could not measure it)."""
    with open(path) as fh:
        return [(float(row["s"]), float(row["max_rss"]) if row["max_rss"] not in ("", "-", "NA") else 0.0)
                for row in csv.DictReader(fh, delimiter="\t")]


def run_cost(results: Path, workdir: Path, only: set[str] | None = None, configfile: str | None = None,
             replicate: bool = False) -> dict:
    """``jobs``, ``job_seconds``, ``peak_rss_mb`` (the largest job's), ``results_mb`` and, where one
    invocation that ran at least as many steps as there are jobs left its log in ``<workdir>/.snakemake/log``,
    ``wall_seconds`` and ``cores`` (else, where a stopped run was resumed until every job ran, its invocations'
    wall times together, their number in ``invocations`` (:func:`_resumed`); else None: the run was refreshed in
    pieces). ``only``: the benchmark files counted (:func:`config_benchmarks`; default every one in the folder);
    ``configfile`` and ``replicate``: whose invocation's log counts (:func:`_invocations`; default any)."""
    results = Path(results)
    files = sorted(p for p in (results / "benchmarks").rglob("*.tsv")
                   if only is None or p.relative_to(results / "benchmarks").as_posix() in only)
    if not files:
        raise FileNotFoundError(f"{results / 'benchmarks'}: no benchmark files (run the workflow first)")
    seconds, rss = 0.0, 0.0
    for path in files:
        for s, r in benchmark_rows(path):
            seconds, rss = seconds + s, max(rss, r)
    size = sum(p.stat().st_size for p in results.rglob("*") if p.is_file()
               and "replication" not in p.relative_to(results).parts
               and (only is None or _output_of(p.relative_to(results), only)))
    runs = _invocations(Path(workdir) / ".snakemake" / "log", configfile, replicate)  # each log read once
    log = _finished_log(runs)
    out = {"jobs": len(files), "job_seconds": seconds, "peak_rss_mb": rss, "results_mb": size / 1e6,
           "wall_seconds": None, "cores": None}
    if log is not None and log[0] >= len(files):
        out.update(wall_seconds=log[1], cores=log[2])
    elif (resumed := _resumed(runs, len(files))) is not None:
        out.update(resumed)  # one run stopped and resumed: its invocations' wall times together
    elif log is not None:  # a run refreshed in pieces: no one invocation ran every job, say the largest's
        out["largest_invocation"] = {"steps": log[0], "wall_seconds": log[1], "cores": log[2]}
    return out


def _output_of(rel: Path, only: set[str]) -> bool:
    """Whether a file of the results folder is an output of one of the jobs whose benchmark files ``only`` names
    (``train/<run>.tsv``: ``runs/<run>/``; ``dataset/<name>.tsv``: ``datasets/<name>.h5``; ``figures/<f>.tsv``:
    ``figures/<f>.*``; ``<analysis>/<name>.tsv``: ``analysis/<analysis>/<name>.h5``; the ledger at the top)."""
    parts = rel.parts
    if len(parts) == 1:
        return True  # the ledger and its tables
    top, name = parts[0], Path(parts[-1]).stem
    if top == "runs":
        return f"train/{parts[1]}.tsv" in only
    if top in ("datasets", "figures"):
        return f"{'dataset' if top == 'datasets' else 'figures'}/{name}.tsv" in only
    if top == "analysis" and len(parts) == 3:
        return f"{parts[1]}/{name}.tsv" in only
    return top in ("claims", "benchmarks", "logs")


def cost_text(cost: dict, machine: str | None = None) -> str:
    """A run's cost in words: the wall time of the one invocation that ran every job (where its log says it; or of
    the invocations that ran them in turn, a stopped run resumed; else that of the largest invocation, with its
    steps), the jobs, their seconds, the largest job's memory and the results' size; where the machine ran other
    work meanwhile (``shared``), that its times are upper bounds. ``machine``: the machine it ran on
    (:func:`.waits.machine`), named beside its cores."""
    largest = cost.get("largest_invocation")

    def cores(n) -> str:
        return f"{n} core" + ("" if n == 1 else "s") + (f" ({machine})" if machine else "")

    resumed = (f" in {cost['invocations']} invocations, each resuming where the last stopped"
               if cost.get("invocations", 1) > 1 else "")
    wall = (f"{cost['wall_seconds'] / 60:.0f} minutes on {cores(cost['cores'])}{resumed}" if cost["wall_seconds"] is not None
            else "no log of one invocation that ran every job" + (
                f" (the largest ran {largest['steps']} steps in {largest['wall_seconds'] / 60:.0f} minutes on "
                f"{cores(largest['cores'])}; the jobs added since ran on their own)" if largest else ""))
    return (f"{wall}: {cost['jobs']} jobs, {cost['job_seconds']:,.0f} job-seconds, the largest job "
            f"{cost['peak_rss_mb'] / 1e3:.2f} GB resident, {cost['results_mb']:,.0f} MB of results"
            + (" (measured while the machine ran other work too: the times are upper bounds)"
               if cost.get("shared") else ""))


def cost_row(cost: dict, machine: str | None = None) -> str:
    """The README's table row for the full reproduction (``machine``: the one it ran on, where known)."""
    return (f"| the full reproduction | {cost_text(cost, machine)} (the kept run's benchmark files and Snakemake "
            "log) |")


# --- scheduling: the longest chains of training first ---------------------------------------------------------

def recipe_digest(cfg, run: str) -> str:
    """A run's recipe (its config slice: run, model, dataset, device, start epoch) as a short digest, the key under
    which its measured seconds are kept: a run of another recipe is not assumed to cost the same."""
    from ..plumbing.values import slice_hash

    return slice_hash(cfg.run_slice(run))


def train_seconds(results: Path, cfg) -> dict[str, list]:
    """``{run: [seconds, recipe digest]}`` of every training job of ``cfg`` whose benchmark file ``results``
    holds: what :func:`train_priorities` reads back from the kept statistics."""
    out = {}
    for run in cfg.runs:
        path = Path(results) / "benchmarks" / "train" / f"{run}.tsv"
        if path.exists():
            seconds = sum(s for s, _ in benchmark_rows(path))
            out[run] = [round(seconds, 1), recipe_digest(cfg, run)]
    return out


def measured_seconds(kept_dir: Path) -> dict[str, float]:
    """Recipe digest -> seconds, from the ``train_seconds`` of every kept statistics file in ``kept_dir`` (where two
    measured one recipe, a run on free cores over one that shared its machine, then the last file's by name);
    empty where none was kept."""
    import json

    kept = [json.loads(p.read_text()) for p in sorted(Path(kept_dir).glob("*.json"))]
    out: dict[str, float] = {}
    for doc in sorted(kept, key=lambda d: not d.get("cost", {}).get("shared")):  # the shared ones first, overridden
        for seconds, digest in doc.get("train_seconds", {}).values():
            out[digest] = float(seconds)
    return out


def work(cfg, run: str) -> float:
    """A rough size of a run's training, for the order of jobs none measured: its optimizer steps (epochs x steps
    per epoch; an online task's epoch is one step) times a fixed cost per step (the seeds train in one batched
    step) plus the tokens the step reads over every slot: steps x (1 + slots x examples x tokens / 10^4)."""
    from ..plumbing import jobs

    rc = cfg.runs[run]
    shape = cfg.dataset_shape(rc.dataset)
    n_train = int(shape.get("n_train") or 1)
    batch = n_train if rc.batch_size == "full" else min(int(rc.batch_size), n_train)
    per_epoch = 1 if jobs.online(cfg, run) else -(-n_train // batch)
    return rc.epochs * per_epoch * (1.0 + len(rc.slots()) * batch * int(shape.get("T") or 1) / 1e4)


def train_priorities(cfg, measured: dict[str, float]) -> dict[str, int]:
    """Each training run's scheduling priority: the seconds of the longest chain of training jobs that starts
    with it (its own and, after it, those of the runs that start from its weights, ``init_from``). A run's own
    seconds are those measured for its recipe (``measured``: :func:`measured_seconds`); a run of a recipe none
    measured is estimated by :func:`work` at the median seconds per unit of work of the measured runs (1 ms where
    none was). Snakemake starts the ready job of highest priority first, so the longest chains start first and
    the run does not end on one long job with the other cores idle."""
    known = {r: measured[d] for r in cfg.runs if (d := recipe_digest(cfg, r)) in measured}
    rates = sorted(known[r] / work(cfg, r) for r in known)
    rate = rates[len(rates) // 2] if rates else 1e-3
    own = {r: known.get(r, rate * work(cfg, r)) for r in cfg.runs}
    children: dict[str, list[str]] = {r: [] for r in cfg.runs}
    for r, rc in cfg.runs.items():
        if rc.init_from is not None:
            children[rc.init_from].append(r)
    chain: dict[str, float] = {}

    def longest(run):
        if run not in chain:
            chain[run] = own[run] + max((longest(c) for c in children[run]), default=0.0)
        return chain[run]

    return {r: int(round(longest(r))) for r in cfg.runs}


def dataset_priorities(cfg, train: dict[str, int]) -> dict[str, int]:
    """Each dataset job's priority: one above the highest priority of the training runs that read it
    (:func:`train_priorities`), so that the data of the longest chains are made before other ready training
    starts (Snakemake does not pass a job's priority on to the jobs it waits for); 0 for a dataset no run reads."""
    out = {d: 0 for d in cfg.datasets}
    for run, rc in cfg.runs.items():
        out[rc.dataset] = max(out[rc.dataset], train[run] + 1)
    return out
