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

Every row that goes in is either kept or counted under exactly one drop reason. The stage's jobs:
:func:`run_part` (``wikiref curate part``, phase 1 over one raw part) and :func:`merge`
(``wikiref curate merge``, phase 2 over all parts).

Statistics (Table I/II rows): ``doc_tokens`` / ``summary_tokens`` are spaCy tokens (whitespace
excluded, punctuation included), ``doc_sents`` / ``summary_sents`` spaCy sentences, ``query_depth``
the number of query levels (article title included, as in the paper), ``query_tokens`` the spaCy
tokens of all levels. Lemma recall: the fraction of the statement's non-stop-word tokens (not a
stop word, not punctuation/symbol) whose lower-cased lemma occurs among the document's lemmas.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from wikiref.dedup import body_hash, url_key
from wikiref.rouge.oracle import greedy_oracle
from wikiref.schemas import CURATE_ADDED, CURATE_STATISTICS, RAW_REQUIRED

log = logging.getLogger(__name__)

# Drop reasons, in the order they are applied.
INVALID_REASONS = (
    "missing_field",
    "empty_statement",
    "empty_doc_text",
    "empty_query",
    "doc_too_long",
    "no_doc_sentences",
)
FILTER_REASONS = (
    "duplicate_id",
    "a_no_content_words",
    "a_lemma_recall",
    "b_percentile_window",
    "c_oracle_rouge2_recall",
)


class CurateError(ValueError):
    """Bad input to a curate job (e.g. no example survives filter (a), so there is no percentile window)."""


# --------------------------------------------------------------------------------------------
# phase 1: per-row annotation
# --------------------------------------------------------------------------------------------
def check_row(row: Mapping[str, Any], max_chars: int) -> str | None:
    """Reason a raw row cannot be curated, or None."""
    for col in RAW_REQUIRED:
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

    Each returned row is the raw row plus the columns of :data:`wikiref.schemas.CURATE_ADDED`. Pure apart
    from the spaCy call.
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
        raise CurateError(f"need 0 <= percentile_low <= percentile_high <= 100, got {low}, {high}")
    window = {}
    for name in CURATE_STATISTICS:
        values = np.asarray(stats[name], dtype=float)
        if values.size == 0:
            raise CurateError("no example survived filter (a); cannot compute the percentile window")
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
        # rounded for readability; filter (b) applies exactly these numbers (the merge reads this file back)
        "window": {k: {b: round(v, 6) for b, v in window[k].items()} for k in CURATE_STATISTICS},
    }


def outside_window(row: Mapping[str, Any], window: Mapping[str, Mapping[str, float]]) -> list[str]:
    """Statistics of ``row`` outside their window (empty list = inside)."""
    return [k for k in CURATE_STATISTICS if not (window[k]["low"] <= row[k] <= window[k]["high"])]


def curate(
    rows: Sequence[Mapping[str, Any]],
    params: Mapping[str, Any],
    *,
    thresholds: Mapping | None = None,
) -> tuple[list[dict], dict, dict]:
    """Phase 2 over all annotated rows: returns (kept rows sorted by id, thresholds artifact, stats).

    ``thresholds`` (an artifact as written by a previous call) replaces the percentile computation;
    :func:`merge` writes the computed artifact and reads it back so filter (b) applies exactly the file.
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
        window = compute_thresholds({k: [r[k] for r in survivors_a] for k in CURATE_STATISTICS}, low, high)
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
        "b_outside_window_by_statistic": {k: outside.get(k, 0) for k in CURATE_STATISTICS},
        "b_first_failing_statistic": {k: first_failing.get(k, 0) for k in CURATE_STATISTICS},
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
        with ProcessPoolExecutor(
            max_workers=threads, initializer=_init_worker, initargs=(dict(text_params), kwargs)
        ) as ex:
            for shard, result in zip(shards, ex.map(_annotate_shard, shards)):
                collect(result, len(shard))
    return out, dropped


def rows_to_table(rows: Sequence[Mapping[str, Any]], raw_schema):
    """Rows (raw columns in ``raw_schema`` order + :data:`wikiref.schemas.CURATE_ADDED`) as an Arrow table,
    sorted by id."""
    import pyarrow as pa

    fields = [f for f in raw_schema if f.name not in CURATE_ADDED.names] + list(CURATE_ADDED)
    schema = pa.schema(fields)
    rows = sorted(rows, key=lambda r: str(r["id"]))
    return pa.Table.from_pylist([{f.name: r.get(f.name) for f in fields} for r in rows], schema=schema)


# --------------------------------------------------------------------------------------------
# the two jobs: one per raw part, then one merge
# --------------------------------------------------------------------------------------------
def _part_stats_path(part_path: str) -> str:
    """``<dir>/<part>.stats.json`` next to ``<dir>/<part>.parquet`` (what :func:`run_part` writes)."""
    return (
        part_path[: -len(".parquet")] + ".stats.json" if part_path.endswith(".parquet") else part_path + ".stats.json"
    )


def run_part(params: Mapping, inputs: Mapping, outputs: Mapping, *, threads: int = 1, shard_size: int = 64) -> dict:
    """The part job: annotate one raw part (phase 1) on ``threads`` processes.

    ``params``: the ``text`` section and the curate keys the annotation reads (``include_doc_title``,
    ``oracle_max_sentences``, ``max_raw_per_part``); ``inputs["raw"]``: ``data/raw/<part>.parquet``;
    ``outputs["part"]`` / ``outputs["stats"]``: the annotated rows and the counts of every row kept or
    skipped. A raw table without the columns of :data:`wikiref.schemas.RAW_REQUIRED` raises
    :class:`wikiref.schemas.SchemaError`. Returns the stats (also written)."""
    import pyarrow.parquet as pq

    from wikiref.files import stable_id, write_json, write_parquet
    from wikiref.schemas import require_columns

    raw_path = str(inputs["raw"])
    table = pq.read_table(raw_path)
    require_columns(table.column_names, RAW_REQUIRED, raw_path)
    rows = table.to_pylist()
    cap = params["curate"]["max_raw_per_part"]
    capped = 0
    if cap and len(rows) > cap:
        # Deterministic subset independent of row order: the rows whose id hashes lowest.
        keep = sorted(rows, key=lambda r: stable_id(str(r.get("id"))))[:cap]
        capped = len(rows) - len(keep)
        rows = keep
    annotated, dropped = annotate_parallel(
        rows, params["text"], params["curate"], threads=threads, shard_size=shard_size, label=raw_path
    )
    write_parquet(outputs["part"], rows_to_table(annotated, table.schema))
    stats = {
        "part_file": raw_path,
        "rows_in": table.num_rows,
        "annotated": len(annotated),
        "dropped": {"capped_max_raw_per_part": capped, **{r: dropped.get(r, 0) for r in INVALID_REASONS}},
    }
    if stats["rows_in"] != stats["annotated"] + sum(stats["dropped"].values()):
        raise RuntimeError(f"annotation lost rows: {stats}")
    write_json(outputs["stats"], stats)
    return stats


def merge(params: Mapping, inputs: Mapping, outputs: Mapping) -> dict:
    """The merge job: filters (a), (b), (c) over all annotated parts (phase 2).

    ``params``: the ``curate`` section; ``inputs["parts"]``: the annotated part files (each part's
    stats are read from ``<part>.stats.json`` next to it); ``outputs``: ``examples`` (the curated
    rows of every part, sorted by id), ``thresholds`` (the percentile window of (b), written and then
    read back by the filter), ``stats`` (every input row kept or counted under one drop reason) and,
    optionally, ``metrics``. Raises :class:`CurateError` when no example survives filter (a).
    Returns the stats (also written)."""
    from wikiref.files import read_json, write_json, write_parquet

    part_paths = [str(p) for p in inputs["parts"]]
    light = _light_rows(part_paths)
    part_stats = _read_part_stats(part_paths)

    cparams = params["curate"]
    # Compute the window on the survivors of (a), write it, then let (b) read exactly that file.
    _, computed, _ = curate(light, cparams)
    write_json(outputs["thresholds"], computed)
    thresholds = read_json(outputs["thresholds"])
    kept, _, stats = curate(light, cparams, thresholds=thresholds)

    write_parquet(outputs["examples"], _kept_table(part_paths, kept))

    dropped: Counter = Counter()
    rows_in = 0
    for ps in part_stats:
        rows_in += ps.get("rows_in") or 0
        dropped.update(ps.get("dropped", {}))
    dropped.update(stats["dropped"])
    full = {
        "parts": part_stats,
        "rows_in": rows_in,
        "kept": stats["kept"],
        "dropped": dict(sorted(dropped.items())),
        "survivors": stats["survivors"],
        "b_outside_window_by_statistic": stats["b_outside_window_by_statistic"],
        "b_first_failing_statistic": stats["b_first_failing_statistic"],
        "thresholds": thresholds["window"],
        "params": cparams,
    }
    if all(ps.get("rows_in") is not None for ps in part_stats):
        accounted = full["kept"] + sum(full["dropped"].values())
        if accounted != rows_in:
            raise RuntimeError(f"curation lost rows: {rows_in} in, {accounted} kept or dropped")
    write_json(outputs["stats"], full)
    if outputs.get("metrics"):
        write_json(outputs["metrics"], _merge_metrics(full, kept))
    return full


def _light_rows(part_paths: list[str]) -> list[dict]:
    """The few small columns the filters need, of every part's rows, each with ``_loc`` = (part, row).
    The texts are read afterwards, only for kept rows, so the merge stays light at paper scale
    (millions of annotated rows)."""
    import pyarrow.parquet as pq

    light_cols = ["id", "lemma_recall", *CURATE_STATISTICS, "curate_oracle_score"]
    light: list[dict] = []
    for pi, path in enumerate(part_paths):
        # collect's per-page STAND-IN flag travels into the metrics (derived from the data, not the profile)
        cols = light_cols + [c for c in ("doc_standin",) if c in pq.read_schema(path).names]
        for ri, row in enumerate(pq.read_table(path, columns=cols).to_pylist()):
            row["_loc"] = (pi, ri)
            light.append(row)
    return light


def _read_part_stats(part_paths: list[str]) -> list[dict]:
    """Each part's annotation stats (``rows_in`` None where the stats file is missing)."""
    from wikiref.files import read_json

    part_stats = []
    for path in part_paths:
        try:
            part_stats.append(read_json(_part_stats_path(path)))
        except FileNotFoundError:
            part_stats.append({"part_file": path, "rows_in": None, "annotated": None, "dropped": {}})
    return part_stats


def _kept_table(part_paths: list[str], kept: list[dict]):
    """The full rows of ``kept`` (found by their ``_loc``) from every part, sorted by id."""
    from collections import defaultdict

    import pyarrow as pa
    import pyarrow.parquet as pq

    by_part: dict[int, list[int]] = defaultdict(list)
    for row in kept:
        pi, ri = row["_loc"]
        by_part[pi].append(ri)
    tables = [pq.read_table(p).take(sorted(by_part.get(pi, []))) for pi, p in enumerate(part_paths)]
    return pa.concat_tables(tables, promote_options="permissive").sort_by("id")


def _merge_metrics(full: Mapping, kept: list[dict]) -> dict:
    import statistics

    rows_in = full["rows_in"]
    return {
        "rows_in": rows_in,
        "kept": full["kept"],
        "kept_fraction": round(full["kept"] / rows_in, 6) if rows_in else 0.0,
        "dropped": full["dropped"],
        "oracle_rouge2_recall_mean": round(statistics.fmean(r["curate_oracle_score"] for r in kept), 6)
        if kept
        else 0.0,
        "standin": any(r.get("doc_standin") for r in kept),
        "standin_examples": sum(bool(r.get("doc_standin")) for r in kept),
    }
