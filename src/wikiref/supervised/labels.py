"""Oracle labels and regression targets of examples, shared by the oracle stage (WikiRef splits) and the
compare stage (every source's common-schema examples): the greedy oracle (labels) and per-sentence
ROUGE targets of one example, of many in parallel, and the oracle table of a common-schema table.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from wikiref.rouge.oracle import greedy_oracle, labels_from_indices, sentence_scores
from wikiref.schemas import ORACLE

log = logging.getLogger(__name__)


# The split columns an oracle table carries over (the rest of wikiref.schemas.ORACLE is computed here).
SPLIT_COLUMNS = ("id", "query", "doc_sentences", "statement")


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
