# Thin adapter: Snakemake job -> pipeline_lib stage. stderr (tracebacks included) goes to the log.
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from pipeline_lib.config import load_config  # noqa: E402
from pipeline_lib.stages.param_embed import param_embed_stage  # noqa: E402

param_embed_stage(load_config(snakemake.config), snakemake.wildcards.embed, dict(snakemake.input.items()),
                  snakemake.output[0])
