rule dataset:
    output:
        P.dataset("{dataset}"),
    log:
        P.log("dataset", "{dataset}"),
    benchmark:
        P.benchmark("dataset", "{dataset}")
    priority: lambda wc: DATASET_PRIORITY[wc.dataset]
    conda:
        "../envs/pipeline.yaml"
    resources:
        runtime=10,
        mem_mb=2000,
    params:
        config=lambda wc: canonical_json(CFG.dataset_slice(wc.dataset)),
        code=lambda wc: codes.job_code(CFG, f"dataset {wc.dataset}"),
    script:
        "../scripts/dataset.py"
