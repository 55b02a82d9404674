# One rule per analysis module of pipeline_lib/analysis, named after it (e.g. `snakemake interpolation`);
# each job is an entry of analyses.<analysis> (or, for a per-run analysis, a run it lists).
for kind in ANALYSES:

    rule:
        name:
            kind
        input:
            analysis_inputs(kind),
        output:
            P.analysis(kind, "{name}"),
        log:
            P.log(kind, "{name}"),
        benchmark:
            P.benchmark(kind, "{name}")
        wildcard_constraints:
            name=names_regex(jobs.analysis_jobs(CFG, kind)),
        conda:
            "../envs/pipeline.yaml"
        resources:
            **registry.plugin("analysis", kind).get("RESOURCES", {}),
        params:
            **analysis_params(kind),
        script:
            "../scripts/analysis.py"
