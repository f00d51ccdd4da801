# Step 0: the offline sample (real Wikipedia fragment from the gensim wheel, stand-in WARC, stand-in DUC).
SAMPLE = config["sample"]["out_dir"].rstrip("/")


rule sample:
    output:
        manifest=f"{SAMPLE}/MANIFEST.json",
    params:
        p=P("sample", "collect"),
        out=SAMPLE,
    threads: 1
    log:
        "logs/sample.log",
    benchmark:
        "logs/benchmarks/sample.tsv"
    shell:
        "wikiref sample --params-json {params.p:q} --out {params.out} > {log} 2>&1"


rule sample_all:
    input:
        stage_targets(config, "sample"),
