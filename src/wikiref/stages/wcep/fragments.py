"""Extractive fragments, coverage and density (Grusky et al., NAACL 2018), for WCEP's Figure 1.

WCEP (§4, equations (1)-(2))::

    Coverage(A, S) = 1/|S| * sum_{f in F(A, S)} |f|
    Density(A, S)  = 1/|S| * sum_{f in F(A, S)} |f|^2

where ``F(A, S)`` is the set of shared token sequences (fragments) of the article ``A`` and the
summary ``S`` "identified in a greedy manner" and, for WCEP, ``A`` is the concatenation of all
articles of a cluster (:func:`cluster_coverage_density`).

``F(A, S)`` is Grusky et al.'s Algorithm 1 (:func:`fragments`): walk the summary; at summary position
``i`` scan the article left to right; at each article position ``j`` where ``s_i = a_j`` extend the
match as far as it goes, keep it if it is longer than the best so far, and **continue the scan after
the end of that match** (``j <- j'``); then add the best fragment (if any) and advance ``i`` by its
length (or by 1 when ``s_i`` is not in the article). Because the scan jumps over a match, a longer
match starting inside it is not seen (article ``a a a b``, summary ``a a b``: fragments ``a a`` and
``b``, not ``a a b``). That is the published algorithm and the Newsroom library's ``Fragments._match``
(which WCEP's authors used for ROUGE too), so it is the default; ``exact_longest=True`` instead takes
the longest match at each summary position (what "the longest shared token sequence" would mean
literally). Both run on an index of the article's token positions, so a 100-article cluster costs
time proportional to the occurrences of the summary's tokens, not to ``|S| * |A|``.

Why written here: the Grusky et al. code lives in the Newsroom repository (``lil-lab/newsroom``),
which is installed from GitHub and pulls spaCy models at import; the PyPI project named ``newsroom``
(1.0, 2018) is an unrelated "Newsroom app". No maintained PyPI package provides these measures.

Tokens: :func:`tokenize` = the protocol tokenizer of :mod:`wikiref.stages.wcep.evaluation` (NLTK
Treebank tokens, punctuation included), lowercased, as Newsroom compares lowercased tokens by default
(``case=False``; Newsroom tokenizes with spaCy). Empty summaries have coverage and density 0.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from wikiref.stages.wcep.evaluation import tokenize as _protocol_tokenize


def tokenize(text: str) -> list[str]:
    """Lowercased protocol tokens of ``text``."""
    return [t.lower() for t in _protocol_tokenize(text)]


def _positions(article: Sequence[str]) -> dict[str, list[int]]:
    index: dict[str, list[int]] = defaultdict(list)
    for j, tok in enumerate(article):
        index[tok].append(j)
    return index


def _match_length(article: Sequence[str], summary: Sequence[str], i: int, j: int) -> int:
    n = 0
    while i + n < len(summary) and j + n < len(article) and summary[i + n] == article[j + n]:
        n += 1
    return n


def fragment_spans(
    article_tokens: Sequence[str], summary_tokens: Sequence[str], *, exact_longest: bool = False
) -> list[tuple[int, int, int]]:
    """The fragments as ``(summary_start, article_start, length)``, in summary order (see module)."""
    article, summary = list(article_tokens), list(summary_tokens)
    index = _positions(article)
    out: list[tuple[int, int, int]] = []
    i = 0
    while i < len(summary):
        best_len, best_j = 0, -1
        next_j = 0  # Grusky et al.: the scan resumes after the end of the last match
        for j in index.get(summary[i], ()):
            if not exact_longest and j < next_j:
                continue
            n = _match_length(article, summary, i, j)
            if n > best_len:
                best_len, best_j = n, j
            next_j = j + n
        if best_len:
            out.append((i, best_j, best_len))
            i += best_len
        else:
            i += 1
    return out


def fragments(
    article_tokens: Sequence[str], summary_tokens: Sequence[str], *, exact_longest: bool = False
) -> list[tuple[str, ...]]:
    """``F(A, S)``: the shared token sequences of the article and the summary, in summary order."""
    summary = list(summary_tokens)
    return [
        tuple(summary[i : i + n]) for i, _, n in fragment_spans(article_tokens, summary, exact_longest=exact_longest)
    ]


def coverage(article_tokens: Sequence[str], summary_tokens: Sequence[str], *, exact_longest: bool = False) -> float:
    """Equation (1): the share of summary tokens that lie in a fragment."""
    if not summary_tokens:
        return 0.0
    return sum(len(f) for f in fragments(article_tokens, summary_tokens, exact_longest=exact_longest)) / len(
        summary_tokens
    )


def density(article_tokens: Sequence[str], summary_tokens: Sequence[str], *, exact_longest: bool = False) -> float:
    """Equation (2): the sum of squared fragment lengths over the summary length."""
    if not summary_tokens:
        return 0.0
    return sum(len(f) ** 2 for f in fragments(article_tokens, summary_tokens, exact_longest=exact_longest)) / len(
        summary_tokens
    )


def cluster_coverage_density(
    articles: Sequence[str], summary: str, *, exact_longest: bool = False
) -> tuple[float, float]:
    """Coverage and density of a cluster: ``A`` = the concatenation of its article texts (tokens of
    each article in order), ``S`` = the summary text; both tokenized by :func:`tokenize`."""
    article = [t for text in articles for t in tokenize(text)]
    tokens = tokenize(summary)
    spans = fragment_spans(article, tokens, exact_longest=exact_longest)
    if not tokens:
        return 0.0, 0.0
    return sum(n for _, _, n in spans) / len(tokens), sum(n * n for _, _, n in spans) / len(tokens)
