# Step 9 (issue #7): Tables VIII-IX, Figs. 4-6, the paper comparison, results/README.md (the index of every
# table and figure) and results/report/tables.html. The outputs flagged with report() make up the HTML
# report: `snakemake --report results/report.html` after the workflow has run.

from wikiref.layout import REPORT_HTML, REPORT_INDEX, REPORT_METRICS
from wikiref.registry import report_inputs

report: "../report/workflow.rst"

REPORT_UPSTREAM = report_inputs(config)
REPORT_TABLE_STEMS = sorted({os.path.splitext(os.path.basename(t))[0] for t in REPORT_UPSTREAM
                             if t.startswith("results/tables/")})


def _fig(stem, caption):
    return report(f"results/figures/{stem}.png", caption=f"../report/{caption}", category="Figures",
                  labels={"figure": stem.split("_")[0].replace("fig", "Fig. ")})


def _tab(stem, caption, category):
    return report(f"results/tables/{stem}.csv", caption=f"../report/{caption}", category=category,
                  labels={"table": stem})


rule report:
    input:
        ablations="results/metrics/ablations.json",
        upstream=REPORT_UPSTREAM,
    output:
        fig4=_fig("fig4_duc_train_size", "fig4.rst"),
        fig5=_fig("fig5_wikiref_size", "fig5.rst"),
        fig6=_fig("fig6_wikiref_quality", "fig6.rst"),
        figure_files=multiext("results/figures/fig4_duc_train_size", ".svg", ".csv")
        + multiext("results/figures/fig5_wikiref_size", ".svg", ".csv")
        + multiext("results/figures/fig6_wikiref_quality", ".svg", ".csv"),
        table8=_tab("table8_pooling", "tables8_9.rst", "Tables"),
        table9=_tab("table9_subnetworks", "tables8_9.rst", "Tables"),
        comparison=_tab("paper_comparison", "comparison.rst", "Paper comparison"),
        claims=_tab("paper_claims", "claims.rst", "Paper comparison"),
        table_files=multiext("results/tables/table8_pooling", ".md", ".tex")
        + multiext("results/tables/table9_subnetworks", ".md", ".tex")
        + multiext("results/tables/paper_comparison", ".md", ".tex")
        + multiext("results/tables/paper_claims", ".md", ".tex"),
        html=report(REPORT_HTML, caption="../report/tables.rst", category="Tables", labels={"table": "all tables"}),
        index=REPORT_INDEX,
        summary=REPORT_METRICS,
    params:
        p=P("profile", "report"),
        tables=REPORT_TABLE_STEMS,
        metrics=[t for t in REPORT_UPSTREAM if t.startswith("results/metrics/")],
    threads: 1
    log:
        "logs/report.log",
    benchmark:
        "logs/benchmarks/report.tsv"
    shell:
        "wikiref report --params-json {params.p:q} --ablations {input.ablations:q} --tables {params.tables}"
        " --metrics {params.metrics} {input.ablations:q} --index {output.index:q} --html {output.html:q}"
        " --summary {output.summary:q} > {log} 2>&1"


rule report_all:
    input:
        stage_targets(config, "report"),
