if "fig5_accuracy" in CFG.figures:

    rule fig5_accuracy:
        input:
            unpack(fig5_inputs),
        output:
            figure_files("fig5_accuracy"),
        log:
            "results/logs/figures/fig5_accuracy.log",
        resources:
            runtime=10,
            mem_mb=2000,
        params:
            config=canonical_json(CFG.figure_slice("fig5_accuracy")),
            code=code_hash("pipeline_lib.stages.figures"),
        script:
            "../scripts/fig5_accuracy.py"
