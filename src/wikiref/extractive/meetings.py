"""Extractive baselines for QMSum: LEAD, QUERY-SIM and ORACLE over the turns of one query's document.

A query's document (:func:`document_turns`) is either the whole ``transcript`` or its ``gold_span``
turns (QMSum's two settings: summarize from the meeting, or from the relevant text spans the
annotators marked). Every baseline fills a budget of ``max_words`` words (whitespace-separated
tokens, turns with no word are never chosen) and returns the chosen turns in transcript order:

* LEAD: the first turns; the turn that crosses the budget is cut to fill it exactly
  (:func:`wikiref.extractive.baselines.lead`, the DUC rule, on the turns);
* QUERY-SIM: turns ranked by the TF-IDF cosine to the query
  (:func:`wikiref.extractive.baselines.query_sim_scores`, fitted on the document's turns; ties in
  transcript order, :func:`wikiref.extractive.selection.ranking`), taken greedily in rank order; the
  turn that crosses the budget is cut to fill it and ends the summary (no redundancy rule: meeting
  turns rarely repeat each other);
* ORACLE: greedy on ROUGE-2 recall against the answer (:class:`wikiref.rouge.fast.SentenceSetRouge`,
  i.e. ``rouge_score`` with stemming; the union of turns is joined in transcript order): repeatedly add
  the whole turn that raises the recall most among the turns that still fit; when no whole turn fits
  and improves it, the turn whose cut (its first words, filling the budget exactly) raises it most is
  added; stop when nothing improves it. Candidates are the turns sharing at least one bigram with the
  answer (a turn without one could only gain through the bigrams across its two boundaries; leaving
  such turns out keeps about a third of a QMSum transcript's ~575 turns per greedy step).

The DUC module's ORACLE is not reused as is: it works on DUC clusters, returns sentences in the order
added and never cuts a sentence; here the transcript order and the cut are needed.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence

from wikiref.extractive import baselines as duc
from wikiref.extractive.selection import ranking, words

SYSTEMS = {"lead": "LEAD", "query_sim": "QUERY-SIM", "oracle": "ORACLE"}
SETTINGS = ("transcript", "gold_span")


def _check_budget(max_words: int) -> None:
    if max_words < 1:
        raise ValueError("max_words must be >= 1")


def fill(order: Iterable[int], turns: Sequence[str], max_words: int) -> list[tuple[int, str]]:
    """Turns taken in ``order`` (turn indices) while they fit in ``max_words``; the one that crosses the
    budget is cut to fill it exactly and ends the selection. Returns (index, text) in transcript order."""
    _check_budget(max_words)
    order = [i for i in order if words(turns[i])]
    # duc.lead takes a document's sentences in order and applies exactly this rule; the k-th text it
    # returns is the k-th turn of ``order`` (possibly cut).
    texts = duc.lead([{"sentences": [turns[i] for i in order]}], max_words=max_words)
    return sorted(zip(order, texts))


def lead(turns: Sequence[str], max_words: int) -> list[str]:
    """The first turns, up to ``max_words`` words (the last one cut to fill the budget)."""
    return [t for _, t in fill(range(len(turns)), turns, max_words)]


def query_sim(query: str | Sequence[str], turns: Sequence[str], max_words: int) -> list[str]:
    """Turns by TF-IDF cosine to ``query`` (a string, or a row's list of query strings), greedy by rank
    under the budget, in transcript order."""
    queries = [query] if isinstance(query, str) else list(query)
    scores = duc.query_sim_scores(queries, list(turns))
    return [t for _, t in fill(ranking(scores), turns, max_words)]


@functools.lru_cache(maxsize=1 << 16)
def _tokens(turn: str) -> tuple[str, ...]:
    """ROUGE tokens of a turn, memoised: every query of a meeting scores the same transcript turns."""
    from wikiref.rouge.fast import tokenize

    return tuple(tokenize(turn))


def _greedy(rouge, pool: Sequence[int], chosen: list[int], best: float, cost, budget: int, max_added=None) -> float:
    """Greedy ROUGE-2 recall over the turns ``pool`` (sorted turn indices; ``rouge``: a
    :class:`~wikiref.rouge.fast.SentenceSetRouge` of their texts in that order), starting from ``chosen``
    (turn indices, extended in place) at recall ``best``: add the turn that still fits (``cost[turn]``
    words) and raises the recall most (ties: the earlier turn), until none does or ``max_added`` turns
    were added. Returns the final recall. Only the pool is scored: the union of a selection never
    contains another turn, so scoring the pool alone (order kept) gives the values of the full list."""
    at = {turn: k for k, turn in enumerate(pool)}
    added = 0
    while max_added is None or added < max_added:
        room = budget - sum(cost[i] for i in chosen)
        picked = [at[i] for i in chosen]
        best_k = -1
        for k, turn in enumerate(pool):
            if turn in chosen or cost[turn] > room:
                continue
            value = rouge.score([*picked, k]).recall
            if value > best:
                best_k, best = k, value
        if best_k < 0:
            break
        chosen.append(pool[best_k])
        added += 1
    return best


def oracle_indices(turns: Sequence[str], answer: str, max_words: int) -> list[tuple[int, str]]:
    """ORACLE as (index, text) in transcript order (module docstring); the text of the last turn may be
    cut."""
    from wikiref.rouge.fast import References, SentenceSetRouge, ngram_counts

    _check_budget(max_words)
    if not turns or not answer.strip():
        return []
    refs = References(answer)
    answer_bigrams = set(ngram_counts(refs.tokens[0], 2))
    tokens = [_tokens(t) for t in turns]
    n_words = [words(t) for t in turns]
    useful = [i for i, toks in enumerate(tokens) if n_words[i] and answer_bigrams.intersection(zip(toks, toks[1:]))]
    if not useful:
        return []
    chosen: list[int] = []
    rouge = SentenceSetRouge([tokens[i] for i in useful], refs, "rouge2", pretokenized=True)
    best = _greedy(rouge, useful, chosen, 0.0, n_words, max_words)
    texts = {i: turns[i] for i in chosen}
    room = max_words - sum(n_words[i] for i in chosen)
    too_long = [i for i in useful if i not in texts and n_words[i] > room]
    if room > 0 and too_long:
        # The turns that did not fit compete once more, each cut to its first ``room`` words; one is added.
        texts_now = {**texts, **{i: " ".join(turns[i].split()[:room]) for i in too_long}}
        pool = sorted(texts_now)
        cost = {i: words(t) for i, t in texts_now.items()}
        n_chosen = len(chosen)
        _greedy(SentenceSetRouge([texts_now[i] for i in pool], refs, "rouge2"), pool, chosen, best, cost, max_words, 1)
        texts.update({i: texts_now[i] for i in chosen[n_chosen:]})
    return sorted(texts.items())


def oracle(turns: Sequence[str], answer: str, max_words: int) -> list[str]:
    """Greedy ROUGE-2 recall against ``answer`` under the budget, turns in transcript order."""
    return [t for _, t in oracle_indices(turns, answer, max_words)]


def document_turns(row: Mapping, setting: str) -> tuple[list[int], list[str]]:
    """The (turn indices, turns) a QMSUM row's query is summarized from: every turn (``transcript``) or
    the gold-span turns (``gold_span``; for a general query, every turn too)."""
    turns = list(row["turns"])
    if setting == "transcript":
        return list(range(len(turns))), turns
    if setting == "gold_span":
        idx = [int(i) for i in row["span_turns"]]
        bad = [i for i in idx if not 0 <= i < len(turns)]
        if bad:
            raise ValueError(f"row {row.get('id')!r}: span_turns {bad[:5]} outside its {len(turns)} turns")
        return idx, [turns[i] for i in idx]
    raise ValueError(f"unknown setting {setting!r}; known: {SETTINGS}")


def summarize_row(row: Mapping, system: str, setting: str, max_words: int) -> list[str]:
    """One baseline summary (turn texts, the last possibly cut) of one QMSUM row."""
    _, turns = document_turns(row, setting)
    if system == "lead":
        return lead(turns, max_words)
    if system == "query_sim":
        return query_sim(row["query"], turns, max_words)
    if system == "oracle":
        return oracle(turns, row["answer"], max_words)
    raise ValueError(f"unknown baseline {system!r}; known: {sorted(SYSTEMS)}")


def summarize(rows: Iterable[Mapping], system: str, setting: str, max_words: int) -> dict[str, list[str]]:
    """``{row id: summary turns}`` of one baseline in one setting."""
    if system not in SYSTEMS:
        raise ValueError(f"unknown baseline {system!r}; known: {sorted(SYSTEMS)}")
    if setting not in SETTINGS:
        raise ValueError(f"unknown setting {setting!r}; known: {SETTINGS}")
    _check_budget(max_words)
    out: dict[str, list[str]] = {}
    for row in rows:
        if row["id"] in out:  # a second summary would silently replace the first
            raise ValueError(f"duplicate row id {row['id']!r}")
        out[row["id"]] = summarize_row(row, system, setting, max_words)
    return out


def rouge_recall(
    summaries: Mapping[str, Sequence[str]], rows: Iterable[Mapping], rouge_type: str = "rouge2"
) -> dict[str, float]:
    """``{row id: recall}`` of each summary (turns joined with a space) against its row's answer, with
    :func:`wikiref.rouge.fast.score` (``rouge_score``, stemmed): the quick check the tests use; a row
    without a summary is an error."""
    from wikiref.rouge.fast import score

    out = {}
    for row in rows:
        if row["id"] not in summaries:
            raise KeyError(f"no summary for row {row['id']!r}")
        out[row["id"]] = score(row["answer"], " ".join(summaries[row["id"]]), (rouge_type,))[rouge_type].recall
    return out
