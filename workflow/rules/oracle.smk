# Step 4: oracle labels and regression targets.
# Placeholder until #4 lands: the rule runs `wikiref oracle`, which exits 3 with "NOT IMPLEMENTED".


rule oracle:
    output:
        marker="data/oracle/train.parquet",
    params:
        p=P("text", "oracle"),
    threads: 1
    log:
        "logs/oracle.log",
    benchmark:
        "logs/benchmarks/oracle.tsv"
    shell:
        "wikiref oracle --params-json {params.p:q} > {log} 2>&1"


rule oracle_all:
    input:
        stage_targets(config, "oracle"),
