"""One function per Snakemake rule: read artifacts, call a core part, write artifacts."""
