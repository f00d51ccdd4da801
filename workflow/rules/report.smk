# Step 9: tables, figures, results/README.md.
# Placeholder until #7 lands: the rule runs `wikiref report`, which exits 3 with "NOT IMPLEMENTED".


rule report:
    output:
        marker="results/figures/done",
    params:
        p=P("profile", "report"),
    threads: 1
    log:
        "logs/report.log",
    benchmark:
        "logs/benchmarks/report.tsv"
    shell:
        "wikiref report --params-json {params.p:q} > {log} 2>&1"


rule report_all:
    input:
        stage_targets(config, "report"),
