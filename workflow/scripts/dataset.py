# Thin adapter: Snakemake job -> pipeline_lib stage. stderr (tracebacks included) goes to the log.
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from pipeline_lib.plumbing.config import checked_config  # noqa: E402
from pipeline_lib.stages.dataset import build_dataset  # noqa: E402

build_dataset(checked_config(snakemake.config), snakemake.wildcards.dataset, snakemake.output[0],
              code=snakemake.params.code)
