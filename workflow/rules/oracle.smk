# Step 4 (journal §IV-C): oracle labels (greedy ROUGE-2 F1) and per-sentence regression targets.


rule oracle:
    input:
        **{name: layout.SPLIT_FILE.format(split=name) for name in layout.SPLITS},
    output:
        **{name: layout.ORACLE_FILE.format(split=name) for name in layout.SPLITS},
        metrics=layout.ORACLE_METRICS,
    log:
        layout.log_file("oracle"),
    benchmark:
        layout.benchmark_file("oracle")
    # The oracle tables gate pre-training, the ablations and the +DA fine-tuning: run it as soon as it is ready.
    priority: 10
    conda:
        SOFTWARE_ENV
    # Up to 4 processes, but never the whole of a small machine: a job that needs every core waits until no other
    # job runs, and on 2 cores that held the tables back for minutes while one-thread jobs kept a core busy.
    threads: min(4, max(1, workflow.cores // 2))
    params:
        p=stage_params("oracle", "run"),
        inputs=lambda wc, input: named(input, *layout.SPLITS),
        out_dir=lambda wc, output: os.path.dirname(output.train),
    shell:
        "wikiref oracle --params-json {params.p:q} --inputs {params.inputs:q} --out-dir {params.out_dir:q}"
        " --metrics {output.metrics:q} --threads {threads} > {log} 2>&1"


rule oracle_all:
    input:
        stage_targets(config, "oracle"),
