rule dataset:
    output:
        "results/datasets/{dataset}.h5",
    log:
        "results/logs/dataset/{dataset}.log",
    benchmark:
        "results/benchmarks/dataset/{dataset}.tsv"
    resources:
        runtime=10,
        mem_mb=2000,
    params:
        config=lambda wc: canonical_json(CFG.dataset_slice(wc.dataset)),
        code=lambda wc: jobs.dataset_code(CFG, wc.dataset),
    script:
        "../scripts/dataset.py"
