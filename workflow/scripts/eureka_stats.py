# Thin adapter: Snakemake job -> pipeline_lib stage. stderr (tracebacks included) goes to the log.
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from pipeline_lib.config import load_config  # noqa: E402
from pipeline_lib.stages.eureka_stats import eureka_stats  # noqa: E402

eureka_stats(load_config(snakemake.config), snakemake.wildcards.experiment, dict(snakemake.input.items()),
             snakemake.output[0])
