# Step 5 (journal §III, §IV): WikiRef pre-training of the Table IV variants, evaluation, Table IV.
# One job per variant (pretrain.variants[*].name): train (best dev epoch -> models/pretrain/<variant>/),
# then evaluate (dev threshold search, dev + test ROUGE). Training state for resuming lives in
# models/pretrain/<variant>/last/ (not a declared output, so a failed job resumes instead of restarting);
# dvclive curves go to results/dvclive/<variant>/ (`dvc plots show`).

PRETRAIN_VARIANTS = [v["name"] for v in config["pretrain"]["variants"]]


rule pretrain_variant:
    input:
        train=layout.ORACLE_FILE.format(split="train"),
        dev=layout.ORACLE_FILE.format(split="dev"),
        test=layout.ORACLE_FILE.format(split="test"),
    output:
        model=layout.PRETRAIN_MODEL,
        config=layout.PRETRAIN_CONFIG,
        tokenizer=layout.checkpoint_files(layout.PRETRAIN_MODEL_DIR, layout.CHECKPOINT_TOKENIZER),
        metrics=layout.PRETRAIN_VARIANT_METRICS,
    log:
        layout.log_file("pretrain/{variant}"),
    benchmark:
        layout.benchmark_file("pretrain_{variant}")
    wildcard_constraints:
        variant="[A-Za-z0-9_-]+",
    priority: 5  # the +DA fine-tuning jobs wait for these checkpoints
    conda:
        SOFTWARE_ENV
    threads: min(2, max(1, workflow.cores // 2))  # a job needing every core of a small machine waits for all
    resources:
        gpu=gpu_resource(config, config["pretrain"]["nproc_per_node"]),  # torchrun DDP: one GPU per process
    params:
        p=stage_params("pretrain", "variant"),
        inputs=lambda wc, input: named(input, "train", "dev", "test"),
        model_dir=lambda wc, output: os.path.dirname(output.model),
        live_dir=layout.PRETRAIN_LIVE_DIR,
    shell:
        "wikiref pretrain run --variant {wildcards.variant} --params-json {params.p:q} --inputs {params.inputs:q}"
        " --model-dir {params.model_dir:q} --metrics {output.metrics:q} --live-dir {params.live_dir:q}"
        " --threads {threads} --no-progress > {log} 2>&1"


rule pretrain_table:
    input:
        metrics=expand(layout.PRETRAIN_VARIANT_METRICS, variant=PRETRAIN_VARIANTS),
        dev=layout.ORACLE_FILE.format(split="dev"),
        test=layout.ORACLE_FILE.format(split="test"),
    output:
        tables=multiext(layout.TABLE4, ".csv", ".md", ".tex"),
        summary=layout.PRETRAIN_METRICS,
    log:
        layout.log_file("pretrain/table4"),
    benchmark:
        layout.benchmark_file("pretrain_table4")
    conda:
        SOFTWARE_ENV
    threads: 1
    params:
        p=stage_params("pretrain", "table"),
        inputs=lambda wc, input: named(input, "dev", "test")
        + keyed("variant_metrics", PRETRAIN_VARIANTS, input.metrics),
        table=lambda wc, output: os.path.splitext(output.tables[0])[0],
    shell:
        "wikiref pretrain table --params-json {params.p:q} --inputs {params.inputs:q}"
        " --table {params.table:q} --summary {output.summary:q} > {log} 2>&1"


rule pretrain_all:
    input:
        stage_targets(config, "pretrain"),
