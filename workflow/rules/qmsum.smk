# Benchmark QMSum (Zhong et al., NAACL 2021; open, MIT): query-based meeting summarization.
#   qmsum_standin    (qmsum.standin auto/true) a STAND-IN QMSum file in the published JSON-lines format
#   qmsum_prepare    the QMSum files (or the STAND-IN) -> data/qmsum/<split>.parquet, one row per query
#   qmsum_baselines  LEAD / QUERY-SIM / ORACLE extracts, official ROUGE-1/2/L -> table + metrics
#   qmsum_ltr        learning to rank over each turn's signals (train queries, chosen on dev) -> table + metrics
#   qmsum_bi         the bi scorer fine-tuned on the train queries (epoch, mixing weight chosen on dev) -> table + metrics
from wikiref.stages.qmsum import stage as qmsum_stage

QMSUM_BUILD_STANDIN = config["qmsum"]["standin"] in (True, "auto")


if QMSUM_BUILD_STANDIN:

    rule qmsum_standin:
        output:
            layout.QMSUM_STANDIN,
        log:
            layout.log_file("qmsum_standin"),
        benchmark:
            layout.benchmark_file("qmsum_standin")
        conda:
            SOFTWARE_ENV
        threads: 1
        params:
            p=stage_params("qmsum", "standin"),
        shell:
            "wikiref qmsum standin --params-json {params.p:q} --out {output:q} > {log} 2>&1"


rule qmsum_prepare:
    input:
        standin=[layout.QMSUM_STANDIN] if QMSUM_BUILD_STANDIN else [],
        real=qmsum_stage.real_inputs(config["qmsum"]),
    output:
        **{s: layout.QMSUM_SPLIT.format(split=s) for s in layout.SPLITS},
        stats=layout.QMSUM_STATS,
        metrics=layout.QMSUM_METRICS,
    log:
        layout.log_file("qmsum_prepare"),
    benchmark:
        layout.benchmark_file("qmsum_prepare")
    conda:
        SOFTWARE_ENV
    threads: 1
    params:
        p=stage_params("qmsum", "prepare"),
        # the option only when the STAND-IN is an input (an empty value would leave "--standin" without one)
        standin=lambda wc, input: ["--standin", input.standin[0]] if input.standin else [],
        out_dir=lambda wc, output: os.path.dirname(output.train),
    shell:
        "wikiref qmsum prepare --params-json {params.p:q} {params.standin:q} --out-dir {params.out_dir:q}"
        " --metrics {output.metrics:q} > {log} 2>&1"


rule qmsum_baselines:
    input:
        test=layout.QMSUM_SPLIT.format(split="test"),
    output:
        tables=multiext(layout.QMSUM_TABLE, ".csv", ".md", ".tex"),
        metrics=layout.QMSUM_BASELINES_METRICS,
    log:
        layout.log_file("qmsum_baselines"),
    benchmark:
        layout.benchmark_file("qmsum_baselines")
    conda:
        SOFTWARE_ENV
    threads: 1
    params:
        p=stage_params("qmsum", "baselines"),
        table=lambda wc, output: os.path.splitext(output.tables[0])[0],
    shell:
        "wikiref qmsum baselines --params-json {params.p:q} --test {input.test:q} --table {params.table:q}"
        " --metrics {output.metrics:q} > {log} 2>&1"


rule qmsum_ltr:
    input:
        **{s: layout.QMSUM_SPLIT.format(split=s) for s in layout.SPLITS},
    output:
        tables=multiext(layout.QMSUM_LTR_TABLE, ".csv", ".md", ".tex"),
        metrics=layout.QMSUM_LTR_METRICS,
    log:
        layout.log_file("qmsum_ltr"),
    benchmark:
        layout.benchmark_file("qmsum_ltr")
    conda:
        SOFTWARE_ENV
    threads: 1
    resources:
        gpu=gpu_resource(config),
    params:
        p=stage_params("qmsum", "ltr"),
        table=lambda wc, output: os.path.splitext(output.tables[0])[0],
    shell:
        "wikiref qmsum ltr --params-json {params.p:q} --train {input.train:q} --dev {input.dev:q}"
        " --test {input.test:q} --table {params.table:q} --metrics {output.metrics:q} > {log} 2>&1"


rule qmsum_bi:
    input:
        **{s: layout.QMSUM_SPLIT.format(split=s) for s in layout.SPLITS},
    output:
        tables=multiext(layout.QMSUM_BI_TABLE, ".csv", ".md", ".tex"),
        metrics=layout.QMSUM_BI_METRICS,
    log:
        layout.log_file("qmsum_bi"),
    benchmark:
        layout.benchmark_file("qmsum_bi")
    conda:
        SOFTWARE_ENV
    threads: 1
    resources:
        gpu=gpu_resource(config),
    params:
        p=stage_params("qmsum", "bi"),
        table=lambda wc, output: os.path.splitext(output.tables[0])[0],
    shell:
        "wikiref qmsum bi --params-json {params.p:q} --train {input.train:q} --dev {input.dev:q}"
        " --test {input.test:q} --table {params.table:q} --metrics {output.metrics:q} > {log} 2>&1"


rule qmsum_all:
    input:
        stage_targets(config, "qmsum"),
