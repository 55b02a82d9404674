# Thin adapter: Snakemake job -> pipeline_lib stage. stderr (tracebacks included) goes to the log.
import importlib
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from pipeline_lib.config import load_config  # noqa: E402
from pipeline_lib.stages.kinds import DATASET_STAGES  # noqa: E402

cfg = load_config(snakemake.config)
stage = importlib.import_module(DATASET_STAGES[cfg.datasets[snakemake.wildcards.dataset].task])
stage.build_dataset(cfg, snakemake.wildcards.dataset, snakemake.output[0])
