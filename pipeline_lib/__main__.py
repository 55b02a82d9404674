"""Command line: ``python -m pipeline_lib lineage <artifact>``, ``runs [results]``, ``publish [--keep RESULTS]``,
``everything [-- snakemake args]``, ``timed NAME [-- command]``, ``lock [--new-numbers]``, ``golden [results] [--write]``, ``same BEFORE AFTER`` (the engine's benchmark:
``python benchmarks/bench.py``)."""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from .build.waits import ROWS as WAIT_ROWS  # the standard library's alone: `timed` runs before any install


def _publish_parser(sub) -> None:
    """The ``publish`` command and its arguments (its own function: the parser stays short)."""
    pub = sub.add_parser("publish", help="re-score the published ledgers from the statistics kept in docs/stats and "
                                         "refresh docs/claims.md, the coverage table and the README's generated blocks "
                                         "(no results folder, no training)")
    pub.add_argument("--keep", metavar="RESULTS", help="first keep the statistics and cost of a finished run's results "
                                                      "folder (e.g. results)")
    pub.add_argument("--config", default="config/config.yaml", help="the config RESULTS was run with (default: "
                                                                     "%(default)s)")
    pub.add_argument("--replicate", action="store_true", help="RESULTS is the replicate of --config "
                                                              "(snakemake --config replicate=true: results/replication)")
    pub.add_argument("--rerun", action="store_true", help="RESULTS ran --config's seeds again on another machine: "
                                                          "keep it beside the first run (docs/stats/<config>-rerun[-N].json), "
                                                          "so that a verdict the machines do not all share is undecided")
    pub.add_argument("--earlier-as-rerun", action="store_true",
                     help="with --keep: the config's kept run that RESULTS replaces was made on another machine; keep "
                          "it beside RESULTS's as that machine's rerun (docs/stats/<config>-rerun[-N].json) so that a "
                          "verdict the two machines do not share is undecided")
    pub.add_argument("--shared", action="store_true", help="the machine ran other work during RESULTS's run: its "
                                                          "times are kept as upper bounds, and said so")
    pub.add_argument("--figures", nargs="+", metavar="FIGURE", help="with --keep: keep only these figures' statistics "
                     "from RESULTS in the config's kept file (its cost and other figures stay), e.g. after `snakemake "
                     "joma_odes` rebuilt a figure that needs no training")


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m pipeline_lib")
    sub = ap.add_subparsers(dest="command", required=True)
    lin = sub.add_parser("lineage", help="print the chain from an artifact back to its datasets, checked against disk")
    lin.add_argument("artifact", help="an HDF5 artifact or a figure (.pdf/.png/.json) under results/")
    lin.add_argument("--json", action="store_true", help="machine-readable output")
    _publish_parser(sub)
    every = sub.add_parser("everything", help="run every shipped config and the default's replicate through "
                                              "Snakemake, one after another, keeping and publishing each as it "
                                              "finishes; arguments after -- go to each snakemake call (e.g. "
                                              "-- --cores all, or -- --profile profiles/slurm)")
    every.add_argument("--only", default="", help="config names to run, comma-separated (default: every one)")
    every.add_argument("--skip", default="", help="config names to leave out, e.g. the paper-scale ones on a CPU: "
                                                  "eureka_paper,eureka_long,cogo_paper,shortest_path_paper")
    every.add_argument("--no-replicate", action="store_true", help="leave out the default config's replicate")
    every.add_argument("--dry-run", action="store_true", help="print the snakemake calls, run nothing")
    lk = sub.add_parser("lock", help="record the hashed code's changes in pipeline_lib/code.lock: a refactor after "
                                     "verifying it on the test config (nothing reruns), or --new-numbers")
    lk.add_argument("--new-numbers", action="store_true",
                    help="the change is meant to move numbers: no verification, its jobs rerun everywhere")
    lk.add_argument("--scratch", default=".test/lock",
                    help="where the test config runs with HEAD's code and the working tree (default: %(default)s)")
    gold = sub.add_parser("golden", help="compare the test config's results with this machine's golden digests, or "
                                         "write them (--write)")
    gold.add_argument("results", nargs="?", default=".test/results", help="default: .test/results")
    gold.add_argument("--write", action="store_true",
                      help="run the test config from scratch (about 3.5 minutes on 2 cores) and write this machine's "
                           "digests, tests/golden/<fingerprint>.json")
    gold.add_argument("--scratch", default=".test/golden", help="where --write runs it (default: %(default)s)")
    same = sub.add_parser("same", help="check that every HDF5 artifact of one results folder is equal bit for bit "
                                       "in another (a restructure's before and after)")
    same.add_argument("before", help="the results folder written by the old code")
    same.add_argument("after", help="the results folder written by the new code")
    same.add_argument("--only", default="", help="a subfolder to compare, e.g. runs (default: all)")
    tm = sub.add_parser("timed", help="time a README wait (install, suite, tour) and keep it in docs/waits.json, "
                                      "which the README's cost table is generated from: run the command after --, "
                                      "or keep --seconds measured outside")
    tm.add_argument("name", choices=list(WAIT_ROWS), help="the README row")
    tm.add_argument("--seconds", type=float, help="a wall time measured outside (then no command is run)")
    tm.add_argument("--what", default="", help="with --seconds: the command that was timed, as the README shows it")
    runs = sub.add_parser("runs", help="list the trained runs of a results folder with their final metrics")
    runs.add_argument("results", nargs="?", default="results", help="the results folder (default: results)")
    runs.add_argument("--json", action="store_true", help="machine-readable output")
    return ap


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    cut = argv.index("--") if "--" in argv else len(argv)  # what follows "--": snakemake's (everything), the command (timed)
    args, extra = _parser().parse_args(argv[:cut]), argv[cut + 1:]
    if args.command == "everything":
        return _everything(args, extra)
    if args.command == "lock":
        return _lock(args.new_numbers, Path(args.scratch))
    if args.command == "golden":
        return _golden(Path(args.results), args.write, Path(args.scratch))
    if args.command == "same":
        return _same(Path(args.before), Path(args.after), args.only)
    if args.command == "publish":
        from .build.publish import publish

        try:
            if args.figures and not args.keep:
                raise FileNotFoundError("--figures names the figures to keep from a results folder: give --keep RESULTS")
            if args.earlier_as_rerun and not args.keep:
                raise FileNotFoundError("--earlier-as-rerun sets aside the kept run that a new one replaces: give "
                                        "--keep RESULTS")
            print("\n".join(publish(keep_from=Path(args.keep) if args.keep else None, config=args.config,
                                     replicate=args.replicate, rerun=args.rerun, shared=args.shared,
                                     only=args.figures, earlier=args.earlier_as_rerun)))
        except (FileNotFoundError, ValueError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        return 0
    if args.command == "timed":
        return _timed(args.name, args.seconds, args.what, extra)
    if args.command == "runs":
        from .api import format_runs, runs

        if not Path(args.results).is_dir():
            print(f"error: {args.results} is not a results folder", file=sys.stderr)
            return 2
        rows = runs(args.results)
        print(json.dumps(rows, indent=2) if args.json else format_runs(rows))
        return 0
    if args.command == "lineage":
        from .plumbing.lineage import format_lineage, lineage, root_of

        path = Path(args.artifact)
        if not path.exists() and not path.with_suffix(".json").exists():
            print(f"error: {path} does not exist", file=sys.stderr)
            return 2
        nodes = lineage(path)
        if args.json:
            print(json.dumps([{"path": str(n.path), "depth": n.depth, "status": n.status,
                               "sha256": n.current_sha256, "recorded_sha256": n.recorded_sha256,
                               "provenance": n.provenance} for n in nodes], indent=2, default=str))
        else:
            print(format_lineage(nodes, root_of(path)))
        return 0 if all(n.status == "ok" for n in nodes) else 1
    return 2


def _everything(args, extra: list[str]) -> int:
    from .build.everything import plan, run

    names = lambda text: [n for n in text.split(",") if n]  # noqa: E731
    try:
        steps = plan(only=names(args.only) or None, skip=names(args.skip), replicate=not args.no_replicate)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 1 if run(steps, extra or ["--cores", "all"], dry_run=args.dry_run) else 0


def _timed(name: str, seconds: float | None, what: str, command: list[str]) -> int:
    from .build.waits import keep, timed

    if (seconds is None) == (not command) or (what and seconds is None):
        print("error: timed NAME takes either a command after -- or --seconds S [--what CMD]", file=sys.stderr)
        return 2
    try:
        if seconds is not None:
            print(f"kept {keep(name, seconds, what or 'timed outside')}")
            return 0
        rc, took = timed(name, command)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{name}: {took:.0f} s, exit status {rc}" + ("" if rc else "; kept, run `python -m pipeline_lib publish`"))
    return rc


def _lock(new_numbers: bool, scratch: Path) -> int:
    from .build.verify import LockError, lock

    try:
        for line in lock(new_numbers=new_numbers, scratch=scratch.resolve()):
            print(line)
    except LockError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


def _golden(results: Path, write: bool, scratch: Path) -> int:
    from .build import golden
    from .build.verify import LockError, run_test_config

    if write:
        print(f"golden: the test config from scratch in {scratch} ...")
        shutil.rmtree(scratch, ignore_errors=True)
        try:
            results = run_test_config(golden.ROOT, scratch)
        except LockError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        print(f"wrote {golden.write(results)} from {results}")
        return 0
    if not results.is_dir():
        print(f"error: {results} is not a results folder", file=sys.stderr)
        return 2
    path = golden.golden_path()
    if not path.exists():
        print(f"error: this machine has no golden digests ({path}); write them with --write", file=sys.stderr)
        return 2
    diff = golden.compare(golden.load(path)["artifacts"], golden.digest(results))
    for kind in ("moved", "stale", "missing", "new"):
        for line in diff[kind]:
            print(f"{kind}: {line}")
    print(f"{len(diff['same'])} artifact(s) equal, {len(diff['moved'])} moved, {len(diff['stale'])} stale")
    return 1 if diff["moved"] else 0


def _same(before: Path, after: Path, only: str) -> int:
    from .build import golden

    for folder in (before, after):
        if not folder.is_dir():
            print(f"error: {folder} is not a results folder", file=sys.stderr)
            return 2
    diff = golden.identical(before, after, only)
    for kind in ("differ", "missing"):
        for line in diff[kind]:
            print(f"{kind}: {line}")
    print(f"{len(diff['same'])} artifact(s) identical, {len(diff['differ'])} differ, {len(diff['missing'])} missing")
    return 1 if diff["differ"] or diff["missing"] or not diff["same"] else 0


if __name__ == "__main__":
    sys.exit(main())
