# Step 0: the offline sample (real Wikipedia fragment from the gensim wheel, stand-in WARC, stand-in DUC).
SAMPLE_DIR = layout.sample_dir(config)


rule sample:
    output:
        manifest=f"{SAMPLE_DIR}/{layout.SAMPLE_MANIFEST}",
        dump=layout.sample_dump(config),
        warc=f"{SAMPLE_DIR}/{layout.SAMPLE_WARC}",
    log:
        layout.log_file("sample"),
    benchmark:
        layout.benchmark_file("sample")
    conda:
        SOFTWARE_ENV
    threads: 1
    params:
        p=stage_params("sample", "run"),
        out=lambda wc, output: os.path.dirname(output.manifest),
    shell:
        "wikiref sample --params-json {params.p:q} --out {params.out:q} > {log} 2>&1"


rule sample_all:
    input:
        stage_targets(config, "sample"),
