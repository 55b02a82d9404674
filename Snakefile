# The entry point: `snakemake` in the repository (or `snakemake -s Snakefile -d <dir>`) runs the workflow,
# which lives in workflow/Snakefile (the Snakemake workflow catalog's layout).


include: "workflow/Snakefile"


# Snakemake takes its default target from the main Snakefile: the workflow's `all`.
rule default:
    default_target: True
    input:
        rules.all.input,
