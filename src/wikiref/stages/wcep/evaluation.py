"""WCEP's evaluation protocol (Gholipour Ghalandari et al., ACL 2020, §5.1 and Table 5).

What the paper fixes: summaries are limited to 40 tokens; summaries are lowercased and not modified
otherwise; ROUGE-1, ROUGE-2 and ROUGE-L, F1-score and Recall; "evaluate models with a dynamic
(potentially longer) output length using F1-scores and optionally provide Recall results with
truncated summaries". So here:

* **F1** is computed on the summary as produced (all its sentences, joined with a space);
* **Recall** is computed on the summary truncated to its first ``max_tokens`` (40) tokens
  (:func:`truncate`). For the extractive baselines, which never exceed 40 tokens, the two inputs are
  the same; the oracles are longer and their recall is that of their first 40 tokens.

Choices the paper leaves open, and what the authors' repository (``complementizer/wcep-mds-dataset``,
``experiments/``) shows:

* **Tokens** (:func:`n_tokens`, :func:`tokenize`): NLTK's Treebank-style word tokenizer
  (``nltk.tokenize.NLTKWordTokenizer``, i.e. ``nltk.word_tokenize(text, preserve_line=True)``), so
  punctuation marks count as tokens. The authors count summary length as ``len(word_tokenize(s))``
  for every sentence; their ``word_tokenize`` first splits with Punkt, which only matters for a
  "sentence" that Punkt would split again (a mid-text period glued to a word stays one token here).
  Punkt's data is not a pip package, so it is not used. The same tokenization is used for the
  40-token budget of every method, the minimum sentence length, the redundancy bigrams of
  :mod:`wikiref.stages.wcep.baselines` and the fragments of :mod:`wikiref.stages.wcep.fragments`.
* **ROUGE**: :mod:`wikiref.rouge.fast`, equal to ``rouge_score``'s ``RougeScorer(use_stemmer=True)``.
  The authors' ``evaluate.py`` calls the Newsroom wrapper (``ROUGE_N``/``ROUGE_L``), which runs
  ROUGE-1.5.5 through pyrouge on one file per summary **without** ``-m`` (no stemming); so values here
  (stemmed) are not bit-comparable to Table 5, typically slightly higher.
* **ROUGE-L variant: ``rougeL``** (LCS of the whole token sequence), not ``rougeLsum``. In the
  authors' pipeline the summary and the reference are each written as one line (the sentences
  joined with a space), and ROUGE-1.5.5's summary-level LCS over a single "sentence" is the plain LCS
  of the whole sequence, which is ``rouge_score``'s ``rougeL``.
* **Lowercasing** is applied to summaries and references before scoring, as the paper says (a no-op
  for ``rouge_score``'s tokenizer, which lowercases itself; it is kept so the protocol is explicit).
* **Truncation** (:func:`truncate`) cuts the original text after the character span of its
  ``max_tokens``-th token, so the scored text is a prefix of the summary (not re-joined tokens, which
  would change how ROUGE tokenizes contractions and quotes).
* **Aggregation**: the mean over clusters of per-cluster scores (the authors' ``evaluate`` averages
  per-summary precision, recall and F), reported as fractions (x1, as in Table 5), with a 95%
  percentile bootstrap confidence interval of each mean (clusters resampled with replacement,
  ``n_boot`` resamples, seeded NumPy generator; the same resamples for every metric).
* A cluster with an empty summary scores 0 on every metric.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache

import numpy as np
from nltk.tokenize import NLTKWordTokenizer

from wikiref.rouge import fast

MAX_TOKENS = 40
ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")
METRICS = tuple(f"{t}_f1" for t in ROUGE_TYPES) + tuple(f"{t}_recall" for t in ROUGE_TYPES)

_TOKENIZER = NLTKWordTokenizer()


@lru_cache(maxsize=1 << 18)
def _tokens(text: str) -> tuple[str, ...]:
    return tuple(_TOKENIZER.tokenize(text))


def tokenize(text: str) -> list[str]:
    """The protocol's tokens of ``text`` (NLTK Treebank word tokenizer; punctuation is a token)."""
    return list(_tokens(text))


def n_tokens(sentence: str) -> int:
    """Number of tokens of ``sentence`` as counted for the 40-token limit (see the module docstring)."""
    return len(_tokens(sentence))


def _spans(text: str) -> list[tuple[int, int]]:
    try:
        spans = list(_TOKENIZER.span_tokenize(text))
    except ValueError:  # NLTK could not align its tokens with the text
        spans = []
    if len(spans) != n_tokens(text):  # fall back to whitespace-separated words as cut points
        spans, pos = [], 0
        for word in text.split():
            start = text.index(word, pos)
            pos = start + len(word)
            spans.append((start, pos))
    return spans


def _truncate_text(text: str, max_tokens: int) -> str:
    if n_tokens(text) <= max_tokens:
        return text
    if max_tokens <= 0:
        return ""
    spans = _spans(text)
    k = min(max_tokens, len(spans))
    cut = text[: spans[k - 1][1]]
    # A prefix can tokenize into more tokens than the same span of the whole text (e.g. "U.S." keeps
    # its period mid-text but loses it at the end); back off until the prefix fits.
    while k > 1 and n_tokens(cut) > max_tokens:
        k -= 1
        cut = text[: spans[k - 1][1]]
    return cut if n_tokens(cut) <= max_tokens else ""


def truncate(text_or_sentences: str | Sequence[str], max_tokens: int = MAX_TOKENS) -> str | list[str]:
    """The first ``max_tokens`` tokens of a summary, cut in the original text.

    A string gives a prefix of the string. A list of sentences gives the leading sentences that fit,
    the sentence that crosses the limit cut to fill it (if any of it fits), and none after it; the
    token counts are those of the individual sentences (what the baselines' budget counts).
    """
    if isinstance(text_or_sentences, str):
        return _truncate_text(text_or_sentences, max_tokens)
    out: list[str] = []
    left = max_tokens
    for sentence in text_or_sentences:
        n = n_tokens(sentence)
        if n <= left:
            out.append(sentence)
            left -= n
            continue
        cut = _truncate_text(sentence, left)
        if cut:
            out.append(cut)
        break
    return out


def summary_text(sentences: str | Sequence[str]) -> str:
    """A summary as one lowercased string (sentences joined with a space)."""
    text = sentences if isinstance(sentences, str) else " ".join(sentences)
    return text.lower()


def score_summary(
    summary: str | Sequence[str], reference: str | Sequence[str], *, max_tokens: int | None = MAX_TOKENS
) -> dict[str, float]:
    """One cluster's scores: ``<type>_f1`` on the summary as produced, ``<type>_recall`` on the summary
    truncated to ``max_tokens`` tokens (``None``: not truncated)."""
    ref = summary_text(reference)
    full_sentences = [summary] if isinstance(summary, str) else list(summary)
    full = summary_text(full_sentences)
    scores = fast.score(ref, full, ROUGE_TYPES)
    out = {f"{t}_f1": scores[t].fmeasure for t in ROUGE_TYPES}
    if max_tokens is not None:
        cut = summary_text(truncate(full_sentences, max_tokens))
        if cut != full:
            scores = fast.score(ref, cut, ROUGE_TYPES)
    out.update({f"{t}_recall": scores[t].recall for t in ROUGE_TYPES})
    return out


def bootstrap_ci(
    values: Sequence[float] | np.ndarray, *, n_boot: int = 1000, seed: int = 0, level: float = 0.95
) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of the mean of ``values``."""
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        raise ValueError("no values to bootstrap")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, arr.size, size=(n_boot, arr.size))
    means = arr[idx].mean(axis=1)
    lo, hi = np.percentile(means, [100 * (1 - level) / 2, 100 * (1 + level) / 2])
    return float(lo), float(hi)


def evaluate(
    summaries: Mapping[str, Sequence[str]],
    references: Mapping[str, Sequence[str]],
    *,
    max_tokens: int | None = MAX_TOKENS,
    n_boot: int = 1000,
    seed: int = 0,
) -> dict:
    """Score every cluster of ``summaries`` (cluster id -> summary sentences) against ``references``
    (cluster id -> reference sentences).

    Returns ``{"n_clusters", "max_tokens", "rouge_l": "rougeL", "means": {metric: mean},
    "ci95": {metric: [low, high]}, "per_cluster": {cluster_id: {metric: value}}}`` with the metrics of
    :data:`METRICS`, as fractions. Every summarised cluster must have a reference.
    """
    missing = [cid for cid in summaries if cid not in references]
    if missing:
        raise KeyError(f"{len(missing)} summarised clusters have no reference, e.g. {missing[:3]}")
    if not summaries:
        raise ValueError("no summaries to evaluate")
    per_cluster = {cid: score_summary(summaries[cid], references[cid], max_tokens=max_tokens) for cid in summaries}
    means: dict[str, float] = {}
    ci95: dict[str, list[float]] = {}
    for metric in METRICS:
        values = np.array([per_cluster[cid][metric] for cid in summaries])
        means[metric] = float(values.mean())
        # the same seed for every metric: the same resampled cluster sets (paired intervals)
        ci95[metric] = list(bootstrap_ci(values, n_boot=n_boot, seed=seed))
    return {
        "n_clusters": len(per_cluster),
        "max_tokens": max_tokens,
        "rouge_l": "rougeL",
        "means": means,
        "ci95": ci95,
        "per_cluster": per_cluster,
    }
