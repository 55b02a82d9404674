rule interpolate:
    input:
        unpack(interpolate_inputs),
    output:
        "results/analysis/interpolation/{interp}.h5",
    log:
        "results/logs/interpolate/{interp}.log",
    benchmark:
        "results/benchmarks/interpolate/{interp}.tsv"
    resources:
        runtime=30,
        mem_mb=4000,
    params:
        config=lambda wc: canonical_json(CFG.analysis_slice("interpolation", wc.interp)),
        code=code_hash("pipeline_lib.stages.interpolate"),
    script:
        "../scripts/interpolate.py"


rule probe:
    input:
        unpack(probe_inputs),
    output:
        "results/analysis/probes/{probe_run}.h5",
    log:
        "results/logs/probe/{probe_run}.log",
    benchmark:
        "results/benchmarks/probe/{probe_run}.tsv"
    resources:
        runtime=60,
        mem_mb=4000,
    params:
        config=lambda wc: canonical_json(CFG.probe_slice(wc.probe_run)),
        code=code_hash("pipeline_lib.stages.probe"),
    script:
        "../scripts/probe.py"


rule param_embed:
    input:
        unpack(param_embed_inputs),
    output:
        "results/analysis/param_embed/{embed}.h5",
    log:
        "results/logs/param_embed/{embed}.log",
    benchmark:
        "results/benchmarks/param_embed/{embed}.tsv"
    resources:
        runtime=30,
        mem_mb=4000,
    params:
        config=lambda wc: canonical_json(CFG.analysis_slice("param_embed", wc.embed)),
        code=code_hash("pipeline_lib.stages.param_embed"),
    script:
        "../scripts/param_embed.py"
