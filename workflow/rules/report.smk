# Tables VIII-IX, Figs. 4-6, the paper comparison, results/README.md (the index of every table and
# figure) and results/report/tables.html. The outputs flagged with report() make up the HTML report:
# `snakemake --report results/report.html` after the workflow has run.

from wikiref.registry import report_inputs


report: "../report/workflow.rst"


REPORT_UPSTREAM = report_inputs(config)
# The other stages' tables (stems) and metrics files the index lists.
REPORT_UPSTREAM_TABLES = sorted(
    {os.path.splitext(os.path.basename(t))[0] for t in REPORT_UPSTREAM if t.startswith(f"{layout.TABLES}/")}
)
REPORT_UPSTREAM_METRICS = [t for t in REPORT_UPSTREAM if t.startswith(f"{layout.METRICS}/")]
# How each figure and table the report writes appears in the HTML report: caption (workflow/report/*.rst),
# category and labels. A figure's caption is named after it: fig4_duc_train_size -> fig4.rst.
# The source comparison's figure is not a paper figure: its caption file and label are its own name.
REPORT_FIGURES = {
    stem: {
        "caption": f"../report/{stem.split('_')[0] if stem[3:4].isdigit() else stem}.rst",
        "category": "Figures",
        "labels": {"figure": stem.split("_")[0].replace("fig", "Fig. ") if stem[3:4].isdigit() else "sources"},
    }
    for stem in layout.REPORT_FIGURE_STEMS
}
REPORT_TABLES = {
    "table8_pooling": {"caption": "../report/tables8_9.rst", "category": "Tables"},
    "table9_subnetworks": {"caption": "../report/tables8_9.rst", "category": "Tables"},
    "paper_comparison": {"caption": "../report/comparison.rst", "category": "Paper comparison"},
    "paper_claims": {"caption": "../report/claims.rst", "category": "Paper comparison"},
}


rule report:
    input:
        ablations=layout.ABLATIONS_METRICS,
        upstream=REPORT_UPSTREAM,
        figure_data=layout.figure_data(layout.STAGE_FIGURES),
    output:
        figures=[report(f"{layout.FIGURES}/{stem}.png", **REPORT_FIGURES[stem]) for stem in layout.REPORT_FIGURE_STEMS],
        figure_files=layout.report_figure_files(),
        stage_figures=layout.stage_figure_files(),
        tables=[
            report(f"{layout.TABLES}/{stem}.csv", labels={"table": stem}, **REPORT_TABLES[stem])
            for stem in layout.REPORT_TABLE_STEMS
        ],
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
    conda:
        SOFTWARE_ENV
    threads: 1
    params:
        p=stage_params("report", "run"),
        tables=REPORT_UPSTREAM_TABLES,
        metrics=REPORT_UPSTREAM_METRICS,
        tables_dir=lambda wc, output: os.path.dirname(output.tables[0]),
        figures_dir=lambda wc, output: os.path.dirname(output.figures[0]),
    shell:
        "wikiref report --params-json {params.p:q} --ablations {input.ablations:q} --tables {params.tables}"
        " --metrics {params.metrics} --figure-data {input.figure_data:q} --tables-dir {params.tables_dir:q}"
        " --figures-dir {params.figures_dir:q} --index {output.index:q} --html {output.html:q}"
        " --summary {output.summary:q} > {log} 2>&1"


rule report_all:
    input:
        stage_targets(config, "report"),
