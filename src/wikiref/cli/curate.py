"""`wikiref curate part|merge`: raw examples -> the curated WikiRef dataset (journal §II-A-2)."""

from __future__ import annotations

import argparse
import sys

from wikiref import layout
from wikiref.config import add_params_arguments, params_from_args
from wikiref.registry import job_keys

HELP = "filter raw examples (lemma recall, percentile windows, oracle ROUGE-2)"
DESCRIPTION = f"""Two jobs (the Snakemake rules run one part job per raw part, then one merge):

part: annotate one raw part ({layout.RAW_PART}) on --threads processes: spaCy tokens, lemmas and
    sentences (text section), document sentences, the six statistics, the lemma recall of filter (a)
    and the greedy ROUGE-2-recall oracle score of filter (c). Invalid rows are counted skips.
    Out: {layout.CURATED_PART} and {layout.CURATED_PART_STATS}. Reads the text section and only
    curate.include_doc_title, curate.oracle_max_sentences and curate.max_raw_per_part, so changing a
    filter threshold reruns the merge, not spaCy.

merge: apply the filters over all annotated parts: (a) lemma recall >= curate.min_lemma_recall;
    (b) the curate.percentile_low/high percentiles of doc tokens, doc sentences, summary tokens,
    summary sentences, query depth and query tokens, computed on the survivors of (a) and written to
    {layout.CURATE_THRESHOLDS}, which (b) then reads; (c) oracle ROUGE-2 recall >
    curate.min_oracle_rouge2_recall. Out: {layout.CURATED}, the thresholds, {layout.CURATE_STATS}
    and {layout.CURATE_METRICS}; every input row is kept or counted under one drop reason."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    jobs = parser.add_subparsers(dest="job", required=True, metavar="<job>")
    part = jobs.add_parser(
        "part",
        help="annotate one raw part (spaCy, statistics, filter scores)",
        description="Annotate one raw part (see `wikiref curate --help`).",
    )
    add_params_arguments(part)
    part.add_argument("--part", required=True, help="part name (one of collect.dump.parts)")
    part.add_argument("--raw", default=None, help=f"raw part file (default: {layout.RAW_PART})")
    part.add_argument("--out", default=None, help=f"annotated part file (default: {layout.CURATED_PART})")
    part.add_argument("--stats", default=None, help=f"part stats JSON (default: {layout.CURATED_PART_STATS})")
    part.add_argument("--threads", type=int, default=1, help="worker processes (default: %(default)s)")
    part.add_argument("--shard-size", type=int, default=64, help="rows per work unit (default: %(default)s)")
    part.set_defaults(_job=_part)

    merge = jobs.add_parser(
        "merge",
        help="filters (a), (b), (c) over all annotated parts",
        description="Filter and merge the annotated parts (see `wikiref curate --help`).",
    )
    add_params_arguments(merge)
    merge.add_argument(
        "--parts",
        nargs="+",
        default=None,
        metavar="PARQUET",
        help=f"annotated part files (default: every {layout.CURATED_PART.format(part='*')}); "
        "each part's stats are read from <part>.stats.json next to it",
    )
    merge.add_argument("--out", default=layout.CURATED, help="curated examples (default: %(default)s)")
    merge.add_argument(
        "--thresholds",
        default=layout.CURATE_THRESHOLDS,
        help="thresholds artifact written, then read by filter (b) (default: %(default)s)",
    )
    merge.add_argument("--stats", default=layout.CURATE_STATS, help="stats JSON (default: %(default)s)")
    merge.add_argument("--metrics", default=layout.CURATE_METRICS, help="metrics JSON (default: %(default)s)")
    merge.set_defaults(_job=_merge)


def _part(args: argparse.Namespace) -> int:
    import time

    from wikiref.stages import curate

    params = params_from_args(args, *job_keys("curate", "part"))
    inputs = {"raw": args.raw or layout.RAW_PART.format(part=args.part)}
    outputs = {
        "part": args.out or layout.CURATED_PART.format(part=args.part),
        "stats": args.stats or layout.CURATED_PART_STATS.format(part=args.part),
    }
    t0 = time.monotonic()
    stats = curate.run_part(params, inputs, outputs, threads=args.threads, shard_size=args.shard_size)
    dt = time.monotonic() - t0
    print(
        f"{inputs['raw']}: {stats['rows_in']} raw rows -> {stats['annotated']} annotated "
        f"({sum(stats['dropped'].values())} skipped) in {dt:.1f}s ({stats['rows_in'] / max(dt, 1e-9):.1f} rows/s) "
        f"-> {outputs['part']}"
    )
    return 0


def _merge(args: argparse.Namespace) -> int:
    import glob

    from wikiref.stages import curate

    params = params_from_args(args, *job_keys("curate", "merge"))
    parts = args.parts or sorted(glob.glob(layout.CURATED_PART.format(part="*")))
    if not parts:
        raise curate.CurateError(f"no annotated parts given and none found at {layout.CURATED_PART}")
    outputs = {"examples": args.out, "thresholds": args.thresholds, "stats": args.stats, "metrics": args.metrics}
    full = curate.merge(params, {"parts": parts}, outputs)
    print(
        f"curate: {full['rows_in']} raw rows -> {full['kept']} curated examples -> {args.out}; dropped: "
        + ", ".join(f"{k}={v}" for k, v in full["dropped"].items() if v)
    )
    return 0


def main(args: argparse.Namespace) -> int:
    from wikiref.schemas import SchemaError
    from wikiref.stages.curate import CurateError

    try:
        return args._job(args)
    except (CurateError, SchemaError, FileNotFoundError) as exc:
        print(f"wikiref curate {args.job}: {exc}", file=sys.stderr)
        return 1
