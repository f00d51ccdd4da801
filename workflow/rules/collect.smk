# Step 1 (journal §II-A-1): dump part -> cited statements -> fetched and extracted documents.
# Owned by issue #3; placeholder rules until it lands fail loudly ("not implemented").


rule collect:
    output:
        raw="data/raw/{part}.parquet",
        stats="data/raw/{part}.stats.json",
    params:
        p=P("collect"),
    threads: 1
    log:
        "logs/collect/{part}.log",
    benchmark:
        "logs/benchmarks/collect/{part}.tsv"
    shell:
        "wikiref collect --params-json {params.p:q} --part {wildcards.part} --out {output.raw} --stats {output.stats} > {log} 2>&1"


rule collect_all:
    input:
        stage_targets(config, "collect"),
