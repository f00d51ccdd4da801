"""`wikiref report`: Tables VIII-IX, Figs. 4-6, the paper comparison and the results index."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from wikiref.config import add_params_arguments, params_from_args

HELP = "render every table (csv/md/tex) and figure (png/svg) with profile captions"
DESCRIPTION = """In: --ablations (results/metrics/ablations.json from `wikiref ablations collect`; optional),
the tables the other steps wrote (--tables: stems under --tables-dir, e.g. table1_wikiref_splits) and
their metrics files (--metrics, listed in the index).
Out: results/tables/table8_pooling.*, table9_subnetworks.*, paper_comparison.*, paper_claims.*
(csv + md + LaTeX booktabs), results/figures/fig4_duc_train_size, fig5_wikiref_size,
fig6_wikiref_quality (.png + .svg + .csv of the plotted numbers), results/report/tables.html (every
table on one page), results/README.md (the index linking everything) and results/metrics/report.json.
Every caption and figure names the profile and encoder and says STAND-IN when the data are stand-ins.
Params: profile, report (dpi, column_width_in)."""

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--ablations", help="results/metrics/ablations.json (omit: no Tables VIII-IX / figures)")
    parser.add_argument("--tables", nargs="*", default=[], metavar="STEM", help="other steps' table stems to index")
    parser.add_argument("--metrics", nargs="*", default=[], metavar="JSON", help="metrics files to list in the index")
    parser.add_argument("--tables-dir", default="results/tables")
    parser.add_argument("--figures-dir", default="results/figures")
    parser.add_argument("--index", default="results/README.md")
    parser.add_argument("--html", default="results/report/tables.html")
    parser.add_argument("--summary", default="results/metrics/report.json")
    add_params_arguments(parser)


def main(args: argparse.Namespace) -> int:
    from wikiref.files import read_json
    from wikiref.stages.report.build import Outputs, build

    params = params_from_args(args, "profile", "report")
    ab = None
    if args.ablations:
        path = Path(args.ablations)
        if not path.exists():
            raise SystemExit(f"wikiref report: {path} missing: run `wikiref ablations collect` first")
        ab = read_json(path)
    stems = []
    for stem in args.tables:
        name = Path(stem).name
        for suffix in (".csv", ".md", ".tex"):
            if name.endswith(suffix):
                name = name[: -len(suffix)]
        if not (Path(args.tables_dir) / f"{name}.csv").exists():
            raise SystemExit(f"wikiref report: table {name} not found in {args.tables_dir}")
        if name not in stems:
            stems.append(name)
    out = Outputs(tables_dir=Path(args.tables_dir), figures_dir=Path(args.figures_dir), index=Path(args.index),
                  html=Path(args.html), summary=Path(args.summary))
    summary = build(params, out, ablations=ab, table_stems=stems, metrics_files=sorted(set(args.metrics)))
    log.info("report: %d tables, %d figures, %d numbers compared with the paper -> %s", summary["tables"],
             summary["figures"], summary["cells_compared"], out.index)
    return 0
