# One rule per configured figure, named after it (e.g. `snakemake fig5_accuracy`).
for fig in CFG.raw["figures"]:

    rule:
        name:
            fig
        input:
            jobs.figure_inputs(CFG, fig, P),
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
            code=jobs.figure_code(fig),
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
        code=jobs.report_code(),
    script:
        "../scripts/report.py"
