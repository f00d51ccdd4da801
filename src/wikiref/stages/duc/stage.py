"""The DUC stage's jobs (journal §V): the STAND-IN benchmark, the prepared years, the Table VI baselines.

* :func:`standin` (``wikiref duc standin``, only when ``duc.standin``): data/raw -> a STAND-IN DUC tree
  in the NIST layout (:mod:`wikiref.stages.duc.standin`);
* :func:`prepare` (``wikiref duc prepare``): the NIST layout under ``duc.root`` -> data/duc/<year>.parquet
  (:data:`wikiref.schemas.DUC`: sentences, query levels, references, per-sentence ROUGE-2 recall
  targets) + <year>.stats.json (:mod:`wikiref.stages.duc.reader`);
* :func:`baselines` (``wikiref duc baselines``): LEAD / QUERY-SIM / ORACLE (+ variants) scored with the official
  ROUGE-1.5.5 flags -> the metrics and the Table VI baseline rows (:mod:`wikiref.extractive.baselines`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from wikiref.stages.duc.reader import DucLayoutError

log = logging.getLogger(__name__)

# The raw (collect) columns the stand-in is built from.
STANDIN_COLUMNS = ("id", "article", "query", "statement", "url", "doc_title", "doc_text")
# The WikiRef split columns whose values the stand-in must not share (articles, document keys).
HELD_OUT_COLUMNS = ("article", "doc_key", "doc_hash")


class DucError(ValueError):
    """Bad input to a DUC job (too few articles for a stand-in, a year outside duc.years, no topics)."""


def year_files(out_dir: str | os.PathLike, year: int) -> tuple[Path, Path]:
    """``<out_dir>/<year>.parquet`` and ``<out_dir>/<year>.stats.json`` (what :func:`prepare` writes)."""
    from wikiref import layout

    out_dir = Path(out_dir)
    return (
        layout.in_folder(out_dir, layout.DUC_YEAR, year=year),
        layout.in_folder(out_dir, layout.DUC_YEAR_STATS, year=year),
    )


# --------------------------------------------------------------------------------------------- standin
def standin(params: Mapping, inputs: Mapping, outputs: Mapping) -> dict:
    """The standin job.

    ``params``: ``seed``, ``sample`` (``sample.duc``: pseudo-years and cluster sizes) and ``duc``
    (``summary_words``); ``inputs["raw"]``: the raw example files (collect); ``inputs["wikiref"]``: the
    WikiRef split files, whose articles and cited documents are held out (no topic or document of the
    stand-in is in WikiRef); ``outputs["root"]``: the STAND-IN tree (``duc.root``), replaced as a whole
    once it is complete. Raises :class:`wikiref.schemas.SchemaError` when a file lacks columns and
    :class:`DucError` when fewer articles with >= 2 distinct cited documents than pseudo-years exist.
    Returns the manifest."""
    import pandas as pd

    from wikiref.files import atomic_dir
    from wikiref.schemas import require_columns
    from wikiref.stages.duc import standin as builder

    cfg = params["sample"]["duc"]
    years = list(cfg["years"])
    raw = [str(p) for p in inputs["raw"]]
    frames = []
    for path in raw:
        df = pd.read_parquet(path)
        require_columns(df.columns, STANDIN_COLUMNS, f"{path} (expected the collect output)")
        frames.append(df[list(STANDIN_COLUMNS)])
    rows = pd.concat(frames, ignore_index=True).to_dict("records") if frames else []
    keep_out = [pd.read_parquet(p, columns=list(HELD_OUT_COLUMNS)) for p in map(str, inputs.get("wikiref") or ())]
    wikiref = pd.concat(keep_out, ignore_index=True) if keep_out else pd.DataFrame(columns=list(HELD_OUT_COLUMNS))
    held_out = builder.HeldOut(
        articles=frozenset(wikiref["article"].astype(str)),
        doc_keys=frozenset(k for k in wikiref["doc_key"].astype(str) if k),
        doc_hashes=frozenset(h for h in wikiref["doc_hash"].astype(str) if h),
    )
    skipped: dict = {}
    clusters = builder.clusters_from_examples(
        rows, docs_per_cluster=cfg["docs_per_cluster"], held_out=held_out, counts=skipped
    )
    need = len(years) * cfg["clusters_per_year"]
    log.info(
        "%d examples, %d candidate clusters (articles with >= 2 distinct cited documents), %d needed; "
        "held out for WikiRef: %d articles, %d cited documents",
        len(rows),
        len(clusters),
        need,
        skipped["articles"],
        skipped["documents"],
    )
    if len(clusters) < len(years):
        raise DucError(
            f"only {len(clusters)} articles with >= 2 distinct cited documents; "
            f"need at least one per pseudo-year ({len(years)})"
        )
    if len(clusters) < need:
        log.warning(
            "only %d clusters available for %d requested; the pseudo-years get fewer topics", len(clusters), need
        )
    assignment = builder.plan(clusters, years, cfg["clusters_per_year"], params["seed"])
    with atomic_dir(outputs["root"]) as tmp:
        return builder.write_standin(
            tmp,
            assignment,
            models_per_cluster=cfg["models_per_cluster"],
            summary_words=params["duc"]["summary_words"],
            seed=params["seed"],
            source=[os.path.basename(x) for x in raw],
            held_out={
                "wikiref_examples": len(wikiref),
                "wikiref_articles": len(held_out.articles),
                "articles_skipped": skipped["articles"],
                "documents_skipped": skipped["documents"],
            },
        )


# --------------------------------------------------------------------------------------------- prepare
def prepare(params: Mapping, inputs: Mapping, outputs: Mapping, *, years: Sequence[int] | None = None) -> dict:
    """The prepare job: read DUC years (NIST layout) into sentence rows with training targets.

    ``params``: ``text`` (the spaCy pipeline, loaded once for all years) and ``duc``; ``inputs["root"]``
    (optional): the DUC tree, by default ``duc.root``; ``outputs["dir"]``: the folder of
    ``<year>.parquet`` (:data:`wikiref.schemas.DUC`, rows sorted by id) and ``<year>.stats.json``;
    ``years``: the years to read (default ``duc.years``; each must be one of them). A missing file or
    folder raises :class:`DucLayoutError`, whose message shows the paths tried and the expected NIST
    layout. Returns ``{year: stats}``."""
    import statistics
    import time

    import pyarrow as pa

    from wikiref import text
    from wikiref.files import write_json, write_parquet
    from wikiref.schemas import DUC
    from wikiref.stages.duc import reader

    duc = params["duc"]
    years = list(years or duc["years"])
    bad = [y for y in years if y not in duc["years"]]
    if bad:
        raise DucError(f"years {bad} are not in duc.years {duc['years']}")
    root = str(inputs.get("root") or duc["root"])
    from wikiref.stages.duc.standin import is_standin_tree

    tree_standin = is_standin_tree(root)
    if tree_standin and not duc["standin"]:
        raise DucError(
            f"{root} is a STAND-IN DUC tree (its NOTICE.txt / MANIFEST.json say so) but duc.standin is false: "
            "point duc.root at NIST's DUC data, or set duc.standin: true"
        )
    t0 = time.monotonic()
    per_year = {}
    try:
        for year in years:
            per_year[year] = reader.read_year(
                root, year, duc["layout"], summary_size=duc["summary_words"], log=log.info
            )
    except DucLayoutError as exc:
        hint = (
            "\n(duc.standin is true: the STAND-IN is built by `wikiref duc standin` / the Snakemake rule "
            "duc_standin from data/raw)"
            if duc["standin"]
            else ""
        )
        raise DucLayoutError(f"{exc}{hint}") from None
    nlp = text.from_params(params["text"])
    all_topics = [t for y in years for t in per_year[y]]
    reader.split_sentences(all_topics, reader.spacy_splitter(nlp, batch_size=params["text"]["batch_size"]))
    log.info("read and split %d topics in %.1fs", len(all_topics), time.monotonic() - t0)
    out: dict = {}
    for year in years:
        topics = per_year[year]
        rows = reader.topic_rows(topics)
        parquet_path, stats_path = year_files(outputs["dir"], year)
        write_parquet(parquet_path, pa.Table.from_pylist(rows, schema=DUC))
        n_sent = [len(r["doc_sentences"]) for r in rows]
        targets = [x for r in rows for x in r["sentence_targets"]]
        stats = {
            "year": year,
            "root": root,
            "standin": bool(duc["standin"] or tree_standin),
            "topics": len(topics),
            "documents": len(rows),
            "sentences": sum(n_sent),
            "references": sum(len(t.references) for t in topics),
            "documents_per_topic_mean": round(len(rows) / max(len(topics), 1), 4),
            "sentences_per_document_mean": round(statistics.fmean(n_sent), 4) if rows else 0.0,
            "reference_words_mean": round(
                statistics.fmean(len(r.text.split()) for t in topics for r in t.references), 2
            ),
            "query_levels_mean": round(statistics.fmean(len(t.query) for t in topics), 4),
            "sentence_target_mean": round(statistics.fmean(targets), 6) if targets else 0.0,
            "sentences_with_positive_target": sum(1 for x in targets if x > 0),
        }
        write_json(stats_path, stats)
        out[year] = stats
    return out


# ------------------------------------------------------------------------------------------- baselines
def measure_label(measure: str) -> str:
    """``ROUGE-SU4`` -> ``R-SU4`` (Table VI column labels)."""
    return measure.replace("ROUGE-", "R-")


def baselines(params: Mapping, inputs: Mapping, outputs: Mapping) -> dict:
    """The baselines job: the systems of ``duc.baselines`` (LEAD, QUERY-SIM, ORACLE and the labelled LEAD-EACH /
    QUERY-SIM (no redundancy rule) variants, :mod:`wikiref.extractive.baselines`) on every DUC year, official
    ROUGE (Table VI rows); rows in ``duc.baselines`` order, the notes describe each system run.

    ``params``: ``profile`` and ``duc`` (``baselines``, ``summary_words``, ``select``, ``rouge_flags``);
    ``inputs["years"]``: the data/duc/<year>.parquet files (each year's prepare stats are read from
    ``<year>.stats.json`` next to it when present); ``outputs``: ``metrics`` (per system and year the
    ROUGE-1/2/SU4 R/P/F averages with bootstrap confidence intervals and per-topic recall), ``table``
    (the Table VI stem: + .csv / .md / .tex) and optionally ``rouge_dir`` (the summaries and references
    as SPL files plus a ROUGE XML config per system and year, to rerun ROUGE-1.5.5.pl on them).
    Raises :class:`DucError` for a year file without topics. Returns the metrics (also written)."""
    import pandas as pd

    from wikiref.extractive import baselines as systems
    from wikiref.files import write_json
    from wikiref.rouge import official
    from wikiref.tables import write_table

    duc = params["duc"]
    select = duc["select"]
    flags = duc["rouge_flags"]
    measures = official.Options.from_flags(flags).measures()
    metrics: dict = {
        "flags": flags,
        "standin": bool(duc["standin"]),
        "profile": params["profile"]["name"],
        "summary_words": duc["summary_words"],
        "select": select,
        "systems": {},
        "years": {},
    }
    per_year = _read_years(inputs["years"], metrics["years"])
    years = sorted(per_year)
    rouge_dir = outputs.get("rouge_dir")
    table_rows = []
    for system in duc["baselines"]:
        metrics["systems"][system] = {}
        row: dict = {"System": systems.SYSTEMS[system]}
        for year in years:
            rule, chosen = _year_rule(system, year, per_year, duc)
            scores = _system_year(system, year, per_year[year], rule, measures, rouge_dir)
            scores.update({"select": chosen} if chosen else {})
            metrics["systems"][system][str(year)] = scores
            for m in measures:
                row[f"{year} {measure_label(m)}"] = round(100 * scores[m]["R"], 2)
        table_rows.append(row)
    write_json(outputs["metrics"], metrics)
    kind = "STAND-IN pseudo-years" if duc["standin"] else "DUC"
    title = (
        f"Table VI (baselines): ROUGE recall x 100 on {kind} {', '.join(map(str, years))}, "
        f"official ROUGE-1.5.5 scoring ({flags})"
    )
    notes = (
        "Scored with wikiref.rouge.official (identical to ROUGE-1.5.5.pl). "
        + "; ".join(systems.DESCRIPTIONS[s] for s in duc["baselines"])
        + "."
    )
    if any(s in systems.VARIANTS for s in duc["baselines"]):
        notes += " " + systems.VARIANT_NOTE
    if duc["standin"]:
        notes += " STAND-IN: the topics, documents and references are built from Wikipedia, not NIST DUC."
    write_table(pd.DataFrame(table_rows), outputs["table"], title=title, profile=params["profile"], notes=notes)
    return metrics


def _read_years(paths: Sequence[str | Path], year_stats: dict) -> dict[int, list]:
    """Each DUC year file's topics, by year; each year's prepare stats (``<year>.stats.json`` beside the
    file, when present) go into ``year_stats``. Raises :class:`DucError` for a year file without topics."""
    import pandas as pd

    from wikiref.extractive.baselines import rows_to_topics
    from wikiref.files import read_json

    per_year: dict[int, list] = {}
    for path in paths:
        topics = rows_to_topics(pd.read_parquet(path).to_dict("records"))
        if not topics:
            raise DucError(f"{path} has no topics")
        year = topics[0]["year"]
        per_year[year] = topics
        stats_path = Path(str(Path(path).with_suffix("")) + ".stats.json")
        if stats_path.exists():
            year_stats[str(year)] = read_json(stats_path)
    return per_year


def _year_rule(system: str, year: int, per_year: Mapping[int, list], duc: Mapping) -> tuple[Mapping, dict | None]:
    """``duc`` with the selection rule of ``system`` on ``year``: for QUERY-SIM and a rule with several MMR weights,
    the weight its summaries of the other years' topics score best with (R-2 recall; as a fine-tuned row tested on
    ``year`` chooses on clusters of the years it trained on), and the choice's record; else ``duc`` as it is."""
    from wikiref.extractive.baselines import query_sim_rule
    from wikiref.extractive.selection import mmr_choices

    if system != "query_sim" or not mmr_choices(duc["select"]):
        return duc, None
    others = [t for y in sorted(per_year) if y != year for t in per_year[y]]
    if not others:
        raise DucError(f"duc.select.mmr {duc['select']['mmr']}: choosing the weight for {year} needs another DUC year")
    return query_sim_rule(duc, others)


def _system_year(
    system: str, year: int, topics: list, duc: Mapping, measures: Sequence[str], rouge_dir: str | Path | None
) -> dict:
    """One baseline on one year's topics: the summaries, their official ROUGE (+ the mean summary length), the
    SPL files and ROUGE config in ``rouge_dir`` (when given) and a log line. Returns the scores."""
    import time

    from wikiref.extractive import baselines as systems
    from wikiref.extractive.selection import mean_summary_words
    from wikiref.rouge import official

    flags = duc["rouge_flags"]
    t0 = time.monotonic()
    summaries = systems.summarize_topics(system, topics, max_words=duc["summary_words"], **duc["select"])
    scores = systems.evaluate(summaries, topics, flags)
    scores["summary_words_mean"] = mean_summary_words(summaries)
    if rouge_dir:
        official.write_spl_config(
            Path(rouge_dir) / system / str(year),
            [(t["topic"], summaries[t["topic"]], t["references"]) for t in topics],
        )
    log.info(
        "%s %d: %s (%d topics, %.1fs)",
        system,
        year,
        " ".join(f"{measure_label(m)}={100 * scores[m]['R']:.2f}" for m in measures),
        len(topics),
        time.monotonic() - t0,
    )
    return scores
