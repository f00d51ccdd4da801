# Augmentation source WCEP (Gholipour Ghalandari et al., ACL 2020), on the common example schema.
#   wcep_standin     (wcep.standin) sample dump -> STAND-IN portal pages, source archive, CC-NEWS WARC
#   wcep_events      portal pages (dump wikitext + monthly HTML) -> events
#   wcep_sources     every event's source URLs -> fetched + extracted articles
#   wcep_ccnews      one job per shard: CC-NEWS WARC files -> candidate articles
#   wcep_classify    article-summary classifier (held-out P/R) -> candidates assigned to events
#   wcep_build       sentences, chronological split, WCEP-total / WCEP-<n> -> data/sources/wcep, Tables 3-4, Fig. 1
#   wcep_supervised  the package's BERT scorer trained on WCEP -> test summaries
#   wcep_evaluate    oracles and baselines -> Table 5 (beside the paper's), Fig. 2
WCEP = config["wcep"]
WCEP_SHARDS = layout.shards(WCEP["ccnews"]["shards"])
WCEP_STANDIN = bool(WCEP["standin"])
# With the STAND-IN, every input is inside its folder (a directory output); otherwise the params name them.
WCEP_PORTAL = [layout.WCEP_STANDIN] if WCEP_STANDIN else WCEP["portal"]["dump_paths"] + WCEP["portal"]["html_paths"]
WCEP_SOURCE_ARCHIVES = [layout.WCEP_STANDIN] if WCEP_STANDIN else WCEP["sources"]["warc_paths"]
WCEP_CCNEWS_INPUT = [layout.WCEP_STANDIN] if WCEP_STANDIN else WCEP["ccnews"]["paths"]
WCEP_SPLITS = layout.source_splits("wcep")
WCEP_TOTAL = [layout.WCEP_TOTAL.format(split=s) for s in layout.SPLITS]


if WCEP_STANDIN:

    rule wcep_standin:
        input:
            manifest=f"{layout.sample_dir(config)}/{layout.SAMPLE_MANIFEST}",
            dump=layout.sample_dump(config),
        output:
            directory(layout.WCEP_STANDIN),
        log:
            layout.log_file("wcep_standin"),
        benchmark:
            layout.benchmark_file("wcep_standin")
        conda:
            SOFTWARE_ENV
        threads: 1
        params:
            p=stage_params("wcep", "standin"),
        shell:
            "wikiref wcep standin --params-json {params.p:q} --dump {input.dump:q} --out {output:q} > {log} 2>&1"


rule wcep_events:
    input:
        WCEP_PORTAL,
    output:
        events=layout.WCEP_EVENTS,
        stats=layout.WCEP_EVENTS_STATS,
    log:
        layout.log_file("wcep_events"),
    benchmark:
        layout.benchmark_file("wcep_events")
    conda:
        SOFTWARE_ENV
    threads: 1
    params:
        p=stage_params("wcep", "events"),
    shell:
        "wikiref wcep events --params-json {params.p:q} --out {output.events:q} --stats {output.stats:q} > {log} 2>&1"


rule wcep_sources:
    input:
        WCEP_SOURCE_ARCHIVES,
        events=layout.WCEP_EVENTS,
    output:
        sources=layout.WCEP_SOURCES,
        stats=layout.WCEP_SOURCES_STATS,
    log:
        layout.log_file("wcep_sources"),
    benchmark:
        layout.benchmark_file("wcep_sources")
    conda:
        SOFTWARE_ENV
    threads: 1
    params:
        p=stage_params("wcep", "sources"),
    shell:
        "wikiref wcep sources --params-json {params.p:q} --events {input.events:q}"
        " --out {output.sources:q} --stats {output.stats:q} > {log} 2>&1"


rule wcep_ccnews:
    input:
        WCEP_CCNEWS_INPUT,
    output:
        articles=layout.WCEP_CCNEWS,
        stats=layout.WCEP_CCNEWS_STATS,
    log:
        layout.log_file("wcep_ccnews/{shard}"),
    benchmark:
        layout.benchmark_file("wcep_ccnews/{shard}")
    wildcard_constraints:
        shard=r"\d+",
    conda:
        SOFTWARE_ENV
    threads: 1
    params:
        p=stage_params("wcep", "ccnews"),
    shell:
        "wikiref wcep ccnews --params-json {params.p:q} --shard {wildcards.shard}"
        " --out {output.articles:q} --stats {output.stats:q} > {log} 2>&1"


rule wcep_classify:
    input:
        events=layout.WCEP_EVENTS,
        sources=layout.WCEP_SOURCES,
        ccnews=expand(layout.WCEP_CCNEWS, shard=WCEP_SHARDS),
    output:
        model=layout.WCEP_CLASSIFIER,
        assignments=layout.WCEP_ASSIGNMENTS,
        metrics=layout.WCEP_CLASSIFIER_METRICS,
    log:
        layout.log_file("wcep_classify"),
    benchmark:
        layout.benchmark_file("wcep_classify")
    conda:
        SOFTWARE_ENV
    threads: 1
    params:
        p=stage_params("wcep", "classify"),
    shell:
        "wikiref wcep classify --params-json {params.p:q} --events {input.events:q} --sources {input.sources:q}"
        " --ccnews {input.ccnews:q} --model {output.model:q} --assignments {output.assignments:q}"
        " --metrics {output.metrics:q} > {log} 2>&1"


rule wcep_build:
    input:
        events=layout.WCEP_EVENTS,
        sources=layout.WCEP_SOURCES,
        ccnews=expand(layout.WCEP_CCNEWS, shard=WCEP_SHARDS),
        assignments=layout.WCEP_ASSIGNMENTS,
        stats=[layout.WCEP_EVENTS_STATS, layout.WCEP_SOURCES_STATS, layout.WCEP_CLASSIFIER_METRICS]
        + expand(layout.WCEP_CCNEWS_STATS, shard=WCEP_SHARDS),
    output:
        splits=WCEP_SPLITS,
        total=WCEP_TOTAL,
        table3=multiext(layout.WCEP_TABLE3, ".csv", ".md", ".tex"),
        table4=multiext(layout.WCEP_TABLE4, ".csv", ".md", ".tex"),
        fig1=f"{layout.WCEP_FIG1}.csv",  # the numbers; the report draws the figure
        metrics=layout.WCEP_METRICS,
    log:
        layout.log_file("wcep_build"),
    benchmark:
        layout.benchmark_file("wcep_build")
    conda:
        SOFTWARE_ENV
    threads: 1
    params:
        p=stage_params("wcep", "build"),
        out_dir=lambda wc, output: os.path.dirname(output.splits[0]),
        total_dir=lambda wc, output: os.path.dirname(output.total[0]),
        table3=lambda wc, output: table_stem(output.table3),
        table4=lambda wc, output: table_stem(output.table4),
        fig1=lambda wc, output: table_stem([output.fig1]),
    shell:
        "wikiref wcep build --params-json {params.p:q} --events {input.events:q} --sources {input.sources:q}"
        " --ccnews {input.ccnews:q} --assignments {input.assignments:q} --stats {input.stats:q}"
        " --out-dir {params.out_dir:q} --total-dir {params.total_dir:q} --table3 {params.table3:q}"
        " --table4 {params.table4:q} --fig1 {params.fig1:q} --metrics {output.metrics:q} > {log} 2>&1"


rule wcep_supervised:
    input:
        splits=WCEP_SPLITS,
    output:
        summaries=layout.WCEP_SUPERVISED,
        model=directory(layout.WCEP_SUPERVISED_DIR),
    log:
        layout.log_file("wcep_supervised"),
    benchmark:
        layout.benchmark_file("wcep_supervised")
    conda:
        SOFTWARE_ENV
    threads: 1
    resources:
        gpu=gpu_resource(config),
    params:
        p=stage_params("wcep", "supervised"),
        inputs=lambda wc, input: keyed("splits", layout.SPLITS, input.splits),
    shell:
        "wikiref wcep supervised --params-json {params.p:q} --inputs {params.inputs:q}"
        " --out {output.summaries:q} --model-dir {output.model:q} --threads {threads} --no-progress > {log} 2>&1"


rule wcep_evaluate:
    input:
        splits=WCEP_SPLITS,
        total=WCEP_TOTAL,
        supervised=layout.WCEP_SUPERVISED,
    output:
        table5=multiext(layout.WCEP_TABLE5, ".csv", ".md", ".tex"),
        fig2=f"{layout.WCEP_FIG2}.csv",  # the numbers; the report draws the figure
        metrics=layout.WCEP_EVALUATE_METRICS,
    log:
        layout.log_file("wcep_evaluate"),
    benchmark:
        layout.benchmark_file("wcep_evaluate")
    conda:
        SOFTWARE_ENV
    threads: 1
    params:
        p=stage_params("wcep", "evaluate"),
        inputs=lambda wc, input: keyed("splits", layout.SPLITS, input.splits)
        + keyed("total", layout.SPLITS, input.total),
        table5=lambda wc, output: table_stem(output.table5),
        fig2=lambda wc, output: table_stem([output.fig2]),
    shell:
        "wikiref wcep evaluate --params-json {params.p:q} --inputs {params.inputs:q}"
        " --supervised {input.supervised:q} --table5 {params.table5:q}"
        " --fig2 {params.fig2:q} --metrics {output.metrics:q} > {log} 2>&1"


rule wcep_all:
    input:
        stage_targets(config, "wcep"),
