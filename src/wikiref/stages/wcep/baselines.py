"""WCEP oracles and extractive baselines (Gholipour Ghalandari et al., ACL 2020, §5.2 and Appendix A.2).

One :class:`Cluster` is one event: its reference summary (sentences) and its articles (each a list
of sentences), the original WCEP source articles first. :func:`summarize` runs one of
:data:`METHODS`; :func:`tune` picks a method's hyper-parameter on validation clusters.

Common rules
------------
* Tokens, the 40-token budget and the minimum sentence length use
  :func:`wikiref.stages.wcep.evaluation.n_tokens` (NLTK Treebank tokens, punctuation counted).
* The candidate sentences of a cluster are all sentences of its articles in cluster order (articles
  in the given order, sentences in article order), stripped, empty ones dropped and exact duplicates
  removed (first occurrence kept), as the authors' ``Summarizer._deduplicate`` does. Retrieved
  articles often repeat each other's sentences.
* Every method except ORACLE (MULTI) and ORACLE (SINGLE) returns full, untruncated sentences whose
  token total is <= ``max_tokens`` (40), "All tested methods apart from ORACLE (MULTI & SINGLE)
  observe the length limit of 40 tokens". RANDOM, RANDOM LEAD, TEXTRANK, CENTROID and SUBMODULAR
  only pick sentences of at least ``min_sentence_tokens`` (7) tokens (A.2); LEAD ORACLE is "the first
  sentences" of an article and has no minimum (as in the authors' ``LeadOracle``).
* Deterministic: the random methods and k-means draw from a NumPy generator seeded with ``seed``
  and a SHA-256 digest of the cluster id (not Python's salted ``hash``). Ranking ties go to the
  earlier sentence in cluster order.
* The returned sentences are in selection order (the order the method added them), like the authors'
  code; the two oracles return theirs in cluster order (the union :mod:`wikiref.rouge.fast` scores).
* R1-F, wherever a method itself needs ROUGE (the oracles), is :mod:`wikiref.rouge.fast` ROUGE-1 F1
  (``rouge_score`` with stemming) against the reference sentences joined with a space.

Methods
-------
``oracle_multi``
    "Greedy oracle, adds sentences from a cluster that optimize R1-F of the constructed summary until
    R1-F decreases", with no length limit: :func:`wikiref.rouge.oracle.greedy_oracle` with
    ``metric="rouge1_f1"`` (start empty, add the sentence giving the highest R1-F of the union, ties to
    the earlier sentence, stop when no addition strictly improves it). "Until it decreases" and "until
    nothing strictly improves" differ only when the best addition leaves R1-F exactly unchanged; we
    stop there (the longer summary is not better). For R1-F nothing is lost by stopping at the first
    non-improvement: once every remaining sentence ``x`` has ``hits_x / tokens_x <= h / (c + r)`` (the
    condition for not improving ``F = 2h / (c + r)``), clipped unigram hits only shrink as sentences
    are added, so any later union is a mediant of ratios <= the current one and cannot score higher.
    That is also what the authors' ``Oracle`` returns (the best prefix of its greedy path), except
    that their released code skips sentences that would take the oracle past 40 tokens, while §5.2
    says the two oracles do not observe the limit; we follow the paper (their recall is then that of
    the first 40 tokens, :mod:`wikiref.stages.wcep.evaluation`).
``oracle_single``
    The same greedy oracle run on each article alone (its own duplicates removed); the one with the
    best R1-F (ties to the earlier article).
``lead_oracle``
    For each article, its lead: its sentences from the first on while the total stays <= 40 tokens
    (stopping at the first that does not fit); the lead with the best R1-F (ties to the earlier
    article). Articles whose first sentence is longer than 40 tokens have no lead.
``random_lead``
    The lead of a randomly chosen article (articles tried in a seeded random order until one has a
    non-empty lead); in this lead, sentences shorter than ``min_sentence_tokens`` are skipped (as the
    authors' ``RandomLead`` does).
``random``
    Candidate sentences in a seeded random order, each added if it has at least
    ``min_sentence_tokens`` tokens and fits in the budget.
``textrank`` (Mihalcea & Tarau, 2004)
    Graph of the candidate sentences weighted by the cosine of their tf-idf vectors (a sparse product
    ``X X^T`` of L2-normalised rows; no self-loops), PageRank (damping 0.85) scores, then
    :func:`select_ranked`. PageRank is networkx's power iteration (``nx.pagerank``: same damping,
    tolerance, dangling-node handling) run directly on the SciPy matrix by :func:`pagerank`, because
    building a networkx graph of a WCEP-100 cluster (~3,000 sentences, millions of edges) takes
    seconds per cluster; ``tests/test_wcep_baselines.py`` checks it equals ``nx.pagerank``.
``centroid`` (Radev et al., 2004)
    Cosine of each sentence's tf-idf vector to the cluster centroid (the mean of the candidate
    sentences' tf-idf vectors, as in the authors' ``CentroidSummarizer``), then :func:`select_ranked`.
``submodular`` (Lin & Bilmes, 2011)
    ``F(S) = L(S) + lambda * R(S)`` with ``w_ij`` the tf-idf cosine of sentences ``i, j`` (``w_ii = 1``
    for a non-empty vector), ``C_i(S) = sum_{j in S} w_ij``,
    ``L(S) = sum_i min(C_i(S), alpha * C_i(V))``, ``alpha = a / N`` with ``a = 5`` (:data:`SUBMODULAR_A`;
    ``N`` candidate sentences), ``R(S) = sum_k sqrt(sum_{j in P_k and S} r_j)`` with
    ``r_j = (1 / N) sum_i w_ij`` and ``P_1..P_K`` the clusters of scikit-learn ``KMeans`` on the tf-idf
    vectors with ``K = round(0.2 N)`` (:data:`SUBMODULAR_CLUSTER_FRACTION`; at most the number of
    distinct vectors, one partition when K < 2; :func:`partition`).
    Lin & Bilmes' budgeted greedy: repeatedly add the sentence with the largest
    ``(F(S + k) - F(S)) / cost_k ** r`` among those that still fit in the 40-token budget (cost = its
    tokens, ``r = 0.3`` :data:`SUBMODULAR_SCALE`), then return the better of that set and the best
    single sentence. ``diversity`` is ``lambda`` (A.2 tunes it over 1..10). Only sentences with at
    least ``min_sentence_tokens`` tokens are candidates; all sentences count in ``V``. The constants
    ``a = 5``, ``K = 0.2 N`` and the default ``lambda = 6`` are Lin & Bilmes' DUC settings and the
    authors' defaults; the authors' code uses the unscaled gain and no single-sentence check.

tf-idf: scikit-learn ``TfidfVectorizer(lowercase=True, stop_words="english")`` (:func:`make_vectorizer`,
the authors' setting). ``idf=None`` fits it on the cluster's candidate sentences (each sentence a
document, as the authors do); the stage may pass one fitted on training-split articles instead.

Redundancy (A.2, Zopf et al. 2018's ranked-list framework, :func:`select_ranked`): "the proportion of
bigrams in a new sentence that appear in an already selected sentence" = for each selected sentence,
the number of the new sentence's bigrams (lowercased tokens, counted with multiplicity) found among
that sentence's bigrams, divided by the new sentence's bigram count; the new sentence is skipped when
this proportion **exceeds** the threshold for some selected sentence. The authors' code skips at
``>=`` (with zero overlap never redundant); the two differ only at exact equality. With ``>`` the
tuning grid 0.0..1.0 runs from "no shared bigram allowed" to "no redundancy filter". A sentence
without bigrams is never redundant.

Tuning (A.2): TEXTRANK and CENTROID tune ``redundancy`` over 0.0..1.0 in steps of 0.1, SUBMODULAR
tunes ``diversity`` over 1..10, on 100 randomly chosen validation clusters. The paper does not name
the criterion; :func:`tune` maximises the mean ROUGE-1 F1 (``rouge1_f1``, the first metric of
Table 5), ties to the smallest value.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.feature_extraction.text import TfidfVectorizer

from wikiref.extractive.textrank import cluster_rng, textrank_scores, tfidf_matrix
from wikiref.rouge import fast
from wikiref.rouge.oracle import greedy_oracle
from wikiref.stages.wcep.evaluation import MAX_TOKENS, n_tokens, tokenize

METHODS = (
    "oracle_multi",
    "oracle_single",
    "lead_oracle",
    "random_lead",
    "random",
    "textrank",
    "centroid",
    "submodular",
)
ORIGINS = ("original", "retrieved")

MIN_SENTENCE_TOKENS = 7
DEFAULT_REDUNDANCY = 0.5  # the authors' notebook default; tune() picks the value actually used
DEFAULT_DIVERSITY = 6.0  # Lin & Bilmes' lambda and the authors' default
REDUNDANCY_GRID = tuple(round(0.1 * i, 1) for i in range(11))
DIVERSITY_GRID = tuple(float(v) for v in range(1, 11))
TUNED = {
    "textrank": ("redundancy", REDUNDANCY_GRID),
    "centroid": ("redundancy", REDUNDANCY_GRID),
    "submodular": ("diversity", DIVERSITY_GRID),
}

SUBMODULAR_A = 5.0
SUBMODULAR_CLUSTER_FRACTION = 0.2
SUBMODULAR_SCALE = 0.3


@dataclass
class Cluster:
    cluster_id: str
    reference: list[str]  # summary sentences
    articles: list[list[str]]  # sentences per article, original articles first
    origins: list[str] = field(default_factory=list)  # "original" | "retrieved" per article

    def __post_init__(self) -> None:
        if not self.origins:
            self.origins = ["original"] * len(self.articles)
        if len(self.origins) != len(self.articles):
            raise ValueError(
                f"cluster {self.cluster_id}: {len(self.origins)} origins for {len(self.articles)} articles"
            )
        bad = sorted(set(self.origins) - set(ORIGINS))
        if bad:
            raise ValueError(f"cluster {self.cluster_id}: unknown origins {bad}; expected {ORIGINS}")


def reference_text(cluster: Cluster) -> str:
    return " ".join(cluster.reference)


def _dedup(sentences: Sequence[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for s in sentences:
        s = s.strip()
        if s and s not in seen:
            seen.add(s)
            out.append(s)
    return out


def candidate_sentences(cluster: Cluster) -> list[str]:
    """The cluster's sentences in cluster order, stripped, without empty ones and exact duplicates."""
    return _dedup(s for article in cluster.articles for s in article)


# -- ranked-list selection ---------------------------------------------------------------------


def _bigrams(sentence: str) -> list[tuple[str, str]]:
    toks = [t.lower() for t in tokenize(sentence)]
    return list(zip(toks, toks[1:]))


def redundancy_of(sentence: str, selected: Sequence[str]) -> float:
    """The largest proportion of ``sentence``'s bigrams found in one of the ``selected`` sentences."""
    new = _bigrams(sentence)
    if not new:
        return 0.0
    best = 0.0
    for other in selected:
        grams = set(_bigrams(other))
        best = max(best, sum(g in grams for g in new) / len(new))
    return best


def select_ranked(
    sentences: Sequence[str],
    scores: Sequence[float],
    *,
    max_tokens: int = MAX_TOKENS,
    min_sentence_tokens: int = MIN_SENTENCE_TOKENS,
    redundancy: float = DEFAULT_REDUNDANCY,
) -> list[int]:
    """Greedy selection from a ranked list (Zopf et al., 2018), as in WCEP's A.2.

    Walk the sentences by score descending (ties to the lower index); skip a sentence shorter than
    ``min_sentence_tokens`` tokens, one that would take the total over ``max_tokens``, and one whose
    bigram overlap with an already selected sentence exceeds ``redundancy``; add the others. Returns
    the selected indices in selection order.
    """
    if len(scores) != len(sentences):
        raise ValueError(f"{len(scores)} scores for {len(sentences)} sentences")
    order = np.argsort(-np.asarray(scores, dtype=float), kind="stable")
    chosen: list[int] = []
    chosen_grams: list[set[tuple[str, str]]] = []
    total = 0
    for i in order.tolist():
        if max_tokens - total < max(min_sentence_tokens, 1):
            break  # no sentence that may be selected fits any more
        n = n_tokens(sentences[i])
        if n < min_sentence_tokens or n == 0 or total + n > max_tokens:
            continue
        grams = _bigrams(sentences[i])
        if grams and any(sum(g in sel for g in grams) / len(grams) > redundancy for sel in chosen_grams):
            continue
        chosen.append(i)
        chosen_grams.append(set(grams))
        total += n
    return chosen


# -- tf-idf, PageRank ----------------------------------------------------------------------------


def centroid_scores(sentences: Sequence[str], idf: TfidfVectorizer | None = None) -> np.ndarray:
    """Cosine of each sentence's tf-idf vector to the mean of all of them."""
    if not sentences:
        return np.zeros(0)
    x = tfidf_matrix(sentences, idf)
    centroid = np.asarray(x.mean(axis=0)).ravel()
    norm = np.linalg.norm(centroid)
    if norm == 0:
        return np.zeros(len(sentences))
    return np.asarray(x @ (centroid / norm)).ravel()  # rows are unit (or zero) vectors


# -- SUBMODULAR ----------------------------------------------------------------------------------


def partition(x: sp.csr_matrix, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """SUBMODULAR's partition of the sentences: scikit-learn ``KMeans`` (k-means++, one run, seeded)
    on the distinct tf-idf vectors with ``K = min(round(0.2 N), distinct vectors)``; sentences with
    the same vector share a label. One partition when ``K < 2``. Returns (labels, number of parts).

    Clustering distinct vectors only: identical vectors (sentences differing only in stop words,
    numbers or punctuation, frequent among syndicated articles) belong together anyway, and with
    fewer distinct points than clusters scikit-learn's Lloyd iterations keep relocating empty
    clusters until ``max_iter``."""
    n = x.shape[0]
    if n <= 2 or x.shape[1] == 0:
        return np.zeros(n, dtype=np.int64), 1
    x = sp.csr_matrix(x)
    x.sort_indices()
    keys: dict[tuple[bytes, bytes], int] = {}
    representative: list[int] = []
    inverse = np.empty(n, dtype=np.int64)
    for i in range(n):
        lo, hi = x.indptr[i], x.indptr[i + 1]
        key = (x.indices[lo:hi].tobytes(), x.data[lo:hi].tobytes())
        if key not in keys:
            keys[key] = len(representative)
            representative.append(i)
        inverse[i] = keys[key]
    k = min(int(round(SUBMODULAR_CLUSTER_FRACTION * n)), len(representative))
    if k < 2:
        return np.zeros(n, dtype=np.int64), 1
    km = KMeans(n_clusters=k, n_init=1, random_state=int(rng.integers(2**31 - 1)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        labels = km.fit_predict(x[representative]).astype(np.int64)
    return labels[inverse], k


@dataclass
class _SubmodularProblem:
    """What the greedy needs, independent of lambda (prepared once per cluster for tuning)."""

    w: np.ndarray  # N x N cosine similarities
    cap: np.ndarray  # alpha * C_i(V)
    reward: np.ndarray  # r_j
    labels: np.ndarray  # partition of each sentence
    n_parts: int
    lengths: np.ndarray
    candidates: np.ndarray  # indices allowed in the summary


def _submodular_problem(
    sentences: Sequence[str],
    *,
    rng: np.random.Generator,
    min_sentence_tokens: int,
    max_tokens: int,
    idf: TfidfVectorizer | None,
) -> _SubmodularProblem:
    n = len(sentences)
    x = tfidf_matrix(sentences, idf)
    w = (x @ x.T).toarray() if x.shape[1] else np.zeros((n, n))
    coverage_v = w.sum(axis=1)
    cap = (SUBMODULAR_A / n) * coverage_v
    reward = coverage_v / n
    labels, k = partition(x, rng)
    lengths = np.array([n_tokens(s) for s in sentences], dtype=np.int64)
    ok = (lengths >= max(min_sentence_tokens, 1)) & (lengths <= max_tokens)
    return _SubmodularProblem(w, cap, reward, labels, k, lengths, np.flatnonzero(ok))


def _submodular_select(
    prob: _SubmodularProblem, *, diversity: float, max_tokens: int, scale: float = SUBMODULAR_SCALE, block: int = 1024
) -> list[int]:
    lam = float(diversity)
    n = prob.w.shape[0]
    covered = np.zeros(n)  # C_i(S)
    parts = np.zeros(prob.n_parts)  # sum of r_j per partition in S
    remaining = prob.candidates.copy()
    chosen: list[int] = []
    budget = max_tokens
    while remaining.size:
        remaining = remaining[prob.lengths[remaining] <= budget]
        if not remaining.size:
            break
        base = np.minimum(covered, prob.cap).sum()
        gain_l = np.empty(remaining.size)
        for start in range(0, remaining.size, block):
            cols = remaining[start : start + block]
            gain_l[start : start + cols.size] = (
                np.minimum(covered[:, None] + prob.w[:, cols], prob.cap[:, None]).sum(axis=0) - base
            )
        p = parts[prob.labels[remaining]]
        gain_r = np.sqrt(p + prob.reward[remaining]) - np.sqrt(p)
        ratio = (gain_l + lam * gain_r) / prob.lengths[remaining].astype(float) ** scale
        best = int(remaining[int(np.argmax(ratio))])
        chosen.append(best)
        covered += prob.w[:, best]
        parts[prob.labels[best]] += prob.reward[best]
        budget -= int(prob.lengths[best])
        remaining = remaining[remaining != best]
    if not chosen:
        return chosen
    # Lin & Bilmes: compare with the best single sentence that fits
    value_set = np.minimum(covered, prob.cap).sum() + lam * np.sqrt(parts).sum()
    singles = prob.candidates[prob.lengths[prob.candidates] <= max_tokens]
    single_values = np.minimum(prob.w[:, singles], prob.cap[:, None]).sum(axis=0) + lam * np.sqrt(prob.reward[singles])
    j = int(np.argmax(single_values))
    if single_values[j] > value_set:
        return [int(singles[j])]
    return chosen


def submodular_select(
    sentences: Sequence[str],
    *,
    diversity: float = DEFAULT_DIVERSITY,
    max_tokens: int = MAX_TOKENS,
    min_sentence_tokens: int = MIN_SENTENCE_TOKENS,
    seed: int | np.random.Generator = 0,
    idf: TfidfVectorizer | None = None,
) -> list[int]:
    """SUBMODULAR's selection (indices in selection order) over ``sentences``; see the module docstring."""
    if not sentences:
        return []
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    prob = _submodular_problem(
        sentences, rng=rng, min_sentence_tokens=min_sentence_tokens, max_tokens=max_tokens, idf=idf
    )
    return _submodular_select(prob, diversity=diversity, max_tokens=max_tokens)


# -- leads, random ---------------------------------------------------------------------------------


def lead(sentences: Sequence[str], *, max_tokens: int = MAX_TOKENS, min_sentence_tokens: int = 0) -> list[str]:
    """The first sentences while the total stays <= ``max_tokens`` (stop at the first that does not
    fit); sentences shorter than ``min_sentence_tokens`` are skipped."""
    out: list[str] = []
    total = 0
    for s in _dedup(sentences):
        n = n_tokens(s)
        if total + n > max_tokens:
            break
        if n < min_sentence_tokens or n == 0:
            continue
        out.append(s)
        total += n
    return out


def _random(
    sentences: Sequence[str], rng: np.random.Generator, *, max_tokens: int, min_sentence_tokens: int
) -> list[str]:
    out: list[str] = []
    total = 0
    for i in rng.permutation(len(sentences)).tolist():
        if max_tokens - total < max(min_sentence_tokens, 1):
            break  # no sentence that may be selected fits any more
        n = n_tokens(sentences[i])
        if n < max(min_sentence_tokens, 1) or total + n > max_tokens:
            continue
        out.append(sentences[i])
        total += n
    return out


# -- oracles ----------------------------------------------------------------------------------------


def oracle_multi(cluster: Cluster) -> list[str]:
    sentences = candidate_sentences(cluster)
    if not sentences or not cluster.reference:
        return []
    indices, _ = greedy_oracle(sentences, reference_text(cluster), metric="rouge1_f1")
    return [sentences[i] for i in indices]


def oracle_single(cluster: Cluster) -> list[str]:
    if not cluster.reference:
        return []
    refs = fast.References(reference_text(cluster))
    best: list[str] = []
    best_score = -1.0
    for article in cluster.articles:
        sentences = _dedup(article)
        if not sentences:
            continue
        indices, value = fast.SentenceSetRouge(sentences, refs, "rouge1").greedy("fmeasure")
        if indices and value > best_score:
            best, best_score = [sentences[i] for i in indices], value
    return best


def lead_oracle(cluster: Cluster, *, max_tokens: int = MAX_TOKENS) -> list[str]:
    if not cluster.reference:
        return []
    leads = [lead(article, max_tokens=max_tokens) for article in cluster.articles]
    leads = [x for x in leads if x]
    if not leads:
        return []
    scorer = fast.SentenceSetRouge([" ".join(x) for x in leads], reference_text(cluster), "rouge1")
    values = [scorer.score([i]).fmeasure for i in range(len(leads))]
    return leads[int(np.argmax(values))]


def random_lead(
    cluster: Cluster, *, max_tokens: int = MAX_TOKENS, min_sentence_tokens: int = MIN_SENTENCE_TOKENS, seed: int = 0
) -> list[str]:
    rng = cluster_rng(cluster.cluster_id, seed)
    for i in rng.permutation(len(cluster.articles)).tolist():
        out = lead(cluster.articles[i], max_tokens=max_tokens, min_sentence_tokens=min_sentence_tokens)
        if out:
            return out
    return []


# -- entry points ------------------------------------------------------------------------------------


def _ranked_scores(method: str, sentences: Sequence[str], idf: TfidfVectorizer | None) -> np.ndarray:
    return textrank_scores(sentences, idf) if method == "textrank" else centroid_scores(sentences, idf)


def summarize(
    method: str,
    cluster: Cluster,
    *,
    max_tokens: int = MAX_TOKENS,
    min_sentence_tokens: int = MIN_SENTENCE_TOKENS,
    seed: int = 0,
    redundancy: float = DEFAULT_REDUNDANCY,
    diversity: float = DEFAULT_DIVERSITY,
    idf: TfidfVectorizer | None = None,
) -> list[str]:
    """The summary (a list of the cluster's sentences) of ``cluster`` by ``method`` (one of :data:`METHODS`)."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; expected one of {METHODS}")
    if method == "oracle_multi":
        return oracle_multi(cluster)
    if method == "oracle_single":
        return oracle_single(cluster)
    if method == "lead_oracle":
        return lead_oracle(cluster, max_tokens=max_tokens)
    if method == "random_lead":
        return random_lead(cluster, max_tokens=max_tokens, min_sentence_tokens=min_sentence_tokens, seed=seed)
    sentences = candidate_sentences(cluster)
    if not sentences:
        return []
    if method == "random":
        return _random(
            sentences,
            cluster_rng(cluster.cluster_id, seed),
            max_tokens=max_tokens,
            min_sentence_tokens=min_sentence_tokens,
        )
    if method == "submodular":
        chosen = submodular_select(
            sentences,
            diversity=diversity,
            max_tokens=max_tokens,
            min_sentence_tokens=min_sentence_tokens,
            seed=cluster_rng(cluster.cluster_id, seed),
            idf=idf,
        )
    else:
        scores = _ranked_scores(method, sentences, idf)
        chosen = select_ranked(
            sentences, scores, max_tokens=max_tokens, min_sentence_tokens=min_sentence_tokens, redundancy=redundancy
        )
    return [sentences[i] for i in chosen]


def _metric_value(summary: Sequence[str], reference: str, metric: str) -> float:
    rtype, field_name = fast.parse_metric(metric)
    text = " ".join(summary).lower()
    return getattr(fast.score(reference.lower(), text, (rtype,))[rtype], field_name)


def tune(
    method: str,
    clusters: Sequence[Cluster],
    *,
    grid: Sequence[float] | None = None,
    max_clusters: int = 100,
    seed: int = 0,
    metric: str = "rouge1_f1",
    max_tokens: int = MAX_TOKENS,
    min_sentence_tokens: int = MIN_SENTENCE_TOKENS,
    idf: TfidfVectorizer | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[float, dict[float, float]]:
    """Pick ``method``'s hyper-parameter (``redundancy`` for textrank/centroid, ``diversity`` for
    submodular) on up to ``max_clusters`` clusters drawn at random (seeded) from ``clusters``.

    Each value of ``grid`` (default: the paper's grid) is scored by the mean ``metric`` (default R1-F,
    on the summary as produced); returns ``(best value, {value: mean})``, ties to the value listed
    first. The expensive part (scores, similarity matrices, k-means) is computed once per cluster.
    """
    if method not in TUNED:
        raise ValueError(f"{method!r} has no tuned hyper-parameter; tunable: {sorted(TUNED)}")
    _, default_grid = TUNED[method]
    values = [float(v) for v in (default_grid if grid is None else grid)]
    if not values:
        raise ValueError("empty grid")
    if not clusters:
        raise ValueError("no clusters to tune on")
    rng = np.random.default_rng(seed)
    picked = list(range(len(clusters)))
    if len(clusters) > max_clusters:
        picked = sorted(rng.choice(len(clusters), size=max_clusters, replace=False).tolist())
    totals = dict.fromkeys(values, 0.0)
    for done, ci in enumerate(picked):
        cluster = clusters[ci]
        sentences = candidate_sentences(cluster)
        ref = reference_text(cluster)
        if method == "submodular":
            prob = None
            if sentences:
                prob = _submodular_problem(
                    sentences,
                    rng=cluster_rng(cluster.cluster_id, seed),
                    min_sentence_tokens=min_sentence_tokens,
                    max_tokens=max_tokens,
                    idf=idf,
                )
            for v in values:
                chosen = _submodular_select(prob, diversity=v, max_tokens=max_tokens) if prob is not None else []
                totals[v] += _metric_value([sentences[i] for i in chosen], ref, metric)
        else:
            scores = _ranked_scores(method, sentences, idf)
            for v in values:
                chosen = select_ranked(
                    sentences, scores, max_tokens=max_tokens, min_sentence_tokens=min_sentence_tokens, redundancy=v
                )
                totals[v] += _metric_value([sentences[i] for i in chosen], ref, metric)
        if progress is not None:
            progress(done + 1, len(picked))
    means = {v: totals[v] / len(picked) for v in values}
    best = max(values, key=lambda v: (means[v], -values.index(v)))
    return best, means


def summarize_all(method: str, clusters: Sequence[Cluster], **options) -> dict[str, list[str]]:
    """``{cluster_id: summarize(method, cluster, **options)}``."""
    return {c.cluster_id: summarize(method, c, **options) for c in clusters}


def references(clusters: Sequence[Cluster]) -> Mapping[str, list[str]]:
    """``{cluster_id: reference sentences}``, the ``references`` argument of the evaluation."""
    return {c.cluster_id: list(c.reference) for c in clusters}
