"""The published results page of a config that draws ``eureka_table`` (``docs/<config>.md``): written by
``publish`` from the config's kept statistics and its own file, so that no number on it is copied by hand and a
rerun refreshes all of them. Beside the config's ledger (its verdicts), the page holds the table itself, the
settings as the config's header states them, where NormSoftmax's cap binds, and what the run cost."""
from __future__ import annotations

from pathlib import Path

from .cost import cost_text

FIGURE = "eureka_table"  # the figure whose presence gives a kept config its results page
CAP = "eureka_norm_cap"


def has_table_page(kept: dict) -> bool:
    return FIGURE in kept["figures"]


def header_comment(config_file: Path) -> list[str]:
    """The config file's opening comment block, without its '#' marks: the settings in the config's own words."""
    lines = []
    for line in Path(config_file).read_text().splitlines():
        if not line.startswith("#"):
            break
        lines.append(line[1:].removeprefix(" "))
    return lines


def _cap_table(cap: dict, order: list[tuple[str, str]]) -> list[str]:
    """Per experiment and arm (in ``order``, the table's (experiment, variant) rows, then any other), the share of
    attention rows whose score spread passes tau (the cap of Eq. 2, min(std, tau), then binds): at the last weight
    snapshot and averaged over the snapshots, medians over seeds."""
    lines = ["| experiment | arm | attention | cap binds, last snapshot (median over seeds) | cap binds, mean over the "
             "weight snapshots (median over seeds) |", "|---|---|---|---:|---:|"]
    pairs = [(e, a) for e, arms in cap.items() if isinstance(arms, dict) for a in arms]
    rank = {pair: i for i, pair in enumerate(order)}
    for exp, arm in sorted(pairs, key=lambda p: rank.get(p, len(rank))):
        s = cap[exp][arm]
        lines.append(f"| {exp} | {arm} | {s['variant']} | {s['final_median']:.2f} | {s['mean_median']:.2f} |")
    return lines


def table_markdown(kept: dict, root: Path, ledger: str) -> str:
    """The page of ``kept`` (a kept config that draws eureka_table); ``ledger``: its ledger's file name."""
    config = kept["config"]
    stats = kept["figures"][FIGURE]["stats"]
    from ..figures.eureka_table import COLUMNS as columns  # the figure's own order (kept rows are sorted by key)

    lines = [f"# Eureka-Moments' table: `{config}`", "",
             f"The table of the config's kept run, its verdicts in [{ledger}]({ledger}). Eureka-ratio: the share of "
             "seeds whose test accuracy ever passes the experiment's threshold, with its Wilson 95% interval; "
             "'acc.' the mean final test accuracy of those seeds (Table 1's 'Acc.'); 'mean Eureka epoch' their mean "
             "first epoch above it. Rerun: `snakemake --cores all --configfile "
             f"{config}`, then `python -m pipeline_lib publish --keep <its results folder> --config {config}`.", ""]
    header = header_comment(root / config)
    if header:  # verbatim, as the file says it (its commands and line breaks kept)
        lines += ["## The config's header", "", "```text", *header, "```", ""]
    lines += ["## Table", "", "| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(r.get(c, "-")) for c in columns) + " |" for r in stats["rows"]]
    cap = kept["figures"].get(CAP, {}).get("stats")
    if cap:
        lines += ["", "## Where NormSoftmax's cap binds", "",
                  "The paper's Eq. 2 divides the scores by min(std, tau): the cap binds on a row whose scores' "
                  "standard deviation passes tau. The share of such rows is measured on every arm (a Softmax arm's "
                  "share says how often NormSoftmax at the same tau would bind).", "", *_cap_table(cap, [(r["experiment"], r["variant"]) for r in stats["rows"]])]
    lines += ["", "## Cost", "", cost_text(kept["cost"], kept.get("machine")) + ".", ""]
    return "\n".join(lines)
