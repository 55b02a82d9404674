# Thin adapter: Snakemake job -> the claims stage.
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from pipeline_lib.plumbing.config import checked_config  # noqa: E402
from pipeline_lib.stages.claims import run_claims  # noqa: E402

cfg = checked_config(snakemake.config)
sidecars = {fig: cfg.paths.figure(fig, ".json") for fig in cfg.raw["figures"]}
run_claims(sidecars, cfg.figures, snakemake.output.csv, snakemake.output.md, cfg.paths,
           original=snakemake.input.original or None, code=snakemake.params.code)
