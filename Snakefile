# The entry point: `snakemake` in the repository (or `snakemake -s Snakefile -d <dir>`) runs the workflow,
# which lives in workflow/Snakefile (the Snakemake workflow catalog's layout).


include: "workflow/Snakefile"


# Snakemake keeps the main file's default target across an include: the workflow's `all` is it.
workflow.default_target = "all"
