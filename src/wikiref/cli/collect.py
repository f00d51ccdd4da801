"""`wikiref collect`: one dump part -> raw WikiRef examples (journal §II-A-1)."""

from __future__ import annotations

import argparse
import logging

from wikiref.config import add_params_arguments, params_from_args

HELP = "one dump part -> cited statements with fetched, extracted documents"
DESCRIPTION = """In: <collect.dump.dir>/<part>(.xml).bz2 (a MediaWiki XML dump part, plain or multistream)
and the cited pages through collect.fetch.backend (live HTTP, wayback, or local WARC files).
Out: data/raw/<part>.parquet (id, article, query, statement, url, citation_type, doc_title,
doc_text + provenance columns, sorted by id) and data/raw/<part>.stats.json (every item read,
kept and dropped by reason).

Resumable: checkpoints go to a work folder next to the output (.<part>.work/); a killed run
started again finishes with output identical to an uninterrupted run. Fetched pages are cached
under collect.fetch.cache_dir and never fetched twice."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_params_arguments(parser)
    parser.add_argument("--part", required=True, help="dump part name (one of collect.dump.parts)")
    parser.add_argument("--out", required=True, help="output Parquet file (data/raw/<part>.parquet)")
    parser.add_argument("--stats", required=True, help="output stats JSON (data/raw/<part>.stats.json)")
    parser.add_argument("--work-dir", default=None, help="checkpoint folder (default: .<part>.work next to --out)")
    parser.add_argument("--keep-work", action="store_true", help="keep the checkpoint folder after success")


def main(args: argparse.Namespace) -> int:
    from wikiref.stages.collect.pipeline import run_part
    from wikiref.stages.collect.dump import DumpError

    params = params_from_args(args, "collect")
    try:
        stats = run_part(params["collect"], args.part, args.out, args.stats, work_dir=args.work_dir,
                         keep_work=args.keep_work)
    except (DumpError, FileNotFoundError) as exc:
        logging.getLogger("wikiref.stages.collect").error("%s", exc)
        return 1
    print(f"{args.part}: {stats['dump']['articles']} articles, {stats['statements']['total']} statements "
          f"({stats['statements']['kept']} kept), {stats['urls']['unique']} URLs, "
          f"{stats['examples']['written']} raw examples -> {args.out}")
    return 0
