# Step 4 (journal §IV-C): oracle labels (greedy ROUGE-2 F1) and per-sentence regression targets.


rule oracle:
    input:
        splits=expand("data/split/{split}.parquet", split=["train", "dev", "test"]),
    output:
        train="data/oracle/train.parquet",
        dev="data/oracle/dev.parquet",
        test="data/oracle/test.parquet",
        metrics="results/metrics/oracle.json",
    params:
        p=P("oracle"),
    threads: 4
    log:
        "logs/oracle.log",
    benchmark:
        "logs/benchmarks/oracle.tsv"
    shell:
        "wikiref oracle --params-json {params.p:q} --split-dir data/split --out-dir data/oracle"
        " --metrics {output.metrics} --threads {threads} > {log} 2>&1"


rule oracle_all:
    input:
        stage_targets(config, "oracle"),
