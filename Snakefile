# Training-dynamics workflow: datasets -> training (seeds batched) -> analyses -> figures.
# Rules live in workflow/rules/<stage>.smk; all logic lives in pipeline_lib (tested without Snakemake).
from snakemake.utils import min_version

min_version("9.0")


# Relative to the working directory: `--directory .test` runs .test/config/config.yaml. Files given
# with --configfile are merged into it (--replace-workflow-config: replace it), as Snakemake documents.
configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/dataset.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/analysis.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/claims.smk"


rule all:
    default_target: True
    input:
        all_targets(),
