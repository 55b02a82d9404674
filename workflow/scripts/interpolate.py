# Thin adapter: Snakemake job -> pipeline_lib stage. stderr (tracebacks included) goes to the log.
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from pipeline_lib.config import load_config  # noqa: E402
from pipeline_lib.stages.interpolate import interpolate_stage  # noqa: E402

interpolate_stage(load_config(snakemake.config), snakemake.wildcards.interp, snakemake.input.a,
                  snakemake.input.b, snakemake.input.dataset, snakemake.output[0], snakemake.threads)
