# Thin adapter: Snakemake job -> pipeline_lib stage (runs of online tasks).
from pipeline_lib.plumbing.config import checked_config
from pipeline_lib.stages.train_online import train_online_run

train_online_run(
    checked_config(snakemake.config),
    snakemake.wildcards.run,
    dataset_path=snakemake.input.dataset,
    trajectory_path=snakemake.output.trajectory,
    weights_path=snakemake.output.weights,
    threads=snakemake.threads,
    log_path=snakemake.log[0],
    code=snakemake.params.code,
)
