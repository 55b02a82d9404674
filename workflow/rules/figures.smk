# One rule per configured figure, named after it (e.g. `snakemake fig5_accuracy`).
for fig in CFG.figures:

    rule:
        name:
            fig
        input:
            unpack(figure_inputs(fig)),
        output:
            figure_files(fig),
        log:
            f"results/logs/figures/{fig}.log",
        benchmark:
            f"results/benchmarks/figures/{fig}.tsv"
        resources:
            runtime=20,
            mem_mb=4000,
        params:
            config=canonical_json(CFG.figure_slice(fig)),
            code=code_hash(f"pipeline_lib.stages.figures.{fig}"),
        script:
            "../scripts/figure.py"


rule report:
    input:
        unpack(report_inputs),
    output:
        "results/report.html",
    log:
        "results/logs/report.log",
    params:
        code=code_hash("pipeline_lib.stages.report"),
    script:
        "../scripts/report.py"
