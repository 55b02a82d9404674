# Thin adapter: Snakemake job -> the figure's stage (the rule is named after the figure).
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from pipeline_lib.config import load_config  # noqa: E402
from pipeline_lib.stages.figure_registry import FIGURES  # noqa: E402

FIGURES[snakemake.rule](load_config(snakemake.config), dict(snakemake.input.items()), *snakemake.output)
