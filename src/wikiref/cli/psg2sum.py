"""`wikiref psg2sum standin|part|merge|baselines`: Psg2Sum, passage-summary pairs mined from Wikipedia
revision histories (Zhou, Wei, Zhou)."""

from __future__ import annotations

import argparse

from wikiref import layout
from wikiref.cli import (
    add_default,
    add_files,
    add_inputs,
    add_param_jobs,
    add_split_folder,
    add_torch_arguments,
    named_inputs,
    run_job,
    set_torch_threads,
    split_files,
    standin_label,
)

HELP = "Psg2Sum (Zhou, Wei, Zhou): lead sentence + body passage added in one revision -> common examples, Tables 2-4"
DESCRIPTION = f"""Jobs in order (standin only when psg2sum.standin is true):

standin: the sample's Wikipedia dump -> {layout.PSG2SUM_STANDIN}/<part>.xml.bz2 for every part of
    psg2sum.dump.parts: STAND-IN page histories (pages-meta-history layout) whose revisions add lead
    paragraphs and body passages together, vandalise and revert, add body text alone, paste bot-sized
    text; NOTICE.txt, MANIFEST.json.

part: one history dump part (psg2sum.dump.dir/<part>: .bz2, .7z, .gz or .xml) -> {layout.PSG2SUM_PART}
    (+ .stats.json): pages and revisions streamed in order; reverts (sha1 of an earlier revision) and
    edits larger than psg2sum.max_edit_chars skipped and counted; each edit's added lead sentences paired
    with the added body passage of highest stopword-free overlap rate, kept when >= min(overlap_grid).
    Checkpointed every psg2sum.pages_per_chunk pages: a killed job resumes where it stopped.

merge: every part -> duplicates removed, Table 3 (size at each λ of overlap_grid), pairs at
    psg2sum.min_overlap, passages split into sentences, a seeded random split ->
    {layout.SOURCE_SPLIT.format(source="psg2sum", split="<split>")}, {layout.PSG2SUM_TABLE2}.*,
    {layout.PSG2SUM_TABLE3}.*, {layout.PSG2SUM_METRICS}.

baselines: LEAD1, TEXTRANK and the package's BERT scorer (NN-SE's row) on the test split, ROUGE-1/2/L
    R/P/F with 95% intervals from the official scorer -> {layout.PSG2SUM_TABLE4}.*, {layout.PSG2SUM_SUMMARIES},
    {layout.PSG2SUM_BASELINES_METRICS}."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    jobs = add_param_jobs(parser, "psg2sum", JOBS)
    jobs["standin"].add_argument("--dump", required=True, help="the sample's Wikipedia dump (sample.out_dir/dump/...)")
    add_default(jobs["standin"], "--out", layout.PSG2SUM_STANDIN, "output folder, replaced as a whole")
    part = jobs["part"]
    part.add_argument("--part", required=True, help="the history part (a name of psg2sum.dump.parts)")
    part.add_argument("--dump", help="the part's file (default: found in psg2sum.dump.dir)")
    part.add_argument("--out", help=f"pairs parquet (default: {layout.PSG2SUM_PART})")
    part.add_argument("--stats", help=f"stats JSON (default: {layout.PSG2SUM_PART_STATS})")
    merge = jobs["merge"]
    add_files(merge, "--pairs", "PARQUET", f"every part's pairs ({layout.PSG2SUM_PART})", required=True)
    add_files(merge, "--stats", "JSON", f"every part's stats ({layout.PSG2SUM_PART_STATS})", required=True)
    add_split_folder(merge, "--out-dir", "psg2sum")
    add_default(merge, "--table2", layout.PSG2SUM_TABLE2, "Table 2 stem")
    add_default(merge, "--table3", layout.PSG2SUM_TABLE3, "Table 3 stem")
    add_default(merge, "--metrics", layout.PSG2SUM_METRICS, "metrics JSON")
    base = jobs["baselines"]
    add_split_folder(base, "--splits-dir", "psg2sum")
    add_inputs(base, "splits.<split> (the Psg2Sum split files)", "--splits-dir is")
    add_default(base, "--table4", layout.PSG2SUM_TABLE4, "Table 4 stem")
    add_default(base, "--summaries", layout.PSG2SUM_SUMMARIES, "test summaries JSON")
    add_default(base, "--model-dir", layout.PSG2SUM_MODEL_DIR, "BERT scorer folder")
    add_default(base, "--metrics", layout.PSG2SUM_BASELINES_METRICS, "metrics JSON")
    add_torch_arguments(base)


def _standin(args, params) -> None:
    from wikiref.stages.psg2sum import stage

    m = stage.standin(params, {"dump": args.dump}, {"dir": args.out})
    print(f"psg2sum standin: {m['counts'].get('pages', 0)} STAND-IN page histories in {m['parts']} -> {args.out}")


def _part(args, params) -> None:
    from wikiref.stages.psg2sum import stage

    out = args.out or layout.PSG2SUM_PART.format(part=args.part)
    stats = args.stats or layout.PSG2SUM_PART_STATS.format(part=args.part)
    s = stage.part(params, {"dump": args.dump}, {"pairs": out, "stats": stats}, part_name=args.part)
    print(f"psg2sum part {args.part}: {s['pairs']} candidate pairs{standin_label(s)} -> {out}")


def _merge(args, params) -> None:
    from wikiref.stages.psg2sum import stage

    m = stage.merge(
        params,
        {"pairs": args.pairs, "stats": args.stats},
        {
            "splits": split_files(args.out_dir, "psg2sum"),
            "table2": args.table2,
            "table3": args.table3,
            "metrics": args.metrics,
        },
    )
    print(
        f"psg2sum merge: {m['sizes']} pairs at λ {m['min_overlap']}{standin_label(m)}"
        f" -> {args.out_dir}, {args.table3}.md"
    )


def _baselines(args, params) -> None:
    from wikiref.stages.psg2sum import stage

    set_torch_threads(args)
    m = stage.baselines(
        params,
        named_inputs(args, ("splits",)) or {"splits": split_files(args.splits_dir, "psg2sum")},
        {"table4": args.table4, "summaries": args.summaries, "model_dir": args.model_dir, "metrics": args.metrics},
    )
    print(
        f"psg2sum baselines: {sorted(m['results'])} on {m['test_examples']} test pairs{standin_label(m)}"
        f" -> {args.table4}.md"
    )


JOBS = {  # name: (run, help, what it does)
    "standin": (_standin, "build STAND-IN page histories from the sample dump", "Build the STAND-IN histories"),
    "part": (_part, "mine one history dump part (resumable)", "Mine one part"),
    "merge": (_merge, "every part -> λ filter, split, common examples, Tables 2-3", "Write the Psg2Sum examples"),
    "baselines": (_baselines, "LEAD1, TEXTRANK, BERT scorer -> Table 4", "Evaluate the extractive baselines"),
}


def main(args: argparse.Namespace) -> int:
    from wikiref.stages.psg2sum.stage import Psg2SumError
    from wikiref.wiki.dump import DumpError

    return run_job(args, "psg2sum", JOBS, ((Psg2SumError, DumpError), 1))
