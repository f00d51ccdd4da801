"""Summary selection (threshold + trigram blocking), the exact threshold sweep, ROUGE helpers."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from wikiref.extractive import selection as sel


def test_ranking_ties_and_nan():
    assert sel.ranking([0.2, 0.9, 0.2, float("nan"), 0.5]) == [1, 4, 0, 2, 3]


def test_one_ranking_for_both_rules():
    """For finite scores (floats, numpy floats, ints, +-inf) the ranking is plain score order (ties: input order),
    what the DUC rule and the meeting baselines ranked by; NaN / None (never scored) rank as -inf: last."""
    rng = random.Random(3)
    pool = [0.0, -0.0, 1.0, -1.0, 0.5, math.inf, -math.inf]
    for _ in range(300):
        xs = [rng.choice(pool) if rng.random() < 0.4 else rng.uniform(-2, 2) for _ in range(rng.randint(0, 12))]
        for scores in (xs, np.asarray(xs, dtype=np.float32), np.asarray(xs), [int(x) for x in xs if math.isfinite(x)]):
            assert sel.ranking(scores) == sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    assert sel.ranking([None, -math.inf, float("nan"), 0.0]) == [3, 0, 1, 2]
    # the DUC rule skips nothing for being unscored: a NaN sentence is simply tried last
    assert sel.select([float("nan"), 0.1], ["a b c", "d e f"], max_words=3) == [1]


def test_select_threshold_blocking_and_document_order():
    sents = ["the cat sat on the mat", "a dog ran", "the cat sat on a chair", "birds fly south"]
    scores = [0.9, 0.3, 0.8, 0.6]
    # ranked 0, 2, 3, 1; sentence 2 shares "the cat sat" with 0 -> blocked
    assert sel.threshold_select(scores, sents, 0.5) == [0, 3]
    assert sel.threshold_select(scores, sents, 0.5, block_trigrams=False) == [0, 2, 3]
    assert sel.threshold_select(scores, sents, 0.95) == [0]  # min_sentences=1: the top one is always considered
    assert sel.threshold_select(scores, sents, 0.95, min_sentences=0) == []
    assert sel.threshold_select(scores, sents, -1.0) == [0, 1, 3]


def test_trigrams_are_case_and_punctuation_insensitive():
    assert sel.trigrams("The Cat, sat!") == sel.trigrams("the cat sat")
    assert sel.trigrams("two words") == frozenset()


def test_search_threshold_hand_computed():
    # reference bigrams: (alpha beta) (beta gamma) (gamma delta)
    ref = "alpha beta gamma delta"
    docs = [["alpha beta gamma", "zeta eta theta"], ["gamma delta alpha", "alpha beta x"]]
    scores = [[0.9, 0.4], [0.3, 0.7]]
    # the top sentence of each example is always in (min_sentences=1), so the candidates are
    # t=inf: {0} F=0.8 (P 2/2, R 2/3), {1} F=0.4 (P 1/2, R 1/3)              -> mean 0.60
    # t=0.4: {0,1} F=0.5 (P 2/5, R 2/3), {1} 0.4                             -> mean 0.45
    # t=0.3: {0,1} 0.5, {0,1} "gamma delta alpha alpha beta x" F=0.5 (P 2/5) -> mean 0.50
    res = sel.search_threshold(scores, docs, [ref, ref])
    assert res.rouge2 == pytest.approx(60.0)
    assert res.threshold == math.inf
    assert res.candidates == 3
    # without the floor: t=inf gives empty summaries, t=0.9 mean 0.4, t=0.7 the same 0.6 as above
    res0 = sel.search_threshold(scores, docs, [ref, ref], min_sentences=0)
    assert res0.threshold == 0.7 and res0.rouge2 == pytest.approx(60.0)


def _brute_force(scores, docs, refs, min_sentences):
    best = (-1.0, None)
    cands = sorted({float(x) for sc in scores for x in sc} | {math.inf}, reverse=True)
    for t in cands:
        chosen = sel.threshold_select_all(scores, docs, t, min_sentences=min_sentences)
        v = np.mean([sel.rouge2_f1(sel.summary_text(d, c), ref) for d, c, ref in zip(docs, chosen, refs)])
        if v > best[0] + 1e-12:
            best = (v, t)
    return best


@pytest.mark.parametrize("min_sentences", [0, 1, 2])
def test_search_threshold_equals_brute_force(min_sentences):
    rng = random.Random(3)
    words = "sun moon star river lake hill tree rock wind rain snow fire".split()
    docs, refs, scores = [], [], []
    for _ in range(12):
        n = rng.randint(1, 6)
        doc = [" ".join(rng.choice(words) for _ in range(rng.randint(3, 8))) for _ in range(n)]
        docs.append(doc)
        refs.append(" ".join(rng.choice(words) for _ in range(rng.randint(4, 10))))
        scores.append([round(rng.random(), 1) for _ in range(n)])  # many ties on purpose
    res = sel.search_threshold(scores, docs, refs, min_sentences=min_sentences)
    bv, bt = _brute_force(scores, docs, refs, min_sentences)
    assert res.rouge2 == pytest.approx(100 * bv)
    assert res.threshold == bt


def test_rouge2_cache_equals_rouge_score():
    rng = random.Random(5)
    words = "Running runs ran the cats cat's dogs, dog. 2019 U.S. data-set test".split()
    for _ in range(30):
        doc = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 9))) for _ in range(5)]
        ref = " ".join(rng.choice(words) for _ in range(rng.randint(1, 12)))
        cache = sel.Rouge2Cache(doc, ref)
        subset = rng.sample(range(5), rng.randint(1, 5))
        assert cache(subset) == sel.rouge2_f1(sel.summary_text(doc, subset), ref)


def test_rouge2_cache_on_real_examples(cloze_examples):
    for ex in cloze_examples[:10]:
        doc = ex["document"]
        cache = sel.Rouge2Cache(doc, ex["cloze"])
        for subset in ([0], ex["labels"], list(range(min(4, len(doc))))):
            assert cache(subset) == sel.rouge2_f1(sel.summary_text(doc, subset), ex["cloze"])


def test_evaluate_matches_rouge_score_directly():
    from rouge_score import rouge_scorer

    docs = [["The cats were running home.", "Dogs bark."], ["A b c d.", "e f g."]]
    refs = ["The cat runs home quickly.", "a b c e f g"]
    chosen = [[0], [0, 1]]
    out = sel.evaluate(chosen, docs, refs)
    rs = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeLsum"], use_stemmer=True)
    s = [rs.score(ref, "\n".join(d[i] for i in c)) for d, c, ref in zip(docs, chosen, refs)]
    assert out["rouge1"] == pytest.approx(100 * np.mean([x["rouge1"].fmeasure for x in s]))
    assert out["rouge2"] == pytest.approx(100 * np.mean([x["rouge2"].fmeasure for x in s]))
    assert out["rougeL"] == pytest.approx(100 * np.mean([x["rougeLsum"].fmeasure for x in s]))
    assert sel.rouge(sel.summary_text(docs[0], [0]), refs[0])["rouge1"] == s[0]["rouge1"].fmeasure


def test_finite():
    assert sel.finite(math.inf) is None and sel.finite(0.5) == 0.5
