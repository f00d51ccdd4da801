"""`wikiref duc-baselines`: LEAD, QUERY-SIM and ORACLE on DUC, official ROUGE (Table VI rows)."""

from __future__ import annotations

import argparse
import logging

from wikiref.config import add_params_arguments, params_from_args

HELP = "DUC baselines LEAD / QUERY-SIM / ORACLE scored with the ROUGE-1.5.5-faithful scorer (Table VI)"
DESCRIPTION = """In: data/duc/<year>.parquet for each of duc.years (duc-prepare). Out: --metrics
(results/metrics/duc_baselines.json: per system and year, ROUGE-1/2/SU4 R/P/F averages with the
bootstrap confidence intervals and per-topic recall, the flags, the duc-prepare counts) and --table
stem (results/tables/table6_duc_baselines.{csv,md,tex}: recall x 100 per year, captioned with the
profile, STAND-IN when duc.standin). Optionally --rouge-dir: the summaries and references as SPL files
plus a ROUGE XML config per system and year, to rerun the real ROUGE-1.5.5.pl on them.

Systems (duc.baselines): lead = leading sentences of the most recent document up to duc.summary_words
words (NIST's baseline); query_sim = TF-IDF cosine to the query + the DUC selection rule (duc.select);
oracle = greedy ROUGE-2 recall against the pooled references within the word budget. Scores:
wikiref.rouge.official with duc.rouge_flags (the paper's -n 2 -x -m -2 4 -u -c 95 -r 1000 -f A -p 0.5
-t 0 -l 250): identical to ROUGE-1.5.5.pl."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_params_arguments(parser)
    parser.add_argument("--inputs", nargs="+", required=True, metavar="PARQUET", help="data/duc/<year>.parquet files")
    parser.add_argument("--metrics", default="results/metrics/duc_baselines.json")
    parser.add_argument("--table", default="results/tables/table6_duc_baselines", help="table path without suffix")
    parser.add_argument("--rouge-dir", help="also write SPL files + ROUGE XML configs here (for ROUGE-1.5.5.pl)")


def _measure_label(m: str) -> str:
    return m.replace("ROUGE-", "R-")


def main(args: argparse.Namespace) -> int:
    import time
    from pathlib import Path

    import pandas as pd

    from wikiref.stages.duc import reader as duc, baselines as duc_baselines
    from wikiref.files import read_json, write_json
    from wikiref.tables import write_table
    from wikiref.rouge import official

    log = logging.getLogger("wikiref.duc_baselines")
    p = params_from_args(args, "profile", "duc")
    dp = p["duc"]
    sel = dp["select"]
    flags = dp["rouge_flags"]
    measures = official.Options.from_flags(flags).measures()
    metrics: dict = {"flags": flags, "standin": bool(dp["standin"]), "profile": p["profile"]["name"],
                     "summary_words": dp["summary_words"], "select": sel, "systems": {}, "years": {}}
    per_year: dict[int, list] = {}
    for path in args.inputs:
        rows = pd.read_parquet(path).to_dict("records")
        topics = duc.rows_to_topics(rows)
        if not topics:
            raise SystemExit(f"wikiref duc-baselines: {path} has no topics")
        year = topics[0]["year"]
        per_year[year] = topics
        stats_path = Path(str(Path(path).with_suffix("")) + ".stats.json")
        if stats_path.exists():
            metrics["years"][str(year)] = read_json(stats_path)
    years = sorted(per_year)
    table_rows = []
    for system in dp["baselines"]:
        metrics["systems"][system] = {}
        row: dict = {"System": duc_baselines.SYSTEMS[system]}
        for year in years:
            t0 = time.monotonic()
            topics = per_year[year]
            summaries = {t["topic"]: duc_baselines.summarize(
                system, t, max_words=dp["summary_words"], max_bigram_overlap=sel["max_bigram_overlap"],
                fill=sel["fill"]) for t in topics}
            scores = duc_baselines.evaluate(summaries, topics, flags)
            scores["summary_words_mean"] = round(
                sum(len(" ".join(s).split()) for s in summaries.values()) / max(len(summaries), 1), 2)
            metrics["systems"][system][str(year)] = scores
            for m in measures:
                row[f"{year} {_measure_label(m)}"] = round(100 * scores[m]["R"], 2)
            if args.rouge_dir:
                official.write_spl_config(Path(args.rouge_dir) / system / str(year),
                                          [(t["topic"], summaries[t["topic"]], t["references"]) for t in topics])
            log.info("%s %d: %s (%d topics, %.1fs)", system, year,
                     " ".join(f"{_measure_label(m)}={100 * scores[m]['R']:.2f}" for m in measures),
                     len(topics), time.monotonic() - t0)
        table_rows.append(row)
    write_json(args.metrics, metrics)
    df = pd.DataFrame(table_rows)
    kind = "STAND-IN pseudo-years" if dp["standin"] else "DUC"
    title = (f"Table VI (baselines): ROUGE recall x 100 on {kind} {', '.join(map(str, years))}, "
             f"official ROUGE-1.5.5 scoring ({flags})")
    notes = ("Scored with wikiref.rouge.official (identical to ROUGE-1.5.5.pl). LEAD: leading sentences of the most "
             "recent document; QUERY-SIM: TF-IDF cosine to the query + 250-word selection with bigram redundancy; "
             "ORACLE: greedy ROUGE-2 recall against the references.")
    if dp["standin"]:
        notes += " STAND-IN: the topics, documents and references are built from Wikipedia, not NIST DUC."
    write_table(df, args.table, title=title, profile=p["profile"], notes=notes)
    print(df.to_string(index=False))
    return 0
