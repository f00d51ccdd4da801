"""Curation of raw examples into WikiRef (journal §II-A-2).

Two phases, so the expensive per-example work runs per raw part (in parallel) and only the cheap
global decisions need all parts at once:

1. :func:`annotate_rows` (per part, per shard of rows): check each raw row (bad rows are counted
   skips), run the spaCy pipeline (:mod:`wikiref.text`) over document and statement, split the
   document into sentences, compute the per-example statistics, the lemma recall of filter (a) and
   the oracle score of filter (c) (greedy, ROUGE-2 recall, <= ``oracle_max_sentences`` sentences).
2. :func:`curate` (all parts): (a) keep ``lemma_recall >= min_lemma_recall``; (b) compute the
   ``percentile_low``/``percentile_high`` percentiles of the six statistics on the survivors of
   (a) (:func:`compute_thresholds`, written as ``thresholds.json``) and keep examples inside every
   window (inclusive); (c) keep ``curate_oracle_score > min_oracle_rouge2_recall``.

Every row that goes in is either kept or counted under exactly one drop reason.

Statistics (Table I/II rows): ``doc_tokens`` / ``summary_tokens`` are spaCy tokens (whitespace
excluded, punctuation included), ``doc_sents`` / ``summary_sents`` spaCy sentences, ``query_depth``
the number of query levels (article title included, as in the paper), ``query_tokens`` the spaCy
tokens of all levels. Lemma recall: the fraction of the statement's non-stop-word tokens (not a
stop word, not punctuation/symbol) whose lower-cased lemma occurs among the document's lemmas.
"""

from __future__ import annotations

import hashlib
import logging
import math
from collections import Counter
from typing import Any, Iterable, Mapping, Sequence
from urllib.parse import urlsplit

import numpy as np

from wikiref.rouge.oracle import greedy_oracle

log = logging.getLogger(__name__)

RAW_COLUMNS = ("id", "article", "query", "statement", "url", "citation_type", "doc_title", "doc_text")
STATS = ("doc_tokens", "doc_sents", "summary_tokens", "summary_sents", "query_depth", "query_tokens")
STAT_LABELS = {
    "doc_tokens": "Document Tokens",
    "doc_sents": "Document Sents",
    "summary_tokens": "Summary Tokens",
    "summary_sents": "Summary Sents",
    "query_depth": "Query Depth",
    "query_tokens": "Query Tokens",
}
# Columns annotate_rows adds to the raw ones.
ADDED_COLUMNS = (
    "doc_sentences",
    "summary_sentences",
    *STATS,
    "lemma_recall",
    "curate_oracle_indices",
    "curate_oracle_score",
    "doc_key",
    "doc_hash",
)
# The curate parameters the per-part annotation job reads (the rest only matter to the merge, so
# changing a filter threshold re-runs the cheap merge, not spaCy).
ANNOTATE_KEYS = ("include_doc_title", "oracle_max_sentences", "max_raw_per_part")
# Drop reasons, in the order they are applied.
INVALID_REASONS = ("missing_field", "empty_statement", "empty_doc_text", "empty_query", "doc_too_long", "no_doc_sentences")
FILTER_REASONS = ("duplicate_id", "a_no_content_words", "a_lemma_recall", "b_percentile_window", "c_oracle_rouge2_recall")


# --------------------------------------------------------------------------------------------
# document identity (used by the split)
# --------------------------------------------------------------------------------------------
def url_key(url: str) -> str:
    """Normalised URL used to recognise the same cited document: courlan's normalisation (lower-case
    host, default port and tracking parameters removed, query sorted), then scheme, ``www.``,
    fragment and trailing slash dropped and the whole key lower-cased. Over-merging two URLs only
    makes the split more conservative, so the key errs on that side."""
    from courlan import normalize_url

    url = (url or "").strip()
    if not url:
        return ""
    try:
        url = normalize_url(url)
    except Exception:  # malformed URL: keep the raw text, still lower-cased below
        pass
    parts = urlsplit(url if "//" in url else "//" + url)
    host = (parts.hostname or "").lower()
    if host.startswith("www."):
        host = host[4:]
    key = host + parts.path.rstrip("/")
    if parts.query:
        key += "?" + parts.query
    return key.lower()


def body_hash(text: str) -> str:
    """sha1 of the lower-cased, whitespace-normalised body text."""
    return hashlib.sha1(" ".join((text or "").lower().split()).encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------------------------
# phase 1: per-row annotation
# --------------------------------------------------------------------------------------------
def check_row(row: Mapping[str, Any], max_chars: int) -> str | None:
    """Reason a raw row cannot be curated, or None."""
    for col in RAW_COLUMNS:
        if col not in row or row[col] is None:
            return "missing_field"
    if not str(row["statement"]).strip():
        return "empty_statement"
    if not str(row["doc_text"]).strip():
        return "empty_doc_text"
    query = row["query"]
    if isinstance(query, str) or len(query) == 0 or not all(isinstance(q, str) and q.strip() for q in query):
        return "empty_query"
    if max_chars and len(row["doc_text"]) + len(row["doc_title"] or "") > max_chars:
        return "doc_too_long"
    return None


def lemma_recall(summary_content_lemmas: Sequence[str], doc_lemmas: Iterable[str]) -> float:
    """Fraction of the summary's non-stop-word lemma tokens found among the document's lemmas
    (NaN when the summary has no such token)."""
    if not summary_content_lemmas:
        return math.nan
    vocab = set(doc_lemmas)
    return sum(1 for lem in summary_content_lemmas if lem in vocab) / len(summary_content_lemmas)


def document_text(row: Mapping[str, Any], include_doc_title: bool) -> str:
    """The text split into document sentences: the body, preceded by the title as its own line when
    ``include_doc_title`` (the paper's "title and body of the citation")."""
    body = str(row["doc_text"])
    title = str(row.get("doc_title") or "").strip()
    return f"{title}\n{body}" if include_doc_title and title else body


def annotate_rows(
    rows: Sequence[Mapping[str, Any]],
    nlp,
    *,
    batch_size: int = 256,
    max_chars: int = 0,
    include_doc_title: bool = False,
    oracle_max_sentences: int = 5,
) -> tuple[list[dict], Counter]:
    """Phase 1 for a shard of raw rows: returns (annotated valid rows, Counter of invalid reasons).

    Each returned row is the raw row plus :data:`ADDED_COLUMNS`. Pure apart from the spaCy call.
    """
    from wikiref import text

    dropped: Counter = Counter()
    valid: list[Mapping[str, Any]] = []
    for row in rows:
        reason = check_row(row, max_chars)
        if reason:
            dropped[reason] += 1
        else:
            valid.append(row)
    # Each distinct text is annotated once: a cited page is often cited by several statements.
    position: dict[str, int] = {}
    keys = []
    for row in valid:
        pair = (document_text(row, include_doc_title), str(row["statement"]).strip())
        keys.append(tuple(position.setdefault(t, len(position)) for t in pair))
    infos = list(text.annotate(list(position), nlp, batch_size=batch_size))
    out: list[dict] = []
    for (d, s), row in zip(keys, valid):
        doc, summ = infos[d], infos[s]
        if not doc.sentences:
            dropped["no_doc_sentences"] += 1
            continue
        query = [str(q).strip() for q in row["query"]]
        statement = str(row["statement"]).strip()
        doc_sentences = list(doc.sentences)
        idx, score = greedy_oracle(doc_sentences, statement, metric="rouge2_recall", max_sentences=oracle_max_sentences)
        rec = dict(row)
        rec.update(
            query=query,
            statement=statement,
            doc_sentences=doc_sentences,
            summary_sentences=list(summ.sentences),
            doc_tokens=doc.n_tokens,
            doc_sents=len(doc_sentences),
            summary_tokens=summ.n_tokens,
            summary_sents=len(summ.sentences),
            query_depth=len(query),
            query_tokens=sum(text.count_tokens(query, nlp)),
            lemma_recall=lemma_recall(summ.content_lemmas, doc.lemmas),
            curate_oracle_indices=idx,
            curate_oracle_score=score,
            doc_key=url_key(str(row["url"])),
            doc_hash=body_hash(str(row["doc_text"])),
        )
        out.append(rec)
    return out, dropped


# --------------------------------------------------------------------------------------------
# phase 2: the three filters
# --------------------------------------------------------------------------------------------
def compute_thresholds(stats: Mapping[str, Sequence[float]], low: float, high: float) -> dict:
    """``{stat: {"low": p_low, "high": p_high}}`` with numpy's default (linear) percentiles."""
    if not 0 <= low <= high <= 100:
        raise ValueError(f"need 0 <= percentile_low <= percentile_high <= 100, got {low}, {high}")
    window = {}
    for name in STATS:
        values = np.asarray(stats[name], dtype=float)
        if values.size == 0:
            raise ValueError("no example survived filter (a); cannot compute the percentile window")
        lo, hi = np.percentile(values, [low, high])
        window[name] = {"low": float(lo), "high": float(hi)}
    return window


def thresholds_artifact(window: Mapping, *, low: float, high: float, n: int) -> dict:
    return {
        "percentile_low": low,
        "percentile_high": high,
        "computed_on": "survivors of filter (a) (lemma recall)",
        "n_examples": n,
        "method": "numpy.percentile (linear interpolation); an example is kept when low <= value <= high for every statistic",
        # rounded for readability; filter (b) applies exactly these numbers (the CLI reads this file back)
        "window": {k: {b: round(v, 6) for b, v in window[k].items()} for k in STATS},
    }


def outside_window(row: Mapping[str, Any], window: Mapping[str, Mapping[str, float]]) -> list[str]:
    """Statistics of ``row`` outside their window (empty list = inside)."""
    return [k for k in STATS if not (window[k]["low"] <= row[k] <= window[k]["high"])]


def curate(
    rows: Sequence[Mapping[str, Any]],
    params: Mapping[str, Any],
    *,
    thresholds: Mapping | None = None,
) -> tuple[list[dict], dict, dict]:
    """Phase 2 over all annotated rows: returns (kept rows sorted by id, thresholds artifact, stats).

    ``thresholds`` (an artifact as written by a previous call) replaces the percentile computation;
    the CLI writes the computed artifact and reads it back so filter (b) applies exactly the file.
    """
    counts: Counter = Counter()
    seen: set[str] = set()
    after_dedupe = []
    for row in sorted(rows, key=lambda r: str(r["id"])):
        if row["id"] in seen:
            counts["duplicate_id"] += 1
            continue
        seen.add(row["id"])
        after_dedupe.append(row)

    survivors_a = []
    for row in after_dedupe:
        rec = row["lemma_recall"]
        if rec is None or (isinstance(rec, float) and math.isnan(rec)):
            counts["a_no_content_words"] += 1
        elif rec < params["min_lemma_recall"]:
            counts["a_lemma_recall"] += 1
        else:
            survivors_a.append(row)

    low, high = params["percentile_low"], params["percentile_high"]
    if thresholds is None:
        window = compute_thresholds({k: [r[k] for r in survivors_a] for k in STATS}, low, high)
        thresholds = thresholds_artifact(window, low=low, high=high, n=len(survivors_a))
    window = thresholds["window"]

    outside: Counter = Counter()
    first_failing: Counter = Counter()
    survivors_b = []
    for row in survivors_a:
        bad = outside_window(row, window)
        if bad:
            counts["b_percentile_window"] += 1
            outside.update(bad)
            first_failing[bad[0]] += 1
        else:
            survivors_b.append(row)

    kept = []
    for row in survivors_b:
        if row["curate_oracle_score"] > params["min_oracle_rouge2_recall"]:
            kept.append(row)
        else:
            counts["c_oracle_rouge2_recall"] += 1

    stats = {
        "input_annotated": len(rows),
        "kept": len(kept),
        "dropped": {r: counts.get(r, 0) for r in FILTER_REASONS},
        "survivors": {
            "after_dedupe": len(after_dedupe),
            "after_a_lemma_recall": len(survivors_a),
            "after_b_percentile_window": len(survivors_b),
            "after_c_oracle": len(kept),
        },
        "b_outside_window_by_statistic": {k: outside.get(k, 0) for k in STATS},
        "b_first_failing_statistic": {k: first_failing.get(k, 0) for k in STATS},
    }
    return kept, thresholds, stats


# --------------------------------------------------------------------------------------------
# parallel driver for phase 1 and the on-disk schema
# --------------------------------------------------------------------------------------------
_WORKER: dict[str, Any] = {}


def _init_worker(text_params: Mapping, kwargs: Mapping) -> None:
    from wikiref import text

    _WORKER["nlp"] = text.from_params(text_params)
    _WORKER["kwargs"] = dict(kwargs)


def _annotate_shard(shard: Sequence[Mapping[str, Any]]) -> tuple[list[dict], Counter]:
    return annotate_rows(shard, _WORKER["nlp"], **_WORKER["kwargs"])


def annotate_kwargs(text_params: Mapping, curate_params: Mapping) -> dict:
    return {
        "batch_size": text_params["batch_size"],
        "max_chars": text_params["max_chars"],
        "include_doc_title": curate_params["include_doc_title"],
        "oracle_max_sentences": curate_params["oracle_max_sentences"],
    }


def annotate_parallel(
    rows: Sequence[Mapping[str, Any]],
    text_params: Mapping,
    curate_params: Mapping,
    *,
    threads: int = 1,
    shard_size: int = 64,
    label: str = "curate",
) -> tuple[list[dict], Counter]:
    """Phase 1 over ``rows`` in shards of ``shard_size``, on ``threads`` worker processes (each loads
    the spaCy pipeline once). Shards are returned in input order, so the output does not depend on
    ``threads``."""
    import time
    from concurrent.futures import ProcessPoolExecutor

    kwargs = annotate_kwargs(text_params, curate_params)
    # Rows citing the same page go to the same shard (annotated once there); the output is sorted
    # by id later, so this order only affects speed.
    rows = sorted(rows, key=lambda r: (body_hash(str(r.get("doc_text") or "")), str(r.get("id"))))
    shards = [rows[i : i + shard_size] for i in range(0, len(rows), shard_size)]
    out: list[dict] = []
    dropped: Counter = Counter()
    t0 = last = time.monotonic()
    done = 0

    def collect(result, n):
        nonlocal done, last
        kept, drops = result
        out.extend(kept)
        dropped.update(drops)
        done += n
        now = time.monotonic()
        if now - last >= 15 or done == len(rows):
            last = now
            log.info("%s: %d/%d rows annotated (%.1f rows/s)", label, done, len(rows), done / max(now - t0, 1e-9))

    if threads <= 1 or len(shards) <= 1:
        _init_worker(text_params, kwargs)
        for shard in shards:
            collect(_annotate_shard(shard), len(shard))
    else:
        with ProcessPoolExecutor(max_workers=threads, initializer=_init_worker, initargs=(dict(text_params), kwargs)) as ex:
            for shard, result in zip(shards, ex.map(_annotate_shard, shards)):
                collect(result, len(shard))
    return out, dropped


def added_schema():
    """Arrow types of :data:`ADDED_COLUMNS`."""
    import pyarrow as pa

    types = {
        "doc_sentences": pa.list_(pa.string()),
        "summary_sentences": pa.list_(pa.string()),
        "lemma_recall": pa.float64(),
        "curate_oracle_indices": pa.list_(pa.int32()),
        "curate_oracle_score": pa.float64(),
        "doc_key": pa.string(),
        "doc_hash": pa.string(),
        **{k: pa.int32() for k in STATS},
    }
    return [pa.field(c, types[c]) for c in ADDED_COLUMNS]


def rows_to_table(rows: Sequence[Mapping[str, Any]], raw_schema):
    """Rows (raw columns in ``raw_schema`` order + added columns) as an Arrow table, sorted by id."""
    import pyarrow as pa

    fields = [f for f in raw_schema if f.name not in ADDED_COLUMNS] + added_schema()
    schema = pa.schema(fields)
    rows = sorted(rows, key=lambda r: str(r["id"]))
    return pa.Table.from_pylist([{f.name: r.get(f.name) for f in fields} for r in rows], schema=schema)
