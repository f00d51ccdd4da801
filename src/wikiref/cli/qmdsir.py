"""`wikiref qmdsir standin|part|merge`: QmdsIr examples from MS MARCO QnA (Pasunuru et al. 2021, §3.2)."""

from __future__ import annotations

import argparse

from wikiref import layout
from wikiref.cli import (
    add_default,
    add_files,
    add_param_jobs,
    add_source_outputs,
    run_job,
    source_outputs,
    standin_label,
)

HELP = "QmdsIr: query-focused multi-document examples from MS MARCO QnA (the open substitute for the Bing logs)"
DESCRIPTION = f"""Three jobs (standin only when qmdsir.standin):

standin: the Wikipedia sample dump (<sample.out_dir>/dump/enwiki-sample.xml.bz2) -> STAND-IN MS MARCO
    QnA v2.1 files in {layout.QMDSIR_STANDIN}: train_v2.1.json (~75% of the queries, by seeded hash)
    and dev_v2.1.json in the real column-oriented layout, NOTICE.txt and MANIFEST.json (counts, sha256,
    standin: true). One query per article section with >= 6 spaCy sentences ("<heading> <title>",
    lower-cased); passages = windows of 3 consecutive sentences; a seeded hash of the query picks how
    the passages are laid out so that every filter below fires on some queries; at most
    qmdsir.standin_queries queries (0 = all). The folder is replaced as a whole; a folder that is not
    a stand-in (no stand-in MANIFEST.json) is never replaced. It is NOT MS MARCO.

part: the MS MARCO QnA files under qmdsir.dir (qmdsir.files: split -> files; v2.1 column JSON or v1.1
    JSON lines, optionally .gz; the layout is detected from the data) -> the shard's examples on the
    common schema, every split, in {layout.QMDSIR_SHARD} and its counts in
    {layout.QMDSIR_SHARD_STATS}. A record belongs to shard hash(query_id) % qmdsir.shards.
    Per record, in order (each drop counted): malformed; no_selected_passage (no is_selected passage,
    e.g. "No Answer Present."); summary = the first selected passage in spaCy sentences,
    summary_too_short (< qmdsir.min_summary_sentences); documents = the other passages minus those
    from the summary passage's URL (the answer's source document) and empty ones, too_few_documents
    (< qmdsir.min_documents); uncovered_summary_sentence (a summary sentence whose best ROUGE-1
    recall over the documents is < qmdsir.min_coverage_recall; rouge-score tokens, Porter stemming).
    Also counted: bad_line (v1.1), duplicate_id (first kept). When qmdsir.files.test is empty,
    qmdsir.test_from_dev of the dev queries (seeded hash of query_id) become test. A missing folder
    or file is an error that shows the expected layout and where to get MS MARCO.

merge: the parts -> {layout.SOURCE_SPLIT.format(source="qmdsir", split="<split>")}
    (one file per split, wikiref.schemas.EXAMPLE, rows sorted by id),
    {layout.QMDSIR_TABLE}.{{csv,md,tex}} (the QmdsCnnIr paper's Table 1 columns beside the
    paper's numbers) and {layout.QMDSIR_METRICS} (sizes, summed counts, statistics; STAND-IN when
    built from the stand-in). Every shard must be given once; an example id in two parts is an error."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    standin, part, merge = add_param_jobs(parser, "qmdsir", JOBS).values()
    standin.add_argument(
        "--dump", required=True, help="the Wikipedia sample dump (<sample.out_dir>/dump/enwiki-sample.xml.bz2)"
    )
    add_default(standin, "--out", layout.QMDSIR_STANDIN, "output folder, replaced as a whole")

    part.add_argument("--shard", type=int, required=True, help="this job's shard, 0 <= shard < qmdsir.shards")
    part.add_argument("--dir", help="the MS MARCO folder (default: qmdsir.dir)")
    part.add_argument("--examples", help=f"output examples (default: {layout.QMDSIR_SHARD} of the shard)")
    part.add_argument("--stats", help=f"output counts (default: {layout.QMDSIR_SHARD_STATS} of the shard)")

    add_files(merge, "--parts", "PARQUET", f"the part files ({layout.QMDSIR_SHARD})", required=True)
    add_files(merge, "--stats", "JSON", f"their counts ({layout.QMDSIR_SHARD_STATS})", required=True)
    add_source_outputs(merge, "qmdsir", layout.QMDSIR_TABLE, layout.QMDSIR_METRICS)


def _standin(args: argparse.Namespace, params: dict) -> None:
    from wikiref.stages.qmdsir import stage

    manifest = stage.standin(params, {"dump": args.dump}, {"dir": args.out})
    counts = manifest["counts"]
    print(
        f"qmdsir standin: STAND-IN MS MARCO v2.1, {counts['queries']} queries {counts['by_split']} "
        f"from {counts['articles']} articles -> {args.out}"
    )


def _part(args: argparse.Namespace, params: dict) -> None:
    from wikiref.stages.qmdsir import stage

    examples = args.examples or layout.QMDSIR_SHARD.format(shard=args.shard)
    stats_path = args.stats or layout.QMDSIR_SHARD_STATS.format(shard=args.shard)
    inputs = {"dir": args.dir} if args.dir else {}
    stats = stage.part(params, inputs, {"examples": examples, "stats": stats_path}, shard=args.shard)
    counts = stats["counts"]
    kept = {s: counts.get(f"kept:{s}", 0) for s in layout.SPLITS}
    print(
        f"qmdsir part {stats['shard']}/{stats['shards']}: {counts.get('records_read', 0)} records, "
        f"kept {kept}{standin_label(stats)} -> {examples}"
    )


def _merge(args: argparse.Namespace, params: dict) -> None:
    from wikiref.stages.qmdsir import stage

    metrics = stage.merge(params, {"parts": args.parts, "stats": args.stats}, source_outputs(args, "qmdsir"))
    print(
        f"qmdsir merge: {metrics['examples']} examples {metrics['sizes']}{standin_label(metrics)}"
        f" -> {args.out_dir}, {args.table}.md"
    )


JOBS = {  # name: (run, help, what it does)
    "standin": (
        _standin,
        "build STAND-IN MS MARCO QnA v2.1 files from the Wikipedia sample",
        "Build the STAND-IN MS MARCO files",
    ),
    "part": (
        _part,
        "one shard of the MS MARCO records -> QmdsIr examples + counts",
        "Build one shard of QmdsIr examples",
    ),
    "merge": (_merge, "the shards -> the QmdsIr split files, Table 1 statistics, metrics", "Merge the QmdsIr shards"),
}


def main(args: argparse.Namespace) -> int:
    from wikiref.stages.qmdsir.reader import QmdsIrError

    return run_job(args, "qmdsir", JOBS, ((QmdsIrError,), 1))
