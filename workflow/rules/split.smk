# Step 3: train/dev/test split, Tables I-II.
# Placeholder until #4 lands: the rule runs `wikiref split`, which exits 3 with "NOT IMPLEMENTED".


rule split:
    output:
        marker="data/split/train.parquet",
    params:
        p=P("seed", "split"),
    threads: 1
    log:
        "logs/split.log",
    benchmark:
        "logs/benchmarks/split.tsv"
    shell:
        "wikiref split --params-json {params.p:q} > {log} 2>&1"


rule split_all:
    input:
        stage_targets(config, "split"),
