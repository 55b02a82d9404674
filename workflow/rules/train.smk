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
    wildcard_constraints:
        run=names_regex(jobs.train_runs(CFG, False)),
    priority: lambda wc: TRAIN_PRIORITY[wc.run]
    conda:
        "../envs/pipeline.yaml"
    threads: 1
    resources:
        runtime=120,
        mem_mb=4000,
    params:
        config=lambda wc: canonical_json(CFG.run_slice(wc.run)),
        code=lambda wc: codes.job_code(CFG, f"train {wc.run}"),
    script:
        "../scripts/train.py"


# Runs of online tasks (fresh samples every step, e.g. scan_snap): the engine's loop on fresh samples.
rule train_online:
    input:
        dataset=lambda wc: P.dataset(CFG.runs[wc.run].dataset),
    output:
        trajectory=P.trajectory("{run}"),
        weights=P.weights("{run}"),
    log:
        P.log("train", "{run}"),
    benchmark:
        P.benchmark("train", "{run}")
    wildcard_constraints:
        run=names_regex(jobs.train_runs(CFG, True)),
    priority: lambda wc: TRAIN_PRIORITY[wc.run]
    conda:
        "../envs/pipeline.yaml"
    threads: 1
    resources:
        runtime=30,
        mem_mb=4000,
    params:
        config=lambda wc: canonical_json(CFG.run_slice(wc.run)),
        code=lambda wc: codes.job_code(CFG, f"train {wc.run}"),
    script:
        "../scripts/train_online.py"
