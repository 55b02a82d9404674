# Thin adapter: Snakemake job -> pipeline_lib stage. stderr (tracebacks included) goes to the log.
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from pipeline_lib.config import load_config  # noqa: E402
from pipeline_lib.stages.figures import fig5_accuracy  # noqa: E402

pdf, png, sidecar = snakemake.output
fig5_accuracy(load_config(snakemake.config), dict(snakemake.input.items()), pdf, png, sidecar)
