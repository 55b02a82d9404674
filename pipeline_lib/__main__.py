"""Command line: ``python -m pipeline_lib lineage <artifact>``, ``python -m pipeline_lib publish [results]`` (and
``python -m pipeline_lib.bench``)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pipeline_lib")
    sub = ap.add_subparsers(dest="command", required=True)
    lin = sub.add_parser("lineage", help="print the chain from an artifact back to its datasets, checked against disk")
    lin.add_argument("artifact", help="an HDF5 artifact or a figure (.pdf/.png/.json) under results/")
    lin.add_argument("--json", action="store_true", help="machine-readable output")
    pub = sub.add_parser("publish", help="copy a results folder's claims ledger to docs/claims.md and refresh the "
                                         "README's verdict counts from it")
    pub.add_argument("results", nargs="?", default="results", help="the results folder (default: results)")
    pub.add_argument("--root", default=".", help="the checkout (default: the working directory)")
    args = ap.parse_args(argv)
    if args.command == "publish":
        from .stages.claims import publish

        try:
            print(publish(Path(args.results), Path(args.root)))
        except FileNotFoundError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        return 0
    if args.command == "lineage":
        from .lineage import _root_of, format_lineage, lineage

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
            print(format_lineage(nodes, _root_of(path)))
        return 0 if all(n.status == "ok" for n in nodes) else 1
    return 2


if __name__ == "__main__":
    sys.exit(main())
