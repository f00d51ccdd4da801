"""DUC baselines (LEAD, QUERY-SIM, ORACLE, the LEAD-EACH / QUERY-SIM (no redundancy rule) variants) and their
official-ROUGE evaluation."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from wikiref import config
from wikiref.extractive import baselines as db
from wikiref.rouge import official, parity

REFS = [
    ["Casinos brought jobs and money to Indian tribes.", "Gambling also caused social problems."],
    ["Tribes used casino income for schools and health care."],
]


def topic(num="D0601A", year=2006):
    return {
        "year": year,
        "topic": num,
        "query": ["Indian tribes and casinos", "What are the effects of casinos on tribes?"],
        "references": REFS,
        "reference_ids": ["A", "B"],
        "documents": [
            {
                "doc_id": "APW19990101.0001",
                "doc_date": "19990101",
                "sentences": [
                    "The weather was cold in January.",
                    "Casinos brought jobs to Indian tribes.",
                    "Schools were built with casino income.",
                ],
            },
            {
                "doc_id": "NYT19990707.0002",
                "doc_date": "19990707",
                "sentences": [
                    "A new bridge opened downtown on Monday morning.",
                    "Traffic was heavy.",
                    "Officials praised the design of the bridge.",
                ],
            },
        ],
    }


def test_lead_takes_the_most_recent_document_and_fills_the_budget():
    t = topic()
    assert db.lead(t["documents"]) == t["documents"][1]["sentences"]
    # the sentence crossing the budget is cut to fill it exactly (NIST: "the first 250 words")
    assert db.lead(t["documents"], max_words=10) == ["A new bridge opened downtown on Monday morning.", "Traffic was"]
    assert db.lead([]) == []


def test_query_sim_ranks_by_tfidf_cosine_to_the_query():
    t = topic()
    sents = [s for d in t["documents"] for s in d["sentences"]]
    scores = db.query_sim_scores(t["query"], sents)
    assert max(range(len(sents)), key=scores.__getitem__) == 1  # shares "casinos", "indian", "tribes"
    assert scores[4] == 0.0  # "Traffic was heavy." shares nothing
    summary = db.query_sim(t["query"], t["documents"], max_words=12)
    assert summary[0] == "Casinos brought jobs to Indian tribes." and sum(len(s.split()) for s in summary) <= 12
    assert db.query_sim_scores(["x"], ["the", "a"]) == [0.0, 0.0]  # only stop words: no crash


def test_lead_each_takes_each_documents_first_sentence_in_turn():
    docs = [
        {"doc_id": "A", "doc_date": "19990101", "sentences": ["One two three.", "A2 a2.", "A3."]},
        {"doc_id": "B", "doc_date": "19990202", "sentences": ["", "B2 b2 b2."]},  # first sentence empty
        {"doc_id": "C", "doc_date": "19990303", "sentences": ["Four five.", "", "C3 c3."]},
    ]
    # first sentences in cluster order, then the second ones, then the third ones; empty sentences passed over
    assert db.lead_each(docs) == ["One two three.", "Four five.", "A2 a2.", "B2 b2 b2.", "A3.", "C3 c3."]
    # not the most recent document's sentences (LEAD), and the sentence crossing the budget is cut to fill it
    assert db.lead(docs, max_words=4) == ["Four five.", "C3 c3."]
    assert db.lead_each(docs, max_words=4) == ["One two three.", "Four"]
    assert db.lead_each(docs, max_words=5) == ["One two three.", "Four five."]
    assert db.lead_each([]) == [] and db.lead_each([{"doc_id": "X", "doc_date": "", "sentences": []}]) == []
    t = topic()  # 6 + 8 words of first sentences, then the second sentences in turn
    assert db.lead_each(t["documents"], max_words=16) == [
        "The weather was cold in January.",
        "A new bridge opened downtown on Monday morning.",
        "Casinos brought",
    ]


def test_query_sim_plain_has_no_redundancy_rule():
    docs = [
        {"doc_id": "A", "doc_date": "1", "sentences": ["Casinos helped Indian tribes.", "The weather was cold."]},
        {"doc_id": "B", "doc_date": "2", "sentences": ["Casinos helped Indian tribes a lot.", "Tribes built casinos."]},
    ]
    query = ["Indian tribes and casinos"]
    sents = [s for d in docs for s in d["sentences"]]
    scores = db.query_sim_scores(query, sents)
    assert scores[0] > scores[2] > 0 and scores[3] > 0 and scores[1] == 0.0
    # ours skips the near-duplicate (3 of its 5 bigrams are already in the summary); the plain variant keeps it
    ours = db.query_sim(query, docs, max_words=14)
    assert "Casinos helped Indian tribes a lot." not in ours and ours[0] == "Casinos helped Indian tribes."
    plain = db.query_sim_plain(query, docs, max_words=14)
    assert plain[:2] == ["Casinos helped Indian tribes.", "Casinos helped Indian tribes a lot."]
    # rank order, the crossing sentence cut to fill the budget exactly (ours skips what does not fit)
    assert sum(len(s.split()) for s in plain) == 14 and plain[2] == " ".join(sents[3].split()[:4])
    assert db.query_sim_plain(query, docs, max_words=500) == [sents[i] for i in (0, 2, 3, 1)]


def test_summarize_dispatches_every_system():
    t = topic()
    assert set(db.SYSTEMS) == {"lead", "query_sim", "oracle", "lead_each", "query_sim_plain"}
    assert set(db.VARIANTS) <= set(db.SYSTEMS) and set(db.DESCRIPTIONS) == set(db.SYSTEMS)
    assert db.summarize("lead_each", t, max_words=8) == db.lead_each(t["documents"], max_words=8)
    assert db.summarize("query_sim_plain", t, max_words=8) == db.query_sim_plain(
        t["query"], t["documents"], max_words=8
    )
    assert db.summarize("lead", t) == db.lead(t["documents"])
    with pytest.raises(ValueError, match="unknown baseline"):
        db.summarize("lead_all", t)


def test_oracle_is_greedy_on_pooled_rouge2_recall_within_the_budget():
    from wikiref.rouge.fast import SentenceSetRouge

    t = topic()
    refs = ["\n".join(r) for r in REFS]
    summary = db.oracle(t["documents"], refs, max_words=14)
    assert summary[0] == "Casinos brought jobs to Indian tribes."
    assert sum(len(s.split()) for s in summary) <= 14
    sents = [s for d in t["documents"] for s in d["sentences"]]
    rouge = SentenceSetRouge(sents, refs, "rouge2")
    chosen = rouge.score([sents.index(s) for s in summary]).recall
    assert chosen >= max(rouge.score([i]).recall for i in range(len(sents)))
    assert db.oracle(t["documents"], refs, max_words=3) == []  # nothing fits


def test_evaluation_is_the_official_score_per_topic():
    topics = [topic("D0601A"), topic("D0602B")]
    summaries = {"D0601A": ["Casinos brought jobs to Indian tribes."], "D0602B": ["Traffic was heavy."]}
    res = db.evaluate(summaries, topics, official.DUC_FLAGS)
    for t in topics:
        one = official.score(summaries[t["topic"]], t["references"], flags=official.DUC_FLAGS)
        assert res["ROUGE-2"]["per_topic_R"][t["topic"]] == one["ROUGE-2"]["R"]
    assert res["ROUGE-1"]["topics"] == 2 and res["ROUGE-SU4"]["R"] > 0


def _write_year(path: Path, year: int, topics: list[dict]) -> None:
    rows = []
    for t in topics:
        for pos, d in enumerate(t["documents"]):
            rows.append(
                {
                    "id": f"{year}/{t['topic']}/{d['doc_id']}",
                    "year": year,
                    "topic": t["topic"],
                    "query": t["query"],
                    "title": t["query"][0],
                    "narrative": t["query"][1],
                    "doc_id": d["doc_id"],
                    "doc_date": d["doc_date"],
                    "doc_position": pos,
                    "doc_headline": "",
                    "doc_sentences": d["sentences"],
                    "sentence_targets": [0.0] * len(d["sentences"]),
                    "references": ["\n".join(r) for r in t["references"]],
                    "reference_ids": t["reference_ids"],
                }
            )
    pd.DataFrame(rows).to_parquet(path)


@pytest.fixture()
def year_files(tmp_path):
    paths = []
    for y in (2005, 2006, 2007):
        p = tmp_path / f"{y}.parquet"
        _write_year(p, y, [topic(f"D{y % 100:02d}01A", y), topic(f"D{y % 100:02d}02A", y)])
        paths.append(p)
    return paths


def test_cli_writes_metrics_and_table_and_matches_the_perl_script(repo, tmp_path, year_files):
    from wikiref.cli import main
    from wikiref.registry import job_keys

    params = config.load_params(repo / "params.yaml")
    pj = config.job_params(params, *job_keys("duc", "baselines"))
    metrics, table, rouge_dir = tmp_path / "m.json", tmp_path / "t6", tmp_path / "rouge"
    assert (
        main(
            [
                "duc",
                "baselines",
                "--params-json",
                pj,
                "--inputs",
                *map(str, year_files),
                "--metrics",
                str(metrics),
                "--table",
                str(table),
                "--rouge-dir",
                str(rouge_dir),
            ]
        )
        == 0
    )
    m = json.loads(metrics.read_text())
    df = pd.read_csv(str(table) + ".csv")
    assert list(df.System) == ["LEAD", "QUERY-SIM", "ORACLE", "LEAD-EACH", "QUERY-SIM (no redundancy rule)"]
    assert list(df.columns[1:4]) == ["2005 R-1", "2005 R-2", "2005 R-SU4"]
    assert df.loc[2, "2006 R-2"] == round(100 * m["systems"]["oracle"]["2006"]["ROUGE-2"]["R"], 2)
    assert df.loc[3, "2007 R-1"] == round(100 * m["systems"]["lead_each"]["2007"]["ROUGE-1"]["R"], 2)
    md = Path(str(table) + ".md").read_text()
    assert "STAND-IN" in md  # the sample profile's caption
    assert db.VARIANT_NOTE in md and db.DESCRIPTIONS["lead_each"] in md  # the variants are labelled as such
    # the variants differ from ours on these clusters: first sentences of each document vs the most recent one
    assert (
        m["systems"]["lead_each"]["2007"]["ROUGE-1"]["per_topic_R"]
        != m["systems"]["lead"]["2007"]["ROUGE-1"]["per_topic_R"]
    )
    # the summaries written for the real script score the same there
    reason = parity.perl_rouge_available()
    if reason:
        pytest.skip(f"ROUGE-1.5.5.pl cannot run here: {reason}")
    release = parity.prepare_perl_rouge(tmp_path / "perl")
    for system in m["systems"]:
        out = parity.parse_report(
            parity.run_perl_rouge(release, rouge_dir / system / "2007" / "rouge.xml", official.DUC_FLAGS + " -a -d")
        )
        for measure in ("ROUGE-1", "ROUGE-2", "ROUGE-SU4"):
            ours = m["systems"][system]["2007"][measure]
            assert float(out["avg"][("1", measure, "R")][0]) == ours["R"]
            for tid, r in ours["per_topic_R"].items():
                assert float(out["eval"][("1", measure, f"{tid}.1")][0]) == r


def test_baselines_entry_point_and_a_year_without_topics(repo, tmp_path, year_files, capsys):
    from wikiref.cli import main
    from wikiref.registry import job_keys
    from wikiref.stages.duc import stage

    params = config.load_params(repo / "params.yaml")
    params["duc"]["baselines"] = ["lead"]
    job = json.loads(config.job_params(params, *job_keys("duc", "baselines")))
    outputs = {"metrics": tmp_path / "m.json", "table": tmp_path / "t6"}
    metrics = stage.baselines(job, {"years": year_files}, outputs)
    assert metrics == json.loads((tmp_path / "m.json").read_text())
    assert list(metrics["systems"]) == ["lead"] and set(metrics["systems"]["lead"]) == {"2005", "2006", "2007"}
    assert list(pd.read_csv(tmp_path / "t6.csv").System) == ["LEAD"]
    assert db.VARIANT_NOTE not in (tmp_path / "t6.md").read_text()  # no variant run, no variant note
    assert not (tmp_path / "rouge").exists()  # rouge_dir is optional
    empty = tmp_path / "2008.parquet"
    pd.read_parquet(year_files[0]).iloc[:0].to_parquet(empty)
    with pytest.raises(stage.DucError, match="has no topics"):
        stage.baselines(job, {"years": [empty]}, outputs)
    assert (
        main(
            [
                "duc",
                "baselines",
                "--params-json",
                json.dumps(job),
                "--inputs",
                str(empty),
                "--metrics",
                str(tmp_path / "m2.json"),
                "--table",
                str(tmp_path / "t62"),
            ]
        )
        == 1
    )
    assert "has no topics" in capsys.readouterr().err and not (tmp_path / "m2.json").exists()


def test_query_sim_takes_the_mmr_weight_the_other_years_score_best_with(repo, tmp_path, year_files):
    from wikiref.registry import job_keys
    from wikiref.stages.duc import stage

    params = config.load_params(repo / "params.yaml")
    params["duc"]["baselines"], params["duc"]["select"]["mmr"] = ["lead", "query_sim"], [0.0, 1.0]
    job = json.loads(config.job_params(params, *job_keys("duc", "baselines")))
    metrics = stage.baselines(job, {"years": year_files}, {"metrics": tmp_path / "m.json", "table": tmp_path / "t6"})
    per_year = {
        y: db.rows_to_topics(pd.read_parquet(p).to_dict("records")) for y, p in zip((2005, 2006, 2007), year_files)
    }
    for year, topics in per_year.items():
        chosen = metrics["systems"]["query_sim"][str(year)]["select"]
        others = [t for y, ts in per_year.items() if y != year for t in ts]
        values = {}
        for m in (1.0, 0.0):  # what the other years' summaries score with each weight
            rule = {**params["duc"]["select"], "mmr": m}
            summaries = {t["topic"]: db.summarize("query_sim", t, max_words=250, **rule) for t in others}
            values[f"{m:g}"] = round(
                100 * db.evaluate(summaries, others, params["duc"]["rouge_flags"])["ROUGE-2"]["R"], 4
            )
        assert chosen["held_out"] == values and chosen["mmr"] == max((1.0, 0.0), key=lambda m: (values[f"{m:g}"], m))
        rule = {**params["duc"]["select"], "mmr": chosen["mmr"]}
        own = db.evaluate(
            {t["topic"]: db.summarize("query_sim", t, max_words=250, **rule) for t in topics},
            topics,
            params["duc"]["rouge_flags"],
        )
        assert metrics["systems"]["query_sim"][str(year)]["ROUGE-2"]["R"] == own["ROUGE-2"]["R"]
    assert "select" not in metrics["systems"]["lead"]["2005"]
    with pytest.raises(stage.DucError, match="needs another DUC year"):
        stage.baselines(job, {"years": year_files[:1]}, {"metrics": tmp_path / "m1.json", "table": tmp_path / "t1"})


def test_rows_round_trip(tmp_path, year_files):
    topics = db.rows_to_topics(pd.read_parquet(year_files[0]).to_dict("records"))
    assert [t["topic"] for t in topics] == ["D0501A", "D0502A"]
    assert topics[0]["references"] == REFS
    assert [d["doc_id"] for d in topics[0]["documents"]] == ["APW19990101.0001", "NYT19990707.0002"]
