# Step 8 (journal §VI): ablations.
# Placeholder until #7 lands: the rule runs `wikiref ablations`, which exits 3 with "NOT IMPLEMENTED".


rule ablations:
    output:
        marker="results/ablations/done",
    params:
        p=P("seed", "ablations"),
    threads: 1
    log:
        "logs/ablations.log",
    benchmark:
        "logs/benchmarks/ablations.tsv"
    shell:
        "wikiref ablations --params-json {params.p:q} > {log} 2>&1"


rule ablations_all:
    input:
        stage_targets(config, "ablations"),
