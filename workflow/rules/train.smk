rule train:
    input:
        unpack(train_inputs),
    output:
        trajectory=P.trajectory("{run}"),
        weights=P.weights("{run}"),
    log:
        P.log("train", "{run}"),
    benchmark:
        P.benchmark("train", "{run}")
    threads: 1
    resources:
        runtime=120,
        mem_mb=4000,
    params:
        config=lambda wc: canonical_json(CFG.run_slice(wc.run)),
        code=lambda wc: jobs.train_code(CFG, wc.run),
    script:
        "../scripts/train.py"
