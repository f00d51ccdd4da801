# Step 6 (journal §V): DUC held-out-year fine-tuning, Table VI.
# Placeholder until #6 lands: the rule runs `wikiref finetune`, which exits 3 with "NOT IMPLEMENTED".


rule finetune:
    output:
        marker="models/finetune/done",
    params:
        p=P("seed", "model", "finetune", "duc"),
    threads: 1
    log:
        "logs/finetune.log",
    benchmark:
        "logs/benchmarks/finetune.tsv"
    shell:
        "wikiref finetune --params-json {params.p:q} > {log} 2>&1"


rule finetune_all:
    input:
        stage_targets(config, "finetune"),
