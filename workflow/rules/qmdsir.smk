# Augmentation source QmdsIr (Pasunuru et al., AAAI 2021, §3.2), from MS MARCO QnA, on the common example schema.
#   qmdsir_standin  (qmdsir.standin) sample dump -> STAND-IN MS MARCO QnA v2.1 files in qmdsir.dir
#   qmdsir_part     one job per shard: MS MARCO records -> the paper's filters -> examples
#   qmdsir_merge    every shard -> data/sources/qmdsir/<split>.parquet, Table 1 statistics
QMDSIR_DIR = config["qmdsir"]["dir"].rstrip("/")
QMDSIR_SHARDS = layout.shards(config["qmdsir"]["shards"])


if config["qmdsir"]["standin"]:

    rule qmdsir_standin:
        input:
            manifest=f"{layout.sample_dir(config)}/{layout.SAMPLE_MANIFEST}",
            dump=layout.sample_dump(config),
        output:
            directory(QMDSIR_DIR),
        log:
            layout.log_file("qmdsir_standin"),
        benchmark:
            layout.benchmark_file("qmdsir_standin")
        conda:
            SOFTWARE_ENV
        threads: 1
        params:
            p=stage_params("qmdsir", "standin"),
        shell:
            "wikiref qmdsir standin --params-json {params.p:q} --dump {input.dump:q} --out {output:q} > {log} 2>&1"


rule qmdsir_part:
    input:
        dir=QMDSIR_DIR,
    output:
        examples=layout.QMDSIR_SHARD,
        stats=layout.QMDSIR_SHARD_STATS,
    log:
        layout.log_file("qmdsir_part/{shard}"),
    benchmark:
        layout.benchmark_file("qmdsir_part/{shard}")
    wildcard_constraints:
        shard=r"\d+",
    conda:
        SOFTWARE_ENV
    threads: 1
    params:
        p=stage_params("qmdsir", "part"),
    shell:
        "wikiref qmdsir part --params-json {params.p:q} --shard {wildcards.shard} --dir {input.dir:q}"
        " --examples {output.examples:q} --stats {output.stats:q} > {log} 2>&1"


rule qmdsir_merge:
    input:
        parts=expand(layout.QMDSIR_SHARD, shard=QMDSIR_SHARDS),
        stats=expand(layout.QMDSIR_SHARD_STATS, shard=QMDSIR_SHARDS),
    output:
        splits=layout.source_splits("qmdsir"),
        tables=multiext(layout.QMDSIR_TABLE, ".csv", ".md", ".tex"),
        metrics=layout.QMDSIR_METRICS,
    log:
        layout.log_file("qmdsir_merge"),
    benchmark:
        layout.benchmark_file("qmdsir_merge")
    conda:
        SOFTWARE_ENV
    threads: 1
    params:
        p=stage_params("qmdsir", "merge"),
        out_dir=lambda wc, output: os.path.dirname(output.splits[0]),
        table=lambda wc, output: table_stem(output.tables),
    shell:
        "wikiref qmdsir merge --params-json {params.p:q} --parts {input.parts:q} --stats {input.stats:q}"
        " --out-dir {params.out_dir:q} --table {params.table:q} --metrics {output.metrics:q} > {log} 2>&1"


rule qmdsir_all:
    input:
        stage_targets(config, "qmdsir"),
