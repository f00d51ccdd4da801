"""bench/wcep.py's comparison logic on small hand-made inputs (nothing is timed): the BeautifulSoup
baseline (the WCEP authors' approach) agrees with the package's parser on rendered month pages of both
layouts, the event difference detector reports an altered, a missing and a reordered event, the per-pair
classifier loop agrees with the bulk path and its comparison flags a changed probability or assignment,
and the rouge-score reference greedy selects what ORACLE (MULTI) selects."""

from __future__ import annotations

import dataclasses

import pytest

pytest.importorskip("bs4")

from wikiref.examples import Tally  # noqa: E402
from wikiref.stages.wcep import baselines as bl  # noqa: E402
from wikiref.stages.wcep.classifier import Classifier, fit_vectorizer  # noqa: E402
from wikiref.stages.wcep.events import Event  # noqa: E402
from wikiref.stages.wcep.portal_html import parse_month_html  # noqa: E402
from wikiref.stages.wcep.portal_render import render_month_html  # noqa: E402


@pytest.fixture(scope="module")
def bench(load_bench):
    return load_bench("wcep")


def ev(day, category, stories, summary, entities=(), links=None, urls=("https://news.example/a",)):
    return Event(
        date=day,
        category=category,
        stories=tuple(stories),
        summary=summary,
        entities=tuple(entities),
        entity_links=tuple(links if links is not None else entities),
        urls=tuple(urls),
        origin="",
        location="",
    )


MONTH = [
    ev(
        "2019-01-01",
        "Armed conflicts and attacks",
        ["Syrian civil war", "Battle of Tall Hamra"],
        "The Syrian Army retakes Tall Hamra from rebels.",
        ["Syrian Army"],
        urls=("https://news.example/1", "https://wire.example/1?a=1&b=2"),
    ),
    ev(
        "2019-01-01",
        "Armed conflicts and attacks",
        ["Syrian civil war"],
        "Shelling is reported in Idlib Governorate.",
        ["Idlib Governorate"],
        urls=("https://news.example/2",),
    ),
    ev(
        "2019-01-01",
        "Armed conflicts and attacks",
        [],
        "A car bomb explodes in Kabul.",
        ["car bomb", "Kabul"],
        ["Car bomb", "Kabul"],
        urls=("https://news.example/3",),
    ),
    ev("2019-01-01", "Business and economy", ["Stock markets"], "Markets fall in Asia.", urls=("https://x.example/4",)),
    ev(
        "2019-01-02",
        "Disasters and accidents",
        [],
        "A magnitude 6.1 earthquake strikes Kaimana, Indonesia.",
        ["Kaimana", "Indonesia"],
        ["Kaimana Regency", "Indonesia"],
        urls=("https://news.example/5",),
    ),
    ev("2019-01-02", "Disasters and accidents", [], "A ferry sinks; no source is cited.", urls=()),  # dropped by both
    ev(
        "2019-01-03",
        "Sports",
        ["2019 AFC Asian Cup"],
        "Jordan beats Australia 1–0 & advances.",
        ["Jordan", "Australia"],
        ["Jordan national football team", "Australia national soccer team"],
        urls=("https://news.example/7",),
    ),
]


@pytest.mark.parametrize("layout", ["div", "table"])
@pytest.mark.parametrize("parser", ["html.parser", "lxml"])
def test_bs4_baseline_agrees_with_the_package_parser(bench, layout, parser):
    html = render_month_html(2019, 1, MONTH, layout)
    ours = parse_month_html(html, location="m", tally=Tally())
    theirs = bench.bs4_month_events(html, parser)
    assert len(ours) == len(MONTH) - 1  # the event without a source is dropped by both
    assert bench.diff_events(ours, theirs) == {"compared": 6, "differing": 0, "examples": []}
    assert bench.diff_events(ours, [e for e in MONTH if e.urls])["differing"] == 0  # round trip
    kabul = theirs[2]
    assert kabul["stories"] == [] and kabul["entities"] == ["car bomb", "Kabul"]
    assert theirs[0]["stories"] == ["Syrian civil war", "Battle of Tall Hamra"]
    assert theirs[0]["urls"] == ["https://news.example/1", "https://wire.example/1?a=1&b=2"]


def test_difference_detector_reports_altered_missing_and_reordered_events(bench):
    html = render_month_html(2019, 1, MONTH, "div")
    ours = parse_month_html(html, location="m", tally=Tally())
    theirs = bench.bs4_month_events(html)
    theirs[3]["summary"] = "Markets rise in Asia."
    d = bench.diff_events(ours, theirs)
    assert d["differing"] == 1
    assert d["examples"] == [
        {"index": 3, "field": "summary", "ours": "Markets fall in Asia.", "theirs": "Markets rise in Asia."}
    ]
    altered = [dataclasses.replace(ours[0], urls=ours[0].urls[:1])] + ours[1:]
    assert bench.diff_events(ours, altered)["examples"][0]["field"] == "urls"
    assert bench.diff_events(ours, ours[1:])["differing"] >= 1  # one missing: shifted and counted
    missing_last = bench.diff_events(ours, ours[:-1])
    assert missing_last["differing"] == 1 and missing_last["examples"][-1]["field"] == "count"
    swapped = bench.diff_events(ours, [ours[1], ours[0], *ours[2:]])
    assert swapped["differing"] == 2  # order is part of the result


def test_rendered_benchmark_pages_round_trip(bench):
    pool = [e for e in MONTH if e.urls]
    pages = bench.wikitext_pages(pool, per_day=3, n_events=6)
    assert len(pages) == 2 and all(len(evs) == 3 for _, _, evs in pages)
    assert len({e.event_id for _, _, evs in pages for e in evs}) == 6
    months = bench.month_pages(pool, per_day=2, n_events=10, days=5, layout="table")
    assert len(months) == 1 and len(months[0][1]) == 10
    got = parse_month_html(months[0][0], location="m", tally=Tally())
    assert bench.diff_events(got, months[0][1])["differing"] == 0


EVENTS = [
    {
        "event_id": "e1",
        "date": "2019-01-01",
        "summary": "Storm hits Paris",
        "entities": ["Paris", "France"],
        "sources": [{"url": "https://a.example/1", "title": "Storm in Paris", "text": "A storm hit Paris today."}],
    },
    {
        "event_id": "e2",
        "date": "2019-01-02",
        "summary": "Election in Chile",
        "entities": ["Chile"],
        "sources": [{"url": "https://b.example/2", "title": "Chile votes", "text": "Chile holds an election."}],
    },
]
CANDIDATES = [
    {"article_id": "c1", "url": "https://c.example/1", "title": "Paris storm", "text": "Storm damage in Paris, France.",
     "date": "2019-01-01"},
    {"article_id": "c2", "url": "https://c.example/2", "title": "Chile election", "text": "Chile votes.",
     "date": "2019-01-02"},
    {"article_id": "c3", "url": "https://a.example/1", "title": "Storm", "text": "cited already", "date": "2019-01-01"},
    {"article_id": "c4", "url": "https://c.example/4", "title": "Far away", "text": "Paris", "date": "2019-03-01"},
    {"article_id": "c1", "url": "https://c.example/5", "title": "dup", "text": "dup", "date": "2019-01-01"},
]  # fmt: skip


def test_per_pair_loop_agrees_with_assign_and_the_comparison_flags_changes(bench):
    from wikiref.stages.wcep.classifier import assign

    model = Classifier(coef=(4.0, 3.0, 1.0, 0.5), intercept=-2.0, vectorizer=fit_vectorizer(EVENTS))
    loop = bench.per_pair(model, EVENTS, CANDIDATES, window_days=1)
    assert {a for a, _ in loop} == {"c1", "c2"}  # cited URL, outside the window, repeated id: skipped
    assert len(loop) == 4  # c1 and c2 each within a day of both events
    bulk = bench.bulk_probs(model, EVENTS, CANDIDATES, 1)
    rows = assign(model, EVENTS, CANDIDATES, window_days=1, threshold=0.5)
    loop_rows = bench.assignments_from(loop, 0.5)
    cmp = bench.compare_scores(bulk, loop, rows, loop_rows)
    assert cmp["pairs_one_side_only"] == 0 and cmp["probabilities_beyond_1e-9"] == 0
    assert cmp["max_abs_probability_diff"] <= 1e-12
    assert cmp["assignments_differing"] == 0 and cmp["assignments_bulk"] == len(rows) >= 1

    changed = dict(loop)
    key = next(iter(changed))
    changed[key] += 1e-6
    assert bench.compare_scores(bulk, changed, rows, loop_rows)["probabilities_beyond_1e-9"] == 1
    extra = {**loop, ("c9", "e1"): 0.5}
    assert bench.compare_scores(bulk, extra, rows, loop_rows)["pairs_one_side_only"] == 1
    moved = [dict(r, event_id="e2" if r["event_id"] == "e1" else "e1") for r in loop_rows]
    assert bench.compare_scores(bulk, loop, rows, moved)["assignments_differing"] >= 1


def test_assignments_from_takes_the_best_event_and_breaks_ties_by_id(bench):
    probs = {("a", "e2"): 0.95, ("a", "e1"): 0.95, ("b", "e1"): 0.91, ("b", "e3"): 0.97, ("c", "e1"): 0.5}
    assert bench.assignments_from(probs, 0.9) == [
        {"article_id": "a", "event_id": "e1", "probability": 0.95},
        {"article_id": "b", "event_id": "e3", "probability": 0.97},
    ]


def test_reference_greedy_selects_what_oracle_multi_selects(bench):
    from rouge_score import rouge_scorer

    cluster = bl.Cluster(
        "c",
        reference=["The storm hit Paris on Monday.", "Thousands lost power."],
        articles=[
            ["A storm hit Paris on Monday night.", "Officials said thousands lost power.", "Trains ran late."],
            ["Trains ran late.", "The mayor spoke on Tuesday.", "Power was restored to thousands."],
        ],
    )
    scorer = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True)
    sents = bl.candidate_sentences(cluster)
    assert len(sents) == 5  # "Trains ran late." once
    ref = [sents[i] for i in bench.reference_greedy(sents, " ".join(cluster.reference), scorer)]
    assert ref == bl.summarize("oracle_multi", cluster) and len(ref) >= 2


def test_standin_candidates_are_compressed_and_copied(bench):
    records = [dict(EVENTS[0], date="2019-01-01"), dict(EVENTS[1], date="2019-01-04")]
    cands = [dict(CANDIDATES[0], date="2018-12-31"), dict(CANDIDATES[1], date="2019-01-05")]
    evs, cs = bench.compress_days(records, cands, 3)
    assert [e["date"] for e in evs] == ["2019-01-01", "2019-01-02"]
    assert [c["date"] for c in cs] == ["2018-12-31", "2019-01-02"]  # floor division: the day before stays before
    copies = bench.copy_candidates(cs, 3)
    assert len(copies) == 6 and len({c["article_id"] for c in copies}) == 6 and len({c["url"] for c in copies}) == 6
