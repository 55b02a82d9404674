# Thin adapter: Snakemake job -> the figure stage (the rule is named after the figure).
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from pipeline_lib.config import load_config  # noqa: E402
from pipeline_lib.stages.figure import build_figure  # noqa: E402

caption = snakemake.input.get("caption")  # a figure without a caption file: its docstring
build_figure(load_config(snakemake.config), snakemake.rule, caption=caption if isinstance(caption, str) else None)
