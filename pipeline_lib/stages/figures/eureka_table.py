"""Figure stage eureka_table: the paper's Table 1 from the eureka_stats artifacts (also CSV and Markdown)."""
from __future__ import annotations

import csv
from pathlib import Path

from ...config import Config
from ...figures.eureka_table import COLUMNS, plot_eureka_table, table_rows, to_markdown
from ...store import atomic_path, read_dataset
from . import figure_provenance, save_figure

NAME = "eureka_table"


def build(cfg: Config, inputs: dict[str, str], pdf: str, png: str, sidecar: str, csv_path: str, md_path: str) -> dict:
    fc = cfg.figures[NAME]
    stats_ds = {exp: read_dataset(inputs[f"eureka_{exp}"], rule="eureka_stats") for exp in fc.experiments}
    rows = table_rows(stats_ds)
    with atomic_path(csv_path) as tmp, open(tmp, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(COLUMNS)
        writer.writerows(rows)
    with atomic_path(md_path) as tmp:
        Path(tmp).write_text(to_markdown(rows))
    stats = {"rows": [dict(zip(COLUMNS, r)) for r in rows]}
    stats["summary"] = "; ".join(f"{r[0]} {r[1]}: Eureka {r[3]} {r[4]}, mean epoch {r[7]}" for r in rows)
    save_figure(plot_eureka_table(rows), stats, figure_provenance(cfg, NAME, inputs, __name__), pdf, png, sidecar)
    return stats
