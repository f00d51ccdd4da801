"""Fast ROUGE-1/2/L whose values equal ``rouge_score`` (``RougeScorer(..., use_stemmer=True)``).

Why not just call ``rouge_score``? A greedy oracle scores every candidate union of sentences: with
``rouge_score`` each call re-tokenizes and re-stems the whole union and recounts its n-grams. Here
each sentence is tokenized once (with ``rouge_score``'s own tokenizer and NLTK's Porter stemmer,
memoised), its n-grams are counted once and mapped to the reference's n-gram ids, and adding a
sentence to a union changes the overlap counts incrementally. The arithmetic is the same as
``rouge_score``'s (same integer counts, same float expressions), so the values are bit-identical and
greedy selections (including ties) are the same. ``rouge_score`` itself stays the specification:
``tests/test_rouge_fast.py`` checks equality with hypothesis on random and real text.

What "the union of sentences" means: the selected sentences joined with a space **in document
order**, as ``" ".join(sentences[i] for i in sorted(selection))``. ``rouge_score`` tokenizes that
string as one sequence, so a bigram can span the boundary of two selected sentences and ROUGE-L is
the LCS of the whole sequence; both effects are reproduced exactly (boundary bigrams are
updated when a sentence is inserted between two selected ones; the LCS is computed bit-parallel).

Multiple references (``references=[...]``) are **pooled** the way ROUGE-1.5.5 pools models with
``-f A``: ``recall = sum_r hits_r / sum_r |ref_r|`` and ``precision = sum_r hits_r / (R * |cand|)``,
where ``hits_r`` is the clipped n-gram overlap (or the LCS length) with reference ``r``. With one
reference this is exactly ``rouge_score``. (It keeps ``rouge_score``'s tokenizer and stemmer; the
ROUGE-1.5.5-faithful DUC scorer is :mod:`wikiref.rouge.official`.)

Metric names are ``<type>_<field>``: type in ``rouge1, rouge2, rougeL``; field in
``precision, recall, f1`` (``fmeasure`` is accepted for ``f1``), e.g. ``rouge2_f1``.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from nltk.stem import porter
from rouge_score import tokenize as _rs_tokenize

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")
_FIELDS = {"precision": "precision", "recall": "recall", "f1": "fmeasure", "fmeasure": "fmeasure"}
METRICS = tuple(f"{t}_{f}" for t in ROUGE_TYPES for f in ("precision", "recall", "f1"))


class Score(NamedTuple):
    """Same fields as ``rouge_score.scoring.Score``."""

    precision: float
    recall: float
    fmeasure: float


def parse_metric(metric: str) -> tuple[str, str]:
    """``"rouge2_f1"`` -> ``("rouge2", "fmeasure")``; a clear error for anything else."""
    rtype, _, field = metric.partition("_")
    if rtype not in ROUGE_TYPES or field not in _FIELDS:
        raise ValueError(f"unknown ROUGE metric {metric!r}; expected one of {', '.join(METRICS)}")
    return rtype, _FIELDS[field]


def _fmeasure(precision: float, recall: float) -> float:
    # Same expression as rouge_score.scoring.fmeasure, so the floats are bit-identical.
    if precision + recall > 0:
        return 2 * precision * recall / (precision + recall)
    return 0.0


class CachedPorterStemmer:
    """NLTK's Porter stemmer (what ``rouge_score`` uses) with a memo: stemming is a pure function of
    the word and dominates tokenization time. The cache is cleared when it grows past ``max_size``."""

    def __init__(self, max_size: int = 2_000_000) -> None:
        self._stemmer = porter.PorterStemmer()
        self._cache: dict[str, str] = {}
        self.max_size = max_size

    def stem(self, word: str) -> str:
        try:
            return self._cache[word]
        except KeyError:
            pass
        if len(self._cache) >= self.max_size:
            self._cache.clear()
        out = self._cache[word] = self._stemmer.stem(word)
        return out


_STEMMER: CachedPorterStemmer | None = None
# word (as split by the tokenizer) -> final token, or "" when rouge_score would drop it
_TOKEN_CACHE: dict[str, str] = {}
_NON_ALNUM = _rs_tokenize.NON_ALPHANUM_RE
_VALID = _rs_tokenize.VALID_TOKEN_RE


def _stemmer() -> CachedPorterStemmer:
    global _STEMMER
    if _STEMMER is None:
        _STEMMER = CachedPorterStemmer()
    return _STEMMER


def _final_token(word: str) -> str:
    tok = _stemmer().stem(word) if len(word) > 3 else word
    if not _VALID.match(tok):
        tok = ""
    if len(_TOKEN_CACHE) >= 2_000_000:
        _TOKEN_CACHE.clear()
    _TOKEN_CACHE[word] = tok
    return tok


def tokenize(text: str) -> list[str]:
    """``rouge_score``'s tokenizer with ``use_stemmer=True``: lower-case, every run of characters
    outside ``[a-z0-9]`` becomes a separator, words longer than 3 characters are Porter-stemmed (NLTK),
    invalid tokens are dropped. Same regular expressions and stemmer as
    ``rouge_score.tokenize.tokenize``; the per-word result is memoised (tests check equality)."""
    cache = _TOKEN_CACHE
    out = []
    for w in _NON_ALNUM.sub(" ", text.lower()).split():
        tok = cache.get(w)
        if tok is None:
            tok = _final_token(w)
        if tok:
            out.append(tok)
    return out


def tokenize_reference_impl(text: str) -> list[str]:
    """``rouge_score.tokenize.tokenize`` itself (with the memoised stemmer); for tests."""
    return _rs_tokenize.tokenize(text, _stemmer())


def ngram_counts(tokens: Sequence[str], n: int) -> Counter:
    """Counter of n-grams (tuples for n > 1, plain tokens for n == 1)."""
    if n == 1:
        return Counter(tokens)
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


class References:
    """One or more reference texts, tokenized once, indexed for fast overlap counting.

    For each n in (1, 2) every distinct reference n-gram gets an id; ``hit[n][id][c]`` is the pooled
    clipped overlap ``sum_r min(count_r(gram), c)`` for a candidate count ``c`` up to the largest
    reference count (beyond it the value is constant). For ROUGE-L each reference keeps, per token,
    the bitmask of its positions (bit-parallel LCS).
    """

    def __init__(self, references: str | Sequence[str] | Sequence[Sequence[str]], *, pretokenized: bool = False):
        if isinstance(references, str):
            references = [references]
        if len(references) == 0:
            raise ValueError("at least one reference is needed")
        self.tokens: list[list[str]] = [list(r) if pretokenized else tokenize(r) for r in references]
        self.n_refs = len(self.tokens)
        self.gram_id: dict[int, dict] = {}
        self.hit: dict[int, list[list[int]]] = {}
        self.total: dict[int, int] = {}
        for n in (1, 2):
            per_ref = [ngram_counts(t, n) for t in self.tokens]
            ids: dict = {}
            for counts in per_ref:
                for g in counts:
                    if g not in ids:
                        ids[g] = len(ids)
            table: list[list[int]] = []
            for g in ids:
                cs = [c[g] for c in per_ref if g in c]
                table.append([sum(min(r, k) for r in cs) for k in range(max(cs) + 1)])
            self.gram_id[n] = ids
            self.hit[n] = table
            self.total[n] = sum(sum(c.values()) for c in per_ref)
        # ROUGE-L: position bitmasks per reference
        self.lcs_masks: list[dict[str, int]] = []
        for toks in self.tokens:
            masks: dict[str, int] = {}
            for i, t in enumerate(toks):
                masks[t] = masks.get(t, 0) | (1 << i)
            self.lcs_masks.append(masks)
        self.lengths = [len(t) for t in self.tokens]


def _lcs_run(v: int, seq: Iterable[str], masks: dict[str, int], full: int) -> int:
    """Advance the bit-parallel LCS state ``v`` (Allison-Dix / Hyyro) over ``seq``.

    Written here because no maintained Python package exposes a resumable LCS state; resuming
    from a cached prefix state is what makes the ROUGE-L greedy cheap.
    """
    for t in seq:
        m = masks.get(t)
        if m:
            u = v & m
            v = ((v + u) | (v - u)) & full
    return v


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence of two token sequences (bit-parallel)."""
    masks: dict[str, int] = {}
    for i, t in enumerate(a):
        masks[t] = masks.get(t, 0) | (1 << i)
    full = (1 << len(a)) - 1
    v = _lcs_run(full, b, masks, full)
    return len(a) - v.bit_count()


class _Sentence:
    __slots__ = ("n_tokens", "uni", "bi", "first", "last", "lcs_seq", "matches")

    def __init__(self, tokens: list[str], refs: References, rouge_type: str):
        self.n_tokens = len(tokens)
        ids1 = refs.gram_id[1]
        # Unigrams are always needed: a sentence sharing no token with any reference can never
        # raise any ROUGE value, so the greedy skips it.
        self.uni = [(ids1[g], c) for g, c in Counter(tokens).items() if g in ids1]
        self.matches = bool(self.uni)
        self.first = tokens[0] if tokens else None
        self.last = tokens[-1] if tokens else None
        self.bi = []
        self.lcs_seq = []
        if not self.matches:
            return
        if rouge_type == "rouge2":
            ids2 = refs.gram_id[2]
            self.bi = [(ids2[g], c) for g, c in Counter(zip(tokens, tokens[1:])).items() if g in ids2]
        elif rouge_type == "rougeL":
            self.lcs_seq = [t for t in tokens if t in ids1]


def _gain(items: Iterable[tuple[int, int]], cur: dict[int, int], hit: list[list[int]]) -> int:
    total = 0
    for g, c in items:
        c0 = cur.get(g, 0)
        h = hit[g]
        c1 = c0 + c
        total += (h[c1] if c1 < len(h) else h[-1]) - (h[c0] if c0 < len(h) else h[-1])
    return total


class SentenceSetRouge:
    """The sentences of one document against one reference (or several, pooled), for one ROUGE type.

    ``score(indices)`` scores the union of any subset; ``sentence_scores()`` each sentence alone;
    ``greedy(field, max_sentences)`` runs the greedy oracle with incremental updates.
    """

    def __init__(
        self,
        sentences: Sequence[str] | Sequence[Sequence[str]],
        references: str | Sequence[str] | References,
        rouge_type: str = "rouge2",
        *,
        pretokenized: bool = False,
    ):
        if rouge_type not in ROUGE_TYPES:
            raise ValueError(f"unknown ROUGE type {rouge_type!r}; expected one of {ROUGE_TYPES}")
        self.rouge_type = rouge_type
        self.refs = references if isinstance(references, References) else References(references)
        self.tokens = [list(s) if pretokenized else tokenize(s) for s in sentences]
        self.sents = [_Sentence(t, self.refs, rouge_type) for t in self.tokens]

    # -- scoring from counts -------------------------------------------------------------------
    def _prf(self, hits: int, pred_count: int) -> Score:
        refs = self.refs
        if self.rouge_type == "rougeL":
            ref_total = sum(refs.lengths)
        else:
            ref_total = refs.total[1 if self.rouge_type == "rouge1" else 2]
        if self.rouge_type == "rougeL" and refs.n_refs == 1:
            # rouge_score._score_lcs: zeros when either side is empty, else lcs / len.
            if not pred_count or not ref_total:
                return Score(0.0, 0.0, 0.0)
            precision = hits / pred_count
            recall = hits / ref_total
        else:
            precision = hits / max(refs.n_refs * pred_count, 1)
            recall = hits / max(ref_total, 1)
        return Score(precision, recall, _fmeasure(precision, recall))

    def _bigram_id(self, a: str | None, b: str | None):
        return self.refs.gram_id[2].get((a, b))

    def _lcs_hits(self, order: Sequence[int]) -> int:
        hits = 0
        for masks, m in zip(self.refs.lcs_masks, self.refs.lengths):
            full = (1 << m) - 1
            v = full
            for i in order:
                v = _lcs_run(v, self.sents[i].lcs_seq, masks, full)
            hits += m - v.bit_count()
        return hits

    def score(self, indices: Iterable[int]) -> Score:
        """Score of ``" ".join(sentences[i] for i in sorted(set(indices)))`` against the reference(s)."""
        order = sorted(set(indices))
        sents = self.sents
        n_tok = sum(sents[i].n_tokens for i in order)
        if self.rouge_type == "rougeL":
            return self._prf(self._lcs_hits(order), n_tok)
        n = 1 if self.rouge_type == "rouge1" else 2
        counts: Counter = Counter()
        for i in order:
            for g, c in sents[i].uni if n == 1 else sents[i].bi:
                counts[g] += c
        if n == 2:
            nonempty = [i for i in order if sents[i].n_tokens]
            for a, b in zip(nonempty, nonempty[1:]):
                g = self._bigram_id(sents[a].last, sents[b].first)
                if g is not None:
                    counts[g] += 1
        hit = self.refs.hit[n]
        hits = sum(hit[g][min(c, len(hit[g]) - 1)] for g, c in counts.items())
        pred = n_tok if n == 1 else max(n_tok - 1, 0)
        return self._prf(hits, pred)

    def sentence_scores(self) -> list[Score]:
        """Each sentence scored alone (the regression targets)."""
        return [self.score([i]) if s.matches else Score(0.0, 0.0, 0.0) for i, s in enumerate(self.sents)]

    # -- greedy --------------------------------------------------------------------------------
    def greedy(self, field: str = "fmeasure", max_sentences: int | None = None) -> tuple[list[int], float]:
        """Greedy oracle: start empty; repeatedly add the sentence giving the highest ``field`` of the
        union (ties -> lowest index); stop when no addition strictly improves it or ``max_sentences``
        sentences are chosen. Returns (indices in document order, final score)."""
        if field not in ("precision", "recall", "fmeasure"):
            field = _FIELDS.get(field, field)
        fidx = Score._fields.index(field)
        sents = self.sents
        candidates = [i for i, s in enumerate(sents) if s.matches]  # others can never strictly improve
        selected: list[int] = []  # sorted
        best = 0.0
        n_tok = 0
        rtype = self.rouge_type
        n = 1 if rtype == "rouge1" else 2
        cur: dict[int, int] = {}
        hits = 0
        hit = self.refs.hit.get(n)
        limit = len(sents) if max_sentences is None else max_sentences
        while len(selected) < limit and candidates:
            best_i = -1
            best_val = best
            best_state = None
            if rtype == "rougeL":
                prefix_states = self._lcs_prefix_states(selected)
            for i in candidates:
                s = sents[i]
                pos = bisect.bisect_left(selected, i)
                if rtype == "rougeL":
                    h = self._lcs_insert_hits(selected, pos, i, prefix_states)
                    val = self._prf(h, n_tok + s.n_tokens)[fidx]
                    state = h
                else:
                    if n == 1:
                        items = s.uni
                    else:
                        items = s.bi
                        extra = self._boundary_delta(selected, pos, i)
                        if extra:
                            merged = dict(items)
                            for g, c in extra:
                                merged[g] = merged.get(g, 0) + c
                            items = list(merged.items())
                    h = hits + _gain(items, cur, hit)
                    t = n_tok + s.n_tokens
                    val = self._prf(h, t if n == 1 else t - 1)[fidx]
                    state = (h, items)
                if val > best_val:
                    best_i, best_val, best_state = i, val, state
            if best_i < 0:
                break
            if rtype != "rougeL":  # commit the new overlap counts
                hits, items = best_state
                for g, c in items:
                    cur[g] = cur.get(g, 0) + c
            n_tok += sents[best_i].n_tokens
            bisect.insort(selected, best_i)
            candidates.remove(best_i)
            best = best_val
        return selected, best

    def _boundary_delta(self, selected: list[int], pos: int, i: int) -> list[tuple[int, int]]:
        """Bigram count changes at sentence boundaries when sentence ``i`` (non-empty) is inserted at
        ``pos`` of the sorted selection (all selected sentences are non-empty)."""
        sents = self.sents
        p = sents[selected[pos - 1]] if pos > 0 else None
        q = sents[selected[pos]] if pos < len(selected) else None
        s = sents[i]
        out = []
        ids = self.refs.gram_id[2]
        if p is not None and q is not None:
            g = ids.get((p.last, q.first))
            if g is not None:
                out.append((g, -1))
        if p is not None:
            g = ids.get((p.last, s.first))
            if g is not None:
                out.append((g, 1))
        if q is not None:
            g = ids.get((s.last, q.first))
            if g is not None:
                out.append((g, 1))
        return out

    def _lcs_prefix_states(self, selected: list[int]) -> list[list[int]]:
        """For each reference, the LCS bit state after each prefix of the selection."""
        states = []
        for masks, m in zip(self.refs.lcs_masks, self.refs.lengths):
            full = (1 << m) - 1
            v = full
            row = [v]
            for i in selected:
                v = _lcs_run(v, self.sents[i].lcs_seq, masks, full)
                row.append(v)
            states.append(row)
        return states

    def _lcs_insert_hits(self, selected: list[int], pos: int, i: int, prefix_states) -> int:
        hits = 0
        for r, (masks, m) in enumerate(zip(self.refs.lcs_masks, self.refs.lengths)):
            full = (1 << m) - 1
            v = _lcs_run(prefix_states[r][pos], self.sents[i].lcs_seq, masks, full)
            for k in selected[pos:]:
                v = _lcs_run(v, self.sents[k].lcs_seq, masks, full)
            hits += m - v.bit_count()
        return hits


def score(reference: str | Sequence[str], candidate: str, rouge_types: Sequence[str] = ROUGE_TYPES) -> dict[str, Score]:
    """One-shot scores of ``candidate`` against ``reference`` (a list = pooled references); with one
    reference equal to ``RougeScorer(rouge_types, use_stemmer=True).score(reference, candidate)``."""
    refs = References(reference)
    cand = [tokenize(candidate)]
    return {t: SentenceSetRouge(cand, refs, t, pretokenized=True).score([0]) for t in rouge_types}
