"""The Arrow schema of every table passed between stages (docs/design.md, "Files between steps").

Writers build their tables with these schemas and readers check them (:func:`require_columns`), so a
column type is declared once: e.g. ``oracle_indices`` is ``list<int32>`` wherever it is written.
"""

from __future__ import annotations

import pyarrow as pa

STRINGS = pa.list_(pa.string())

# collect: data/raw/<part>.parquet
RAW = pa.schema(
    [
        ("id", pa.string()),
        ("article", pa.string()),
        ("query", STRINGS),
        ("statement", pa.string()),
        ("url", pa.string()),
        ("citation_type", pa.string()),
        ("doc_title", pa.string()),
        ("doc_text", pa.string()),
        # provenance
        ("page_id", pa.int64()),
        ("part", pa.string()),
        ("statement_index", pa.int32()),
        ("citation_title", pa.string()),
        ("access_date", pa.string()),
        ("final_url", pa.string()),
        ("fetch_source", pa.string()),
        ("doc_standin", pa.bool_()),
    ]
)
# The raw columns every later stage relies on (the rest is provenance).
RAW_REQUIRED = ("id", "article", "query", "statement", "url", "citation_type", "doc_title", "doc_text")

# curate: the six statistics of filter (b), in Table I/II order
CURATE_STATISTICS = ("doc_tokens", "doc_sents", "summary_tokens", "summary_sents", "query_depth", "query_tokens")
# curate: the columns annotation adds to the raw ones (data/curated/parts/<part>.parquet, examples.parquet)
CURATE_ADDED = pa.schema(
    [
        ("doc_sentences", STRINGS),
        ("summary_sentences", STRINGS),
        *[(k, pa.int32()) for k in CURATE_STATISTICS],
        ("lemma_recall", pa.float64()),
        ("curate_oracle_indices", pa.list_(pa.int32())),
        ("curate_oracle_score", pa.float64()),
        ("doc_key", pa.string()),
        ("doc_hash", pa.string()),
    ]
)
# curate and split: data/curated/examples.parquet, data/split/<split>.parquet
CURATED = pa.schema(list(RAW) + list(CURATE_ADDED))

# oracle: data/oracle/<split>.parquet
ORACLE = pa.schema(
    [
        ("id", pa.string()),
        ("query", STRINGS),
        ("doc_sentences", STRINGS),
        ("statement", pa.string()),
        ("oracle_labels", pa.list_(pa.int8())),
        ("oracle_scores", pa.list_(pa.float64())),
        ("oracle_indices", pa.list_(pa.int32())),
        ("oracle_score", pa.float64()),
        ("standin", pa.bool_()),  # the example's document is a STAND-IN (from the split's doc_standin)
    ]
)

# compare: data/compare/oracle/<source>/<split>.parquet, the oracle of any source on the common example
# schema: the ORACLE columns over the pooled sentences of all documents (in document order; statement =
# the summary sentences joined), plus where each document starts (doc_lengths) and provenance.
ORACLE_SOURCE = pa.schema(
    list(ORACLE)
    + [
        ("source", pa.string()),
        ("doc_lengths", pa.list_(pa.int32())),  # sentences per document, in order (sum = len(doc_sentences))
        ("doc_ids", STRINGS),
    ]
)

# duc: data/duc/<year>.parquet, one row per (topic, document)
DUC = pa.schema(
    [
        ("id", pa.string()),
        ("year", pa.int32()),
        ("topic", pa.string()),
        ("query", STRINGS),
        ("title", pa.string()),
        ("narrative", pa.string()),
        ("doc_id", pa.string()),
        ("doc_date", pa.string()),
        ("doc_position", pa.int32()),
        ("doc_headline", pa.string()),
        ("doc_sentences", STRINGS),
        ("sentence_targets", pa.list_(pa.float64())),
        ("references", STRINGS),
        ("reference_ids", STRINGS),
    ]
)

# ------------------------------------------------------------------ the common example (every source)
# data/sources/<source>/<split>.parquet: one multi-document QFS example per row, whatever the source
# (WikiRef, QmdsCnn, QmdsIr, ...), so oracle labels, pre-training and the source comparison read one
# format (docs/design.md, "One example schema for every source"). Rows sorted by id; ids unique.
SOURCE_NAMES = ("wikiref", "qmdscnn", "qmdsir", "wcep", "psg2sum")
# A document's origin: "original" = the example's own input (WikiRef: the cited page; QmdsCnn: a chunk of
# the summarised article; QmdsIr: a passage of the search results); "retrieved" = added by retrieval
# (QmdsCnn: BM25 chunks of other articles; WCEP: CC-NEWS articles the classifier assigned, score = its probability).
ORIGINS = ("original", "retrieved")
DOCUMENT = pa.struct(
    [
        ("id", pa.string()),
        ("title", pa.string()),
        ("sentences", STRINGS),
        ("url", pa.string()),
        ("origin", pa.string()),
        ("score", pa.float64()),  # retrieval score of a retrieved document (BM25), null for the others
    ]
)
EXAMPLE = pa.schema(
    [
        ("id", pa.string()),  # "<source>:<source_id>"
        ("source", pa.string()),
        ("split", pa.string()),
        ("query", STRINGS),  # query levels (WikiRef: title, section, ...; QmdsCnn: [title]; QmdsIr: [query])
        ("documents", pa.list_(DOCUMENT)),
        ("summary", STRINGS),  # summary sentences
        # provenance
        ("source_id", pa.string()),  # the record's id in its corpus (raw id, story sha1, MS MARCO query_id)
        ("query_origin", pa.string()),  # wikipedia_headings | archived_title | url_path | search_query | portal_story
        ("standin", pa.bool_()),  # built (partly) from STAND-IN data
        ("input_file", pa.string()),  # the corpus file (and line or record) the example comes from
        ("meta", pa.string()),  # JSON object: source-specific provenance (citation type, query type, ...)
    ]
)

# qmdscnn: data/qmdscnn/articles/<shard>.parquet, one row per kept story (the articles job)
QMDSCNN_ARTICLES = pa.schema(
    [
        ("story_id", pa.string()),  # the .story file name = sha1 of its URL-list line
        ("split", pa.string()),
        ("url", pa.string()),  # the original article URL (Wayback prefix removed)
        ("list_url", pa.string()),  # the line of the official URL list (a Wayback id_ URL)
        ("title", pa.string()),
        ("query_origin", pa.string()),  # archived_title | url_path
        ("title_fetch", pa.string()),  # why the archived title was not used ("" when it was)
        ("chunks", pa.list_(STRINGS)),  # per chunk (1-4 consecutive paragraphs): its sentences
        ("chunk_paragraphs", pa.list_(pa.int32())),  # paragraphs per chunk
        ("highlights", STRINGS),  # the @highlight lines = the summary sentences
        ("standin", pa.bool_()),
        ("input_file", pa.string()),
    ]
)

# qmsum: data/qmsum/<split>.parquet, one row per query of a QMSum meeting (Zhong et al., NAACL 2021)
QMSUM = pa.schema(
    [
        ("id", pa.string()),  # "<meeting_id>:<general|specific>-<nn>" (nn = the query's index in its list)
        ("split", pa.string()),  # train | dev | test
        ("meeting_id", pa.string()),  # "<file stem>-<line number, 4 digits>"
        ("query_type", pa.string()),  # general | specific
        ("query", STRINGS),  # [the query]
        ("turns", STRINGS),  # the transcript, one string per speaker turn (the "sentences")
        ("speakers", STRINGS),  # the speaker of each turn
        ("span_turns", pa.list_(pa.int32())),  # the gold-span turns (sorted; general queries: every turn)
        ("answer", pa.string()),  # the reference summary
        ("turn_targets", pa.list_(pa.float64())),  # ROUGE-2 recall of each turn vs the answer (fine-tuning)
        ("standin", pa.bool_()),  # read from a STAND-IN file
        ("input_file", pa.string()),  # "<file>:<line>"
    ]
)

# finetune: models/finetune/<setting>/<year>/predictions.parquet is written from a DataFrame whose
# columns finetune.run_job documents; it is a job output, not read by another stage.

TABLES = {
    "raw": RAW,
    "curated": CURATED,
    "oracle": ORACLE,
    "oracle_source": ORACLE_SOURCE,
    "duc": DUC,
    "example": EXAMPLE,
    "qmdscnn_articles": QMDSCNN_ARTICLES,
    "qmsum": QMSUM,
}


class SchemaError(ValueError):
    """A table between stages lacks columns its reader needs."""


def require_columns(names, needed, where: str) -> None:
    """Raise :class:`SchemaError` naming the missing columns of a table read from ``where``."""
    missing = [c for c in needed if c not in set(names)]
    if missing:
        raise SchemaError(f"{where}: missing columns {missing} (has {list(names)})")


def empty(schema: pa.Schema) -> pa.Table:
    """A table with no rows and ``schema`` (what a stage writes for an empty split)."""
    return schema.empty_table()


# wcep: data/wcep/events.parquet, one row per portal event (the events job), sorted by date, event_id
WCEP_EVENTS = pa.schema(
    [
        ("event_id", pa.string()),  # "<date>-<hash of date, category, stories, summary>"
        ("date", pa.string()),  # ISO date of the portal day
        ("category", pa.string()),  # bold category line ("Armed conflicts and attacks")
        ("stories", STRINGS),  # parent bullets, outermost first
        ("summary", pa.string()),  # the leaf bullet's text, source links removed
        ("entities", STRINGS),  # anchor texts of its wiki links
        ("entity_links", STRINGS),  # their targets
        ("urls", STRINGS),  # source URLs (external links)
        ("origin", pa.string()),  # wikitext | html
        ("location", pa.string()),  # <file>:<page or day>:<n>
        ("standin", pa.bool_()),  # read from a STAND-IN portal
    ]
)
# wcep: data/wcep/sources.parquet, one row per source URL (the sources job), failures included
WCEP_SOURCES = pa.schema(
    [
        ("url", pa.string()),
        ("ok", pa.bool_()),
        ("reason", pa.string()),  # "" when ok, else fetch:<reason> / extract:<reason>
        ("title", pa.string()),
        ("text", pa.string()),
        ("date", pa.string()),  # publication date found in the page, "" if none
        ("date_origin", pa.string()),  # published | ""
        ("fetch_source", pa.string()),  # live / wayback / warc
        ("final_url", pa.string()),
        ("standin", pa.bool_()),
    ]
)
# wcep: data/wcep/ccnews/<shard>.parquet, candidate articles of CC-NEWS WARC files (the ccnews job)
WCEP_CANDIDATES = pa.schema(
    [
        ("article_id", pa.string()),  # stable id of the normalised URL
        ("url", pa.string()),
        ("title", pa.string()),
        ("text", pa.string()),
        ("date", pa.string()),  # publication date (page) or crawl date (WARC-Date)
        ("date_origin", pa.string()),  # published | crawl
        ("standin", pa.bool_()),
        ("location", pa.string()),  # <file>:<record offset>
    ]
)
# wcep: data/wcep/assignments.parquet, CC-NEWS article -> its single event (the classify job)
WCEP_ASSIGNMENTS = pa.schema(
    [
        ("article_id", pa.string()),
        ("event_id", pa.string()),
        ("probability", pa.float64()),
    ]
)

# psg2sum: data/psg2sum/parts/<part>.parquet, candidate passage-summary pairs of one history part
PSG2SUM_PAIRS = pa.schema(
    [
        ("page_id", pa.int64()),
        ("title", pa.string()),
        ("rev_id", pa.int64()),  # the revision that added the sentence and the passage
        ("parent_rev_id", pa.int64()),  # the revision it was compared with
        ("timestamp", pa.string()),
        ("summary", pa.string()),  # the added lead sentence
        ("passage", pa.string()),  # the added body passage with the highest overlap rate
        ("section", STRINGS),  # the passage's heading path
        ("score", pa.float64()),  # overlap rate |s' ∩ p'| / |s'| (stopwords removed)
        ("candidates", pa.int32()),  # added passages compared
        ("standin", pa.bool_()),
    ]
)
