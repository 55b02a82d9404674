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
        code=lambda wc: model_code(
            "pipeline_lib.stages.interpolate", CFG.interpolation[wc.interp].b
        ),
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
        code=lambda wc: model_code("pipeline_lib.stages.probe", wc.probe_run),
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


rule eureka_stats:
    input:
        unpack(eureka_inputs),
    output:
        "results/analysis/eureka/{experiment}.h5",
    log:
        "results/logs/eureka_stats/{experiment}.log",
    benchmark:
        "results/benchmarks/eureka_stats/{experiment}.tsv"
    resources:
        runtime=10,
        mem_mb=2000,
    params:
        config=lambda wc: canonical_json(CFG.analysis_slice("eureka", wc.experiment)),
        code=code_hash("pipeline_lib.stages.eureka_stats"),
    script:
        "../scripts/eureka_stats.py"
