"""DUC summary assembly (journal §V-A): rank, fill 250 words, skip redundant sentences.

"Sentences are scored per (query, document), ranked across the documents of the cluster, and added
to the summary while it stays within 250 words; a sentence is skipped when more than half of its
bigrams already appear in the summary."

:func:`select` is the pure rule shared by the baselines and the fine-tuned models. Definitions:

* words: whitespace-separated tokens of the sentence (what ROUGE-1.5.5 ``-l`` counts);
* bigrams: the set of adjacent pairs of lower-cased ``[a-z0-9]+`` tokens; a sentence is redundant
  when ``|bigrams(s) & bigrams(summary)| > max_bigram_overlap * |bigrams(s)|`` (a sentence without
  bigrams is never redundant);
* ranking: score descending; ties keep the candidates' order (documents in cluster order,
  sentences in document order), so the result is deterministic;
* ``fill="skip"``: a sentence that would overflow the budget is skipped and later (shorter)
  sentences are still tried; ``fill="stop"`` ends the summary at the first one that does not fit.
* empty sentences (no words) are never selected.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_TOKEN = re.compile(r"[a-z0-9]+")
FILL_MODES = ("skip", "stop")


def words(sentence: str) -> int:
    return len(sentence.split())


def bigrams(sentence: str) -> frozenset[tuple[str, str]]:
    toks = _TOKEN.findall(sentence.lower())
    return frozenset(zip(toks, toks[1:]))


def ranking(scores: Sequence[float]) -> list[int]:
    """Indices by score descending, ties in input order."""
    return sorted(range(len(scores)), key=lambda i: (-scores[i], i))


def select(
    scores: Sequence[float],
    sentences: Sequence[str],
    *,
    max_words: int = 250,
    max_bigram_overlap: float = 0.5,
    fill: str = "skip",
) -> list[int]:
    """Indices of the selected sentences, in the order they were added (rank order)."""
    if len(scores) != len(sentences):
        raise ValueError(f"{len(scores)} scores for {len(sentences)} sentences")
    if fill not in FILL_MODES:
        raise ValueError(f"fill must be one of {FILL_MODES}, not {fill!r}")
    if max_words < 1:
        raise ValueError("max_words must be >= 1")
    chosen: list[int] = []
    used = 0
    seen: set = set()
    for i in ranking(scores):
        n = words(sentences[i])
        if n == 0:
            continue
        if used + n > max_words:
            if fill == "stop":
                break
            continue
        bg = bigrams(sentences[i])
        if bg and len(bg & seen) > max_bigram_overlap * len(bg):
            continue
        chosen.append(i)
        used += n
        seen |= bg
        if used == max_words:
            break
    return chosen


def flatten(documents: Sequence[Sequence[str]]) -> tuple[list[str], list[tuple[int, int]]]:
    """All sentences of a cluster in cluster order, with their (document, sentence) positions."""
    sents: list[str] = []
    where: list[tuple[int, int]] = []
    for d, doc in enumerate(documents):
        for s, sent in enumerate(doc):
            sents.append(sent)
            where.append((d, s))
    return sents, where


def select_cluster(scores: Sequence[Sequence[float]], documents: Sequence[Sequence[str]], **kwargs) -> list[str]:
    """Per-document sentence scores -> the summary's sentences (rank order)."""
    sents, _ = flatten(documents)
    flat = [x for doc_scores in scores for x in doc_scores]
    if len(flat) != len(sents):
        raise ValueError("scores do not match the documents' sentences")
    return [sents[i] for i in select(flat, sents, **kwargs)]
