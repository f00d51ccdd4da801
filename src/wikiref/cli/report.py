"""`wikiref report`: Tables VIII-IX, Figs. 4-6, the paper comparison and the results index."""

from __future__ import annotations

import argparse
import logging

from wikiref import layout
from wikiref.config import add_params_arguments, params_from_args
from wikiref.registry import job_keys

HELP = "render every table (csv/md/tex) and figure (png/svg) with profile captions"
DESCRIPTION = f"""In: --ablations ({layout.ABLATIONS_METRICS} from `wikiref ablations collect`; optional),
the tables the other steps wrote (--tables: stems under --tables-dir, e.g. table1_wikiref_splits) and
their metrics files (--metrics, listed in the index).
Out: {layout.TABLES}/table8_pooling.*, table9_subnetworks.*, paper_comparison.*, paper_claims.*
(csv + md + LaTeX booktabs), {layout.FIGURES}/fig4_duc_train_size, fig5_wikiref_size,
fig6_wikiref_quality (.png + .svg + .csv of the plotted numbers), {layout.REPORT_HTML} (every
table on one page), {layout.REPORT_INDEX} (the index linking everything) and {layout.REPORT_METRICS}.
Every caption and figure names the profile and encoder and says STAND-IN when the data are stand-ins.
Params: profile, report (dpi, column_width_in)."""

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--ablations", help=f"{layout.ABLATIONS_METRICS} (omit: no Tables VIII-IX / figures)")
    parser.add_argument("--tables", nargs="*", default=[], metavar="STEM", help="other steps' table stems to index")
    parser.add_argument("--metrics", nargs="*", default=[], metavar="JSON", help="metrics files to list in the index")
    parser.add_argument(
        "--figure-data",
        nargs="*",
        default=[],
        metavar="CSV",
        help="other stages' figure numbers to draw at report.dpi (e.g. "
        + ", ".join(layout.figure_data(layout.STAGE_FIGURES))
        + ")",
    )
    parser.add_argument("--tables-dir", default=layout.TABLES, help="default: %(default)s")
    parser.add_argument("--figures-dir", default=layout.FIGURES, help="default: %(default)s")
    parser.add_argument("--index", default=layout.REPORT_INDEX, help="default: %(default)s")
    parser.add_argument("--html", default=layout.REPORT_HTML, help="default: %(default)s")
    parser.add_argument("--summary", default=layout.REPORT_METRICS, help="default: %(default)s")
    add_params_arguments(parser)


def main(args: argparse.Namespace) -> int:
    from wikiref.stages import report

    params = params_from_args(args, *job_keys("report", "run"))
    inputs = {
        "ablations": args.ablations,
        "tables": args.tables,
        "metrics": args.metrics,
        "figure_data": args.figure_data,
    }
    outputs = {
        "tables_dir": args.tables_dir,
        "figures_dir": args.figures_dir,
        "index": args.index,
        "html": args.html,
        "summary": args.summary,
    }
    try:
        summary = report.run(params, inputs, outputs)
    except report.ReportError as exc:
        raise SystemExit(f"wikiref report: {exc}") from None
    print(
        f"report: {summary['tables']} tables, {summary['figures']} figures, {summary['cells_compared']} numbers "
        f"compared with the paper -> {args.index}"
    )
    return 0
