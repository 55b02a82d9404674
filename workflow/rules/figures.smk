# One rule per configured figure, named after it (e.g. `snakemake fig5_accuracy`).
for fig in CFG.raw["figures"]:

    rule:
        name:
            fig
        input:
            data=jobs.figure_inputs(CFG, fig, P),
        output:
            figure_files(fig),
        log:
            P.log("figures", fig),
        benchmark:
            P.benchmark("figures", fig)
        conda:
            "../envs/pipeline.yaml"
        resources:
            runtime=20,
            mem_mb=4000,
        params:
            config=canonical_json(CFG.figure_slice(fig)),
            code=codes.job_code(CFG, f"figure {fig}"),
            caption=caption_digest(fig),
        script:
            "../scripts/figure.py"
