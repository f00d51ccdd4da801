"""Summary selection from sentence scores: one ranking, the two summary rules of the journal, and the
ROUGE evaluation and threshold search of the WikiRef rule.

:func:`ranking` orders sentences by score, descending; ties keep the candidates' order (documents in cluster
order, sentences in document order), so every result is deterministic; a sentence without a score (``None``
or a float NaN: never scored) ranks as ``-inf``, last. For finite scores that is plain score order, so both rules
and the meeting baselines share it.

**The DUC rule** (journal §V-A, :func:`select`): "Sentences are scored per (query, document), ranked across
the documents of the cluster, and added to the summary while it stays within 250 words; a sentence is skipped
when more than half of its bigrams already appear in the summary." The pure rule shared by the DUC and QMSum
baselines and the fine-tuned models. Definitions:

* words: whitespace-separated tokens of the sentence (what ROUGE-1.5.5 ``-l`` counts);
* bigrams: the set of adjacent pairs of lower-cased ``[a-z0-9]+`` tokens; a sentence is redundant
  when ``|bigrams(s) & bigrams(summary)| > max_bigram_overlap * |bigrams(s)|`` (a sentence without
  bigrams is never redundant);
* ``fill="skip"``: a sentence that would overflow the budget is skipped and later (shorter)
  sentences are still tried; ``fill="stop"`` ends the summary at the first one that does not fit.
* empty sentences (no words) are never selected;
* ``mmr=λ`` (maximal marginal relevance, Carbonell and Goldstein, SIGIR 1998; not the journal's rule, an option):
  instead of rank order, each next sentence is the one with the highest ``λ·rel(s) - (1 - λ)·max sim(s, t)``
  over the sentences ``t`` already selected, where ``rel`` is the score min-max scaled over the cluster and
  ``sim`` the TF-IDF cosine of two sentences (:func:`tfidf_similarity`); the word budget, ``fill`` and the
  bigram rule apply to that sentence as above, unscored sentences come last, ties go to the earlier sentence.
  ``λ = 1`` is the rank-order rule. A list of weights is a rule still to be fixed: each system takes the weight its
  held-out summaries score best with (:func:`choose_mmr`); what is chosen before it is chosen in rank order.

**The WikiRef rule** (journal §III-E, §IV-C, :func:`threshold_select`): walk down the ranking, adding a
sentence when its score is >= the threshold and it shares no word trigram with the summary so far (the
trigram blocking of BertSum, which the paper cites). The top ``min_sentences`` candidates are considered
whatever their score, so no summary is empty (``min_sentences: 0`` gives the paper's literal rule). The
threshold is searched on dev for the best mean ROUGE-2 F1.

Because the candidates above a threshold are always a prefix of the ranking, the summary of an
example can change only at its own scores; :func:`search_threshold` therefore scores every distinct
summary once and sweeps all distinct dev scores exactly (no grid).

ROUGE of the WikiRef rule: ``rouge-score`` with the Porter stemmer, F1 of ROUGE-1, ROUGE-2 and ROUGE-L;
ROUGE-L is the summary-level variant (``rougeLsum``: selected sentences one per line, union LCS), which is
what ROUGE-1.5.5 computes. Selected sentences are put back in document order before scoring.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

_TOKEN = re.compile(r"[a-z0-9]+")
FILL_MODES = ("skip", "stop")


def ranking(scores: Sequence[float]) -> list[int]:
    """Sentence indices by descending score, earlier first on ties; NaN (never scored) last."""
    s = [(-math.inf if (x is None or (isinstance(x, float) and math.isnan(x))) else float(x)) for x in scores]
    return sorted(range(len(s)), key=lambda i: (-s[i], i))


def words(sentence: str) -> int:
    return len(sentence.split())


def mean_summary_words(summaries: Mapping[str, Sequence[str]]) -> float:
    """Mean length in words of extracts (each a list of sentences), to 2 decimals; 0.0 for none."""
    return round(sum(words(" ".join(s)) for s in summaries.values()) / max(len(summaries), 1), 2)


def bigrams(sentence: str) -> frozenset[tuple[str, str]]:
    toks = _TOKEN.findall(sentence.lower())
    return frozenset(zip(toks, toks[1:]))


def trigrams(sentence: str) -> frozenset[tuple[str, str, str]]:
    """Word trigrams of a sentence (lower-cased alphanumeric tokens, as ROUGE tokenizes)."""
    toks = _TOKEN.findall(sentence.lower())
    return frozenset(zip(toks, toks[1:], toks[2:]))


# --------------------------------------------------------------------------- the DUC rule


def select(
    scores: Sequence[float],
    sentences: Sequence[str],
    *,
    max_words: int = 250,
    max_bigram_overlap: float = 0.5,
    fill: str = "skip",
    mmr: float | None = None,
) -> list[int]:
    """Indices of the selected sentences, in the order they were added (rank order; with ``mmr``, MMR order)."""
    if len(scores) != len(sentences):
        raise ValueError(f"{len(scores)} scores for {len(sentences)} sentences")
    if fill not in FILL_MODES:
        raise ValueError(f"fill must be one of {FILL_MODES}, not {fill!r}")
    if max_words < 1:
        raise ValueError("max_words must be >= 1")
    if isinstance(mmr, (list, tuple)):
        raise ValueError(f"mmr {mmr!r}: several weights, one to be chosen first (choose_mmr)")
    if mmr is not None and not 0.0 <= mmr <= 1.0:
        raise ValueError(f"mmr must be a weight in [0, 1] or None, not {mmr!r}")
    order = ranking(scores) if mmr is None or mmr == 1.0 else MmrOrder(scores, sentences, mmr)
    chosen: list[int] = []
    used = 0
    seen: set = set()
    for i in order:
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
        if isinstance(order, MmrOrder):
            order.send(i)
        used += n
        seen |= bg
        if used == max_words:
            break
    return chosen


def mmr_choices(select_options: Mapping) -> list[float]:
    """The MMR weights a rule chooses among (``mmr`` a list), largest first; [] for a fixed rule."""
    mmr = select_options.get("mmr")
    return sorted({float(m) for m in mmr}, reverse=True) if isinstance(mmr, (list, tuple)) else []


def base_rule(select_options: Mapping) -> dict:
    """The rule of the choices made before the MMR weight (epochs, targets): rank order for a rule with several
    weights, a fixed rule as it is."""
    return {**select_options, "mmr": None} if mmr_choices(select_options) else dict(select_options)


def choose_mmr(select_options: Mapping, value: Callable[[dict], float]) -> tuple[dict, dict | None]:
    """A rule with several MMR weights fixed to the one ``value(rule)`` (held-out summaries' ROUGE under that
    rule, higher is better) is highest for; a tie goes to the larger weight, the nearer to rank order. Returns
    (the fixed rule, the record: ``mmr`` and ``held_out`` value per weight); a fixed rule comes back as it is,
    with no record and ``value`` not called."""
    choices = mmr_choices(select_options)
    if not choices:
        return dict(select_options), None
    values = {m: float(value({**select_options, "mmr": m})) for m in choices}
    best = max(choices, key=lambda m: (values[m], m))
    return {**select_options, "mmr": best}, {"mmr": best, "held_out": {f"{m:g}": round(values[m], 4) for m in choices}}


def fit_tfidf(sentences: Sequence[str]):
    """The QUERY-SIM representation of a cluster: scikit-learn's ``TfidfVectorizer`` (lower-cased, English stop
    words removed, sublinear tf, L2-normalised rows) fitted on ``sentences``. Returns (vectorizer, matrix), or None
    when no sentence has a content word (empty vocabulary)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    vec = TfidfVectorizer(lowercase=True, stop_words="english", sublinear_tf=True)
    try:
        return vec, vec.fit_transform(list(sentences))
    except ValueError:  # empty vocabulary (only stop words / punctuation), or no sentences
        return None


def tfidf_similarity(sentences: Sequence[str]) -> np.ndarray:
    """Cosine similarity of every pair of sentences over their :func:`fit_tfidf` vectors; zeros when no sentence
    has a content word."""
    from sklearn.metrics.pairwise import linear_kernel

    fitted = fit_tfidf(sentences)
    return np.zeros((len(sentences), len(sentences))) if fitted is None else linear_kernel(fitted[1], fitted[1])


class MmrOrder:
    """The candidates in MMR order, as an iterator that :func:`select` tells which candidate it kept
    (``send``): only kept sentences count in the redundancy term, a skipped one just leaves the pool.
    Written here because MMR is a few lines over a similarity matrix, and no well-kept library offers it
    with the DUC rule's budget and bigram tests."""

    def __init__(self, scores: Sequence[float], sentences: Sequence[str], lam: float) -> None:
        s = np.array([np.nan if x is None else float(x) for x in scores], dtype=np.float64)
        self.scored = ~np.isnan(s) & (s != -np.inf)  # NaN or -inf: never scored (:func:`ranking`'s last)
        if np.isposinf(s).any():  # the top of the scale
            s[np.isposinf(s)] = s[np.isfinite(s)].max(initial=0.0) + 1.0
        rel = np.zeros(len(s))
        if self.scored.any():
            lo, hi = s[self.scored].min(), s[self.scored].max()
            rel[self.scored] = (s[self.scored] - lo) / (hi - lo) if hi > lo else 1.0
        self.rel, self.lam = rel, float(lam)
        self.sim = tfidf_similarity(sentences)
        self.redundancy = np.zeros(len(s))
        self.left = np.ones(len(s), dtype=bool)

    def __iter__(self):
        return self

    def __next__(self) -> int:
        if not self.left.any():
            raise StopIteration
        value = self.lam * self.rel - (1.0 - self.lam) * self.redundancy
        # unscored after every scored sentence; argmax takes the first (earliest) of equal values
        scored_left = self.left & self.scored
        pool = scored_left if scored_left.any() else self.left
        i = int(np.argmax(np.where(pool, value, -np.inf)))
        self.left[i] = False
        return i

    def send(self, kept: int) -> None:
        self.redundancy = np.maximum(self.redundancy, self.sim[kept])


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


# --------------------------------------------------------------------------- the WikiRef rule


def accepted_prefixes(
    order: Sequence[int], tri: Sequence[frozenset], block_trigrams: bool = True
) -> list[tuple[int, ...]]:
    """For m = 0..n: the summary (rank order) when the first m ranked sentences are candidates."""
    out: list[tuple[int, ...]] = [()]
    chosen: list[int] = []
    seen: set = set()
    for j in order:
        if not (block_trigrams and tri[j] & seen):
            chosen.append(j)
            seen |= tri[j]
        out.append(tuple(chosen))
    return out


def threshold_select(
    scores: Sequence[float],
    sentences: Sequence[str],
    threshold: float,
    *,
    min_sentences: int = 1,
    block_trigrams: bool = True,
) -> list[int]:
    """Indices of the selected sentences, in document order."""
    order = ranking(scores)
    vals = [
        float(scores[j]) if scores[j] is not None and not math.isnan(float(scores[j])) else -math.inf for j in order
    ]
    m = sum(1 for v in vals if v >= threshold)
    m = max(m, min(min_sentences, len(order)))
    tri = [trigrams(s) for s in sentences]
    return sorted(accepted_prefixes(order[:m], tri, block_trigrams)[-1])


# --------------------------------------------------------------------------- ROUGE


@lru_cache(maxsize=4)
def _scorer(types: tuple[str, ...]):
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(list(types), use_stemmer=True)


def summary_text(sentences: Sequence[str], indices: Iterable[int]) -> str:
    return "\n".join(sentences[i].replace("\n", " ") for i in sorted(indices))


def rouge(summary: str, reference: str) -> dict[str, float]:
    """ROUGE-1/2/L F1 (in [0, 1]) of one summary (sentences on separate lines)."""
    s = _scorer(("rouge1", "rouge2", "rougeLsum")).score(reference.replace("\n", " "), summary)
    return {"rouge1": s["rouge1"].fmeasure, "rouge2": s["rouge2"].fmeasure, "rougeL": s["rougeLsum"].fmeasure}


def rouge2_f1(summary: str, reference: str) -> float:
    return _scorer(("rouge2",)).score(reference.replace("\n", " "), summary)["rouge2"].fmeasure


class Rouge2Cache:
    """ROUGE-2 F1 of many sentence subsets of one document against one reference.

    Identical to ``rouge2_f1(summary_text(doc, subset), ref)`` (a test checks it): rouge-score
    tokenizes a newline-joined summary into the concatenation of its sentences' tokens, so each
    sentence (and the reference) is tokenized once here (``wikiref.rouge.fast.tokenize``: rouge-score's
    tokenizer with a memoised stemmer) instead of once per subset; the n-gram counting is rouge-score's
    own. Written here because the threshold sweep scores
    every distinct summary of every dev example, every epoch.
    """

    def __init__(self, sentences: Sequence[str], reference: str) -> None:
        from rouge_score import rouge_scorer

        from wikiref.rouge.fast import tokenize  # rouge-score's tokenizer with a memoised stemmer

        self._rs = rouge_scorer
        self.tokens = [tokenize(s) for s in sentences]
        self.ref_ngrams = rouge_scorer._create_ngrams(tokenize(reference), 2)

    def __call__(self, indices: Iterable[int]) -> float:
        toks: list[str] = []
        for i in sorted(indices):
            toks.extend(self.tokens[i])
        return self._rs._score_ngrams(self.ref_ngrams, self._rs._create_ngrams(toks, 2)).fmeasure


def evaluate(
    selections: Sequence[Sequence[int]], documents: Sequence[Sequence[str]], references: Sequence[str]
) -> dict[str, float]:
    """Mean ROUGE-1/2/L F1 x 100 over examples (an empty summary scores 0)."""
    if not selections:
        raise ValueError("nothing to evaluate")
    tot = {"rouge1": 0.0, "rouge2": 0.0, "rougeL": 0.0}
    for idx, doc, ref in zip(selections, documents, references, strict=True):
        r = rouge(summary_text(doc, idx), ref)
        for k in tot:
            tot[k] += r[k]
    return {k: 100.0 * v / len(selections) for k, v in tot.items()}


# --------------------------------------------------------------------------- threshold search


@dataclass
class ThresholdSearch:
    threshold: float
    rouge2: float  # mean dev ROUGE-2 F1 x 100 at that threshold
    candidates: int  # distinct thresholds compared


def search_threshold(
    scores: Sequence[Sequence[float]],
    documents: Sequence[Sequence[str]],
    references: Sequence[str],
    *,
    min_sentences: int = 1,
    block_trigrams: bool = True,
) -> ThresholdSearch:
    """The threshold with the best mean ROUGE-2 F1, over every distinct score (exact sweep).

    Ties go to the highest threshold (shorter summaries).
    """
    n_ex = len(documents)
    if n_ex == 0:
        raise ValueError("threshold search needs at least one example")
    values: list[list[float]] = []  # per example: ROUGE-2 for m = 0..n candidates
    events: list[tuple[float, int]] = []  # (score, example) for ranks beyond min_sentences
    base_m: list[int] = []
    for e, (sc, doc, ref) in enumerate(zip(scores, documents, references, strict=True)):
        order = ranking(sc)
        prefixes = accepted_prefixes(order, [trigrams(s) for s in doc], block_trigrams)
        r2 = Rouge2Cache(doc, ref)
        cache: dict[tuple[int, ...], float] = {}
        vals = []
        for p in prefixes:
            if p not in cache:
                cache[p] = r2(p) if p else 0.0
            vals.append(cache[p])
        values.append(vals)
        m0 = min(min_sentences, len(order))
        base_m.append(m0)
        for j in order[m0:]:
            v = float(sc[j])
            if not math.isnan(v):
                events.append((v, e))
    m = list(base_m)
    total = sum(values[e][m[e]] for e in range(n_ex))
    best_total, best_t = total, math.inf
    events.sort(key=lambda x: -x[0])
    i = 0
    n_cand = 1
    while i < len(events):
        t = events[i][0]
        while i < len(events) and events[i][0] == t:
            e = events[i][1]
            total += values[e][m[e] + 1] - values[e][m[e]]
            m[e] += 1
            i += 1
        n_cand += 1
        if total > best_total + 1e-12:
            best_total, best_t = total, t
    return ThresholdSearch(threshold=best_t, rouge2=100.0 * best_total / n_ex, candidates=n_cand)


def threshold_select_all(
    scores: Sequence[Sequence[float]],
    documents: Sequence[Sequence[str]],
    threshold: float,
    *,
    min_sentences: int = 1,
    block_trigrams: bool = True,
) -> list[list[int]]:
    """:func:`threshold_select` of every example."""
    return [
        threshold_select(sc, doc, threshold, min_sentences=min_sentences, block_trigrams=block_trigrams)
        for sc, doc in zip(scores, documents, strict=True)
    ]


def finite(x: float) -> float | None:
    """JSON-safe threshold (inf -> None)."""
    return None if x is None or not np.isfinite(x) else float(x)
