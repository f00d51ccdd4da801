"""Learning to rank the turns (or sentences) of a query's document from the signals each one has.

Each unit of a document gets the :data:`FEATURES` below, computed from the query, the document's texts and,
optionally, sentence embeddings of the query and the units (any encoder's unit-normalised vectors, e.g.
:func:`wikiref.model.biencoder.embed_texts`; without them the embedding columns are 0):

* query relevance: the embedding cosine, QUERY-SIM's TF-IDF cosine
  (:func:`wikiref.extractive.baselines.query_sim_scores`, fitted on the document), the share of the query's
  content words the unit contains; each also as a z-score and a percentile rank within the document, since
  only the order inside one document matters;
* context: the same cosines averaged over the ``w`` neighbours on each side (a relevant unit of a meeting sits
  in a relevant stretch of it: what lets a transcript model find the part of the meeting a query is about);
* centrality: the embedding cosine to the document's mean vector;
* form: log words, relative position (in the document, or as the caller says), the document's size and the
  query's length.

A :class:`Ranker` is a gradient-boosted regression tree ensemble (scikit-learn's
``HistGradientBoostingRegressor``: a well-kept implementation that takes the hundreds of thousands of
transcript turns in seconds) fitted on per-unit targets (a unit's ROUGE-2 recall against the reference), each
document weighted equally whatever its length, the targets optionally transformed per document
(:data:`TARGETS`). Its scores rank a document's units; the caller's selection rule fills the word budget.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np

FEATURES = (
    "cos",
    "cos_z",
    "cos_rank",
    "tfidf",
    "tfidf_z",
    "tfidf_rank",
    "overlap",
    "overlap_z",
    "cos_near2",
    "cos_near6",
    "tfidf_near2",
    "tfidf_near6",
    "centrality",
    "log_words",
    "position",
    "log_units",
    "query_words",
)
# the columns :func:`signal_features` appends for a trained scorer's per-unit scores (a WikiRef-pre-trained
# Q-BERT, say), after FEATURES
SIGNAL_FEATURES = ("scorer", "scorer_z", "scorer_rank")
TARGETS = ("raw", "doc_max", "doc_rank", "per_word")
_WORD = re.compile(r"[a-z0-9]+")


def _zscore(x: np.ndarray) -> np.ndarray:
    sd = x.std()
    return (x - x.mean()) / sd if sd > 0 else np.zeros_like(x)


def _rank(x: np.ndarray) -> np.ndarray:
    """Percentile rank in [0, 1] (ties share their mean rank); 1 = the highest."""
    from scipy.stats import rankdata

    if x.size < 2:
        return np.ones_like(x)
    return (rankdata(x, method="average") - 1.0) / (x.size - 1)


def _near(x: np.ndarray, w: int) -> np.ndarray:
    """Mean of ``x`` over the window of ``w`` units on each side (clipped at the document's ends)."""
    c = np.concatenate([[0.0], np.cumsum(x)])
    i = np.arange(x.size)
    lo, hi = np.maximum(i - w, 0), np.minimum(i + w + 1, x.size)
    return (c[hi] - c[lo]) / (hi - lo)


@functools.lru_cache(maxsize=1 << 17)
def _content_words(text: str) -> frozenset[str]:
    """Lower-cased words without English stop words; memoised, since every query of a meeting reads its turns."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(w for w in _WORD.findall(text.lower()) if w not in ENGLISH_STOP_WORDS)


def document_features(
    query: Sequence[str],
    units: Sequence[str],
    unit_embeddings: np.ndarray | None = None,
    query_embedding: np.ndarray | None = None,
    positions: Sequence[float] | None = None,
) -> np.ndarray:
    """The :data:`FEATURES` of every unit of one document, shape ``(len(units), len(FEATURES))``.
    ``query``: the query's strings (joined); embeddings: unit-normalised rows (both or neither); ``positions``:
    each unit's relative position in [0, 1] (default: its place in ``units``; a DUC cluster passes the place in
    the sentence's own document)."""
    from wikiref.extractive.baselines import query_sim_scores

    n = len(units)
    if (unit_embeddings is None) != (query_embedding is None):
        raise ValueError("give both the unit and the query embeddings, or neither")
    if n == 0:
        return np.zeros((0, len(FEATURES)))
    if unit_embeddings is not None:
        emb = np.asarray(unit_embeddings, dtype=np.float64)
        if emb.shape[0] != n:
            raise ValueError(f"{emb.shape[0]} unit embeddings for {n} units")
        cos = emb @ np.asarray(query_embedding, dtype=np.float64)
        centre = emb.mean(axis=0)
        norm = np.linalg.norm(centre)
        centrality = emb @ (centre / norm) if norm > 0 else np.zeros(n)
    else:
        cos, centrality = np.zeros(n), np.zeros(n)
    tfidf = np.asarray(query_sim_scores(list(query), list(units)), dtype=np.float64)
    q_words = _content_words(" ".join(query))
    overlap = np.array([len(q_words & _content_words(u)) / max(len(q_words), 1) for u in units], dtype=np.float64)
    n_words = np.array([len(u.split()) for u in units], dtype=np.float64)
    if positions is not None and len(positions) != n:
        raise ValueError(f"{len(positions)} positions for {n} units")
    columns = {
        "cos": cos,
        "cos_z": _zscore(cos),
        "cos_rank": _rank(cos),
        "tfidf": tfidf,
        "tfidf_z": _zscore(tfidf),
        "tfidf_rank": _rank(tfidf),
        "overlap": overlap,
        "overlap_z": _zscore(overlap),
        "cos_near2": _near(cos, 2),
        "cos_near6": _near(cos, 6),
        "tfidf_near2": _near(tfidf, 2),
        "tfidf_near6": _near(tfidf, 6),
        "centrality": centrality,
        "log_words": np.log1p(n_words),
        "position": np.arange(n) / max(n - 1, 1) if positions is None else np.asarray(positions, dtype=np.float64),
        "log_units": np.full(n, np.log(n)),
        "query_words": np.full(n, float(len(q_words))),
    }
    return np.stack([columns[f] for f in FEATURES], axis=1)


def signal_features(features: np.ndarray, scores: Sequence[float]) -> np.ndarray:
    """``features`` (one document's :func:`document_features`) with the :data:`SIGNAL_FEATURES` of ``scores`` (one
    per unit, e.g. a pre-trained scorer's) appended: the raw score, its z-score and percentile rank in the document."""
    x = np.asarray(scores, dtype=np.float64)
    if x.shape != (features.shape[0],):
        raise ValueError(f"{x.size} scores for {features.shape[0]} units")
    return np.concatenate([features, np.stack([x, _zscore(x), _rank(x)], axis=1)], axis=1)


def transform_targets(y: np.ndarray, how: str, words: np.ndarray | None = None) -> np.ndarray:
    """One document's targets as the ranker learns them: ``raw``; ``doc_max`` (divided by the document's
    best, all 0 when none is above 0); ``doc_rank`` (percentile rank); ``per_word`` (divided by the unit's
    words, then by the document's best: what a unit gives per word of a fixed word budget; needs ``words``)."""
    y = np.asarray(y, dtype=np.float64)
    if how == "raw":
        return y
    if how == "per_word":
        if words is None:
            raise ValueError("the per_word target needs the units' word counts")
        return transform_targets(y / np.maximum(np.asarray(words, dtype=np.float64), 1.0), "doc_max")
    if how == "doc_max":
        top = y.max() if y.size else 0.0
        return y / top if top > 0 else np.zeros_like(y)
    if how == "doc_rank":
        return _rank(y)
    raise ValueError(f"unknown target transform {how!r}; known: {TARGETS}")


def words_of(features: np.ndarray) -> np.ndarray:
    """The units' word counts, back from their ``log_words`` feature."""
    return np.rint(np.expm1(features[:, FEATURES.index("log_words")]))


@dataclass(frozen=True)
class RankerSettings:
    """The ranker's settings (:class:`Ranker`); ``name`` labels it in tables."""

    name: str = "ltr"
    target: str = "doc_max"
    max_iter: int = 300
    learning_rate: float = 0.05
    max_leaf_nodes: int = 31
    min_samples_leaf: int = 40
    l2_regularization: float = 1.0
    seed: int = 13

    def __post_init__(self):
        if self.target not in TARGETS:
            raise ValueError(f"unknown target transform {self.target!r}; known: {TARGETS}")

    @classmethod
    def parse(cls, text: str) -> RankerSettings:
        """``name:key=value,...`` (keys: the fields)."""
        name, _, rest = text.partition(":")
        types = {k: type(v) for k, v in asdict(cls()).items()}
        kw: dict = {"name": name}
        for item in filter(None, rest.split(",")):
            key, _, value = item.partition("=")
            if key not in types or key == "name":
                raise ValueError(f"unknown ranker setting {key!r} in {text!r}; known: {sorted(types)}")
            kw[key] = types[key](value)
        return cls(**kw)


class Ranker:
    """A fitted ranker: :meth:`fit` on documents' features and targets, :meth:`scores` of a document's units."""

    def __init__(self, settings: RankerSettings):
        self.settings = settings
        self.model = None

    def fit(self, documents: Sequence[tuple[np.ndarray, np.ndarray]]) -> Ranker:
        """``documents``: (features of its units, their targets) each; every document weighs the same."""
        from sklearn.ensemble import HistGradientBoostingRegressor

        docs = [(x, y) for x, y in documents if len(y)]
        if not docs:
            raise ValueError("no document with units to fit the ranker on")
        s = self.settings
        X = np.concatenate([x for x, _ in docs])
        y = np.concatenate([transform_targets(t, s.target, words_of(x)) for x, t in docs])
        w = np.concatenate([np.full(len(t), 1.0 / len(t)) for _, t in docs])
        self.model = HistGradientBoostingRegressor(
            max_iter=s.max_iter,
            learning_rate=s.learning_rate,
            max_leaf_nodes=s.max_leaf_nodes,
            min_samples_leaf=s.min_samples_leaf,
            l2_regularization=s.l2_regularization,
            early_stopping=False,
            random_state=s.seed,
        ).fit(X, y, sample_weight=w * len(docs))
        return self

    def scores(self, features: np.ndarray) -> np.ndarray:
        if self.model is None:
            raise RuntimeError("Ranker.scores before fit")
        if features.shape[0] == 0:
            return np.zeros(0)
        return self.model.predict(features)

    def importances(self, documents: Sequence[tuple[np.ndarray, np.ndarray]], seed: int = 0) -> Mapping[str, float]:
        """Permutation importance of each feature (the drop of R^2 on ``documents``), for the study's notes."""
        from sklearn.inspection import permutation_importance

        X = np.concatenate([x for x, _ in documents])
        y = np.concatenate([transform_targets(t, self.settings.target, words_of(x)) for x, t in documents])
        res = permutation_importance(self.model, X, y, n_repeats=3, random_state=seed)
        names = FEATURES + SIGNAL_FEATURES if X.shape[1] > len(FEATURES) else FEATURES
        return dict(zip(names, (round(float(v), 5) for v in res.importances_mean)))
