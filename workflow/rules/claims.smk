# The claims ledger: every declared claim scored where its figure ran (`snakemake claims`); seconds, it reads
# the figures' sidecars only and scores their statistics. In a replicate (--config replicate=true) it also reads the original's ledger.
rule claims:
    input:
        sidecars=[P.figure(f, ".json") for f in CFG.raw["figures"]],
        original=lambda wildcards: claims_original(),  # asked only where the ledger is built: a figure replicates alone
    output:
        csv=P.claims(".csv"),
        scores=P.claims(".json"),
        md=P.claims(".md"),
        coverage=P.claims("_coverage.md"),
        papers=claims_report_files(),
        own=claims_own_files(),
    log:
        P.log("claims", "claims"),
    benchmark:
        P.benchmark("claims", "claims")
    conda:
        "../envs/pipeline.yaml"
    params:
        declared=lambda wildcards: canonical_json(declarations.declared_claims()),
        results=lambda wildcards: canonical_json(
            {
                k: d.get("results", [])
                for k, d in declarations.declaration_files().items()
            }
        ),
        code=codes.job_code(CFG, "claims"),
    script:
        "../scripts/claims.py"
