# Step 5 (journal §III, §IV): WikiRef pre-training, Table IV.
# Placeholder until #5 lands: the rule runs `wikiref pretrain`, which exits 3 with "NOT IMPLEMENTED".


rule pretrain:
    output:
        marker="models/pretrain/done",
    params:
        p=P("seed", "model", "pretrain"),
    threads: 1
    log:
        "logs/pretrain.log",
    benchmark:
        "logs/benchmarks/pretrain.tsv"
    shell:
        "wikiref pretrain --params-json {params.p:q} > {log} 2>&1"


rule pretrain_all:
    input:
        stage_targets(config, "pretrain"),
