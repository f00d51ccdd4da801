"""The oracle stage (journal §IV-C): oracle labels and regression targets for every split.

Labels come from :func:`wikiref.rouge.oracle.greedy_oracle` (greedy ROUGE-2 F1, no sentence cap),
targets from :func:`wikiref.rouge.oracle.sentence_scores` (each sentence's own ROUGE-2 F1).
"""

from __future__ import annotations

from typing import Sequence

from wikiref.rouge.oracle import greedy_oracle, labels_from_indices, sentence_scores

ORACLE_COLUMNS = ("id", "query", "doc_sentences", "statement", "oracle_labels", "oracle_scores", "oracle_indices", "oracle_score")


def _oracle_schema():
    import pyarrow as pa

    return {
        "id": pa.string(), "query": pa.list_(pa.string()), "doc_sentences": pa.list_(pa.string()),
        "statement": pa.string(), "oracle_labels": pa.list_(pa.int8()), "oracle_scores": pa.list_(pa.float64()),
        "oracle_indices": pa.list_(pa.int32()), "oracle_score": pa.float64(),
    }


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
