# Step 3 (journal §II-A-2, §II-B): seeded train/dev/test split without document overlap; Tables I-II.


rule split:
    input:
        curated=layout.CURATED,
    output:
        **{name: layout.SPLIT_FILE.format(split=name) for name in layout.SPLITS},
        table1=multiext(layout.TABLE1, ".csv", ".md", ".tex"),
        table2=multiext(layout.TABLE2, ".csv", ".md", ".tex"),
        metrics=layout.SPLIT_METRICS,
    params:
        p=stage_params("split", "run"),
        out_dir=layout.SPLIT_DIR,
        table1=layout.TABLE1,
        table2=layout.TABLE2,
    threads: 1
    log:
        layout.log_file("split"),
    benchmark:
        layout.benchmark_file("split")
    shell:
        "wikiref split --params-json {params.p:q} --curated {input.curated:q} --out-dir {params.out_dir:q}"
        " --table1 {params.table1:q} --table2 {params.table2:q} --metrics {output.metrics:q} > {log} 2>&1"


rule split_all:
    input:
        stage_targets(config, "split"),
