"""The DUC summary assembly rule (wikiref.extractive.selection)."""

from __future__ import annotations

import pytest

from wikiref.extractive.selection import base_rule, bigrams, choose_mmr, flatten, mmr_choices, select, select_cluster


def test_ranks_by_score_and_respects_the_word_budget():
    sents = ["a b c d e", "f g h", "i j k l", "m n"]
    # scores rank 2, 0, 1, 3; budget 9 words: 4 + 5 = 9 -> then nothing fits
    assert select([0.5, 0.4, 0.9, 0.1], sents, max_words=9) == [2, 0]
    # an overflowing sentence is skipped, later shorter ones still tried ("skip")
    assert select([0.9, 0.8, 0.7], ["a b c", "d e f g h", "i j"], max_words=6) == [0, 2]
    # ... or the summary ends there ("stop")
    assert select([0.9, 0.8, 0.7], ["a b c", "d e f g h", "i j"], max_words=6, fill="stop") == [0]


def test_redundancy_more_than_half_of_the_bigrams():
    s0 = "the cat sat on the mat"  # bigrams: the cat, cat sat, sat on, on the, the mat
    s1 = "the cat sat on a rug"  # 3 of 5 bigrams already in -> more than half -> skipped
    s2 = "the cat sat near a dog"  # 2 of 5 -> kept
    assert select([3, 2, 1], [s0, s1, s2], max_words=100) == [0, 2]
    # exactly half is not "more than half"
    s3 = "the cat ran fast"  # the cat (in), cat ran, ran fast -> 1 of 3
    s4 = "on the mat today"  # on the, the mat (in), mat today -> 2 of 3 > 0.5 -> skipped
    assert select([3, 2, 1], [s0, s3, s4], max_words=100) == [0, 1]
    assert select([2, 1], ["a b c", "b c d"], max_words=100, max_bigram_overlap=0.5) == [0, 1]  # 1 of 2
    assert select([2, 1], ["a b c", "b c d"], max_words=100, max_bigram_overlap=0.4) == [0]


def test_ties_keep_cluster_order_and_empty_sentences_are_skipped():
    assert select([1, 1, 1], ["x y", "", "z w"], max_words=10) == [0, 2]
    assert bigrams("U.S. forces, U.S. FORCES") == {("u", "s"), ("s", "forces"), ("forces", "u")}


def test_cluster_helpers():
    docs = [["a b", "c d"], ["e f"]]
    sents, where = flatten(docs)
    assert sents == ["a b", "c d", "e f"] and where == [(0, 0), (0, 1), (1, 0)]
    assert select_cluster([[0.1, 0.9], [0.5]], docs, max_words=4) == ["c d", "e f"]
    with pytest.raises(ValueError):
        select([1.0], ["a", "b"])
    with pytest.raises(ValueError):
        select([1.0], ["a"], fill="truncate")


MMR_SENTS = [
    "storm floods the coastal town overnight",  # 0: relevant
    "overnight storm floods coastal town again",  # 1: relevant, says 0 again in other words
    "officials count damage to bridges and roads",  # 2: less relevant, new content
    "",  # 3: empty
    "storm floods coastal town",  # 4: unscored
]


def test_mmr_trades_score_for_novelty_and_is_rank_order_at_one():
    scores = [0.9, 0.85, 0.5, 0.95, float("nan")]
    plain = select(scores, MMR_SENTS, max_words=100, max_bigram_overlap=1.0)
    assert plain == [0, 1, 2, 4]  # the empty sentence never, the unscored last
    assert select(scores, MMR_SENTS, max_words=100, max_bigram_overlap=1.0, mmr=1.0) == plain
    # lambda 0.5: after 0, sentence 1 (cosine to 0 near 1) loses to the novel sentence 2
    mmr = select(scores, MMR_SENTS, max_words=100, max_bigram_overlap=1.0, mmr=0.5)
    assert mmr[:2] == [0, 2] and sorted(mmr) == [0, 1, 2, 4] and mmr[-1] == 4
    # the budget still binds: 6 + 7 words, the 6-word paraphrase no longer fits and is skipped
    assert select(scores, MMR_SENTS, max_words=13, max_bigram_overlap=1.0, mmr=0.5) == [0, 2]
    # lambda 0: novelty alone after the first pick (the best score: every redundancy is 0 then)
    assert select(scores, MMR_SENTS, max_words=100, max_bigram_overlap=1.0, mmr=0.0)[0] == 0
    # -inf is "never scored" as NaN is; scaling does not depend on the scores' magnitude
    assert select([x * 1000 for x in scores[:4]] + [float("-inf")], MMR_SENTS, max_words=100, mmr=0.5)[:2] == [0, 2]


def test_mmr_only_counts_kept_sentences_and_checks_its_weight():
    # sentence 1 does not fit the budget: skipped, it does not make sentence 3 (its near paraphrase) redundant
    sents = [
        "red apples grow",
        "blue whales swim in deep blue oceans",  # 7 words: 3 + 7 > 9; TF-IDF cosine 0.75 with sentence 3
        "green grass grows",
        "blue whales swim",
    ]
    assert select([1.0, 0.9, 0.5, 0.8], sents, max_words=9, mmr=0.5) == [0, 3, 2]
    with pytest.raises(ValueError, match="mmr"):
        select([1.0], ["a b"], mmr=1.5)


def test_a_rule_with_several_mmr_weights_is_fixed_by_held_out_summaries():
    rule = {"max_bigram_overlap": 0.5, "fill": "skip", "mmr": [0.5, 1.0, 0.7, 0.5]}
    assert mmr_choices(rule) == [1.0, 0.7, 0.5] and mmr_choices({**rule, "mmr": 0.7}) == mmr_choices({}) == []
    assert base_rule(rule)["mmr"] is None and base_rule({**rule, "mmr": 0.7})["mmr"] == 0.7
    tried = []

    def value(fixed):  # the held-out ROUGE under one weight; 0.7 and 0.5 tie
        tried.append(fixed["mmr"])
        return {1.0: 20.0, 0.7: 21.5, 0.5: 21.5}[fixed["mmr"]]

    fixed, record = choose_mmr(rule, value)
    assert fixed == {**rule, "mmr": 0.7} and rule["mmr"] == [0.5, 1.0, 0.7, 0.5]  # a tie to the larger weight
    assert record == {"mmr": 0.7, "held_out": {"1": 20.0, "0.7": 21.5, "0.5": 21.5}} and tried == [1.0, 0.7, 0.5]
    assert choose_mmr({**rule, "mmr": None}, lambda _: 1 / 0) == ({**rule, "mmr": None}, None)
    with pytest.raises(ValueError, match="several weights"):  # a rule not yet fixed never makes a summary
        select([1.0, 0.5], ["a b", "c d"], **rule)
