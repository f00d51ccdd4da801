"""The learning-to-rank layer (wikiref.extractive.ltr), the embeddings it reads (biencoder.embed_texts) and
scripts/ltr-study end to end on a STAND-IN QMSum file."""

from __future__ import annotations

import json

import numpy as np
import pytest

from wikiref.extractive import ltr
from wikiref.extractive.baselines import query_sim_scores

TURNS = [
    "We should talk about the budget for the remote control.",
    "I think the buttons are too small.",
    "The budget is twelve euros and fifty cents per unit.",
    "Lunch is at noon.",
    "Can we afford a titanium case within that budget?",
]


def _unit(rows):
    m = np.asarray(rows, dtype=float)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_features_are_the_signals_they_name():
    emb = _unit(np.random.default_rng(0).normal(size=(5, 8)))
    q = _unit(np.random.default_rng(1).normal(size=(1, 8)))[0]
    x = ltr.document_features(["remote control", "what was the budget?"], TURNS, emb, q)
    col = {f: x[:, i] for i, f in enumerate(ltr.FEATURES)}
    assert x.shape == (5, len(ltr.FEATURES)) and np.isfinite(x).all()
    np.testing.assert_allclose(col["cos"], emb @ q)
    np.testing.assert_allclose(col["tfidf"], query_sim_scores(["remote control", "what was the budget?"], TURNS))
    assert col["tfidf_rank"].argmax() == col["tfidf"].argmax() and col["tfidf_rank"].max() == 1.0
    assert col["overlap"][3] == 0 and col["overlap"][0] > 0  # "Lunch is at noon." shares no query word
    np.testing.assert_allclose(col["cos_near2"][0], col["cos"][:3].mean())  # clipped window at the start
    np.testing.assert_allclose(col["position"], [0, 0.25, 0.5, 0.75, 1.0])
    assert (col["cos_z"].mean(), col["log_units"][0]) == (pytest.approx(0, abs=1e-12), pytest.approx(np.log(5)))


def test_features_without_embeddings_and_bad_calls():
    x = ltr.document_features(["budget"], TURNS)
    assert (x[:, ltr.FEATURES.index("cos")] == 0).all() and (x[:, ltr.FEATURES.index("tfidf")] > 0).any()
    assert ltr.document_features(["budget"], []).shape == (0, len(ltr.FEATURES))
    with pytest.raises(ValueError, match="both"):
        ltr.document_features(["budget"], TURNS, np.zeros((5, 3)))
    with pytest.raises(ValueError, match="4 unit embeddings for 5"):
        ltr.document_features(["budget"], TURNS, np.zeros((4, 3)), np.zeros(3))


def test_target_transforms():
    y = np.array([0.0, 0.2, 0.1, 0.2])
    np.testing.assert_allclose(ltr.transform_targets(y, "doc_max"), [0, 1, 0.5, 1])
    np.testing.assert_allclose(ltr.transform_targets(y, "doc_rank"), [0, 5 / 6, 1 / 3, 5 / 6])
    assert (ltr.transform_targets(np.zeros(3), "doc_max") == 0).all()
    # per word: a 1-word unit with 0.1 beats a 4-word unit with 0.2 under a word budget
    np.testing.assert_allclose(ltr.transform_targets(np.array([0.1, 0.2]), "per_word", np.array([1, 4])), [1, 0.5])
    with pytest.raises(ValueError, match="word counts"):
        ltr.transform_targets(y, "per_word")
    x = ltr.document_features(["budget"], TURNS)
    np.testing.assert_array_equal(ltr.words_of(x), [len(t.split()) for t in TURNS])
    with pytest.raises(ValueError, match="unknown target"):
        ltr.transform_targets(y, "log")


def test_settings_parse():
    s = ltr.RankerSettings.parse("small:target=raw,max_iter=50,learning_rate=0.1")
    assert (s.name, s.target, s.max_iter, s.learning_rate) == ("small", "raw", 50, 0.1)
    with pytest.raises(ValueError, match="colour"):
        ltr.RankerSettings.parse("x:colour=red")
    with pytest.raises(ValueError, match="unknown target"):
        ltr.RankerSettings.parse("x:target=log")


def _synthetic(n_docs: int, seed: int):
    """Documents whose targets follow a neighbourhood signal the single features do not show alone: a unit
    is worth something when it and its neighbours are close to the query (a relevant stretch)."""
    rng = np.random.default_rng(seed)
    docs = []
    for _ in range(n_docs):
        n = int(rng.integers(20, 40))
        start = int(rng.integers(0, n - 6))
        relevant = np.zeros(n)
        relevant[start : start + 6] = 1
        emb = _unit(rng.normal(size=(n, 16)))
        q = _unit(rng.normal(size=(1, 16)))[0]
        emb = _unit(emb + 0.9 * relevant[:, None] * q)  # the relevant stretch leans towards the query
        words = ["alpha beta gamma"] * n
        x = ltr.document_features(["delta"], words, emb, q)
        docs.append((x, relevant * rng.uniform(0.5, 1.0, size=n)))
    return docs


def _top_k_hits(ranker_scores, docs, k=6) -> float:
    return float(np.mean([(y[np.argsort(-s)[:k]] > 0).mean() for s, (_, y) in zip(ranker_scores, docs)]))


def test_ranker_learns_a_relevant_stretch_better_than_the_cosine_alone():
    train, test = _synthetic(80, 1), _synthetic(30, 2)
    ranker = ltr.Ranker(ltr.RankerSettings(max_iter=80, min_samples_leaf=20)).fit(train)
    learned = _top_k_hits([ranker.scores(x) for x, _ in test], test)
    cosine = _top_k_hits([x[:, ltr.FEATURES.index("cos")] for x, _ in test], test)
    assert learned > cosine + 0.05 and learned > 0.8, (learned, cosine)
    again = ltr.Ranker(ltr.RankerSettings(max_iter=80, min_samples_leaf=20)).fit(train)
    np.testing.assert_array_equal(again.scores(test[0][0]), ranker.scores(test[0][0]))  # same seed, same model
    assert set(ranker.importances(test[:5])) == set(ltr.FEATURES)


def test_ranker_errors():
    with pytest.raises(RuntimeError, match="before fit"):
        ltr.Ranker(ltr.RankerSettings()).scores(np.zeros((2, len(ltr.FEATURES))))
    with pytest.raises(ValueError, match="no document"):
        ltr.Ranker(ltr.RankerSettings()).fit([(np.zeros((0, len(ltr.FEATURES))), np.zeros(0))])


def test_signal_features_append_a_scorers_view():
    x = ltr.document_features(["budget"], TURNS)
    out = ltr.signal_features(x, [0.5, 0.1, 0.9, -1.0, 0.9])
    assert out.shape == (len(TURNS), len(ltr.FEATURES) + len(ltr.SIGNAL_FEATURES))
    assert np.array_equal(out[:, : len(ltr.FEATURES)], x)
    raw, z, rank = out[:, -3], out[:, -2], out[:, -1]
    assert list(raw) == [0.5, 0.1, 0.9, -1.0, 0.9] and abs(z.mean()) < 1e-12
    assert list(rank) == [0.5, 0.25, 0.875, 0.0, 0.875]  # ties share their rank
    with pytest.raises(ValueError, match="4 scores for 5 units"):
        ltr.signal_features(x, [1.0, 2.0, 3.0, 4.0])


def test_embed_texts_alone_or_batched_give_the_same_unit_vectors():
    import torch

    from wikiref.model.biencoder import embed_texts
    from wikiref.model.encoders import TINY, load_encoder, load_tokenizer

    torch.manual_seed(0)
    tok = load_tokenizer(TINY, 0)
    enc = load_encoder(TINY, tok)
    texts = ["a short one", "a much longer text about the budget of the remote control and its buttons", "x"]
    batched = embed_texts(enc, tok, texts, batch_size=3)
    alone = np.stack([embed_texts(enc, tok, [t])[0] for t in texts])
    assert batched.shape == (3, enc.config.hidden_size) and batched.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(batched, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(batched, alone, atol=1e-5)  # padding and order change nothing
    assert enc.training  # the encoder's mode is restored


def _standin_files(tmp_path) -> list[str]:
    """``--train`` / ``--val`` arguments: 6 and 2 meetings of a STAND-IN QMSum file."""
    from wikiref.stages.qmsum.standin import write_standin

    whole = tmp_path / "all.jsonl"
    write_standin(whole, meetings=8, seed=3)
    lines = whole.read_text().splitlines()
    (tmp_path / "train.jsonl").write_text("\n".join(lines[:6]) + "\n")
    (tmp_path / "val.jsonl").write_text("\n".join(lines[6:]) + "\n")
    return ["--train", str(tmp_path / "train.jsonl"), "--val", str(tmp_path / "val.jsonl")]


@pytest.mark.slow
def test_ltr_study_runs_on_standin_meetings(load_script, tmp_path):
    out = tmp_path / "study"
    argv = [*_standin_files(tmp_path), "--out", str(out)]
    argv += [
        "--encoder",
        "tiny-random",
        "--folds",
        "2",
        "--threads",
        "1",
        "--rankers",
        "a:max_iter=10",
        "b:target=raw,max_iter=10",
    ]
    assert load_script("ltr-study").main(argv) == 0
    report = json.loads((out / "ltr-study.json").read_text())
    assert report["label"] == "STAND-IN" and report["rankers_tried"] == 2
    for setting in ("gold_span", "transcript"):
        res = report["settings"][setting]
        assert res["chosen"] in ("a:max_iter=10", "b:target=raw,max_iter=10")
        systems = [r["system"] for r in res["val"]]
        assert systems == ["LEAD", "QUERY-SIM", "COSINE (untrained encoder)", f"LTR [{res['chosen']}]", "ORACLE"]
        assert "vs QUERY-SIM" in res["val"][3] and 0 <= res["val"][3]["vs QUERY-SIM"]["p"] <= 1
    table = (out / "ltr-study.csv").read_text().splitlines()
    assert len(table) == 1 + 2 * 5 and all(line.startswith("STAND-IN,") for line in table[1:])


@pytest.mark.slow
def test_ltr_study_bi_signal_is_cross_fitted_and_reused(load_script, tmp_path):
    out = tmp_path / "study"
    argv = [*_standin_files(tmp_path), "--out", str(out)]
    argv += ["--encoder", "tiny-random", "--folds", "2", "--threads", "1", "--settings", "gold_span"]
    argv += ["--rankers", "a:max_iter=10", "--bi-signal", "--bi-recipe", "epochs=1", "--bi-document-turns", "6"]
    study = load_script("ltr-study")
    assert study.main(argv) == 0
    report = json.loads((out / "ltr-study.json").read_text())
    rows = study.read_rows(tmp_path / "train.jsonl", None, 13)
    fold_of = study._meeting_folds(rows, 2, 13 + 100)
    for k, record in enumerate(report["bi_signal"]):  # fold k's scorer never saw fold k's meetings
        others = [r for r in rows if fold_of[r["meeting_id"]] != k and r["span_turns"]]
        assert record["train_queries"] + record["dev_queries"] == len(others) > 0
    val = report["settings"]["gold_span"]["val"]
    names = [r["system"] for r in val]
    assert names == [
        "LEAD",
        "QUERY-SIM",
        "COSINE (untrained encoder)",
        study.BI,
        "LTR [a:max_iter=10]",
        f"LTR [a:max_iter=10] without {study.BI}",
        "ORACLE",
    ]
    assert 0 <= val[4][f"vs {study.BI}"]["p"] <= 1 and f"vs {study.BI}" not in val[3]
    weights = out / "bi-fold0" / "model.safetensors"
    before = weights.stat().st_mtime_ns
    assert study.main(argv) == 0  # a second run loads the fold scorers instead of training them
    assert weights.stat().st_mtime_ns == before


def test_positions_given_by_the_caller_replace_the_place_in_the_list():
    units = ["alpha beta", "gamma delta", "alpha gamma"]
    x = ltr.document_features(["alpha"], units, positions=[0.0, 1.0, 0.0])
    assert list(x[:, ltr.FEATURES.index("position")]) == [0.0, 1.0, 0.0]
    assert list(ltr.document_features(["alpha"], units)[:, ltr.FEATURES.index("position")]) == [0.0, 0.5, 1.0]
    with pytest.raises(ValueError, match="2 positions for 3 units"):
        ltr.document_features(["alpha"], units, positions=[0.0, 1.0])
