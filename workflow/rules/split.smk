# Step 3 (journal §II-A-2, §II-B): seeded train/dev/test split without document overlap; Tables I-II.


rule split:
    input:
        curated="data/curated/examples.parquet",
    output:
        train="data/split/train.parquet",
        dev="data/split/dev.parquet",
        test="data/split/test.parquet",
        table1=multiext("results/tables/table1_wikiref_splits", ".csv", ".md", ".tex"),
        table2=multiext("results/tables/table2_wikiref_percentiles", ".csv", ".md", ".tex"),
        metrics="results/metrics/split.json",
    params:
        p=P("profile", "seed", "split"),
    threads: 1
    log:
        "logs/split.log",
    benchmark:
        "logs/benchmarks/split.tsv"
    shell:
        "wikiref split --params-json {params.p:q} --curated {input.curated} --out-dir data/split"
        " --tables-dir results/tables --metrics {output.metrics} > {log} 2>&1"


rule split_all:
    input:
        stage_targets(config, "split"),
