# Thin adapter: Snakemake job -> pipeline_lib stage. stderr (tracebacks included) goes to the log.
import sys
from pathlib import Path

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from pipeline_lib.stages.report import build_report  # noqa: E402

pngs = [f for f in snakemake.input.figures if f.endswith(".png")]
captions = {Path(c).stem: c for c in snakemake.input.captions}  # a figure without one: its docstring
figures = [(Path(p).stem, p, p[:-4] + ".json", captions.get(Path(p).stem)) for p in pngs]
build_report(figures, snakemake.output[0])
