"""wikiref.rouge.oracle: the fast greedy selects exactly what the straightforward rouge_score greedy selects."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rouge_score import rouge_scorer

from wikiref.rouge import fast
from wikiref.rouge.oracle import (
    METRICS,
    greedy_oracle,
    greedy_oracle_reference,
    labels_from_indices,
    sentence_scores,
)

WORDS = ["the", "city", "cities", "new", "york", "run", "running", "ran", "in", "1999", "was", "a", "b", "c", ",", "."]
sentence = st.lists(st.sampled_from(WORDS), min_size=0, max_size=12).map(" ".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(sentence, min_size=0, max_size=9),
    sentence,
    st.sampled_from(METRICS),
    st.one_of(st.none(), st.integers(0, 4)),
)
def test_greedy_equals_rouge_score_greedy_random(sentences, ref, metric, max_sentences):
    """Random small documents with many duplicate words and sentences (lots of ties)."""
    got = greedy_oracle(sentences, ref, metric=metric, max_sentences=max_sentences)
    assert got == greedy_oracle_reference(sentences, ref, metric=metric, max_sentences=max_sentences)


@pytest.mark.parametrize("metric", ["rouge2_f1", "rouge1_f1", "rougeL_f1", "rouge2_recall", "rouge1_precision"])
def test_greedy_equals_rouge_score_greedy_real(cloze_examples, metric):
    scorer = rouge_scorer.RougeScorer([metric.split("_")[0]], use_stemmer=True)
    for ex in cloze_examples:
        kw = dict(metric=metric, max_sentences=5 if metric == "rouge2_recall" else None)
        fast_sel = greedy_oracle(ex["document"], ex["cloze"], **kw)
        assert fast_sel == greedy_oracle_reference(ex["document"], ex["cloze"], scorer=scorer, **kw)


def test_real_labels_are_sensible(cloze_examples):
    """On real data the ROUGE-2 F1 oracle overlaps the dataset's own oracle labels."""
    hits = 0
    for ex in cloze_examples:
        idx, score = greedy_oracle(ex["document"], ex["cloze"])
        assert idx == sorted(idx) and 0.0 <= score <= 1.0
        hits += bool(set(idx) & set(ex["labels"]))
    assert hits >= len(cloze_examples) * 0.6


def test_ties_choose_lowest_index_and_stop_without_strict_improvement():
    sents = ["the cat sat", "dogs bark", "the cat sat", "the cat sat on the mat"]
    ref = "the cat sat on the mat"
    assert greedy_oracle(sents, ref, metric="rouge2_f1") == ([3], 1.0)
    # duplicate sentences: the first copy wins, the second adds nothing
    idx, _ = greedy_oracle(["the cat sat", "the cat sat", "dogs bark"], "the cat sat on my mat", metric="rouge1_recall")
    assert idx == [0]


def test_max_sentences_and_empty_inputs():
    sents = ["alpha beta", "gamma delta", "epsilon zeta"]
    ref = "alpha beta gamma delta epsilon zeta"
    assert greedy_oracle(sents, ref, metric="rouge1_recall") == ([0, 1, 2], 1.0)
    idx, score = greedy_oracle(sents, ref, metric="rouge1_recall", max_sentences=2)
    assert idx == [0, 1] and score == pytest.approx(4 / 6)
    assert greedy_oracle(sents, ref, max_sentences=0) == ([], 0.0)
    assert greedy_oracle([], ref) == ([], 0.0)
    assert greedy_oracle(sents, "") == ([], 0.0)
    assert greedy_oracle(["", "!!!"], ref) == ([], 0.0)
    with pytest.raises(ValueError):
        greedy_oracle(sents, ref, metric="rouge4_f1")


def test_boundary_bigram_counts_like_the_joined_string():
    # "york" ends sentence 0 and "city" starts sentence 2: joined, they form a reference bigram
    # that neither sentence has alone.
    sents = ["new york", "nothing here", "city hall"]
    ref = "new york city"
    assert greedy_oracle(sents, ref, metric="rouge2_recall") == greedy_oracle_reference(
        sents, ref, metric="rouge2_recall"
    )
    assert greedy_oracle(sents, ref, metric="rouge2_recall") == ([0, 2], 1.0)


def test_sentence_scores_equal_rouge_score(cloze_examples):
    scorer = rouge_scorer.RougeScorer(["rouge2", "rougeL"], use_stemmer=True)
    for ex in cloze_examples[:10]:
        for metric, rtype, field in [("rouge2_f1", "rouge2", "fmeasure"), ("rougeL_recall", "rougeL", "recall")]:
            expected = [getattr(scorer.score(ex["cloze"], s)[rtype], field) for s in ex["document"]]
            assert sentence_scores(ex["document"], ex["cloze"], metric=metric) == expected


def test_multi_reference_pooled():
    refs = ["the city was new", "new york city grew"]
    sents = ["new york city", "the city was", "unrelated words"]
    scores = sentence_scores(sents, refs, metric="rouge2_recall")
    # pooled bigram recall: hits over both references / total reference bigrams (3 + 3)
    assert scores == [pytest.approx(2 / 6), pytest.approx(2 / 6), 0.0]
    idx, score = greedy_oracle(sents, refs, metric="rouge2_recall")
    assert score == pytest.approx(fast.SentenceSetRouge(sents, refs, "rouge2").score(idx).recall)
    assert idx == [0, 1]


def test_labels_from_indices():
    assert labels_from_indices(4, [1, 3]) == [0, 1, 0, 1]
    assert labels_from_indices(0, []) == []


def test_oracle_cli_writes_the_contract_columns(tmp_path, cloze_examples):
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    from wikiref.cli import main as cli_main
    from wikiref.schemas import ORACLE

    split_dir = tmp_path / "split"
    split_dir.mkdir()
    for k, name in enumerate(["train", "dev", "test"]):
        rows = [
            {
                "id": f"{name}{i:02d}",
                "query": ex["topics"],
                "doc_sentences": ex["document"],
                "statement": ex["cloze"],
                "article": ex["topics"][0],
            }
            for i, ex in enumerate(cloze_examples[k::3])
        ]
        pq.write_table(pa.Table.from_pylist(rows[::-1]), split_dir / f"{name}.parquet")
    pj = json.dumps({"oracle": {"label_metric": "rouge2_f1", "score_metric": "rouge2_f1"}})
    outs = {}
    for threads in (1, 2):
        out = tmp_path / f"oracle{threads}"
        assert (
            cli_main(
                [
                    "oracle",
                    "--params-json",
                    pj,
                    "--split-dir",
                    str(split_dir),
                    "--out-dir",
                    str(out),
                    "--metrics",
                    str(tmp_path / f"m{threads}.json"),
                    "--threads",
                    str(threads),
                    "--batch-rows",
                    "20000" if threads == 1 else "3",
                ]
            )
            == 0
        )
        outs[threads] = out
    for name in ("train", "dev", "test"):
        a = (outs[1] / f"{name}.parquet").read_bytes()
        assert a == (outs[2] / f"{name}.parquet").read_bytes()
        t = pq.read_table(outs[1] / f"{name}.parquet")
        assert t.schema.equals(ORACLE)
        assert t.schema.field("oracle_labels").type == pa.list_(pa.int8())
        assert t.schema.field("oracle_scores").type == pa.list_(pa.float64())
        ids = t.column("id").to_pylist()
        assert ids == sorted(ids)
        for r in t.to_pylist():
            assert len(r["oracle_labels"]) == len(r["oracle_scores"]) == len(r["doc_sentences"])
            assert [i for i, v in enumerate(r["oracle_labels"]) if v] == r["oracle_indices"]
            assert (r["oracle_indices"], r["oracle_score"]) == greedy_oracle(r["doc_sentences"], r["statement"])
            assert r["oracle_scores"] == sentence_scores(r["doc_sentences"], r["statement"], metric="rouge2_f1")
    m = json.loads((tmp_path / "m1.json").read_text())
    assert sum(v["examples"] for v in m["splits"].values()) == len(cloze_examples)


def test_prebuilt_references_are_reused():
    refs = fast.References(["the city was new", "new york city grew"])
    sents = ["new york city", "the city was", "unrelated words"]
    assert sentence_scores(sents, refs, metric="rouge2_recall") == sentence_scores(
        sents, ["the city was new", "new york city grew"], metric="rouge2_recall"
    )
    assert greedy_oracle(sents, refs, metric="rouge2_recall") == greedy_oracle(
        sents, ["the city was new", "new york city grew"], metric="rouge2_recall"
    )


def test_oracle_records_parallel_equals_serial(cloze_examples):
    from wikiref.supervised.labels import oracle_records

    docs = [ex["document"] for ex in cloze_examples]
    stmts = [ex["cloze"] for ex in cloze_examples]
    serial = oracle_records(docs, stmts)
    assert oracle_records(docs, stmts, threads=2, shard_size=4) == serial
    assert [r["oracle_indices"] for r in serial] == [greedy_oracle(d, s)[0] for d, s in zip(docs, stmts)]


def test_run_entry_point_and_bad_input(tmp_path, cloze_examples, capsys):
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    from wikiref.cli import main as cli_main
    from wikiref.schemas import ORACLE, SchemaError
    from wikiref.stages import oracle

    params = {"oracle": {"label_metric": "rouge2_f1", "score_metric": "rouge2_f1"}}
    rows = [
        {"id": f"e{i:02d}", "query": ex["topics"], "doc_sentences": ex["document"], "statement": ex["cloze"]}
        for i, ex in enumerate(cloze_examples[:6])
    ]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "dev.parquet")
    pq.write_table(
        pa.Table.from_pylist(rows[:0], schema=pa.schema([(f.name, f.type) for f in ORACLE][:4])),
        tmp_path / "test.parquet",
    )
    outputs = {
        "dev": tmp_path / "out" / "dev.parquet",
        "test": tmp_path / "out" / "test.parquet",
        "metrics": tmp_path / "m.json",
    }
    metrics = oracle.run(
        params, {"dev": tmp_path / "dev.parquet", "test": tmp_path / "test.parquet"}, outputs, batch_rows=4
    )
    assert metrics == json.loads((tmp_path / "m.json").read_text())
    assert metrics["splits"]["dev"]["examples"] == 6 and metrics["splits"]["test"]["examples"] == 0
    dev = pq.read_table(outputs["dev"])
    assert dev.schema.equals(ORACLE) and dev.column("id").to_pylist() == [r["id"] for r in rows]
    empty = pq.read_table(outputs["test"])
    assert empty.num_rows == 0 and empty.schema.equals(ORACLE)  # an empty split still has the contract's columns
    # a split table without doc_sentences: a clear error, not a traceback
    pq.write_table(
        pa.Table.from_pylist([{k: v for k, v in r.items() if k != "doc_sentences"} for r in rows]),
        tmp_path / "dev.parquet",
    )
    with pytest.raises(SchemaError, match="doc_sentences"):
        oracle.run(
            params, {"dev": tmp_path / "dev.parquet"}, {"dev": tmp_path / "x.parquet", "metrics": tmp_path / "x"}
        )
    assert (
        cli_main(
            [
                "oracle",
                "--params-json",
                json.dumps(params),
                "--split-dir",
                str(tmp_path),
                "--splits",
                "dev",
                "--out-dir",
                str(tmp_path / "out2"),
                "--metrics",
                str(tmp_path / "m2.json"),
            ]
        )
        == 1
    )
    assert "missing columns ['doc_sentences']" in capsys.readouterr().err
    assert not (tmp_path / "out2").exists()
