"""ALL / LEAD / ORACLE baselines."""

from __future__ import annotations

import pytest

from wikiref.model.selection import evaluate
from wikiref.stages.pretrain.baselines import all_sentences, lead, oracle_summaries

DOCS = [["a b c", "d e f", "g h i"], ["only one"], []]


def test_all_and_lead():
    assert all_sentences(DOCS) == [[0, 1, 2], [0], []]
    assert lead(DOCS) == [[0, 1], [0], []]
    assert lead(DOCS, 3) == [[0, 1, 2], [0], []]
    with pytest.raises(ValueError):
        lead(DOCS, 0)


def test_oracle_summaries_sorted_and_checked():
    assert oracle_summaries([[2, 0], [0], []], DOCS) == [[0, 2], [0], []]
    with pytest.raises(ValueError):
        oracle_summaries([[3], [0], []], DOCS)


def test_oracle_scores_perfect_when_summary_is_extractive():
    docs = [["the river flooded the town", "nothing else here"], ["prices rose sharply today", "a b"]]
    refs = ["the river flooded the town", "prices rose sharply today"]
    assert evaluate(oracle_summaries([[0], [0]], docs), docs, refs)["rouge2"] == pytest.approx(100.0)
    assert evaluate(lead(docs, 2), docs, refs)["rouge2"] < 100.0


def test_lead_on_real_examples(cloze_examples):
    docs = [ex["document"] for ex in cloze_examples]
    refs = [ex["cloze"] for ex in cloze_examples]
    r_lead = evaluate(lead(docs, 2), docs, refs)
    r_oracle = evaluate(oracle_summaries([ex["labels"] for ex in cloze_examples], docs), docs, refs)
    assert 0 < r_lead["rouge2"] < r_oracle["rouge2"]
