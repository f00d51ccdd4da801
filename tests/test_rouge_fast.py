"""wikiref.rouge.fast equals rouge_score (use_stemmer=True) on the same strings."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rouge_score import rouge_scorer, tokenizers
from rouge_score.rouge_scorer import _create_ngrams, _lcs_table

from wikiref.rouge import fast

# Words chosen so that random texts overlap a lot, share Porter stems ("running"/"runs"/"run"),
# mix case, digits, punctuation and non-ASCII characters (which the tokenizer turns into separators).
WORDS = [
    "the",
    "a",
    "of",
    "run",
    "runs",
    "running",
    "Runner",
    "city",
    "cities",
    "New",
    "York",
    "new",
    "york",
    "1999",
    "2016",
    "U.S.",
    "don't",
    "co-operation",
    "généralement",
    "naïve",
    "İstanbul",
    "Ωmega",
    "x",
    "is",
    "was",
    "be",
    "been",
    "connect",
    "connected",
    "connection",
    "generously",
    "—",
    ",",
    ".",
    "(",
    ")",
    '"',
    "'s",
    "K",
    "ſ",
    "data-driven",
    "e-mail",
    "3.5%",
    "  ",
    "\n",
    "\t",
]

SCORER = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
RS_TOKENIZER = tokenizers.DefaultTokenizer(use_stemmer=True)

word_text = st.lists(st.sampled_from(WORDS), min_size=0, max_size=30).map(" ".join)
any_text = st.one_of(word_text, st.text(max_size=80))


def _close(a, b) -> bool:
    return all(math.isclose(x, y, rel_tol=0, abs_tol=1e-9) for x, y in zip(a, b))


@settings(max_examples=300, deadline=None)
@given(any_text)
def test_tokenize_equals_rouge_score(text):
    assert fast.tokenize(text) == RS_TOKENIZER.tokenize(text)
    assert fast.tokenize_reference_impl(text) == RS_TOKENIZER.tokenize(text)


@settings(max_examples=300, deadline=None)
@given(any_text, any_text)
def test_score_equals_rouge_score_random(ref, cand):
    expected = SCORER.score(ref, cand)
    got = fast.score(ref, cand)
    for t in ("rouge1", "rouge2", "rougeL"):
        assert _close(got[t], expected[t]), (t, got[t], expected[t])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(word_text, min_size=1, max_size=8), word_text, st.data())
def test_union_scores_equal_rouge_score_on_joined_string(sentences, ref, data):
    """Any subset, scored from counts (with sentence-boundary bigrams), equals rouge_score on the joined string."""
    subset = data.draw(st.sets(st.integers(0, len(sentences) - 1)))
    union = " ".join(sentences[i] for i in sorted(subset))
    expected = SCORER.score(ref, union)
    for t in ("rouge1", "rouge2", "rougeL"):
        got = fast.SentenceSetRouge(sentences, ref, t).score(subset)
        assert _close(got, expected[t]), (t, got, expected[t])


def test_real_text_exactly_equal(cloze_examples):
    """Real web-document sentences and Wikipedia statements: bit-identical values."""
    rng = random.Random(0)
    n = 0
    for ex in cloze_examples:
        sents, ref = ex["document"], ex["cloze"]
        for _ in range(8):
            k = rng.randint(1, min(6, len(sents)))
            subset = rng.sample(range(len(sents)), k)
            union = " ".join(sents[i] for i in sorted(subset))
            expected = SCORER.score(ref, union)
            for t in ("rouge1", "rouge2", "rougeL"):
                assert tuple(fast.SentenceSetRouge(sents, ref, t).score(subset)) == tuple(expected[t])
            n += 1
        # the whole document the other way round (long reference, short candidate)
        assert fast.score(" ".join(sents), ref) == {
            t: fast.Score(*v) for t, v in SCORER.score(" ".join(sents), ref).items()
        }
    assert n == 8 * len(cloze_examples)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from("abcde"), max_size=40), st.lists(st.sampled_from("abcde"), max_size=40))
def test_lcs_length_matches_dynamic_programming(a, b):
    expected = _lcs_table(a, b)[-1][-1] if a and b else 0
    assert fast.lcs_length(a, b) == expected


def _pooled_expected(refs: list[str], cand: str, rtype: str):
    """Independent pooled scores from rouge_score's own n-gram / LCS helpers."""
    ctoks = RS_TOKENIZER.tokenize(cand)
    hits = ref_total = 0
    for r in refs:
        rtoks = RS_TOKENIZER.tokenize(r)
        if rtype == "rougeL":
            hits += _lcs_table(rtoks, ctoks)[-1][-1] if rtoks and ctoks else 0
            ref_total += len(rtoks)
            pred = len(ctoks)
        else:
            n = int(rtype[-1])
            rg, cg = _create_ngrams(rtoks, n), _create_ngrams(ctoks, n)
            hits += sum(min(c, cg[g]) for g, c in rg.items())
            ref_total += sum(rg.values())
            pred = sum(cg.values())
    p = hits / max(len(refs) * pred, 1)
    r = hits / max(ref_total, 1)
    return p, r


@settings(max_examples=150, deadline=None)
@given(st.lists(word_text, min_size=2, max_size=4), word_text)
def test_multi_reference_pooled_counts(refs, cand):
    got = fast.score(refs, cand)
    for t in ("rouge1", "rouge2", "rougeL"):
        p, r = _pooled_expected(refs, cand, t)
        assert math.isclose(got[t].precision, p, abs_tol=1e-12)
        assert math.isclose(got[t].recall, r, abs_tol=1e-12)


def test_single_reference_list_equals_string():
    ref = "The city of New York was connected in 1999."
    cand = "New York city connections were running in 1999"
    assert fast.score([ref], cand) == fast.score(ref, cand)


def test_parse_metric():
    assert fast.parse_metric("rouge2_f1") == ("rouge2", "fmeasure")
    assert fast.parse_metric("rougeL_recall") == ("rougeL", "recall")
    assert fast.parse_metric("rouge1_fmeasure") == ("rouge1", "fmeasure")
    for bad in ("rouge3_f1", "rouge2", "rouge2_f2", "bleu_f1"):
        with pytest.raises(ValueError, match="unknown ROUGE metric"):
            fast.parse_metric(bad)


def test_stem_cache_returns_porter_stems():
    s = fast.CachedPorterStemmer(max_size=2)
    from nltk.stem import porter

    ref = porter.PorterStemmer()
    for w in ["running", "connection", "generously", "running", "cities", "cities"]:
        assert s.stem(w) == ref.stem(w)
