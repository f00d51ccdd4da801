# Step 2 (journal §II-A-2): curation filters.
# Placeholder until #4 lands: the rule runs `wikiref curate`, which exits 3 with "NOT IMPLEMENTED".


rule curate:
    output:
        marker="data/curated/examples.parquet",
    params:
        p=P("text", "curate"),
    threads: 1
    log:
        "logs/curate.log",
    benchmark:
        "logs/benchmarks/curate.tsv"
    shell:
        "wikiref curate --params-json {params.p:q} > {log} 2>&1"


rule curate_all:
    input:
        stage_targets(config, "curate"),
