"""Command line: ``python -m pipeline_lib lineage <artifact>``, ``runs [results]``, ``publish [results]``, ``golden [results]``,
``same BEFORE AFTER``, ``equivalent --since REV --why TEXT`` (runs the test config at both revisions) (the engine's benchmark: ``python benchmarks/bench.py``)."""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m pipeline_lib")
    sub = ap.add_subparsers(dest="command", required=True)
    lin = sub.add_parser("lineage", help="print the chain from an artifact back to its datasets, checked against disk")
    lin.add_argument("artifact", help="an HDF5 artifact or a figure (.pdf/.png/.json) under results/")
    lin.add_argument("--json", action="store_true", help="machine-readable output")
    pub = sub.add_parser("publish", help="copy a results folder's claims ledger to docs/claims.md and refresh the "
                                         "README's verdict counts from it")
    pub.add_argument("results", nargs="?", default="results", help="the results folder (default: results)")
    pub.add_argument("--root", default=".", help="the checkout (default: the working directory)")
    gold = sub.add_parser("golden", help="compare a results folder's artifacts to the stored golden digests, or "
                                         "rewrite them (--write) after an intended change of numbers")
    gold.add_argument("results", nargs="?", default=".test/results", help="default: .test/results")
    gold.add_argument("--digests", default="tests/golden/test_config.json", help="default: %(default)s")
    gold.add_argument("--write", action="store_true", help="rewrite the digests from the results folder, with this "
                                                           "machine's fingerprint")
    gold.add_argument("--measure", action="store_true",
                      help="with --write: first run the test config here (into the results folder), then once per "
                           "kernel perturbation (another vector width, MKL mode, one thread) under --scratch, and "
                           "store each variable's spread (the cross-machine tolerance); about 25 minutes on 2 cores")
    gold.add_argument("--scratch", default=".test/golden-perturbed",
                      help="where --measure runs the perturbed copies (default: %(default)s)")
    same = sub.add_parser("same", help="check that every HDF5 artifact of one results folder is equal bit for bit "
                                       "in another (a restructure's before and after)")
    same.add_argument("before", help="the results folder written by the old code")
    same.add_argument("after", help="the results folder written by the new code")
    same.add_argument("--only", default="", help="a subfolder to compare, e.g. runs (default: all)")
    eq = sub.add_parser("equivalent", help="run the test config with the code of a git revision and with the "
                                           "working tree and, if every artifact is identical, record every module "
                                           "that changed since as equivalent to its code there")
    eq.add_argument("--since", required=True, help="the git revision whose code computes the same numbers")
    eq.add_argument("--why", required=True, help="what the refactor changed")
    eq.add_argument("--scratch", default=".test/equivalence",
                    help="where the test config runs with both revisions' code (default: %(default)s)")
    runs = sub.add_parser("runs", help="list the trained runs of a results folder with their final metrics")
    runs.add_argument("results", nargs="?", default="results", help="the results folder (default: results)")
    runs.add_argument("--json", action="store_true", help="machine-readable output")
    return ap


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "golden":
        return _golden(Path(args.results), Path(args.digests), args.write, args.measure, Path(args.scratch))
    if args.command == "same":
        return _same(Path(args.before), Path(args.after), args.only)
    if args.command == "equivalent":
        return _equivalent(args.since, args.why, Path(args.scratch))
    if args.command == "publish":
        from .stages.claims import publish

        try:
            print(publish(Path(args.results), Path(args.root)))
        except FileNotFoundError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        return 0
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


def _golden(results: Path, digests: Path, write: bool, measure: bool = False, scratch: Path = Path()) -> int:
    from .plumbing import golden

    if measure and not write:
        print("error: --measure rewrites the digests: give --write too", file=sys.stderr)
        return 2
    if write:
        perturbed = {}
        if measure:
            repo = Path(__file__).resolve().parents[1]
            if results.resolve() != (repo / ".test" / "results").resolve():
                print(f"error: --measure runs the test config, whose results are {repo / '.test' / 'results'}, "
                      f"not {results}", file=sys.stderr)
                return 2
            print("golden: the test config, unperturbed ...")
            try:
                golden.run_test_config(repo, scratch / "unperturbed")
                shutil.rmtree(results, ignore_errors=True)
                shutil.copytree(scratch / "unperturbed" / "results", results)
                perturbed = golden.measure(repo, scratch)
            except RuntimeError as exc:
                print(f"error: {exc}", file=sys.stderr)
                return 1
        elif not results.is_dir():
            print(f"error: {results} is not a results folder", file=sys.stderr)
            return 2
        n = golden.write(results, digests, perturbed)
        print(f"{digests}: the digests of {n} artifacts of {results}"
              + (f", with their spread over {', '.join(perturbed)}" if perturbed else
                 " (no spread measured: on other machines every variable is checked by its size only; "
                 "--measure measures it)"))
        return 0
    if not results.is_dir():
        print(f"error: {results} is not a results folder", file=sys.stderr)
        return 2
    if not digests.exists():
        print(f"error: {digests} does not exist (write it with --write --measure)", file=sys.stderr)
        return 2
    try:
        doc = golden.load(digests)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    differs = golden.fingerprint_diff(doc["fingerprint"], golden.fingerprint())
    if differs:
        print("the digests were written on another machine (" + "; ".join(differs) + "): compared within each "
              "variable's measured spread")
        diff = golden.compare_across(doc["artifacts"], golden.digest(results), measured=bool(doc["perturbations"]))
        for kind in ("exact", "within", "size_only"):
            for line in diff.pop(kind):
                print(f"{kind}: {line}")
    else:
        diff = golden.compare(doc["artifacts"], golden.digest(results))
    for kind, lines in diff.items():
        for line in lines:
            print(f"{kind}: {line}")
    return 1 if any(diff.values()) else 0


def _equivalent(since: str, why: str, scratch: Path) -> int:
    from .plumbing import equivalence, refactor

    checkout = Path.cwd()
    try:
        rev = equivalence.resolve(since, checkout)
        entries, removed, uncovered, modules = refactor.plan(rev, checkout)
        for module in uncovered:
            print(f"not recorded: {module} changed, but no job of the test config runs it (jobs that hold it rerun)")
        for module in removed:
            print(f"removed: {module} (jobs whose code held it rerun)")
        if not entries:
            print(f"no module that the test config runs changed since {rev[:12]}: nothing recorded")
            return 0
        n = refactor.verify(rev, checkout, scratch)
    except RuntimeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    verified = (f"the test config with the code of {rev[:12]} and with the working tree: {n} artifacts identical "
                "(data, coordinates, attributes, figure statistics and verdicts)")
    gid = equivalence.record(entries, rev, why, verified, modules=modules)
    print(f"recorded {len(entries)} module(s) as equivalent to their code at {rev[:12]} (refactor {gid}: "
          f"{verified}): {', '.join(sorted(entries))}")
    rerun = refactor.still_rerun(rev, checkout)
    print(f"jobs of the shipped configs whose code hash still differs from {rev[:12]}'s: {len(rerun)}"
          + "".join(f"\n  {job}" for job in rerun[:40]))
    return 0


def _same(before: Path, after: Path, only: str) -> int:
    from .plumbing import golden

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
