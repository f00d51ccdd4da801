"""Psg2Sum's extractive baselines (Table 4): LEAD1, TEXTRANK (with the paper's random rule below three
sentences), the BERT scorer in NN-SE's place, official ROUGE-1.5.5 scoring and the table's labelling."""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics.pairwise import cosine_similarity

from wikiref import config, examples
from wikiref.extractive.official import score as official_score
from wikiref.extractive.textrank import make_vectorizer
from wikiref.papers.psg2sum import PAPER_TABLE4
from wikiref.rouge import official
from wikiref.stages.psg2sum import baselines as bl

REPO = Path(__file__).resolve().parents[1]

LOUVRE = [
    "Paris hosts many visitors every summer.",
    "The Louvre museum in Paris holds the Mona Lisa painting.",
    "The Mona Lisa painting by Leonardo hangs in the Louvre museum in Paris.",
    "Leonardo painted the Mona Lisa.",
]


def _row(i: int, sentences, summary, split="test"):
    return examples.example(
        "psg2sum",
        f"p{i:03d}",
        split=split,
        query=[f"Article {i}", "History"],
        documents=[examples.document(f"p{i:03d}-passage", sentences)],
        summary=summary,
        query_origin="wikipedia_headings",
        standin=True,
    )


# ------------------------------------------------------------------------------------------ LEAD1
def test_lead1_is_the_first_non_blank_sentence():
    assert bl.lead1(LOUVRE) == [LOUVRE[0]]
    assert bl.lead1(["  ", " Second one. ", "Third."]) == ["Second one."]
    assert bl.lead1([]) == [] and bl.lead1(["", " "]) == []


# --------------------------------------------------------------------------------------- TEXTRANK
def test_textrank_picks_the_top_pagerank_sentence_of_the_tfidf_cosine_graph():
    # independent computation: networkx PageRank over scikit-learn cosine similarities of the same tf-idf
    x = make_vectorizer().fit_transform(LOUVRE)
    sim = cosine_similarity(x)
    np.fill_diagonal(sim, 0.0)
    pr = nx.pagerank(nx.from_numpy_array(sim), alpha=0.85)
    expected = LOUVRE[max(range(len(LOUVRE)), key=lambda i: (pr[i], -i))]
    got = bl.textrank(LOUVRE, example_id="psg2sum:x", seed=13)
    assert got == [expected]
    assert got != bl.lead1(LOUVRE)  # the central sentence, not the first one
    assert got == [LOUVRE[2]]  # the sentence sharing words with all the others


def test_textrank_with_three_or_more_sentences_is_not_random():
    three = LOUVRE[1:]
    picks = {tuple(bl.textrank(three, example_id=f"psg2sum:{i}", seed=s)) for i in range(20) for s in (1, 2)}
    assert len(picks) == 1


def test_textrank_below_three_sentences_draws_a_seeded_random_sentence():
    two = ["Alpha beta gamma.", "Delta epsilon zeta."]
    draws = [bl.textrank(two, example_id=f"psg2sum:{i}", seed=13) for i in range(40)]
    assert all(len(d) == 1 and d[0] in two for d in draws)
    assert {d[0] for d in draws} == set(two)  # random, not always the first sentence
    # deterministic for an (id, seed) pair, whatever else was drawn before
    again = [bl.textrank(two, example_id=f"psg2sum:{i}", seed=13) for i in reversed(range(40))][::-1]
    assert again == draws
    other_seed = [bl.textrank(two, example_id=f"psg2sum:{i}", seed=14) for i in range(40)]
    assert other_seed != draws
    assert bl.textrank(["Only one sentence here."], example_id="psg2sum:1", seed=0) == ["Only one sentence here."]
    assert bl.textrank([], example_id="psg2sum:1", seed=0) == []


def test_summarize_all_runs_both_unsupervised_methods_on_rows():
    rows = [_row(1, LOUVRE, ["The Mona Lisa is in the Louvre."]), _row(2, ["One.", "Two."], ["One."])]
    lead = bl.summarize_all("lead1", rows, seed=13)
    tr = bl.summarize_all("textrank", rows, seed=13)
    assert lead == {"psg2sum:p001": [LOUVRE[0]], "psg2sum:p002": ["One."]}
    assert tr["psg2sum:p001"] == [LOUVRE[2]] and tr["psg2sum:p002"][0] in ("One.", "Two.")
    with pytest.raises(ValueError, match="unknown"):
        bl.summarize_all("lead3", rows, seed=13)


# ---------------------------------------------------------------------------------------- scoring
SUMMARIES = {
    "psg2sum:a": ["the cat sat on the mat"],
    "psg2sum:b": ["Dogs were barking at the postman yesterday."],
    "psg2sum:c": [],
}
REFERENCES = {
    "psg2sum:a": ["the cat sat on a mat"],
    "psg2sum:b": ["The dog barked at the postman."],
    "psg2sum:c": ["Nothing was extracted for this one."],
}


def test_score_equals_a_direct_call_of_the_official_scorer():
    got = official_score(SUMMARIES, REFERENCES)
    opts = official.Options.from_flags("-n 2 -m -c 95 -r 1000")
    items = [(k, SUMMARIES[k], [REFERENCES[k]]) for k in ("psg2sum:c", "psg2sum:a", "psg2sum:b")]
    direct = official.evaluate_summaries(items, opts)
    assert set(got) == {"rouge1", "rouge2", "rougeL"}
    for metric, measure in (("rouge1", "ROUGE-1"), ("rouge2", "ROUGE-2"), ("rougeL", "ROUGE-L")):
        av = direct[measure].averages
        for field, value, ci in (("recall", av.r, av.r_ci), ("precision", av.p, av.p_ci), ("f1", av.f, av.f_ci)):
            assert got[metric][field] == pytest.approx(float(value) * 100, abs=1e-9)
            assert got[metric][f"{field}_ci"] == pytest.approx([float(v) * 100 for v in ci], abs=1e-9)
    assert got["rouge1"]["recall"] > 0 and got["rouge2"]["f1"] < got["rouge1"]["f1"]


def test_score_by_hand_on_one_example():
    # "the cat sat on the mat" vs "the cat sat on a mat": 5 of 6 unigrams, 3 of 5 bigrams (one reference)
    one = official_score({"e": ["the cat sat on the mat"]}, {"e": ["the cat sat on a mat"]})
    assert one["rouge1"]["recall"] == pytest.approx(83.333) and one["rouge1"]["precision"] == pytest.approx(83.333)
    assert one["rouge2"]["recall"] == pytest.approx(60.0) and one["rouge2"]["f1"] == pytest.approx(60.0)
    assert one["rouge1"]["recall_ci"] == pytest.approx([83.333, 83.333])  # one example: no spread
    same = official_score(
        {"e": ["Stemming makes walked and walking match."]}, {"e": ["stemming make walk and walks match"]}
    )
    assert same["rouge1"]["recall"] == pytest.approx(100.0)  # -m: Porter stemming on


def test_score_needs_a_summary_for_every_reference_and_rouge_l():
    with pytest.raises(ValueError, match="without a summary"):
        official_score({"psg2sum:a": ["x"]}, REFERENCES)
    with pytest.raises(ValueError, match="ROUGE-L"):
        official_score(SUMMARIES, REFERENCES, flags="-n 2 -m -x")


# ------------------------------------------------------------------------------------------ table
def test_paper_table4_has_every_row_as_printed():
    assert set(PAPER_TABLE4) == {"s2s", "s2s+copy", "PGN", "LEAD1", "TextRank", "NN-SE"}
    assert PAPER_TABLE4["NN-SE"]["rouge1"]["recall"] == (43.76, 0.80)
    assert PAPER_TABLE4["LEAD1"]["rougeL"]["f1"] == (30.29, 0.63)
    assert PAPER_TABLE4["s2s+copy"]["rouge2"]["precision"] == (19.87, 0.76)


@pytest.mark.parametrize("standin", [True, False])
def test_table4_rows_cells_and_standin_label(tmp_path, standin):
    res = official_score(SUMMARIES, REFERENCES)
    rows = bl.table4(
        {"lead1": res, "textrank": res},
        tmp_path / "t4",
        profile={"name": "tiny", "standin": standin},
        n_test=3,
    )
    df = pd.read_csv(tmp_path / "t4.csv", keep_default_na=False)
    assert len(df) == len(rows) == 6  # LEAD1, TextRank, BERT (not run) + the three abstractive paper rows
    assert list(df["Paper row"]) == ["LEAD1", "TextRank", "NN-SE", "s2s", "s2s+copy", "PGN"]
    assert sum(bl.ABSTRACTIVE_NOTE in m for m in df["Method"]) == 3
    assert "(not run)" in df["Method"][2] and df["R-1 R"][2] == ""
    lo, hi = res["rouge1"]["recall_ci"]
    assert df["R-1 R"][0] == f"{res['rouge1']['recall']:.2f} ± {(hi - lo) / 2:.2f}"
    assert df["Paper R-1 R"][2] == "43.76 ± 0.80" and df["Paper R-L F"][3] == "29.00 ± 0.60"
    if standin:
        assert list(df["Data"]) == ["STAND-IN"] * 6
        assert "STAND-IN" in (tmp_path / "t4.md").read_text(encoding="utf-8")
    else:
        assert list(df["Data"]) == ["real"] * 6
    assert (tmp_path / "t4.tex").exists()


# ------------------------------------------------------------------------------------------- BERT
def test_sentence_labels_one_positive_for_the_best_rouge1_sentence():
    labels, f1 = bl.sentence_labels(LOUVRE, ["Leonardo painted the Mona Lisa in Florence."])
    assert labels == [0.0, 0.0, 0.0, 1.0] and max(f1) == f1[3]
    none, f1 = bl.sentence_labels(["Alpha beta.", "Gamma delta."], ["Nothing in common here."])
    assert none == [0.0, 0.0] and f1 == [0.0, 0.0]


def _synthetic(n: int, split: str, start: int):
    topics = ["river", "castle", "engine", "violin", "glacier", "harbour", "comet", "forest"]
    rows = []
    for i in range(start, start + n):
        t = topics[i % len(topics)]
        key = i % 3  # where the summary-like sentence sits
        sents = [f"Filler sentence number {j} talks about weather and roads." for j in range(3)]
        sents[key] = f"The {t} was built in {1800 + i} by the famous {t} makers of the town."
        rows.append(_row(i, sents, [f"The {t} was built in {1800 + i} by {t} makers."], split=split))
    return rows


def _tiny_params() -> dict:
    cfg = config.load_params(REPO / "params.yaml", [REPO / "config" / "tiny.yaml"])
    params = {k: cfg[k] for k in ("seed", "model", "pretrain")}
    assert params["model"]["encoder"] == "tiny-random"
    params["pretrain"] = dict(params["pretrain"], batch_size=4)
    return params


def test_bert_trains_with_tiny_random_and_summarizes_every_test_example(tmp_path):
    params = _tiny_params()
    train, dev, test = _synthetic(10, "train", 0), _synthetic(4, "dev", 100), _synthetic(3, "test", 200)
    test.append(_row(999, [" "], ["A passage without sentences."]))  # gets an empty summary, not skipped
    sup = {"enabled": True, "pooling": "cls", "epochs": 1, "max_train_examples": 8}
    info = bl.train_bert(params, train, dev, tmp_path / "model", sup)
    assert info["enabled"] and info["train_examples"] == 8 and info["dev_examples"] == 4
    assert info["train_with_positive"] == 8 and info["head"] == "classification" and not info["query_input"]
    assert 0.0 <= info["dev_top1_rouge1_f1"] <= 1.0
    assert (tmp_path / "model" / "model.safetensors").exists()
    cfg = json.loads((tmp_path / "model" / "config.json").read_text(encoding="utf-8"))
    assert cfg["head"] == "classification" and cfg["use_query"] is False

    summaries = bl.bert_summaries(tmp_path / "model", test, params)
    assert set(summaries) == {r["id"] for r in test}
    for r in test[:3]:
        got = summaries[r["id"]]
        assert len(got) == 1 and got[0] in bl.passage_sentences(r)
    assert summaries["psg2sum:p999"] == []
    assert bl.bert_summaries(tmp_path / "model", test, params) == summaries
    scored = official_score(summaries, bl.references(test))
    assert 0.0 <= scored["rouge1"]["f1"] <= 100.0


def test_bert_disabled_trains_nothing_and_query_pooling_is_refused(tmp_path):
    params = _tiny_params()
    off = bl.train_bert(params, [], [], tmp_path / "m", {"enabled": False, "pooling": "cls", "epochs": 1})
    assert off["enabled"] is False and not (tmp_path / "m").exists()
    sup = {"enabled": True, "pooling": "query", "epochs": 1, "max_train_examples": None}
    with pytest.raises(ValueError, match="passage alone"):
        bl.train_bert(params, _synthetic(2, "train", 0), _synthetic(1, "dev", 50), tmp_path / "m", sup)
