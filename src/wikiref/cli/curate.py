"""`wikiref curate part|merge`: raw examples -> the curated WikiRef dataset (journal §II-A-2)."""

from __future__ import annotations

import argparse

from wikiref import layout
from wikiref.cli import add_default, add_files, add_param_jobs, run_job

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
    part, merge = add_param_jobs(parser, "curate", JOBS).values()
    part.add_argument("--part", required=True, help="part name (one of collect.dump.parts)")
    part.add_argument("--raw", help=f"raw part file (default: {layout.RAW_PART})")
    part.add_argument("--out", help=f"annotated part file (default: {layout.CURATED_PART})")
    part.add_argument("--stats", help=f"part stats JSON (default: {layout.CURATED_PART_STATS})")
    add_default(part, "--threads", 1, "worker processes", type=int)
    add_default(part, "--shard-size", 64, "rows per work unit", type=int)

    add_files(
        merge,
        "--parts",
        "PARQUET",
        f"annotated part files (default: every {layout.CURATED_PART.format(part='*')}); "
        "each part's stats are read from <part>.stats.json next to it",
    )
    add_default(merge, "--out", layout.CURATED, "curated examples")
    add_default(merge, "--thresholds", layout.CURATE_THRESHOLDS, "thresholds artifact written, then read by filter (b)")
    add_default(merge, "--stats", layout.CURATE_STATS, "stats JSON")
    add_default(merge, "--metrics", layout.CURATE_METRICS, "metrics JSON")


def _part(args: argparse.Namespace, params: dict) -> None:
    import time

    from wikiref.stages import curate

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


def _merge(args: argparse.Namespace, params: dict) -> None:
    import glob

    from wikiref.stages import curate

    parts = args.parts or sorted(glob.glob(layout.CURATED_PART.format(part="*")))
    if not parts:
        raise curate.CurateError(f"no annotated parts given and none found at {layout.CURATED_PART}")
    outputs = {"examples": args.out, "thresholds": args.thresholds, "stats": args.stats, "metrics": args.metrics}
    full = curate.merge(params, {"parts": parts}, outputs)
    print(
        f"curate: {full['rows_in']} raw rows -> {full['kept']} curated examples -> {args.out}; dropped: "
        + ", ".join(f"{k}={v}" for k, v in full["dropped"].items() if v)
    )


JOBS = {  # name: (run, help, what it does)
    "part": (_part, "annotate one raw part (spaCy, statistics, filter scores)", "Annotate one raw part"),
    "merge": (_merge, "filters (a), (b), (c) over all annotated parts", "Filter and merge the annotated parts"),
}


def main(args: argparse.Namespace) -> int:
    from wikiref.stages.curate import CurateError

    return run_job(args, "curate", JOBS, ((CurateError,), 1))
