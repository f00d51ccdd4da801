"""Extractive oracles (journal §II-A-2 curation filter (c), §IV-C labels and regression targets).

Public API (used by curation, the oracle step, and the DUC fine-tuning step):

- :func:`greedy_oracle` - greedy sentence selection maximising a ROUGE metric of the union.
- :func:`sentence_scores` - each sentence's own ROUGE value (the regression targets).
- :func:`greedy_oracle_reference` - the same greedy written the straightforward way (one
  ``rouge_score`` call per candidate union). It is the specification the fast version is tested
  and benchmarked against; it is far too slow for the pipeline.

``reference`` may be one string or a list of strings; a list is scored with pooled counts
(ROUGE-1.5.5 ``-f A`` style, see :mod:`wikiref.rouge.fast`), e.g. DUC's regression targets are
``sentence_scores(sents, [model_a, model_b, ...], metric="rouge2_recall")``. A pre-built
:class:`wikiref.rouge.fast.References` is accepted too, to tokenize references once for many documents.

The union of a selection is ``" ".join(sentences[i] for i in sorted(selection))`` - the selected
sentences in document order - tokenized by ``rouge_score``'s tokenizer with Porter stemming.
"""

from __future__ import annotations

from collections.abc import Sequence

from wikiref.rouge.fast import METRICS, SentenceSetRouge, parse_metric

__all__ = ["greedy_oracle", "sentence_scores", "greedy_oracle_reference", "labels_from_indices", "METRICS"]


def greedy_oracle(
    sentences: Sequence[str],
    reference: str | Sequence[str],
    *,
    metric: str = "rouge2_f1",
    max_sentences: int | None = None,
) -> tuple[list[int], float]:
    """Greedy oracle selection.

    Start from the empty selection (score 0); repeatedly add the sentence whose addition gives the
    highest ``metric`` of the union (ties -> lowest index); stop when no addition strictly improves
    the score or ``max_sentences`` sentences are chosen. Returns the chosen indices in document
    order and the final score (0.0 and ``[]`` when no sentence helps).
    """
    rtype, field = parse_metric(metric)
    if max_sentences is not None and max_sentences < 0:
        raise ValueError("max_sentences must be >= 0 or None")
    if not sentences:
        return [], 0.0
    return SentenceSetRouge(sentences, reference, rtype).greedy(field, max_sentences)


def sentence_scores(
    sentences: Sequence[str], reference: str | Sequence[str], *, metric: str = "rouge2_f1"
) -> list[float]:
    """``metric`` of each sentence alone against the reference(s)."""
    rtype, field = parse_metric(metric)
    if not sentences:
        return []
    return [getattr(s, field) for s in SentenceSetRouge(sentences, reference, rtype).sentence_scores()]


def labels_from_indices(n_sentences: int, indices: Sequence[int]) -> list[int]:
    """0/1 label per sentence."""
    chosen = set(indices)
    return [1 if i in chosen else 0 for i in range(n_sentences)]


def greedy_oracle_reference(
    sentences: Sequence[str],
    reference: str,
    *,
    metric: str = "rouge2_f1",
    max_sentences: int | None = None,
    scorer=None,
) -> tuple[list[int], float]:
    """The greedy oracle as a user would write it with ``rouge_score``: every candidate union is
    joined into a string and scored from scratch. Same definition as :func:`greedy_oracle` (single
    reference only)."""
    from rouge_score import rouge_scorer

    rtype, field = parse_metric(metric)
    scorer = scorer or rouge_scorer.RougeScorer([rtype], use_stemmer=True)
    selected: list[int] = []
    best = 0.0
    limit = len(sentences) if max_sentences is None else max_sentences
    while len(selected) < limit:
        best_i, best_val = -1, best
        for i in range(len(sentences)):
            if i in selected:
                continue
            union = " ".join(sentences[j] for j in sorted(selected + [i]))
            val = getattr(scorer.score(reference, union)[rtype], field)
            if val > best_val:
                best_i, best_val = i, val
        if best_i < 0:
            break
        selected.append(best_i)
        best = best_val
    return sorted(selected), best
