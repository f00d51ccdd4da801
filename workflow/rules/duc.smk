# Step 6 (journal §V): the DUC 2005-2007 benchmarks, Table VI.
#   duc_standin   (sample/tiny profiles, duc.standin) data/raw -> STAND-IN DUC tree in the NIST layout
#   duc_prepare   duc.root (NIST layout) -> data/duc/<year>.parquet: sentences, query levels, references,
#                 per-sentence ROUGE-2 recall targets
#   duc_baselines LEAD / QUERY-SIM / ORACLE, official ROUGE-1.5.5 scoring -> Table VI baseline rows
#   finetune_*    held-out-year fine-tuning, sparse subnetworks, Table VI (below)

DUC = config["duc"]
DUC_ROOT = DUC["root"].rstrip("/")
DUC_TABLE = "results/tables/table6_duc_baselines"


if DUC["standin"]:

    rule duc_standin:
        input:
            raw=expand("data/raw/{part}.parquet", part=config["collect"]["dump"]["parts"]),
        output:
            directory(DUC_ROOT),
        params:
            p=P("seed", "sample", "duc"),
        threads: 1
        log:
            "logs/duc_standin.log",
        benchmark:
            "logs/benchmarks/duc_standin.tsv"
        shell:
            "wikiref duc-standin --params-json {params.p:q} --raw {input.raw} --out {output} > {log} 2>&1"


rule duc_prepare:
    input:
        root=DUC_ROOT,
    output:
        parquet=expand("data/duc/{year}.parquet", year=DUC["years"]),
        stats=expand("data/duc/{year}.stats.json", year=DUC["years"]),
    params:
        p=P("text", "duc"),
    threads: 1
    log:
        "logs/duc_prepare.log",
    benchmark:
        "logs/benchmarks/duc_prepare.tsv"
    shell:
        "wikiref duc-prepare --params-json {params.p:q} --out-dir data/duc > {log} 2>&1"


rule duc_baselines:
    input:
        parquet=expand("data/duc/{year}.parquet", year=DUC["years"]),
        stats=expand("data/duc/{year}.stats.json", year=DUC["years"]),
    output:
        metrics="results/metrics/duc_baselines.json",
        tables=multiext(DUC_TABLE, ".csv", ".md", ".tex"),
    params:
        p=P("profile", "duc"),
        table=DUC_TABLE,
    threads: 1
    log:
        "logs/duc_baselines.log",
    benchmark:
        "logs/benchmarks/duc_baselines.tsv"
    shell:
        "wikiref duc-baselines --params-json {params.p:q} --inputs {input.parquet} --metrics {output.metrics}"
        " --table {params.table} > {log} 2>&1"


rule duc_all:
    input:
        stage_targets(config, "duc"),
