"""bench/bm25.py's explanation of top-4 differences between ChunkIndex (bm25s) and rank_bm25.BM25Okapi, on a
tiny hand-made corpus with a term in more than half of the chunks (nothing is timed)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("bm25s")
rank_bm25 = pytest.importorskip("rank_bm25")

from wikiref.stages.qmdscnn.retrieval import ChunkIndex  # noqa: E402


@pytest.fixture(scope="module")
def bench(load_bench):
    return load_bench("bm25")


# one chunk per article; "common" is in 4 of 6 chunks (Robertson idf < 0)
DOCS = [
    ["common", "alpha"],
    ["common", "common", "beta"],
    ["common", "gamma"],
    ["common", "delta", "alpha"],
    ["x"],
    ["y"],
]


def compare(bench, query):
    ours_index = ChunkIndex(DOCS, list(range(len(DOCS))))
    ref = rank_bm25.BM25Okapi(DOCS, k1=1.5, b=0.75)
    ours = [h.chunk for h in ours_index.top(query, bench.K, exclude_group=0)]
    R = ref.get_scores(query)
    df = {t: sum(t in d for d in DOCS) for t in query}
    R_adj = ref.get_scores([t for t in query if 2 * df[t] <= len(DOCS)])
    assert np.allclose(ours_index.scores(query), R_adj / 2.5, rtol=1e-9, atol=0.0)
    return ours, bench.classify(ours, R, R_adj, (0, 1))


def test_high_df_term_alone(bench):
    # bm25s: idf floored to 0, nothing returned; rank_bm25: epsilon idf ranks the chunks holding the term
    ours, why = compare(bench, ["common"])
    assert ours == []
    assert why == {"high_df", "zero_score"}


def test_zero_score_fill(bench):
    # only chunk 3 has "alpha" outside the own article; rank_bm25's top 4 is filled with 0-score chunks
    ours, why = compare(bench, ["alpha"])
    assert ours == [3]
    assert why == {"zero_score"}


def test_high_df_term_reorders(bench):
    # both agree on the top 2; rank_bm25 adds chunk 3, which holds only the high-df term, and a 0-score chunk
    ours, why = compare(bench, ["common", "beta", "gamma"])
    assert ours == [2, 1]
    assert why == {"high_df", "zero_score"}


def test_near_tie_and_unexplained(bench):
    R = np.array([0.0, 1.0, 1.0 + 1e-13, 0.5])
    assert bench.classify([1, 2, 3], R, R, (0, 1)) == {"near_tie"}  # ours saw an exact tie: lower index first
    assert bench.classify([3, 1, 2], R, R, (0, 1)) == {"unexplained"}
    assert bench.classify([2, 1, 3], R, R, (0, 1)) == set()
