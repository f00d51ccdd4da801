"""`wikiref duc standin|prepare|baselines`: the DUC 2005-2007 benchmarks and their baselines (journal §V)."""

from __future__ import annotations

import argparse

from wikiref import layout
from wikiref.cli import add_default, add_files, add_param_jobs, run_job, standin_label

HELP = "DUC benchmarks: STAND-IN tree, prepared years, LEAD / QUERY-SIM / ORACLE (+ variants) baselines (Table VI), Table V"
DESCRIPTION = f"""Four jobs (standin only when duc.standin):

standin: {layout.RAW_PART} files (collect) minus the articles and cited documents of the WikiRef
    splits ({layout.SPLIT_FILE}, --wikiref: held out, so +DA pre-training never sees a test topic)
    -> the STAND-IN DUC-format benchmark in the NIST layout under duc.root: per pseudo-year (sample.duc.years) <year>/duc<year>_topics.sgml,
    <year>/duc<year>_docs/<topic>/<DOCNO> (TREC SGML) and <year>/models/<topic>.M.250.A.<X>, plus
    NOTICE.txt and MANIFEST.json. A cluster is a Wikipedia article with >= 2 distinct cited documents
    (the most-citing articles first); its documents are up to sample.duc.docs_per_cluster of them, its
    references the article's statements citing them (real Wikipedia text), dealt into up to
    sample.duc.models_per_cluster references of at most duc.summary_words words;
    sample.duc.clusters_per_year clusters per pseudo-year, assigned by a shuffle seeded with `seed`.
    Everything is labelled STAND-IN: it is NOT NIST DUC data.

prepare: duc.root (NIST DUC 2005-2007, or the STAND-IN) -> {layout.DUC_YEAR}, one row per (topic,
    document), documents oldest first: id, year, topic, query (title + narrative sentences = the query
    levels), title, narrative, doc_id, doc_date, doc_position, doc_headline, doc_sentences (spaCy, the
    `text` pipeline; sentences never cross a paragraph), sentence_targets (each sentence's ROUGE-2
    recall against the topic's references pooled: the fine-tuning regression targets), references,
    reference_ids; rows sorted by id. Plus {layout.DUC_YEAR_STATS} (counts). Files are found through
    duc.layout (candidate paths per year); a missing file or folder is an error that shows the
    expected NIST layout. All years are read in one run (the spaCy pipeline is loaded once).

baselines: {layout.DUC_YEAR} for each of duc.years -> {layout.DUC_BASELINES_METRICS} (per system and
    year: ROUGE-1/2/SU4 R/P/F averages with bootstrap confidence intervals and per-topic recall, the
    flags, the prepare counts) and {layout.TABLE6_BASELINES}.{{csv,md,tex}} (recall x 100 per year,
    captioned with the profile, STAND-IN when duc.standin). Systems (duc.baselines): lead = leading
    sentences of the most recent document up to duc.summary_words words (NIST's baseline); query_sim =
    TF-IDF cosine to the query + the DUC selection rule (duc.select); oracle = greedy ROUGE-2 recall
    against the pooled references within the word budget; lead_each = the first sentence of each document in
    turn, query_sim_plain = the TF-IDF ranking without the redundancy rule (labelled variants, other readings
    of the LEAD / QUERY-SIM rows the journal copies from [12]). Scores: wikiref.rouge.official with
    duc.rouge_flags (the paper's -n 2 -x -m -2 4 -u -c 95 -r 1000 -f A -p 0.5 -t 0 -l 250):
    identical to ROUGE-1.5.5.pl.

table5: {layout.DUC_YEAR_STATS} for each of duc.years -> {layout.TABLE5}.{{csv,md,tex}} (journal Table V:
    clusters, documents, sentences per year beside the paper's 50/50/45, 1,593/1,250/1,125 and
    46,033/34,585/24,176; a Data column real / STAND-IN per row and the caption from the stats files)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    standin, prepare, baselines, table5 = add_param_jobs(parser, "duc", JOBS).values()
    add_files(standin, "--raw", "PARQUET", f"raw example files ({layout.RAW_PART}, collect)", required=True)
    add_files(
        standin,
        "--wikiref",
        "PARQUET",
        f"the WikiRef split files ({layout.SPLIT_FILE}): their articles and cited documents are held out",
        required=True,
    )
    standin.add_argument("--out", help="output folder, replaced as a whole (default: duc.root)")

    prepare.add_argument("--root", help="the DUC tree (default: duc.root)")
    prepare.add_argument("--years", type=int, nargs="+", help="years to read (default: duc.years)")
    add_default(prepare, "--out-dir", layout.DUC_DIR, "output folder")

    add_files(baselines, "--inputs", "PARQUET", f"prepared years (default: {layout.DUC_YEAR} for each of duc.years)")
    add_default(baselines, "--metrics", layout.DUC_BASELINES_METRICS, "metrics JSON")
    add_default(baselines, "--table", layout.TABLE6_BASELINES, "table stem")
    baselines.add_argument("--rouge-dir", help="also write SPL files + ROUGE XML configs here (for ROUGE-1.5.5.pl)")

    add_files(
        table5, "--stats", "JSON", f"prepared years' counts (default: {layout.DUC_YEAR_STATS} for each of duc.years)"
    )
    add_default(table5, "--table", layout.TABLE5, "table stem")


def _standin(args: argparse.Namespace, params: dict) -> None:
    from wikiref.stages.duc import stage

    out = args.out or layout.duc_root(params)
    manifest = stage.standin(params, {"raw": args.raw, "wikiref": args.wikiref}, {"root": out})
    counts = {y: len(v["topics"]) for y, v in manifest["years"].items()}
    held = manifest["held_out"]
    print(
        f"duc standin: STAND-IN topics per pseudo-year {counts} -> {out} (held out for WikiRef: "
        f"{held['articles_skipped']} articles, {held['documents_skipped']} cited documents)"
    )


def _prepare(args: argparse.Namespace, params: dict) -> None:
    from wikiref.stages.duc import stage

    inputs = {"root": args.root} if args.root else {}
    per_year = stage.prepare(params, inputs, {"dir": args.out_dir}, years=args.years)
    print(
        "duc prepare: "
        + ", ".join(
            f"{y}: {s['topics']} topics, {s['documents']} documents, {s['sentences']} sentences"
            for y, s in per_year.items()
        )
        + f"{standin_label(params['duc'])} -> {args.out_dir}"
    )


def _baselines(args: argparse.Namespace, params: dict) -> None:
    from wikiref.stages.duc import stage

    inputs = args.inputs or [layout.DUC_YEAR.format(year=y) for y in params["duc"]["years"]]
    outputs = {"metrics": args.metrics, "table": args.table, "rouge_dir": args.rouge_dir}
    metrics = stage.baselines(params, {"years": inputs}, outputs)
    oracle_r2 = {
        y: round(100 * s["ROUGE-2"]["R"], 2) for y, s in metrics["systems"].get("oracle", {}).items() if "ROUGE-2" in s
    }
    print(
        f"duc baselines: {', '.join(metrics['systems'])} on {len(inputs)} year(s)"
        + (f" (ORACLE R-2 {oracle_r2})" if oracle_r2 else "")
        + f" -> {args.table}.md, {args.metrics}"
    )


def _table5(args: argparse.Namespace, params: dict) -> None:
    from wikiref.stages.duc import table5

    stats = args.stats or [layout.DUC_YEAR_STATS.format(year=y) for y in params["duc"]["years"]]
    out = table5.run(params, {"stats": stats}, {"table": args.table})
    years = ", ".join(f"{r['Year']} ({r['Data']})" for r in out["rows"])
    print(f"duc table5: {years} -> {args.table}.md")


JOBS = {  # name: (run, help, what it does)
    "standin": (_standin, "build the STAND-IN DUC-format benchmark from data/raw", "Build the STAND-IN DUC tree"),
    "prepare": (_prepare, "read the DUC years (NIST layout) into data/duc/<year>.parquet", "Read the DUC years"),
    "baselines": (_baselines, "LEAD / QUERY-SIM / ORACLE with official ROUGE (Table VI)", "Score the DUC baselines"),
    "table5": (_table5, "DUC statistics per year beside the paper's (Table V)", "Write Table V"),
}


def main(args: argparse.Namespace) -> int:
    from wikiref.stages.duc.stage import DucError, DucLayoutError
    from wikiref.stages.duc.table5 import Table5Error
    from wikiref.tables import StandinMismatch

    return run_job(args, "duc", JOBS, ((DucLayoutError,), 2), ((DucError, Table5Error, StandinMismatch), 1))
