# Step 3 (journal §II-A-2, §II-B): seeded train/dev/test split without document overlap; Tables I-II.


rule split:
    input:
        curated=layout.CURATED,
    output:
        **{name: layout.SPLIT_FILE.format(split=name) for name in layout.SPLITS},
        sources=layout.source_splits("wikiref"),
        table1=multiext(layout.TABLE1, ".csv", ".md", ".tex"),
        table2=multiext(layout.TABLE2, ".csv", ".md", ".tex"),
        metrics=layout.SPLIT_METRICS,
    log:
        layout.log_file("split"),
    benchmark:
        layout.benchmark_file("split")
    conda:
        SOFTWARE_ENV
    threads: 1
    params:
        p=stage_params("split", "run"),
        out_dir=lambda wc, output: os.path.dirname(output.train),
        sources_dir=lambda wc, output: os.path.dirname(output.sources[0]),
        table1=lambda wc, output: table_stem(output.table1),
        table2=lambda wc, output: table_stem(output.table2),
    shell:
        "wikiref split --params-json {params.p:q} --curated {input.curated:q} --out-dir {params.out_dir:q}"
        " --table1 {params.table1:q} --table2 {params.table2:q} --metrics {output.metrics:q}"
        " --sources-dir {params.sources_dir:q} > {log} 2>&1"


rule split_all:
    input:
        stage_targets(config, "split"),
