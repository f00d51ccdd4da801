# Tables VIII-IX, Figs. 4-6, the paper comparison, results/README.md (the index of every table and
# figure) and results/report/tables.html. The outputs flagged with report() make up the HTML report:
# `snakemake --report results/report.html` after the workflow has run.

from wikiref.registry import report_inputs


report: "../report/workflow.rst"


REPORT_UPSTREAM = report_inputs(config)
# The other stages' tables (stems) and metrics files the index lists.
REPORT_UPSTREAM_TABLES = sorted(
    {os.path.splitext(os.path.basename(t))[0] for t in REPORT_UPSTREAM if t.startswith(layout.TABLES + "/")}
)
REPORT_UPSTREAM_METRICS = [t for t in REPORT_UPSTREAM if t.startswith(layout.METRICS + "/")]
# The caption (workflow/report/<file>) and HTML-report category of each table the report writes.
REPORT_TABLE_CAPTIONS = {
    "table8_pooling": ("tables8_9.rst", "Tables"),
    "table9_subnetworks": ("tables8_9.rst", "Tables"),
    "paper_comparison": ("comparison.rst", "Paper comparison"),
    "paper_claims": ("claims.rst", "Paper comparison"),
}


def report_figure(stem):
    """A figure's PNG in the HTML report; its caption is workflow/report/fig<N>.rst."""
    label = stem.split("_")[0]  # fig4_duc_train_size -> fig4
    return report(
        f"{layout.FIGURES}/{stem}.png",
        caption=f"../report/{label}.rst",
        category="Figures",
        labels={"figure": label.replace("fig", "Fig. ")},
    )


def report_table(stem):
    """A table's CSV in the HTML report."""
    caption, category = REPORT_TABLE_CAPTIONS[stem]
    return report(
        f"{layout.TABLES}/{stem}.csv", caption=f"../report/{caption}", category=category, labels={"table": stem}
    )


rule report:
    input:
        ablations=layout.ABLATIONS_METRICS,
        upstream=REPORT_UPSTREAM,
    output:
        figures=[report_figure(stem) for stem in layout.REPORT_FIGURE_STEMS],
        figure_files=layout.report_figure_files(),
        tables=[report_table(stem) for stem in layout.REPORT_TABLE_STEMS],
        table_files=[f for f in layout.report_tables() if not f.endswith(".csv")],
        html=report(
            layout.REPORT_HTML, caption="../report/tables.rst", category="Tables", labels={"table": "all tables"}
        ),
        index=layout.REPORT_INDEX,
        summary=layout.REPORT_METRICS,
    log:
        layout.log_file("report"),
    benchmark:
        layout.benchmark_file("report")
    threads: 1
    params:
        p=stage_params("report", "run"),
        tables=REPORT_UPSTREAM_TABLES,
        metrics=REPORT_UPSTREAM_METRICS,
        tables_dir=layout.TABLES,
        figures_dir=layout.FIGURES,
    shell:
        "wikiref report --params-json {params.p:q} --ablations {input.ablations:q} --tables {params.tables}"
        " --metrics {params.metrics} --tables-dir {params.tables_dir:q}"
        " --figures-dir {params.figures_dir:q} --index {output.index:q} --html {output.html:q}"
        " --summary {output.summary:q} > {log} 2>&1"


rule report_all:
    input:
        stage_targets(config, "report"),
