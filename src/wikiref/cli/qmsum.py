"""`wikiref qmsum standin|prepare|baselines|ltr|bi`: the QMSum benchmark (Zhong et al., NAACL 2021)."""

from __future__ import annotations

import argparse

from wikiref import layout
from wikiref.cli import add_default, add_param_jobs, run_job, standin_label

HELP = "QMSum (open query-based meeting summarization benchmark): reader, STAND-IN, LEAD/QUERY-SIM/ORACLE, LTR, BI"
DESCRIPTION = f"""Jobs in order (standin only when qmsum.standin is true or auto):

standin: a STAND-IN QMSum file in the published JSON-lines format -> {layout.QMSUM_STANDIN}.

prepare: the QMSum files of qmsum.files (one per split), or the STAND-IN (qmsum.standin true, or auto
    with a listed file missing) -> {layout.QMSUM_SPLIT} (one row per query: query, turns "Speaker:
    content", gold-span turns, answer, per-turn ROUGE-2 recall targets), {layout.QMSUM_STATS} (bad lines,
    queries and spans counted with their locations), {layout.QMSUM_METRICS}. qmsum.resplit re-splits whole
    meetings (seeded).

baselines: LEAD, QUERY-SIM and ORACLE extracts of qmsum.summary_words words on the test queries
    (qmsum.eval_queries, seeded) in every qmsum.settings setting (transcript | gold_span), official
    ROUGE-1/2/L R/P/F with 95% intervals (qmsum.rouge_flags) -> {layout.QMSUM_TABLE}.*,
    {layout.QMSUM_BASELINES_METRICS}.

ltr: learning to rank over each turn's signals (qmsum.ltr: train queries, the target transforms tried on the dev
    queries, the settings) on the baselines' test queries, beside the encoder's cosine and QUERY-SIM with paired
    bootstrap comparisons -> {layout.QMSUM_LTR_TABLE}.*, {layout.QMSUM_LTR_METRICS}.

bi: the bi scorer (qmsum.bi: encoder, recipe, interpolate, settings) fine-tuned on the train queries' gold spans,
    the epoch and mixing weight with its start chosen on the dev queries, on the baselines' test queries beside
    QUERY-SIM and the untrained scorer with paired bootstrap comparisons -> {layout.QMSUM_BI_TABLE}.*,
    {layout.QMSUM_BI_METRICS}."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    jobs = add_param_jobs(parser, "qmsum", JOBS)
    add_default(jobs["standin"], "--out", layout.QMSUM_STANDIN, "the STAND-IN file")
    prep = jobs["prepare"]
    add_default(prep, "--standin", layout.QMSUM_STANDIN, "the STAND-IN file (read when the STAND-IN is used)")
    add_default(prep, "--out-dir", layout.QMSUM_DIR, "folder of <split>.parquet and stats.json")
    add_default(prep, "--metrics", layout.QMSUM_METRICS, "metrics JSON")
    base = jobs["baselines"]
    add_default(base, "--test", layout.QMSUM_SPLIT.format(split="test"), "the test queries")
    add_default(base, "--table", layout.QMSUM_TABLE, "table stem")
    add_default(base, "--metrics", layout.QMSUM_BASELINES_METRICS, "metrics JSON")
    ltr = jobs["ltr"]
    for split in ("train", "dev", "test"):
        add_default(ltr, f"--{split}", layout.QMSUM_SPLIT.format(split=split), f"the {split} queries")
    add_default(ltr, "--table", layout.QMSUM_LTR_TABLE, "table stem")
    add_default(ltr, "--metrics", layout.QMSUM_LTR_METRICS, "metrics JSON")
    bi = jobs["bi"]
    for split in ("train", "dev", "test"):
        add_default(bi, f"--{split}", layout.QMSUM_SPLIT.format(split=split), f"the {split} queries")
    add_default(bi, "--table", layout.QMSUM_BI_TABLE, "table stem")
    add_default(bi, "--metrics", layout.QMSUM_BI_METRICS, "metrics JSON")


def _standin(args, params) -> None:
    from wikiref.stages.qmsum import stage

    m = stage.standin(params, {}, {"file": args.out})
    print(f"qmsum standin: {m['meetings']} STAND-IN meetings -> {args.out}")


def _prepare(args, params) -> None:
    from wikiref.stages.qmsum import stage

    outputs = {s: layout.in_folder(args.out_dir, layout.QMSUM_SPLIT, split=s) for s in layout.SPLITS}
    outputs.update(stats=layout.in_folder(args.out_dir, layout.QMSUM_STATS), metrics=args.metrics)
    m = stage.prepare(params, {"standin": args.standin}, outputs)
    sizes = {s: v["queries"] for s, v in m["splits"].items()}
    print(f"qmsum prepare: queries {sizes}{standin_label(m)} -> {args.out_dir}")


def _baselines(args, params) -> None:
    from wikiref.stages.qmsum import stage

    m = stage.baselines(params, {"test": args.test}, {"table": args.table, "metrics": args.metrics})
    print(
        f"qmsum baselines: {sorted(m['systems'])} on {m['test_queries']} test queries{standin_label(m)}"
        f" -> {args.table}.md"
    )


def _ltr(args, params) -> None:
    from wikiref.stages.qmsum import stage

    inputs = {"train": args.train, "dev": args.dev, "test": args.test}
    m = stage.ltr(params, inputs, {"table": args.table, "metrics": args.metrics})
    print(
        f"qmsum ltr: {sorted(m['settings'])} on {m['test_queries']} test queries{standin_label(m)} -> {args.table}.md"
    )


def _bi(args, params) -> None:
    from wikiref.stages.qmsum import stage

    inputs = {"train": args.train, "dev": args.dev, "test": args.test}
    m = stage.bi(params, inputs, {"table": args.table, "metrics": args.metrics})
    print(f"qmsum bi: {sorted(m['settings'])} on {m['test_queries']} test queries{standin_label(m)} -> {args.table}.md")


JOBS = {  # name: (run, help, what it does)
    "standin": (_standin, "write the STAND-IN QMSum file", "Write the STAND-IN QMSum file"),
    "prepare": (_prepare, "QMSum JSON lines -> one table per split", "Read the QMSum files"),
    "baselines": (_baselines, "LEAD, QUERY-SIM, ORACLE with official ROUGE", "Evaluate the extractive baselines"),
    "ltr": (_ltr, "learning to rank over each turn's signals", "Train and evaluate the learning-to-rank scorer"),
    "bi": (_bi, "the bi scorer fine-tuned on the train queries", "Fine-tune and evaluate the bi scorer"),
}


def main(args: argparse.Namespace) -> int:
    from wikiref.stages.qmsum.reader import QmsumError
    from wikiref.stages.qmsum.stage import QmsumStageError

    return run_job(args, "qmsum", JOBS, ((QmsumStageError, QmsumError), 1))
