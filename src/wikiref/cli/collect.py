"""`wikiref collect download|part|merge`: dump parts -> raw WikiRef examples (journal §II-A-1)."""

from __future__ import annotations

import argparse

from wikiref import layout
from wikiref.cli import add_default, add_files, add_param_jobs, run_job

HELP = "dump parts -> cited statements with fetched, extracted documents"
DESCRIPTION = f"""Three jobs (the Snakemake rules run one part job per dump part, then one merge; with
collect.dump.download.mirror set, the parts are downloaded first, one download job per part):

download: the dump parts from a Wikimedia dump mirror (collect.dump.download: mirror, wiki, date,
    multistream) into collect.dump.dir. --index-only: the dump's dumpstatus.json and sha1sums file
    -> {layout.DUMP_STATUS} and {layout.DUMP_SHA1SUMS} in collect.dump.dir (checked:
    the articles job is done, every part has a sha1, the listed parts exist); `parts: all` lists
    the parts from there. Otherwise each part (--part, default collect.dump.parts) is streamed to a
    .partial file, resumed with HTTP Range after a cut, fsync'ed, and renamed only when its sha1 is
    the dump's; a mismatch or a 404 is an error naming the part (exit 1). Missing index files are
    downloaded first.

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
    download, part, merge = add_param_jobs(parser, "collect", JOBS).values()
    download.add_argument("--index-only", action="store_true", help="download the dump's index files only")
    download.add_argument(
        "--part", action="append", help="a part (or its dump file name); repeatable (default: collect.dump.parts)"
    )
    download.add_argument(
        "--status", help=f"the dump's dumpstatus.json (default: {layout.DUMP_STATUS} in collect.dump.dir)"
    )
    download.add_argument(
        "--sha1sums", help=f"the dump's sha1sums (default: {layout.DUMP_SHA1SUMS} in collect.dump.dir)"
    )
    download.add_argument("--dir", help="folder for the parts (default: collect.dump.dir)")
    download.add_argument("--out", help="the output file, for exactly one --part (default: <dir>/<dump file name>)")
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


def _download(args: argparse.Namespace, params: dict) -> None:
    from pathlib import Path

    from wikiref.web import download

    index = {
        "status": args.status or layout.dump_status(params),
        "sha1sums": args.sha1sums or layout.dump_sha1sums(params),
    }
    if args.index_only or not all(Path(p).is_file() for p in index.values()):
        got = download.index(params, {}, index)
        print(f"{got['wiki']} {got['date']}: {got['parts_in_dump']} part(s) in the dump -> {index['status']}")
    if args.index_only:
        return
    if args.out and len(args.part or []) != 1:
        raise download.DownloadError("--out needs exactly one --part")
    outputs = {"file": args.out} if args.out else {"dir": args.dir or layout.dump_dir(params)}
    got = download.run(params, index, outputs, parts=args.part)
    print(f"{len(got['files'])} part(s), {got['bytes']:,} bytes, sha1 verified -> {args.out or outputs['dir']}")


def _merge(args: argparse.Namespace, params: dict) -> None:
    from wikiref.stages.collect.pipeline import merge
    from wikiref.wiki.index import dump_parts

    # parts: all -> the parts the downloaded index lists (a clear error when it is not there)
    parts = dump_parts(params)
    params = {**params, "collect": {**params["collect"], "dump": {**params["collect"]["dump"], "parts": parts}}}
    stats = args.stats or [layout.RAW_PART_STATS.format(part=p) for p in parts]
    merged = merge(params, {"stats": stats}, {"metrics": args.out})
    total = merged["total"]
    print(
        f"{len(stats)} part(s): {total['dump']['articles']} articles, {total['examples']['written']} raw examples "
        f"-> {args.out}"
    )


JOBS = {  # name: (run, help, what it does)
    "download": (_download, "dump parts from a Wikimedia mirror, sha1-verified", "Download the dump parts"),
    "part": (_part, "one dump part -> data/raw/<part>.parquet + stats", "Collect one dump part"),
    "merge": (_merge, "per-part collect stats -> results/metrics/collect.json", "Sum the per-part stats"),
}


def main(args: argparse.Namespace) -> int:
    from wikiref.stages.collect.pipeline import CollectError
    from wikiref.web.download import DownloadError
    from wikiref.wiki.dump import DumpError
    from wikiref.wiki.index import DumpIndexError

    failures = (CollectError, DumpError, DumpIndexError, DownloadError, FileNotFoundError)
    return run_job(args, "collect", JOBS, (failures, 1))
