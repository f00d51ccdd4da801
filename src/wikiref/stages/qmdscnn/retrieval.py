"""BM25 over every chunk of the corpus, top-k retrieval that never returns the query's own article.

The index is ``bm25s`` (maintained, sparse-matrix BM25: scores precomputed per (term, chunk) at indexing
time, so one query costs one sparse column sum over the chunks instead of a Python loop over them, which
is what makes ~1.2M chunks x ~300k queries feasible on one machine; ``bench/bm25.py`` measures it
against ``rank_bm25``). Scoring is Robertson's BM25 (``method="robertson"``: idf = ln((N - n + 0.5) /
(n + 0.5)) floored at 0, k1 = 1.5, b = 0.75 by default), in float64. Tokens: ``bm25s.tokenize`` (lower
case, ``\\b\\w\\w+\\b``, English stop words removed, no stemming).

Ties are broken by chunk position (the lower global chunk index first), so the top-k lists are a
function of the chunks alone; chunks of the query's own article (or, with ``allowed``, of other splits)
are excluded before the top-k is taken, and chunks scoring 0 (no query term) are never returned.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


def tokenize(texts: Sequence[str]) -> list[list[str]]:
    """BM25 tokens of each text (``bm25s.tokenize``: lower case, 2+ letter words, English stop words out)."""
    import bm25s

    if not texts:
        return []
    return bm25s.tokenize(list(texts), stopwords="en", return_ids=False, show_progress=False)


@dataclass(frozen=True)
class Hit:
    chunk: int  # global chunk index
    score: float


class ChunkIndex:
    """BM25 over ``chunk_tokens`` (one token list per chunk, in a fixed global order); ``groups[i]`` is the
    article of chunk ``i`` (chunks of one article are excluded together)."""

    def __init__(self, chunk_tokens: Sequence[Sequence[str]], groups: Sequence[int], *, k1=1.5, b=0.75):
        import bm25s

        if len(chunk_tokens) != len(groups):
            raise ValueError(f"{len(chunk_tokens)} chunks but {len(groups)} group labels")
        self.groups = np.asarray(groups, dtype=np.int64)
        self.n = len(chunk_tokens)
        self.bm25 = bm25s.BM25(method="robertson", k1=k1, b=b, dtype="float64")
        if self.n:
            # an empty token list would make bm25s fail; such a chunk simply never matches
            self.bm25.index([list(t) for t in chunk_tokens], show_progress=False)
        # the chunks of each group, for the exclusion
        order = np.argsort(self.groups, kind="stable")
        bounds = np.flatnonzero(np.diff(self.groups[order])) + 1
        self._members = {int(self.groups[idx[0]]): idx for idx in np.split(order, bounds) if len(idx)}

    def nbytes(self) -> int:
        """Bytes of the index arrays (scores, term ids, pointers) and the group labels."""
        if not self.n:
            return 0
        s = self.bm25.scores
        return int(s["data"].nbytes + s["indices"].nbytes + s["indptr"].nbytes + self.groups.nbytes)

    def scores(self, query_tokens: Sequence[str]) -> np.ndarray:
        """BM25 score of every chunk for the query (zeros when no query token is in the vocabulary)."""
        if not self.n:
            return np.zeros(0)
        ids = self.bm25.get_tokens_ids(list(query_tokens))
        if not ids:
            return np.zeros(self.n)
        return np.asarray(self.bm25.get_scores_from_ids(ids), dtype=np.float64)

    def top(self, query_tokens: Sequence[str], k: int, *, exclude_group: int, allowed=None) -> list[Hit]:
        """The ``k`` best chunks for the query outside group ``exclude_group`` (and inside the boolean mask
        ``allowed`` when given), best first, ties by lower chunk index; only chunks with a score > 0."""
        if k <= 0 or not self.n:
            return []
        scores = self.scores(query_tokens)
        candidates = scores > 0
        own = self._members.get(int(exclude_group))
        if own is not None:
            candidates[own] = False
        if allowed is not None:
            candidates &= allowed
        idx = np.flatnonzero(candidates)
        if not len(idx):
            return []
        if len(idx) > k:
            # everything at least as good as the k-th best score, then an exact (score, index) order
            kth = np.partition(scores[idx], len(idx) - k)[len(idx) - k]
            idx = idx[scores[idx] >= kth]
        order = np.lexsort((idx, -scores[idx]))[:k]
        return [Hit(int(idx[i]), float(scores[idx[i]])) for i in order]
