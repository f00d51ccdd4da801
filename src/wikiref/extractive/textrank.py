"""TextRank and tf-idf sentence graphs, shared by the WCEP baselines (TEXTRANK, CENTROID, SUBMODULAR) and
Psg2Sum's TextRank baseline: the tf-idf configuration, PageRank (networkx's definition, damping 0.85) over the
cosine graph of a set of sentences, and the per-cluster random generator (seeded by the seed and a SHA-256
digest of the cluster or example id, so independent of Python's hash salt and of processing order).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.preprocessing import normalize

PAGERANK_ALPHA = 0.85


def make_vectorizer() -> TfidfVectorizer:
    """The tf-idf configuration of TEXTRANK, CENTROID and SUBMODULAR (unfitted)."""
    return TfidfVectorizer(lowercase=True, stop_words="english")


def cluster_rng(cluster_id: str, seed: int = 0) -> np.random.Generator:
    """The generator of a cluster's random choices: seeded by ``seed`` and the cluster id's digest."""
    digest = int.from_bytes(hashlib.sha256(cluster_id.encode("utf-8")).digest()[:8], "little")
    return np.random.default_rng([int(seed), digest])


def tfidf_matrix(sentences: Sequence[str], idf: TfidfVectorizer | None = None) -> sp.csr_matrix:
    """L2-normalised tf-idf rows of ``sentences`` (``idf`` fitted, or a new one fitted on them)."""
    if idf is None:
        vectorizer = make_vectorizer()
        try:
            x = vectorizer.fit_transform(sentences)
        except ValueError:  # empty vocabulary: only stop words
            return sp.csr_matrix((len(sentences), 0))
    else:
        x = idf.transform(sentences)
        if getattr(idf, "norm", None) != "l2":
            x = normalize(x, norm="l2")
    return sp.csr_matrix(x, dtype=np.float64)


def pagerank(
    adjacency: sp.spmatrix | np.ndarray, *, alpha: float = PAGERANK_ALPHA, max_iter: int = 100, tol: float = 1.0e-06
) -> np.ndarray:
    """PageRank of a weighted graph given as a (sparse) adjacency matrix, by networkx's definition
    (``networkx.pagerank`` with uniform personalization and dangling weights: power iteration on the
    row-normalised matrix, dangling nodes' mass spread uniformly, stop when the L1 change is below
    ``N * tol``). Raises ``RuntimeError`` if it does not converge in ``max_iter`` iterations."""
    a = sp.csr_matrix(adjacency, dtype=np.float64)
    n = a.shape[0]
    if n == 0:
        return np.zeros(0)
    out = np.asarray(a.sum(axis=1)).ravel()
    inv = np.zeros(n)
    nonzero = out != 0
    inv[nonzero] = 1.0 / out[nonzero]
    m = sp.diags(inv) @ a
    mt = sp.csr_matrix(m.T)
    x = np.full(n, 1.0 / n)
    p = np.full(n, 1.0 / n)
    dangling = ~nonzero
    for _ in range(max_iter):
        last = x
        x = alpha * (mt @ last + last[dangling].sum() * p) + (1 - alpha) * p
        if np.abs(x - last).sum() < n * tol:
            return x
    raise RuntimeError(f"PageRank did not converge in {max_iter} iterations")


def textrank_scores(sentences: Sequence[str], idf: TfidfVectorizer | None = None) -> np.ndarray:
    """PageRank of the tf-idf cosine graph of ``sentences`` (no self-loops)."""
    if not sentences:
        return np.zeros(0)
    x = tfidf_matrix(sentences, idf)
    sim = sp.csr_matrix(x @ x.T)
    sim.setdiag(0.0)
    sim.eliminate_zeros()
    return pagerank(sim)
