"""Summary assembly on WikiRef and ROUGE evaluation (journal §III-E, §IV-C).

Selection: rank the sentences by score (ties: earlier sentence first) and walk down the ranking,
adding a sentence when its score is >= the threshold and it shares no word trigram with the
summary so far (the trigram blocking of BertSum, which the paper cites). The top ``min_sentences``
candidates are considered whatever their score, so no summary is empty (``min_sentences: 0`` gives
the paper's literal rule). The threshold is searched on dev for the best mean ROUGE-2 F1.

Because the candidates above a threshold are always a prefix of the ranking, the summary of an
example can change only at its own scores; :func:`search_threshold` therefore scores every distinct
summary once and sweeps all distinct dev scores exactly (no grid).

ROUGE: ``rouge-score`` with the Porter stemmer, F1 of ROUGE-1, ROUGE-2 and ROUGE-L; ROUGE-L is the
summary-level variant (``rougeLsum``: selected sentences one per line, union LCS), which is what
ROUGE-1.5.5 computes. Selected sentences are put back in document order before scoring.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

_WORD = re.compile(r"[a-z0-9]+")


def trigrams(sentence: str) -> frozenset[tuple[str, str, str]]:
    """Word trigrams of a sentence (lower-cased alphanumeric tokens, as ROUGE tokenizes)."""
    toks = _WORD.findall(sentence.lower())
    return frozenset(zip(toks, toks[1:], toks[2:]))


def ranking(scores: Sequence[float]) -> list[int]:
    """Sentence indices by descending score, earlier first on ties; NaN (never scored) last."""
    s = [(-math.inf if (x is None or (isinstance(x, float) and math.isnan(x))) else float(x)) for x in scores]
    return sorted(range(len(s)), key=lambda i: (-s[i], i))


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


def select(
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


def select_all(
    scores: Sequence[Sequence[float]],
    documents: Sequence[Sequence[str]],
    threshold: float,
    *,
    min_sentences: int = 1,
    block_trigrams: bool = True,
) -> list[list[int]]:
    return [
        select(sc, doc, threshold, min_sentences=min_sentences, block_trigrams=block_trigrams)
        for sc, doc in zip(scores, documents, strict=True)
    ]


def finite(x: float) -> float | None:
    """JSON-safe threshold (inf -> None)."""
    return None if x is None or not np.isfinite(x) else float(x)
