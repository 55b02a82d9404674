# Thin adapter: Snakemake job -> the analysis stage (the rule is named after the analysis).
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from pipeline_lib.plumbing.config import checked_config  # noqa: E402
from pipeline_lib.stages.analysis import run_analysis  # noqa: E402

run_analysis(checked_config(snakemake.config), snakemake.rule, snakemake.wildcards.name, snakemake.output[0],
             threads=snakemake.threads, code=snakemake.params.code)
