# Step 5 (journal §III, §IV): WikiRef pre-training of the Table IV variants, evaluation, Table IV.
# One job per variant (pretrain.variants[*].name): train (best dev epoch -> models/pretrain/<variant>/),
# then evaluate (dev threshold search, dev + test ROUGE). Training state for resuming lives in
# models/pretrain/<variant>/last/ (not a declared output, so a failed job resumes instead of restarting);
# dvclive curves go to results/dvclive/<variant>/ (`dvc plots show`).

PRETRAIN_VARIANTS = [v["name"] for v in config["pretrain"]["variants"]]


rule pretrain_variant:
    input:
        train="data/oracle/train.parquet",
        dev="data/oracle/dev.parquet",
        test="data/oracle/test.parquet",
    output:
        model="models/pretrain/{variant}/model.safetensors",
        config="models/pretrain/{variant}/config.json",
        metrics="results/metrics/pretrain_{variant}.json",
    params:
        p=P("seed", "model", "pretrain"),
        data=lambda wc, input: os.path.dirname(input.train),
        model_dir=lambda wc, output: os.path.dirname(output.model),
        live_dir="results/dvclive/{variant}",
    wildcard_constraints:
        variant="[A-Za-z0-9_-]+",
    threads: 2
    resources:
        gpu=gpu_resource(config, config["pretrain"]["nproc_per_node"]),  # torchrun DDP: one GPU per process
    log:
        "logs/pretrain/{variant}.log",
    benchmark:
        "logs/benchmarks/pretrain_{variant}.tsv"
    shell:
        "wikiref pretrain run --variant {wildcards.variant} --params-json {params.p:q} --data {params.data:q}"
        " --model-dir {params.model_dir:q} --metrics {output.metrics:q} --live-dir {params.live_dir:q}"
        " --threads {threads} --no-progress > {log} 2>&1"


rule pretrain_table:
    input:
        metrics=expand("results/metrics/pretrain_{variant}.json", variant=PRETRAIN_VARIANTS),
        dev="data/oracle/dev.parquet",
        test="data/oracle/test.parquet",
    output:
        csv="results/tables/table4_wikiref.csv",
        md="results/tables/table4_wikiref.md",
        tex="results/tables/table4_wikiref.tex",
        summary="results/metrics/pretrain.json",
    params:
        p=P("profile", "seed", "model", "pretrain"),
        data=lambda wc, input: os.path.dirname(input.dev),
        metrics_dir=lambda wc, input: os.path.dirname(input.metrics[0]),
        stem=lambda wc, output: os.path.splitext(output.csv)[0],
    threads: 1
    log:
        "logs/pretrain/table4.log",
    benchmark:
        "logs/benchmarks/pretrain_table4.tsv"
    shell:
        "wikiref pretrain table --params-json {params.p:q} --data {params.data:q}"
        " --metrics-dir {params.metrics_dir:q} --table {params.stem:q} --summary {output.summary:q} > {log} 2>&1"


rule pretrain_all:
    input:
        stage_targets(config, "pretrain"),
