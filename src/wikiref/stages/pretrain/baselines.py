"""Unsupervised baselines and oracles on WikiRef (journal §IV-D, Table IV).

* ALL: every document sentence.
* LEAD: the first ``k`` sentences (the paper takes two: summaries have 1.4 sentences on average).
* ORACLE (classification): the greedy oracle summary itself (``oracle_indices``), i.e. what a
  perfect classifier of the oracle labels would output.
* ORACLE (regression): the oracle scores (each sentence's own ROUGE-2 F1) used as the sentence
  scores of the normal selection (threshold tuned on dev + trigram blocking), i.e. what a perfect
  regressor would output.

Each function returns selected sentence indices (document order) per example; evaluation is
``wikiref.extractive.selection.evaluate``.
"""

from __future__ import annotations

from collections.abc import Sequence


def all_sentences(documents: Sequence[Sequence[str]]) -> list[list[int]]:
    return [list(range(len(doc))) for doc in documents]


def lead(documents: Sequence[Sequence[str]], k: int = 2) -> list[list[int]]:
    if k < 1:
        raise ValueError("LEAD needs k >= 1")
    return [list(range(min(k, len(doc)))) for doc in documents]


def oracle_summaries(oracle_indices: Sequence[Sequence[int]], documents: Sequence[Sequence[str]]) -> list[list[int]]:
    out = []
    for idx, doc in zip(oracle_indices, documents, strict=True):
        idx = sorted(int(i) for i in idx)
        if any(i < 0 or i >= len(doc) for i in idx):
            raise ValueError(f"oracle index out of range for a {len(doc)}-sentence document: {idx}")
        out.append(idx)
    return out
