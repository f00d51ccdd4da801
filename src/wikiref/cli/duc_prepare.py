"""`wikiref duc-prepare`: read one DUC year (NIST layout) into sentence rows with training targets."""

from __future__ import annotations

import argparse
import logging

from wikiref.config import add_params_arguments, params_from_args

HELP = "read the DUC years (NIST layout under duc.root) into data/duc/<year>.parquet"
DESCRIPTION = """In: duc.root (NIST DUC 2005-2007, or the STAND-IN of `wikiref duc-standin`), the year's topics SGML,
document folders (TREC SGML) and model summaries (<topic>.M.250.<assessor>.<summarizer>), found through
duc.layout (candidate paths per year). Out: --out (data/duc/<year>.parquet), one row per (topic,
document), documents oldest first: id, year, topic, query (title + narrative sentences = the query
levels), title, narrative, doc_id, doc_date, doc_position, doc_headline, doc_sentences (spaCy, the
`text` pipeline; sentences never cross a paragraph), sentence_targets (each sentence's ROUGE-2 recall
against the topic's references pooled: the fine-tuning regression targets), references (one string
per model summary, its lines joined by newlines), reference_ids; rows sorted by id. Plus
<out-dir>/<year>.stats.json (counts). A missing file or folder is an error that shows the expected
NIST layout. All years are read in one run (the spaCy pipeline is loaded once)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_params_arguments(parser)
    parser.add_argument("--years", type=int, nargs="+", help="years to read (default: duc.years)")
    parser.add_argument("--out-dir", default="data/duc", help="output folder (default: %(default)s)")


def main(args: argparse.Namespace) -> int:
    import statistics
    import sys
    import time
    from pathlib import Path

    import pyarrow as pa

    from wikiref import text as wtext
    from wikiref.stages.duc import reader as duc
    from wikiref.files import write_json, write_parquet

    log = logging.getLogger("wikiref.duc_prepare")
    p = params_from_args(args, "text", "duc")
    dp = p["duc"]
    years = args.years or list(dp["years"])
    bad = [y for y in years if y not in dp["years"]]
    if bad:
        raise SystemExit(f"wikiref duc-prepare: years {bad} are not in duc.years {dp['years']}")
    t0 = time.monotonic()
    per_year = {}
    try:
        for year in years:
            per_year[year] = duc.read_year(dp["root"], year, dp["layout"], summary_size=dp["summary_words"],
                                           log=log.info)
    except duc.DucLayoutError as exc:
        hint = ("\n(duc.standin is true: the STAND-IN is built by `wikiref duc-standin` / the Snakemake rule "
                "duc_standin from data/raw)" if dp["standin"] else "")
        print(f"wikiref duc-prepare: {exc}{hint}", file=sys.stderr)
        raise SystemExit(2) from None
    nlp = wtext.from_params(p["text"])
    all_topics = [t for y in years for t in per_year[y]]
    duc.split_sentences(all_topics, duc.spacy_splitter(nlp, batch_size=p["text"]["batch_size"]))
    log.info("read and split %d topics in %.1fs", len(all_topics), time.monotonic() - t0)
    schema = pa.schema([
        ("id", pa.string()), ("year", pa.int32()), ("topic", pa.string()), ("query", pa.list_(pa.string())),
        ("title", pa.string()), ("narrative", pa.string()), ("doc_id", pa.string()), ("doc_date", pa.string()),
        ("doc_position", pa.int32()), ("doc_headline", pa.string()), ("doc_sentences", pa.list_(pa.string())),
        ("sentence_targets", pa.list_(pa.float64())), ("references", pa.list_(pa.string())),
        ("reference_ids", pa.list_(pa.string())),
    ])
    out_dir = Path(args.out_dir)
    for year in years:
        topics = per_year[year]
        rows = duc.topic_rows(topics)
        write_parquet(out_dir / f"{year}.parquet", pa.Table.from_pylist(rows, schema=schema))
        n_sent = [len(r["doc_sentences"]) for r in rows]
        targets = [x for r in rows for x in r["sentence_targets"]]
        stats = {
            "year": year,
            "root": dp["root"],
            "standin": bool(dp["standin"]),
            "topics": len(topics),
            "documents": len(rows),
            "sentences": sum(n_sent),
            "references": sum(len(t.references) for t in topics),
            "documents_per_topic_mean": round(len(rows) / max(len(topics), 1), 4),
            "sentences_per_document_mean": round(statistics.fmean(n_sent), 4) if rows else 0.0,
            "reference_words_mean": round(statistics.fmean(len(r.text.split()) for t in topics for r in t.references), 2),
            "query_levels_mean": round(statistics.fmean(len(t.query) for t in topics), 4),
            "sentence_target_mean": round(statistics.fmean(targets), 6) if targets else 0.0,
            "sentences_with_positive_target": sum(1 for x in targets if x > 0),
        }
        write_json(out_dir / f"{year}.stats.json", stats)
        print(f"duc-prepare {year}: {stats['topics']} topics, {stats['documents']} documents, "
              f"{stats['sentences']} sentences{' (STAND-IN)' if dp['standin'] else ''} -> {out_dir / f'{year}.parquet'}")
    return 0
