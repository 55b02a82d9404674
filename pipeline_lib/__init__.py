"""Training-dynamics workflow library: config, tasks, models, engine, store, analyses, figures.

Everything a Snakemake rule runs lives here as a plain function (``pipeline_lib.stages``), so tests
call it without Snakemake. Importing the package is cheap: torch is imported only by the modules
that train or evaluate models. From a notebook: ``pipeline_lib.open_run(name)``, ``open_weights``,
``open_analysis``, ``model_at`` and ``runs`` (:mod:`pipeline_lib.api`).
"""
__version__ = "0.1.0"

# results from Python (pipeline_lib.api), imported on first use so that importing the package stays cheap
_API = ("open_run", "open_weights", "open_analysis", "model_at", "runs")


def __getattr__(name: str):
    if name in _API:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'pipeline_lib' has no attribute {name!r}")
