# Thin adapter: Snakemake job -> the figure stage (the rule is named after the figure).
import sys
from pathlib import Path

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from pipeline_lib.plumbing.config import checked_config  # noqa: E402
from pipeline_lib.stages.figure import build_figure  # noqa: E402

# the caption file beside this script's folder (its digest is a param); none: the figure module's docstring
caption = Path(snakemake.scriptdir).parent / "report" / f"{snakemake.rule}.txt"
build_figure(checked_config(snakemake.config), snakemake.rule, caption=str(caption) if caption.exists() else None,
             code=snakemake.params.code)
