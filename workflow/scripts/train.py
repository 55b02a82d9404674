# Thin adapter: Snakemake job -> pipeline_lib stage. Progress bar on the terminal, lines in the log.
from pipeline_lib.plumbing.config import checked_config
from pipeline_lib.stages.train import train_run

train_run(
    checked_config(snakemake.config),
    snakemake.wildcards.run,
    dataset_path=snakemake.input.dataset,
    init_path=snakemake.input.get("init"),
    trajectory_path=snakemake.output.trajectory,
    weights_path=snakemake.output.weights,
    threads=snakemake.threads,
    log_path=snakemake.log[0],
    code=snakemake.params.code,
)
