"""The WCEP article-summary classifier (wikiref.stages.wcep.classifier)."""

from __future__ import annotations

import json
import math
import random
from datetime import date, timedelta

import numpy as np
import pytest

from wikiref.examples import Tally
from wikiref.stages.wcep.classifier import (
    FEATURES,
    Classifier,
    assign,
    count_entities,
    features,
    fit_vectorizer,
    has_entity,
    is_heldout,
    precision_recall,
    score_candidates,
    train,
    training_pairs,
)


def day(offset: int, start: date = date(2019, 1, 10)) -> str:
    return (start + timedelta(days=offset)).isoformat()


def event(eid, when, summary, entities=(), sources=()):
    return {"event_id": eid, "date": when, "summary": summary, "entities": list(entities), "sources": list(sources)}


def src(url, title, text):
    return {"url": url, "title": title, "text": text}


HAND = [
    event(
        "e1",
        "2019-01-01",
        "Storm hits Paris",
        ["Paris", "France"],
        [src("https://a.example/1", "Storm in Paris", "A storm hit Paris today. Storm damage")],
    ),
    event(
        "e2",
        "2019-01-01",
        "Election in Chile",
        ["Chile"],
        [src("https://b.example/2", "Chile votes", "Chile holds an election")],
    ),
]


# ------------------------------------------------------------------------------------------ features


def test_four_features_by_hand():
    # Corpus of fit_vectorizer: 4 documents (2 summaries, 2 sources as "title\nbody"), lower-cased,
    # tokens of >= 2 characters ("A" is dropped). Document frequencies:
    #   df = 2: storm, paris, in, election, chile      df = 1: hits, hit, today, damage, votes, holds, an
    # scikit-learn's smoothed idf = ln((1 + n) / (1 + df)) + 1 with n = 4:
    i1 = math.log(5 / 2) + 1  # df = 1 -> 1.916290731874155
    i2 = math.log(5 / 3) + 1  # df = 2 -> 1.5108256237659907
    assert i1 == pytest.approx(1.916290731874155) and i2 == pytest.approx(1.5108256237659907)
    vec = fit_vectorizer(HAND)
    assert len(vec.vocabulary_) == 12
    assert vec.idf_[vec.vocabulary_["storm"]] == pytest.approx(i2)
    assert vec.idf_[vec.vocabulary_["hits"]] == pytest.approx(i1)
    # summary "Storm hits Paris": storm i2, hits i1, paris i2       |s| = sqrt(2 i2^2 + i1^2)
    # title "Storm in Paris":     storm i2, in i2, paris i2         |t| = sqrt(3) i2
    #   cos = (i2^2 + i2^2) / (|s| |t|) = 2 i2 / (sqrt(3) sqrt(2 i2^2 + i1^2))
    # body "A storm hit Paris today. Storm damage": storm 2 i2, hit i1, paris i2, today i1, damage i1
    #   ("hit" is not "hits": no stemming)  |b| = sqrt(5 i2^2 + 3 i1^2);  s.b = 2 i2^2 + i2^2
    title_cos = 2 * i2 / (math.sqrt(3) * math.sqrt(2 * i2**2 + i1**2))
    body_cos = 3 * i2**2 / (math.sqrt(2 * i2**2 + i1**2) * math.sqrt(5 * i2**2 + 3 * i1**2))
    assert title_cos == pytest.approx(0.6078406375951328) and body_cos == pytest.approx(0.5037862957736362)
    f = features(
        "Storm hits Paris", ["Paris", "France"], "Storm in Paris", "A storm hit Paris today. Storm damage", vec
    )
    assert f[0] == pytest.approx(title_cos, abs=1e-12)
    assert f[1] == pytest.approx(body_cos, abs=1e-12)
    assert f[2:] == (1, 1)  # "Paris" in title and body, "France" nowhere
    # nothing in common, empty sides
    assert features("Storm hits Paris", ["Paris"], "Chile votes", "", vec) == (0.0, 0.0, 0, 0)
    assert features("Storm hits Paris", [], "", "", vec) == (0.0, 0.0, 0, 0)


def test_entity_matching_is_exact_whole_phrase_and_distinct():
    assert has_entity("Paris", "Riots in Paris, France")
    assert not has_entity("Paris", "Parisian cafes") and not has_entity("Paris", "riots in paris")
    assert has_entity("New York", "New York City police") and not has_entity("New York", "New Yorker")
    assert has_entity("U.S.", "the U.S. army") and has_entity("Côte d'Ivoire", "in Côte d'Ivoire.")
    # distinct entities, each counted once however often it occurs; blanks ignored
    assert count_entities(["Paris", "Paris", " ", "France", "Chile"], "Paris, Paris and France") == 2
    assert count_entities([], "Paris") == 0


# ----------------------------------------------------------------------------------------- training


def random_events(seed: int, n_days: int = 4, per_day: int = 6, vocab: int = 40) -> list[dict]:
    """Random texts over a small vocabulary (so every pair has its own feature values)."""
    rng = random.Random(seed)
    words = [f"word{k}" for k in range(vocab)]
    names = ["Alpha Town", "Beta", "Gamma River", "Delta", "Epsilon Bay", "Zeta"]

    def text(n):
        return " ".join(rng.choice(words + names) for _ in range(n))

    out = []
    for d in range(n_days):
        for k in range(per_day):
            eid = f"ev{d}{k}"
            sources = [
                src(f"https://news{rng.randrange(5)}.example/{eid}/{j}", text(5), text(40))
                for j in range(rng.randint(1, 2))
            ]
            out.append(event(eid, day(d), text(12), rng.sample(names, 2), sources))
    return out


def test_negative_ratio_subsampled_seeded():
    events = [
        event(f"e{k:02d}", "2019-01-01", f"summary words {k}", [], [src(f"https://x.example/{k}", "t", "body")])
        for k in range(20)
    ]
    X, y, info = training_pairs(events, negative_ratio=100 / 7, seed=0)
    assert info["positives"] == 20 and info["negatives_available"] == 20 * 19
    assert info["negatives"] == round(20 * 100 / 7) == 286 and info["subsampled"]
    assert int(y.sum()) == 20 and int((y == 0).sum()) == 286 and X.shape == (306, len(FEATURES))
    assert info["ratio"] == "7.0:100"
    assert list(y[:20]) == [1] * 20  # positives first

    ev = random_events(3, n_days=1, per_day=20)
    X0, y0, _ = training_pairs(ev, negative_ratio=2.0, seed=0)
    X0b, _, _ = training_pairs(ev, negative_ratio=2.0, seed=0)
    X1, y1, i1 = training_pairs(ev, negative_ratio=2.0, seed=1)
    assert np.array_equal(X0, X0b) and i1["subsampled"]
    assert int((y1 == 0).sum()) == round(2.0 * int(y1.sum()))
    assert not np.array_equal(X0[y0 == 0], X1[y1 == 0])  # another seed, other negatives


def test_fewer_negatives_are_all_kept_and_the_real_ratio_reported():
    events = [
        event("a", "2019-01-01", "one", [], [src("https://x.example/a", "t", "b")]),
        event("b", "2019-01-01", "two", [], [src("https://x.example/b", "t", "b")]),
        event("c", "2019-01-01", "three", [], [src("https://x.example/c", "t", "b")]),
        event("d", "2019-01-02", "four", [], [src("https://x.example/d", "t", "b")]),  # no same-date event
    ]
    _, y, info = training_pairs(events, negative_ratio=100 / 7, seed=0)
    assert (info["positives"], info["negatives"], info["subsampled"]) == (4, 6, False)
    assert info["ratio"] == "66.7:100" and info["negatives_per_positive"] == 1.5
    assert list(y) == [1, 1, 1, 1, 0, 0, 0, 0, 0, 0]


def test_a_shared_source_is_not_a_negative():
    u = "https://shared.example/story"
    events = [
        # a cites u too (its text was not extracted: not a usable source, but cited all the same)
        event("a", "2019-01-01", "one", [], [src(u, "", ""), src("https://w.example", "w", "w")]),
        event(
            "b",
            "2019-01-01",
            "two",
            [],
            [src(u.replace("https", "HTTPS"), "t", "b"), src("https://v.example", "v", "v")],
        ),
    ]
    _, y, info = training_pairs(events, negative_ratio=100, seed=0)
    # a: v (b's u is one of a's citations: left out); b: w
    assert info["positives"] == 3 and info["negatives"] == 2 and info["negatives_shared_source"] == 1


def test_bad_event_inputs():
    good = HAND[0]
    for bad, msg in [
        ({**good, "date": "2019-13-01"}, "e1"),
        ({**good, "date": "01/02/2019"}, "YYYY-MM-DD"),
        ({**good, "date": None}, "e1"),
        ({**good, "summary": "  "}, "empty summary"),
    ]:
        with pytest.raises(ValueError, match=msg):
            training_pairs([bad, HAND[1]], negative_ratio=10, seed=0)
    with pytest.raises(ValueError, match="duplicate"):
        fit_vectorizer([good, good])
    with pytest.raises(ValueError, match="missing"):
        fit_vectorizer([{"event_id": "x", "summary": "s"}])
    # no sources / empty sources: counted, no pairs from them
    events = [
        *HAND,
        event("e3", "2019-01-01", "Quake in Chile", ["Chile"], []),
        event("e4", "2019-01-01", "Flood in Lyon", ["Lyon"], [src("https://c.example/3", "", "")]),
    ]
    _, y, info = training_pairs(events, negative_ratio=100, seed=0)
    assert info["events_without_sources"] == 2 and info["sources_empty"] == 1
    assert info["positives"] == 2 and info["negatives"] == 2
    # nothing to learn from: a clear error, not a scikit-learn traceback
    with pytest.raises(ValueError, match="positive and negative pairs"):
        train([HAND[0], {**HAND[1], "date": "2019-01-02"}], heldout_fraction=0)
    with pytest.raises(ValueError, match="heldout_fraction"):
        train(HAND, heldout_fraction=1.0)


def test_list_columns_read_from_parquet_are_numpy_arrays():
    as_arrays = [
        {**e, "entities": np.array(e["entities"], dtype=object), "sources": np.array(e["sources"], dtype=object)}
        for e in HAND
    ]
    X, y, _ = training_pairs(HAND, negative_ratio=10, seed=0)
    Xa, ya, _ = training_pairs(as_arrays, negative_ratio=10, seed=0)
    assert np.array_equal(X, Xa) and np.array_equal(y, ya) and X[0, 2:].tolist() == [1, 1]


def test_precision_recall_by_hand():
    y = [1, 1, 1, 0, 0]
    p = [0.95, 0.6, 0.2, 0.92, 0.1]
    r = precision_recall(y, p, 0.5)
    assert (r["tp"], r["fp"], r["fn"]) == (2, 1, 1) and r["precision"] == 2 / 3 and r["recall"] == 2 / 3
    r = precision_recall(y, p, 0.9)
    assert r["precision"] == 0.5 and r["recall"] == 1 / 3
    assert precision_recall(y, p, 0.99)["precision"] is None and precision_recall([0], [0.1], 0.5)["recall"] is None


def separable_events(n_days: int = 8, per_day: int = 5, noisy: bool = False) -> list[dict]:
    """Each event has its own words; source 0 repeats the summary, the (noisy) source 1 does not."""
    out = []
    for d in range(n_days):
        for k in range(per_day):
            eid = f"ev{d:02d}{k}"
            words = [f"{eid}w{m}" for m in range(6)]
            ent = f"Place{eid}"
            summary = " ".join(words) + f" in {ent}"
            sources = [src(f"https://s.example/{eid}/0", f"{words[0]} {words[1]} {ent}", f"{summary} {summary}")]
            if noisy:
                sources.append(src(f"https://s.example/{eid}/1", f"{eid}zz title", f"{eid}zz unrelated text"))
            out.append(event(eid, day(d), summary, [ent], sources))
    return out


def test_heldout_precision_recall_on_a_separable_case():
    events = separable_events()
    model, report = train(events, heldout_fraction=0.3, seed=5)
    held = [e for e in events if is_heldout(e["event_id"], 5, 0.3)]
    assert 0 < report["heldout_events"] == len(held) < len(events)
    assert report["train_events"] == len(events) - len(held)
    h = report["heldout"]
    assert h["pairs"]["positives"] == len(held) and h["pairs"]["negatives"] == len(held) * 4
    assert h["at_0.5"]["precision"] == 1.0 and h["at_0.5"]["recall"] == 1.0
    assert (h["at_0.5"]["tp"], h["at_0.5"]["fp"]) == (len(held), 0)
    json.dumps(report)  # the report is JSON
    # the returned model is the refit on all events: same coefficients as fitting all pairs directly
    from sklearn.linear_model import LogisticRegression

    X, y, _ = training_pairs(events, seed=5)
    lr = LogisticRegression(C=1.0, max_iter=1000).fit(X, y)
    assert np.allclose(model.coef, lr.coef_[0]) and model.intercept == pytest.approx(lr.intercept_[0])
    assert np.allclose(model.predict_proba(X), lr.predict_proba(X)[:, 1])


def test_heldout_recall_counts_missed_positives():
    # the second source of every event shares nothing with its summary: it looks exactly like a
    # negative, so held-out recall is 1/2 and precision stays 1
    model, report = train(separable_events(noisy=True), heldout_fraction=0.3, seed=5)
    h = report["heldout"]
    n = report["heldout_events"]
    assert (h["at_0.5"]["tp"], h["at_0.5"]["fp"], h["at_0.5"]["fn"]) == (n, 0, n)
    assert h["at_0.5"]["recall"] == 0.5 and h["at_0.5"]["precision"] == 1.0


def test_json_round_trip_gives_identical_probabilities():
    events = random_events(7)
    model, _ = train(events, heldout_fraction=0.25, seed=1)
    text = json.dumps(model.to_json())
    again = Classifier.from_json(json.loads(text))
    assert Classifier.from_json(text).coef == model.coef
    X, _, _ = training_pairs(events, seed=1)
    assert np.array_equal(model.predict_proba(X), again.predict_proba(X))
    cands = random_candidates(events, 8)
    for e in events[:5]:
        for c in cands[:10]:
            a = model.features(e["summary"], e["entities"], c["title"], c["text"])
            b = again.features(e["summary"], e["entities"], c["title"], c["text"])
            assert a == b
    assert assign(model, events, cands, threshold=0.0) == assign(again, events, cands, threshold=0.0)
    with pytest.raises(ValueError, match="not a WCEP classifier"):
        Classifier.from_json({**model.to_json(), "format": "other"})


# -------------------------------------------------------------------------------------- application


def hand_model(events, coef=(6.0, 6.0, 1.0, 1.0), intercept=-4.0) -> Classifier:
    return Classifier(coef=coef, intercept=intercept, vectorizer=fit_vectorizer(events))


def candidate(aid, when, title, text="", url=None):
    return {"article_id": aid, "url": url or f"https://cand.example/{aid}", "title": title, "text": text, "date": when}


def test_plus_minus_one_day_window():
    events = [*HAND, event("e9", day(0), "Storm hits Paris", ["Paris"], [])]
    cands = [candidate(f"c{o:+d}", day(o), "Storm hits Paris", "Storm hits Paris") for o in (-2, -1, 0, 1, 2)]
    tally = Tally()
    rows = assign(hand_model(events), events, cands, threshold=0.5, tally=tally)
    assert [r["article_id"] for r in rows] == ["c+0", "c+1", "c-1"]
    assert {r["event_id"] for r in rows} == {"e9"}
    assert tally.counts["candidates:outside_window"] == 2 and tally.counts["pairs_scored"] == 3
    rows = assign(hand_model(events), events, cands, threshold=0.5, window_days=2)
    assert len(rows) == 5


def test_each_article_goes_to_its_best_event_only():
    events = [
        event("b", day(0), "Storm hits Paris", ["Paris"], []),
        event("a", day(0), "Storm hits Paris", ["Paris"], []),  # identical to b: ties go to "a"
        event("c", day(1), "Flood hits Lyon", ["Lyon"], []),
        event("d", day(1), "Storm and flood in Lyon and Paris", ["Lyon", "Paris"], []),
    ]
    model = hand_model(events)
    cands = [
        candidate("x1", day(0), "Storm hits Paris", "The storm hits Paris."),
        candidate("x2", day(1), "Flood hits Lyon", "A flood hits Lyon."),
        candidate("x3", day(1), "Storm in Paris, flood in Lyon", "Storm hits Paris and a flood hits Lyon."),
        candidate("x4", day(0), "Election in Chile", "Chile votes."),
    ]
    tally = Tally()
    rows = assign(model, events, cands, threshold=0.5, tally=tally)
    got = {r["article_id"]: r for r in rows}
    assert len(rows) == len(got)  # each article at most once
    assert got["x1"]["event_id"] == "a" and "x4" not in got
    for aid, row in got.items():
        c = next(c for c in cands if c["article_id"] == aid)
        probs = {
            e["event_id"]: float(
                model.predict_proba([features(e["summary"], e["entities"], c["title"], c["text"], model.vectorizer)])[0]
            )
            for e in events
            if abs(date.fromisoformat(e["date"]) - date.fromisoformat(c["date"])) <= timedelta(days=1)
        }
        best = max(probs.values())
        assert row["probability"] == pytest.approx(best)
        assert row["event_id"] == min(e for e, p in probs.items() if p == pytest.approx(best, abs=1e-12))
    assert tally.counts["articles_multi_event"] >= 2  # x1 (a and b) and x3 pass for several events
    assert tally.counts["assigned"] == len(rows)
    assert rows == sorted(rows, key=lambda r: (r["event_id"], r["article_id"]))


def test_candidate_drops():
    events = HAND
    cands = [
        candidate("ok", "2019-01-01", "Storm hits Paris", "x"),
        candidate("bad", "2019-02-30", "Storm hits Paris", "x"),
        candidate("nodate", "", "Storm hits Paris", "x"),
        candidate("empty", "2019-01-01", " ", ""),
        candidate("cited", "2019-01-01", "Storm", "x", url="HTTPS://A.example:443/1#top"),
        candidate("ok", "2019-01-01", "Storm hits Paris", "again"),
    ]
    tally = Tally()
    rows = assign(hand_model(events), events, cands, threshold=0.5, tally=tally)
    assert [r["article_id"] for r in rows] == ["ok"]
    c = tally.counts
    assert c["candidates"] == 6
    assert c["dropped:candidate_bad_date"] == 2 and tally.locations["candidate_bad_date"] == ["bad", "nodate"]
    assert c["dropped:candidate_empty"] == 1 and c["dropped:already_source"] == 1
    assert c["dropped:candidate_duplicate"] == 1


def random_candidates(events, seed: int, n: int = 80) -> list[dict]:
    rng = random.Random(seed)
    pool = [w for e in events for w in e["summary"].split()] + ["Alpha Town", "Gamma River", "Zeta", "Paris"]
    out = []
    for k in range(n):
        out.append(
            candidate(
                f"c{k:03d}",
                day(rng.randrange(-2, 6)),
                " ".join(rng.choice(pool) for _ in range(rng.randint(0, 6))) or "x",
                " ".join(rng.choice(pool) for _ in range(rng.randint(0, 60))),
            )
        )
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bulk_scoring_equals_the_per_pair_path(seed):
    events = random_events(seed)
    model, _ = train(events, heldout_fraction=0, seed=seed)
    cands = random_candidates(events, seed + 100)
    scored = list(score_candidates(model, events, cands, window_days=1))
    seen = set()
    for s in scored:
        assert s.X.shape == (len(s.candidates), len(s.events), len(FEATURES))
        for r, ci in enumerate(s.candidates):
            c = cands[ci]
            for j, ei in enumerate(s.events):
                e = events[ei]
                f = features(e["summary"], e["entities"], c["title"], c["text"], model.vectorizer)
                assert np.allclose(s.X[r, j], f, rtol=0, atol=1e-12)
                p = model.predict_proba([f])[0]
                assert s.probability[r, j] == pytest.approx(p, abs=1e-12)
                seen.add((c["article_id"], e["event_id"]))
    # exactly the pairs within ±1 day
    expected = {
        (c["article_id"], e["event_id"])
        for c in cands
        for e in events
        if abs((date.fromisoformat(c["date"]) - date.fromisoformat(e["date"])).days) <= 1
    }
    assert seen == expected and len(seen) > 100
    assert sum((s.X[:, :, 2:] > 0).sum() for s in scored) > 0  # entity features exercised
