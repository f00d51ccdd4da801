"""`wikiref collect part|merge`: dump parts -> raw WikiRef examples (journal §II-A-1)."""

from __future__ import annotations

import argparse

from wikiref import layout
from wikiref.cli import add_default, add_files, add_param_jobs, run_job

HELP = "dump parts -> cited statements with fetched, extracted documents"
DESCRIPTION = f"""Two jobs (the Snakemake rules run one part job per dump part, then one merge):

part: one dump part -> raw examples.
    In: <collect.dump.dir>/<part>(.xml).bz2 (a MediaWiki XML dump part, plain or multistream) and the
    cited pages through collect.fetch.backend (live HTTP, wayback, or local WARC files).
    Out: {layout.RAW_PART} (id, article, query, statement, url, citation_type, doc_title, doc_text
    + provenance columns, sorted by id) and {layout.RAW_PART_STATS} (every item read, kept and
    dropped by reason). Resumable: checkpoints go to a work folder next to the output (.<part>.work/);
    a killed run started again finishes with output identical to an uninterrupted run. Fetched pages
    are cached under collect.fetch.cache_dir and never fetched twice.

merge: the per-part stats of every part in collect.dump.parts -> {layout.COLLECT_METRICS}
    (summed counters, reasons included, plus per-part figures); fails when the books do not balance."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    part, merge = add_param_jobs(parser, "collect", JOBS).values()
    part.add_argument("--part", required=True, help="dump part name (one of collect.dump.parts)")
    part.add_argument("--dump", help="the part's dump file (default: found in collect.dump.dir)")
    part.add_argument("--out", help=f"output Parquet file (default: {layout.RAW_PART})")
    part.add_argument("--stats", help=f"output stats JSON (default: {layout.RAW_PART_STATS})")
    part.add_argument("--work-dir", help="checkpoint folder (default: .<part>.work next to --out)")
    part.add_argument("--keep-work", action="store_true", help="keep the checkpoint folder after success")

    add_files(
        merge, "--stats", "JSON", f"per-part stats files (default: {layout.RAW_PART_STATS} for each collect.dump.parts)"
    )
    add_default(merge, "--out", layout.COLLECT_METRICS, "merged metrics JSON")


def _part(args: argparse.Namespace, params: dict) -> None:
    from wikiref.stages.collect.pipeline import run_part

    inputs = {"dump": args.dump} if args.dump else {}
    outputs = {
        "raw": args.out or layout.RAW_PART.format(part=args.part),
        "stats": args.stats or layout.RAW_PART_STATS.format(part=args.part),
    }
    stats = run_part(params, inputs, outputs, part=args.part, work_dir=args.work_dir, keep_work=args.keep_work)
    print(
        f"{args.part}: {stats['dump']['articles']} articles, {stats['statements']['total']} statements "
        f"({stats['statements']['kept']} kept), {stats['urls']['unique']} URLs, "
        f"{stats['examples']['written']} raw examples -> {outputs['raw']}"
    )


def _merge(args: argparse.Namespace, params: dict) -> None:
    from wikiref.stages.collect.pipeline import merge

    stats = args.stats or [layout.RAW_PART_STATS.format(part=p) for p in params["collect"]["dump"]["parts"]]
    merged = merge(params, {"stats": stats}, {"metrics": args.out})
    total = merged["total"]
    print(
        f"{len(stats)} part(s): {total['dump']['articles']} articles, {total['examples']['written']} raw examples "
        f"-> {args.out}"
    )


JOBS = {  # name: (run, help, what it does)
    "part": (_part, "one dump part -> data/raw/<part>.parquet + stats", "Collect one dump part"),
    "merge": (_merge, "per-part collect stats -> results/metrics/collect.json", "Sum the per-part stats"),
}


def main(args: argparse.Namespace) -> int:
    from wikiref.stages.collect.dump import DumpError
    from wikiref.stages.collect.pipeline import CollectError

    return run_job(args, "collect", JOBS, ((CollectError, DumpError, FileNotFoundError), 1))
