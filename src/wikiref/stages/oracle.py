"""The oracle stage (journal §IV-C): oracle labels and regression targets for every split.

Labels come from :func:`wikiref.rouge.oracle.greedy_oracle` (greedy ROUGE-2 F1, no sentence cap),
targets from :func:`wikiref.rouge.oracle.sentence_scores` (each sentence's own ROUGE-2 F1). The
stage's one job is :func:`run` (``wikiref oracle``); its tables have the schema
:data:`wikiref.schemas.ORACLE`.

The same labelling reads any source on the common example schema (:data:`wikiref.schemas.EXAMPLE`):
:func:`example_oracle_table` pools the sentences of all of an example's documents in document order
(the oracle chooses among all of them; ``doc_lengths`` keeps where each document starts, for the
input packing) and labels them against the summary sentences joined into one statement. The source
comparison (``wikiref compare oracle``) runs it per source.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from wikiref.rouge.oracle import greedy_oracle, labels_from_indices, sentence_scores
from wikiref.schemas import ORACLE

log = logging.getLogger(__name__)
# The split columns an oracle table carries over (the rest of wikiref.schemas.ORACLE is computed here).
SPLIT_COLUMNS = ("id", "query", "doc_sentences", "statement")
STANDIN_COLUMN = "doc_standin"  # the split's per-example STAND-IN flag (collect: the page is a stand-in)


def oracle_record(
    doc_sentences: Sequence[str],
    statement: str,
    *,
    label_metric: str = "rouge2_f1",
    score_metric: str = "rouge2_f1",
) -> dict:
    """Labels (greedy oracle, ``label_metric``) and per-sentence targets (``score_metric``)."""
    sents = list(doc_sentences)
    idx, score = greedy_oracle(sents, statement, metric=label_metric)
    return {
        "oracle_labels": labels_from_indices(len(sents), idx),
        "oracle_scores": sentence_scores(sents, statement, metric=score_metric),
        "oracle_indices": idx,
        "oracle_score": score,
    }


def _oracle_shard(args) -> list[dict]:
    pairs, label_metric, score_metric = args
    return [oracle_record(d, s, label_metric=label_metric, score_metric=score_metric) for d, s in pairs]


def oracle_records(
    doc_sentences: Sequence[Sequence[str]],
    statements: Sequence[str],
    *,
    label_metric: str = "rouge2_f1",
    score_metric: str = "rouge2_f1",
    threads: int = 1,
    shard_size: int = 256,
) -> list[dict]:
    """:func:`oracle_record` for many examples, on ``threads`` processes; output in input order."""
    pairs = list(zip(doc_sentences, statements))
    shards = [(pairs[i : i + shard_size], label_metric, score_metric) for i in range(0, len(pairs), shard_size)]
    if threads <= 1 or len(shards) <= 1:
        results = map(_oracle_shard, shards)
        return [r for shard in results for r in shard]
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=threads) as ex:
        return [r for shard in ex.map(_oracle_shard, shards) for r in shard]


def run(params: Mapping, inputs: Mapping, outputs: Mapping, *, threads: int = 1, batch_rows: int = 20000) -> dict:
    """The oracle job.

    ``params``: the ``oracle`` section; ``inputs``: split name -> data/split/<split>.parquet (the splits
    processed, in this order); ``outputs``: split name -> data/oracle/<split>.parquet (schema
    :data:`wikiref.schemas.ORACLE`, rows sorted by id) and ``metrics`` (per split: examples, mean
    oracle score, mean selected sentences, examples with no positive label). Rows are processed in
    batches of ``batch_rows`` (memory bound) on ``threads`` processes. A split table without the
    columns needed raises :class:`wikiref.schemas.SchemaError`. Returns the metrics (also written)."""
    import statistics
    import time

    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from wikiref.files import write_json, write_parquet
    from wikiref.schemas import SchemaError, empty, require_columns

    oracle = params["oracle"]
    label_metric, score_metric = oracle["label_metric"], oracle["score_metric"]
    metrics: dict = {"label_metric": label_metric, "score_metric": score_metric, "splits": {}}
    for name, src in inputs.items():
        t0 = time.monotonic()
        names = pq.read_schema(src).names
        require_columns(names, SPLIT_COLUMNS, str(src))
        # STAND-IN provenance travels with the rows (a split without doc_standin holds real documents).
        table = pq.read_table(src, columns=list(SPLIT_COLUMNS) + [c for c in (STANDIN_COLUMN,) if c in names])
        if STANDIN_COLUMN not in names:
            table = table.append_column(STANDIN_COLUMN, pa.array([False] * table.num_rows, pa.bool_()))
        table = table.take(pc.sort_indices(table, sort_keys=[("id", "ascending")]))
        # Batches of rows keep memory bounded at paper scale (256k training examples).
        pieces, scores, n_sel, n_sent = [], [], [], []
        for start in range(0, table.num_rows, batch_rows):
            chunk = table.slice(start, batch_rows)
            docs = chunk.column("doc_sentences").to_pylist()
            records = oracle_records(
                docs,
                chunk.column("statement").to_pylist(),
                label_metric=label_metric,
                score_metric=score_metric,
                threads=threads,
            )
            computed = {
                field.name: pa.array([r[field.name] for r in records], type=field.type)
                for field in ORACLE
                if field.name not in SPLIT_COLUMNS and field.name != "standin"
            }
            computed["standin"] = pa.array(chunk.column(STANDIN_COLUMN).to_pylist(), pa.bool_())
            # The carried columns keep their arrays as read (a list's child field name is part of the bytes).
            piece = pa.Table.from_arrays(
                [chunk.column(f.name) if f.name in SPLIT_COLUMNS else computed[f.name] for f in ORACLE],
                names=ORACLE.names,
            )
            if not piece.schema.equals(ORACLE):
                raise SchemaError(f"{src}: column types {piece.schema} differ from {ORACLE}")
            pieces.append(piece)
            scores += [r["oracle_score"] for r in records]
            n_sel += [len(r["oracle_indices"]) for r in records]
            n_sent += [len(d) for d in docs]
            log.info("%s: %d/%d examples", name, start + len(records), table.num_rows)
        write_parquet(outputs[name], pa.concat_tables(pieces) if pieces else empty(ORACLE))
        dt = time.monotonic() - t0
        n = len(scores)
        metrics["splits"][name] = {
            "examples": n,
            "oracle_score_mean": round(statistics.fmean(scores), 6) if n else 0.0,
            "selected_sentences_mean": round(statistics.fmean(n_sel), 6) if n else 0.0,
            "no_positive_label": sum(1 for k in n_sel if k == 0),
            "doc_sentences_mean": round(statistics.fmean(n_sent), 6) if n else 0.0,
        }
        metrics["splits"][name]["standin_examples"] = int(sum(table.column(STANDIN_COLUMN).to_pylist()))
        log.info("%s: %d examples in %.1fs (%.1f examples/s)", name, n, dt, n / max(dt, 1e-9))
    metrics["standin"] = any(s["standin_examples"] for s in metrics["splits"].values())
    write_json(outputs["metrics"], metrics)
    return metrics


# --------------------------------------------------------------------------- any source (common schema)


def pooled_sentences(documents) -> tuple[list[str], list[int], list[str]]:
    """The sentences of all documents in order, the sentences per document and the document ids."""
    sentences: list[str] = []
    lengths: list[int] = []
    ids: list[str] = []
    for d in documents:
        sents = [str(x) for x in d["sentences"]]
        sentences.extend(sents)
        lengths.append(len(sents))
        ids.append(str(d["id"]))
    return sentences, lengths, ids


def example_oracle_table(
    examples,
    *,
    label_metric: str = "rouge2_f1",
    score_metric: str = "rouge2_f1",
    threads: int = 1,
    batch_rows: int = 20000,
):
    """A common-schema table (:data:`wikiref.schemas.EXAMPLE`) -> its oracle table
    (:data:`wikiref.schemas.ORACLE_SOURCE`), rows sorted by id: the greedy oracle (``label_metric``)
    and the per-sentence targets (``score_metric``) over the pooled sentences of every document,
    against the summary sentences joined by spaces. Returns (table, per-example selected counts)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from wikiref.schemas import ORACLE_SOURCE, SchemaError, empty, require_columns

    require_columns(examples.schema.names, ("id", "source", "query", "documents", "summary", "standin"), "examples")
    if examples.num_rows == 0:
        return empty(ORACLE_SOURCE), []
    examples = examples.take(pc.sort_indices(examples, sort_keys=[("id", "ascending")]))
    pieces, selected = [], []
    for start in range(0, examples.num_rows, batch_rows):
        chunk = examples.slice(start, batch_rows).to_pylist()
        pooled = [pooled_sentences(r["documents"]) for r in chunk]
        statements = [" ".join(str(s) for s in r["summary"]) for r in chunk]
        records = oracle_records(
            [p[0] for p in pooled], statements, label_metric=label_metric, score_metric=score_metric, threads=threads
        )
        rows = {
            "id": [r["id"] for r in chunk],
            "query": [[str(q) for q in r["query"]] for r in chunk],
            "doc_sentences": [p[0] for p in pooled],
            "statement": statements,
            **{k: [rec[k] for rec in records] for k in ORACLE.names if k not in SPLIT_COLUMNS and k != "standin"},
            "standin": [bool(r["standin"]) for r in chunk],
            "source": [r["source"] for r in chunk],
            "doc_lengths": [p[1] for p in pooled],
            "doc_ids": [p[2] for p in pooled],
        }
        piece = pa.Table.from_pydict(rows, schema=ORACLE_SOURCE)
        if not piece.schema.equals(ORACLE_SOURCE):
            raise SchemaError(f"oracle of examples: column types {piece.schema} differ from {ORACLE_SOURCE}")
        pieces.append(piece)
        selected += [len(rec["oracle_indices"]) for rec in records]
        log.info("%d/%d examples", start + len(chunk), examples.num_rows)
    return pa.concat_tables(pieces), selected
