"""``python -m pipeline_lib publish``: a finished run's ledger into ``docs/``, its verdict counts and cost into the
README's generated blocks."""
from __future__ import annotations

from pathlib import Path

from ..plumbing.config import load_config_file
from ..stages.claims import counts_table, read_csv
from .cost import COST_BEGIN, COST_END, config_benchmarks, cost_row, run_cost

README_BEGIN, README_END = "<!-- claims-counts: begin -->", "<!-- claims-counts: end -->"


def knife_edge_markdown(edge: list[dict]) -> str:
    """The ledger's note of its knife-edge verdicts (from the replicate's comparison, :func:`compare`)."""
    lines = ["", "## Knife-edge verdicts", "",
             f"{len(edge)} verdicts of this ledger changed on the replicate (disjoint seeds, another data draw) although "
             "the two estimates are consistent: read them as on the rule's edge, not as settled. From "
             "[claims_replication.md](claims_replication.md).", ""]
    lines += [f"- {r['id']}: {r['verdict']} here, {r['replicate_verdict']} on the replicate ({r['why']})" for r in edge]
    return "\n".join(lines) + "\n"


def publish(results: Path, root: Path) -> str:
    """Copy ``<results>/claims.md`` to ``<root>/docs/claims.md`` (the figure links made relative to the
    checkout) and write its verdict counts between the README's markers; with a replicate's comparison
    (``<results>/replication/claims.md``), copy it to ``docs/claims_replication.md``; returns what it did."""
    ledger, readme = results / "claims.csv", root / "README.md"
    if not ledger.exists():
        raise FileNotFoundError(f"{ledger}: run the workflow first (snakemake claims)")
    rows = read_csv(str(ledger))
    text = readme.read_text()
    if README_BEGIN not in text or README_END not in text:
        raise FileNotFoundError(f"{readme} has no {README_BEGIN} ... {README_END} block")
    head, rest = text.split(README_BEGIN, 1)
    readme.write_text(head + README_BEGIN + "\n" + counts_table(rows) + "\n" + README_END + rest.split(README_END, 1)[1])
    docs = root / "docs" / "claims.md"
    docs.parent.mkdir(exist_ok=True)
    rel = Path("..") / results / "figures"
    docs.write_text((results / "claims.md").read_text().replace("](figures/", f"]({rel.as_posix()}/"))
    done = f"wrote {docs} and the verdict counts of {readme} ({len(rows)} claims)"
    if (results / "claims_coverage.md").exists():
        (root / "docs" / "claims_coverage.md").write_text((results / "claims_coverage.md").read_text())
        done += "; copied the coverage table to docs/claims_coverage.md"
    if (results / "benchmarks").is_dir():  # the full reproduction's cost, in the README's table of waits
        text = readme.read_text()
        if COST_BEGIN in text and COST_END in text:
            head, rest = text.split(COST_BEGIN, 1)
            block, tail = rest.split(COST_END, 1)
            # the default config's jobs only: an overlay run into the same folder is not the full reproduction
            default = root / "config" / "config.yaml"
            only = config_benchmarks(load_config_file(default)) if default.exists() else None
            row = cost_row(run_cost(results, root, only))
            block = "\n".join(row if line.startswith("| the full reproduction |") else line for line in block.split("\n"))
            readme.write_text(head + COST_BEGIN + block + COST_END + tail)
            done += f"; the full reproduction's cost: {row.split('|')[2].strip()}"
    replicate = results / "replication" / "claims.md"  # the replicate's comparison, where one ran
    if replicate.exists() and replicate.with_suffix(".csv").exists():
        table = read_csv(str(replicate.with_suffix(".csv")))
        now = {r["id"]: r["verdict"] for r in rows}
        stale = [r["id"] for r in table if r["id"] in now and r["verdict"] != now[r["id"]]]
        if stale:  # compared with another ledger than this one: neither copied nor marked
            return done + (f"; {replicate} was compared with another ledger ({len(stale)} verdicts differ, e.g. "
                           f"{stale[0]}): not copied; rerun `snakemake --config replicate=true` to refresh it")
        (root / "docs" / "claims_replication.md").write_text(replicate.read_text())
        done += f"; copied {replicate} to docs/claims_replication.md"
        edge = [r for r in table if r.get("knife_edge") == "yes"]
        docs.write_text(docs.read_text() + knife_edge_markdown(edge))
        done += f"; marked {len(edge)} knife-edge verdicts in {docs}"
    return done
