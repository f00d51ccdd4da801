# Step 6 (journal §V): the DUC 2005-2007 benchmarks, Table VI baselines.
#   duc_standin   (sample/tiny profiles, duc.standin) data/raw -> STAND-IN DUC tree in the NIST layout
#   duc_prepare   duc.root (NIST layout) -> data/duc/<year>.parquet: sentences, query levels, references,
#                 per-sentence ROUGE-2 recall targets
#   duc_baselines LEAD / QUERY-SIM / ORACLE, official ROUGE-1.5.5 scoring -> Table VI baseline rows
#   duc_table5    the prepared years' counts -> Table V (clusters, documents, sentences; the paper's beside)
# Held-out-year fine-tuning and the rest of Table VI: workflow/rules/finetune.smk.

from wikiref.wiki.index import dump_parts

DUC_ROOT = layout.duc_root(config)
DUC_YEARS = config["duc"]["years"]


if config["duc"]["standin"]:

    rule duc_standin:
        input:
            raw=lambda wc: expand(layout.RAW_PART, part=dump_parts(config, checkpoints)),
            wikiref=expand(layout.SPLIT_FILE, split=layout.SPLITS),
        output:
            directory(DUC_ROOT),
        log:
            layout.log_file("duc_standin"),
        benchmark:
            layout.benchmark_file("duc_standin")
        conda:
            SOFTWARE_ENV
        threads: 1
        params:
            p=stage_params("duc", "standin"),
        shell:
            "wikiref duc standin --params-json {params.p:q} --raw {input.raw:q} --wikiref {input.wikiref:q} "
            "--out {output:q} > {log} 2>&1"


rule duc_prepare:
    input:
        root=DUC_ROOT,
    output:
        parquet=expand(layout.DUC_YEAR, year=DUC_YEARS),
        stats=expand(layout.DUC_YEAR_STATS, year=DUC_YEARS),
    log:
        layout.log_file("duc_prepare"),
    benchmark:
        layout.benchmark_file("duc_prepare")
    conda:
        SOFTWARE_ENV
    threads: 1
    params:
        p=stage_params("duc", "prepare"),
        out_dir=lambda wc, output: os.path.dirname(output.parquet[0]),
    shell:
        "wikiref duc prepare --params-json {params.p:q} --out-dir {params.out_dir:q} > {log} 2>&1"


rule duc_baselines:
    input:
        parquet=expand(layout.DUC_YEAR, year=DUC_YEARS),
        stats=expand(layout.DUC_YEAR_STATS, year=DUC_YEARS),
    output:
        metrics=layout.DUC_BASELINES_METRICS,
        tables=multiext(layout.TABLE6_BASELINES, ".csv", ".md", ".tex"),
    log:
        layout.log_file("duc_baselines"),
    benchmark:
        layout.benchmark_file("duc_baselines")
    conda:
        SOFTWARE_ENV
    threads: 1
    params:
        p=stage_params("duc", "baselines"),
        table=lambda wc, output: table_stem(output.tables),
    shell:
        "wikiref duc baselines --params-json {params.p:q} --inputs {input.parquet:q} --metrics {output.metrics:q}"
        " --table {params.table:q} > {log} 2>&1"


rule duc_table5:
    input:
        stats=expand(layout.DUC_YEAR_STATS, year=DUC_YEARS),
    output:
        tables=multiext(layout.TABLE5, ".csv", ".md", ".tex"),
    log:
        layout.log_file("duc_table5"),
    benchmark:
        layout.benchmark_file("duc_table5")
    conda:
        SOFTWARE_ENV
    threads: 1
    params:
        p=stage_params("duc", "table5"),
        table=lambda wc, output: table_stem(output.tables),
    shell:
        "wikiref duc table5 --params-json {params.p:q} --stats {input.stats:q} --table {params.table:q} > {log} 2>&1"


rule duc_all:
    input:
        stage_targets(config, "duc"),
