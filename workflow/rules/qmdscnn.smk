# Augmentation source QmdsCnn (Pasunuru et al., AAAI 2021, §3.1), on the common example schema.
#   qmdscnn_standin   (qmdscnn.standin auto/true) sample dump -> STAND-IN .story corpus in the CNN/DM layout
#   qmdscnn_articles  one job per shard: stories + URL split lists -> titles, chunks, highlights
#   qmdscnn_build     BM25 over every chunk -> data/sources/qmdscnn/<split>.parquet, Table 1 statistics
from wikiref.stages.qmdscnn.corpus import resolve as qmdscnn_corpus

QMDSCNN = qmdscnn_corpus(config)
QMDSCNN_SHARDS = layout.shards(config["qmdscnn"]["shards"])


if QMDSCNN.build_standin:

    rule qmdscnn_standin:
        input:
            manifest=f"{layout.sample_dir(config)}/{layout.SAMPLE_MANIFEST}",
            dump=layout.sample_dump(config),
        output:
            directory(layout.QMDSCNN_STANDIN),
        log:
            layout.log_file("qmdscnn_standin"),
        benchmark:
            layout.benchmark_file("qmdscnn_standin")
        conda:
            SOFTWARE_ENV
        threads: 1
        params:
            p=stage_params("qmdscnn", "standin"),
        shell:
            "wikiref qmdscnn standin --params-json {params.p:q} --dump {input.dump:q} --out {output:q} > {log} 2>&1"


rule qmdscnn_articles:
    input:
        stories=QMDSCNN.stories_dir,
    output:
        articles=layout.QMDSCNN_SHARD,
        stats=layout.QMDSCNN_SHARD_STATS,
    log:
        layout.log_file("qmdscnn_articles/{shard}"),
    benchmark:
        layout.benchmark_file("qmdscnn_articles/{shard}")
    wildcard_constraints:
        shard=r"\d+",
    conda:
        SOFTWARE_ENV
    threads: 1
    params:
        p=stage_params("qmdscnn", "articles"),
        warc=list(QMDSCNN.warc_paths),
    shell:
        "wikiref qmdscnn articles --params-json {params.p:q} --shard {wildcards.shard} --stories {input.stories:q}"
        " --warc {params.warc:q} --out {output.articles:q} --stats {output.stats:q} > {log} 2>&1"


rule qmdscnn_build:
    input:
        articles=expand(layout.QMDSCNN_SHARD, shard=QMDSCNN_SHARDS),
        stats=expand(layout.QMDSCNN_SHARD_STATS, shard=QMDSCNN_SHARDS),
    output:
        splits=layout.source_splits("qmdscnn"),
        tables=multiext(layout.QMDSCNN_TABLE, ".csv", ".md", ".tex"),
        metrics=layout.QMDSCNN_METRICS,
    log:
        layout.log_file("qmdscnn_build"),
    benchmark:
        layout.benchmark_file("qmdscnn_build")
    conda:
        SOFTWARE_ENV
    threads: 1
    params:
        p=stage_params("qmdscnn", "build"),
        out_dir=lambda wc, output: os.path.dirname(output.splits[0]),
        table=lambda wc, output: table_stem(output.tables),
    shell:
        "wikiref qmdscnn build --params-json {params.p:q} --articles {input.articles:q} --stats {input.stats:q}"
        " --out-dir {params.out_dir:q} --table {params.table:q} --metrics {output.metrics:q} > {log} 2>&1"


rule qmdscnn_all:
    input:
        stage_targets(config, "qmdscnn"),
