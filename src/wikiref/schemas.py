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

# finetune: models/finetune/<setting>/<year>/predictions.parquet is written from a DataFrame whose
# columns finetune.run_job documents; it is a job output, not read by another stage.

TABLES = {"raw": RAW, "curated": CURATED, "oracle": ORACLE, "duc": DUC}


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
