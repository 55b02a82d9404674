rule dataset:
    output:
        P.dataset("{dataset}"),
    log:
        P.log("dataset", "{dataset}"),
    benchmark:
        P.benchmark("dataset", "{dataset}")
    conda:
        "../envs/pipeline.yaml"
    resources:
        runtime=10,
        mem_mb=2000,
    params:
        config=lambda wc: canonical_json(CFG.dataset_slice(wc.dataset)),
        code=lambda wc: codes.dataset_code(CFG, wc.dataset),
    script:
        "../scripts/dataset.py"
