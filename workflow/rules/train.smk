rule train:
    input:
        unpack(train_inputs),
    output:
        trajectory="results/runs/{run}/trajectory.h5",
        weights="results/runs/{run}/weights.h5",
    log:
        "results/logs/train/{run}.log",
    benchmark:
        "results/benchmarks/train/{run}.tsv"
    threads: 1
    resources:
        runtime=120,
        mem_mb=4000,
    params:
        config=lambda wc: canonical_json(CFG.run_slice(wc.run)),
        code=lambda wc: jobs.train_code(CFG, wc.run),
    script:
        "../scripts/train.py"
