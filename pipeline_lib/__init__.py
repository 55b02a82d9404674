"""Training-dynamics workflow library: config, tasks, models, engine, store, analyses, figures.

Everything a Snakemake rule runs lives here as a plain function (``pipeline_lib.stages``), so tests
call it without Snakemake. Importing the package is cheap: torch is imported only by the modules
that train or evaluate models.
"""
__version__ = "0.1.0"
