"""QmdsIr from MS MARCO QnA: the streaming reader (v2.1 column JSON, v1.1 JSON lines, gzip, bad input),
the filters of the builder (one record per filter), the source-URL omission, test carving and shards,
the STAND-IN MS MARCO files (deterministic, every filter exercised) and the part + merge jobs."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from wikiref import config, examples
from wikiref import text as wtext
from wikiref.layout import SPLITS
from wikiref.stages.qmdsir import build, reader, stage
from wikiref.stages.qmdsir import standin as qs
from wikiref.stages.qmdsir.reader import QmdsIrError

QMDSIR = {
    "standin": False,
    "dir": "resources/qmdsir-standin",
    "files": {"train": ["train_v2.1.json"], "dev": ["dev_v1.1.jsonl"], "test": []},
    "test_from_dev": 0.0,
    "shards": 1,
    "min_summary_sentences": 2,
    "min_documents": 3,
    "min_coverage_recall": 0.8,
    "standin_queries": 0,
}
STANDIN_FILES = {"train": ["train_v2.1.json"], "dev": ["dev_v2.1.json"]}  # the files a stand-in folder holds

S1 = "The river Elbe flows north through the old city of Dresden."
S2 = "Its bridges were rebuilt after the great flood of 2002."
S3 = "Tourists visit the baroque churches along the banks every summer."
S4 = "The local council plans a new railway station near the harbour."
S5 = "Farmers sell cheese and bread at the Saturday market."
U1 = "Quantum chromodynamics describes the strong interaction between quarks and gluons."
SOURCE_URL = "http://a.example/page"


@pytest.fixture(scope="module")
def base_params(repo) -> dict:
    return config.load_params(repo / "params.yaml", [repo / "config/tiny.yaml"])


def _params(base: dict, folder: Path | str, **qmdsir) -> dict:
    """A copy of ``base`` whose qmdsir section is a copy of QMDSIR with ``dir`` ``folder`` and ``qmdsir`` on top."""
    params = json.loads(json.dumps(base))
    params["qmdsir"] = json.loads(json.dumps({**QMDSIR, "dir": str(folder), **qmdsir}))
    return params


def _p(text: str, url: str, selected: int = 0) -> dict:
    return {"is_selected": selected, "passage_text": text, "url": url}


def _record(qid, passages, *, query="elbe river dresden", answers=("The Elbe flows north.",), **extra) -> dict:
    return {
        "query": query,
        "query_id": qid,
        "query_type": "DESCRIPTION",
        "passages": passages,
        "answers": list(answers),
        **extra,
    }


def survivor(qid) -> dict:
    """Kept: summary S1 S2 (first selected); p1 shares the summary's URL (omitted), p5 is empty (omitted),
    p4 is also selected but only the first selected passage is the summary."""
    return _record(
        qid,
        [
            _p(f"{S1} {S2}", SOURCE_URL, 1),
            _p(S3, SOURCE_URL),
            _p(f"{S1} {S3}", "http://b.example/"),
            _p(f"{S2} {S4}", "http://c.example/"),
            _p(S5, "http://d.example/", 1),
            _p("   ", "http://e.example/"),
        ],
    )


def train_records() -> list[dict]:
    """v2.1 rows 0-6 (row 5 gets no passages, row 7 only passages): one record per filter."""
    docs = [_p(f"{S1} {S3}", "http://b.example/"), _p(f"{S2} {S4}", "http://c.example/"), _p(S5, "http://d.example/")]
    return [
        survivor(101),
        _record(102, [{**p, "is_selected": 0} for p in survivor(0)["passages"]], answers=["No Answer Present."]),
        _record(103, [_p(S1, SOURCE_URL, 1), *docs]),  # summary_too_short
        _record(104, [_p(f"{S1} {S2}", SOURCE_URL, 1), *docs[:2]]),  # too_few_documents
        _record(105, [_p(f"{S1} {U1}", SOURCE_URL, 1), *docs]),  # uncovered_summary_sentence
        _record(106, [_p(f"{S1} {S2}", SOURCE_URL, 1), *docs]),  # row without passages: malformed
        _record(107, [{"is_selected": 1, "passage_text": f"{S1} {S2}"}, *docs]),  # passage without url: malformed
    ]


def write_v21(path: Path, records: list[dict], *, no_passages=(5,), passages_only=(7,), indent=None) -> bytes:
    """The v2.1 column object of ``records`` (row key = position)."""
    cols = {k: {} for k in ("answers", "passages", "query", "query_id", "query_type", "wellFormedAnswers")}
    for i, r in enumerate(records):
        for k in cols:
            if k == "passages" and i in no_passages:
                continue
            cols[k][str(i)] = r.get(k, "[]")
    for i in passages_only:
        cols["passages"][str(i)] = survivor(0)["passages"]
    data = json.dumps(cols, indent=indent).encode("utf-8")
    path.write_bytes(data)
    return data


def write_jsonl(path: Path) -> None:
    lines = [
        json.dumps(survivor(201)).encode(),
        b'{"query": "not json',
        b'{"query": "caf\xe9", "query_id": 5}',
        json.dumps(survivor(101)).encode(),  # duplicate across files
        json.dumps(survivor(201)).encode(),  # duplicate within the file
        json.dumps({k: v for k, v in survivor(203).items() if k != "query"}).encode(),  # malformed
        b"   ",
        json.dumps({**survivor(202), "wellFormedAnswers": ["The Elbe flows north through Dresden."]}).encode(),
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")


@pytest.fixture()
def msmarco(tmp_path) -> Path:
    folder = tmp_path / "msmarco"
    folder.mkdir()
    write_v21(folder / "train_v2.1.json", train_records())
    write_jsonl(folder / "dev_v1.1.jsonl")
    return folder


def _part(params, folder, tmp_path, shard=0, name="p"):
    out = {"examples": tmp_path / f"{name}{shard}.parquet", "stats": tmp_path / f"{name}{shard}.json"}
    stats = stage.part(params, {"dir": str(folder)}, out, shard=shard)
    return examples.read(out["examples"]).to_pylist(), stats, out


# ------------------------------------------------------------------------------------------ the filters
def test_each_filter_removes_exactly_its_record(base_params, msmarco, tmp_path):
    rows, stats, _ = _part(_params(base_params, msmarco), msmarco, tmp_path)
    counts = stats["counts"]
    assert counts == {
        "records_read": 15,
        "dropped:malformed": 4,  # train rows 5 (no passages), 6 (no url), 7 (passages only); dev line 6
        "dropped:no_selected_passage": 1,
        "dropped:summary_too_short": 1,
        "dropped:too_few_documents": 1,
        "dropped:uncovered_summary_sentence": 1,
        "dropped:bad_line": 2,
        "dropped:duplicate_id": 2,
        "kept:train": 1,
        "kept:dev": 2,
        "source_document_passages": 3,
        "empty_passages": 3,
    }
    assert counts["records_read"] == sum(v for k, v in counts.items() if k.startswith(("kept:", "dropped:")))
    loc = stats["locations"]
    assert loc["bad_line"] == ["dev_v1.1.jsonl:2", "dev_v1.1.jsonl:3"]
    assert loc["duplicate_id"] == ["dev_v1.1.jsonl:4", "dev_v1.1.jsonl:5"]
    # v2.1 records come in passages order, rows without passages last
    assert loc["malformed"] == ["train_v2.1.json#6", "train_v2.1.json#7", "train_v2.1.json#5", "dev_v1.1.jsonl#6"]
    for reason, where in [
        ("no_selected_passage", "train_v2.1.json#1"),
        ("summary_too_short", "train_v2.1.json#2"),
        ("too_few_documents", "train_v2.1.json#3"),
        ("uncovered_summary_sentence", "train_v2.1.json#4"),
    ]:
        assert loc[reason] == [where]

    by_id = {r["id"]: r for r in rows}
    assert sorted(by_id) == ["qmdsir:101", "qmdsir:201", "qmdsir:202"]
    r = by_id["qmdsir:101"]
    assert (r["split"], r["source"], r["source_id"], r["query"]) == ("train", "qmdsir", "101", ["elbe river dresden"])
    assert r["summary"] == [S1, S2]
    # the source document (same URL as the summary passage) and the empty passage are not documents;
    # the second selected passage (p4) is
    assert [d["id"] for d in r["documents"]] == ["101-p2", "101-p3", "101-p4"]
    assert [d["url"] for d in r["documents"]] == ["http://b.example/", "http://c.example/", "http://d.example/"]
    assert r["documents"][0]["sentences"] == [S1, S3]
    assert {d["origin"] for d in r["documents"]} == {"original"}
    assert (r["query_origin"], r["standin"], r["input_file"]) == ("search_query", False, "train_v2.1.json#0")
    meta = json.loads(r["meta"])
    assert meta == {
        "query_type": "DESCRIPTION",
        "summary_url": SOURCE_URL,
        "answers": ["The Elbe flows north."],
        "well_formed_answers": [],
    }
    assert by_id["qmdsir:201"]["input_file"] == "dev_v1.1.jsonl#1"  # the first of the duplicates is kept
    assert json.loads(by_id["qmdsir:202"]["meta"])["well_formed_answers"] == ["The Elbe flows north through Dresden."]


def test_coverage_is_rouge_score_rouge1_recall():
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True)
    summary = [S1, "Bridges rebuilt, floods: 2002!", U1, "..."]
    documents = [f"{S1} {S3}", "the bridge was rebuilt after a flood in 2002", S5]
    best = build.coverage(summary, documents)
    expected = [max(scorer.score(s, d)["rouge1"].recall for d in documents) for s in summary]  # target = sentence
    assert best == expected
    assert best[0] == 1.0 and best[1] == 1.0 and best[2] < 0.8 and best[3] == 0.0  # stemmed; no tokens -> 0


def test_coverage_threshold_is_inclusive(base_params, tmp_path):
    # 4 of the 5 unigrams of the second sentence are in a document: recall exactly 0.8 is covered
    sentence = "Alpha beta gamma delta epsilon."
    assert build.coverage([sentence], ["alpha beta gamma delta"]) == [0.8]
    rec = _record(
        1,
        [
            _p(f"{S1} {sentence}", SOURCE_URL, 1),
            _p(S1, "http://b/"),
            _p("Alpha beta gamma delta.", "http://c/"),
            _p(S5, "http://d/"),
        ],
    )
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "t.jsonl").write_text(json.dumps(rec) + "\n")
    params = _params(base_params, folder, files={"train": ["t.jsonl"], "dev": [], "test": []})
    rows, stats, _ = _part(params, folder, tmp_path)
    assert [r["id"] for r in rows] == ["qmdsir:1"]
    params["qmdsir"]["min_coverage_recall"] = 0.81
    rows, stats, _ = _part(params, folder, tmp_path, name="q")
    assert rows == [] and stats["counts"]["dropped:uncovered_summary_sentence"] == 1


def test_sentences_only_components_give_the_same_sentences(base_params):
    from wikiref import text

    nlp = text.from_params(base_params["text"])
    texts = [f"{S1} {S2} {S3}", "Dr. Smith arrived at 5 p.m. on Friday. He left.\nA new line starts here", U1, ""]
    full = [[s.text.strip() for s in doc.sents if s.text.strip()] for doc in nlp.pipe(texts)]
    assert list(wtext.split_sentences(nlp, texts)) == full
    assert set(wtext.sentence_pipes_off(nlp)) >= {"tagger", "lemmatizer"}


# ------------------------------------------------------------------------------------ splits and shards
def test_test_carving_is_stable(base_params, msmarco, tmp_path):
    ids = [str(i) for i in range(2000)]

    def carve(qids, **kw):
        kw = {"carve_test": True, "test_from_dev": 0.5, "seed": 13, **kw}
        return {q: build.assign_split("dev", q, **kw) for q in qids}

    first = carve(ids)
    assert first == carve(list(reversed(ids)))  # order-free
    share = sum(v == "test" for v in first.values()) / len(ids)
    assert 0.45 < share < 0.55
    assert carve(ids, seed=14) != first  # seeded
    assert set(carve(ids, test_from_dev=0.0).values()) == {"dev"}
    assert set(carve(ids, carve_test=False).values()) == {"dev"}
    assert build.assign_split("train", "7", carve_test=True, test_from_dev=1.0, seed=13) == "train"
    assert build.Config.from_params(_params(base_params, msmarco)).carve_test
    assert not build.Config.from_params(_params(base_params, msmarco, files={"train": ["a"], "test": ["b"]})).carve_test

    params = _params(base_params, msmarco, test_from_dev=0.5)
    rows, stats, _ = _part(params, msmarco, tmp_path)
    splits = {r["source_id"]: r["split"] for r in rows}
    assert splits["101"] == "train"
    for qid in ("201", "202"):
        assert splits[qid] == build.assign_split("dev", qid, carve_test=True, test_from_dev=0.5, seed=params["seed"])
    assert stats["counts"].get("kept:dev", 0) + stats["counts"].get("kept:test", 0) == 2


def test_shards_partition_the_records(base_params, msmarco, tmp_path):
    whole, whole_stats, _ = _part(_params(base_params, msmarco), msmarco, tmp_path, name="whole")
    params = _params(base_params, msmarco, shards=3)
    ids, counts = [], {}
    for k in range(3):
        rows, stats, _ = _part(params, msmarco, tmp_path, shard=k)
        assert all(reader.shard_of(r["source_id"], 3) == k for r in rows)
        ids += [r["id"] for r in rows]
        for key, v in stats["counts"].items():
            counts[key] = counts.get(key, 0) + v
    assert sorted(ids) == sorted(r["id"] for r in whole)
    assert counts == whole_stats["counts"]
    with pytest.raises(QmdsIrError, match="shard 3 is not in 0..2"):
        _part(params, msmarco, tmp_path, shard=3)


# ---------------------------------------------------------------------------------------------- reader
def test_truncated_v21_is_an_error_naming_file_and_line(tmp_path):
    path = tmp_path / "train_v2.1.json"
    data = write_v21(path, train_records(), indent=1)
    cut = data[: len(data) * 2 // 3]
    path.write_bytes(cut)
    with pytest.raises(QmdsIrError) as err:
        list(reader.iter_records(path, examples.Tally(max_locations=reader.MAX_LOCATIONS)))
    msg = str(err.value)
    lines = cut.count(b"\n") + 1
    assert str(path) in msg and f"line {lines} " in msg and "truncated or malformed" in msg

    broken = data.replace(b'"query_type"', b'"query_type" ]', 1)
    path.write_bytes(broken)
    with pytest.raises(QmdsIrError, match=r"train_v2\.1\.json: truncated or malformed MS MARCO v2\.1 JSON at line \d+"):
        list(reader.iter_records(path, examples.Tally(max_locations=reader.MAX_LOCATIONS)))

    path.write_bytes(b"")
    with pytest.raises(QmdsIrError, match="empty file"):
        list(reader.iter_records(path, examples.Tally(max_locations=reader.MAX_LOCATIONS)))


def test_layout_from_the_data_and_gzip(tmp_path, msmarco):
    def read(path):
        tally = examples.Tally(max_locations=reader.MAX_LOCATIONS)
        return [(r.input_file.split("#")[1], r.fields.get("query_id")) for r in reader.iter_records(path, tally)], tally

    plain_v21, tally_v21 = read(msmarco / "train_v2.1.json")
    plain_jsonl, tally_jsonl = read(msmarco / "dev_v1.1.jsonl")
    assert reader.detect_layout(msmarco / "train_v2.1.json") == reader.LAYOUT_V21
    assert reader.detect_layout(msmarco / "dev_v1.1.jsonl") == reader.LAYOUT_JSONL
    assert plain_v21 == [(str(i), 101 + i) for i in (0, 1, 2, 3, 4, 6)] + [("7", None), ("5", 106)]
    assert [w for w, _ in plain_jsonl] == ["1", "4", "6", "8"]  # not the bad lines, not the in-file duplicate
    # names say nothing: v2.1 in a .jsonl, JSON lines in a .json, both gzip-compressed without .gz
    for src, name in [("train_v2.1.json", "v21.jsonl"), ("dev_v1.1.jsonl", "lines.json")]:
        (tmp_path / name).write_bytes(gzip.compress((msmarco / src).read_bytes(), mtime=0))
    assert read(tmp_path / "v21.jsonl")[0] == plain_v21
    assert read(tmp_path / "lines.json")[0] == plain_jsonl
    assert read(tmp_path / "lines.json")[1].counts == tally_jsonl.counts


def test_duplicate_ids_within_and_across_files(tmp_path):
    recs = [survivor(1), survivor(2), survivor(1)]
    write_v21(tmp_path / "a.json", recs, no_passages=(), passages_only=())
    (tmp_path / "b.jsonl").write_text(json.dumps(survivor("2")) + "\n" + json.dumps(survivor(3)) + "\n")
    tally, seen = examples.Tally(max_locations=reader.MAX_LOCATIONS), set()
    got = [r.input_file for p in ("a.json", "b.jsonl") for r in reader.iter_records(tmp_path / p, tally, seen=seen)]
    assert got == ["a.json#0", "a.json#1", "b.jsonl#2"]
    assert tally.counts == {"records_read": 5, "dropped:duplicate_id": 2}
    assert tally.locations["duplicate_id"] == ["a.json#2", "b.jsonl:1"]  # "2" and 2 are one id


def test_parse_checks_types():
    ok = survivor(5)
    assert build.parse(ok).query_id == "5"
    assert build.parse({**ok, "wellFormedAnswers": "[]"}).well_formed_answers == ()
    for bad in [
        {**ok, "query": ""},
        {**ok, "query_id": None},
        {**ok, "passages": "x"},
        {**ok, "answers": "x"},
        {**ok, "passages": [{**ok["passages"][0], "is_selected": 2}]},
        {**ok, "wellFormedAnswers": [1]},
        {k: v for k, v in ok.items() if k != "query_type"},
    ]:
        assert build.parse(bad) is None


# ------------------------------------------------------------------------------------- the jobs' inputs
def test_missing_folder_or_file_shows_the_layout(base_params, tmp_path, msmarco):
    with pytest.raises(QmdsIrError) as err:
        _part(_params(base_params, tmp_path / "nowhere", test_from_dev=0.5), tmp_path / "nowhere", tmp_path)
    msg = str(err.value)
    assert "does not exist" in msg and "Expected layout" in msg and "train_v2.1.json" in msg
    assert "msmarco" in msg.lower() and "test_from_dev" in msg
    (msmarco / "dev_v1.1.jsonl").unlink()
    with pytest.raises(QmdsIrError, match=r"missing MS MARCO file\(s\).*dev_v1\.1\.jsonl"):
        _part(_params(base_params, msmarco), msmarco, tmp_path)
    with pytest.raises(QmdsIrError, match="more than once"):
        stage.input_files(msmarco, {**QMDSIR, "files": {"train": ["a.json"], "dev": ["a.json"]}})


# ------------------------------------------------------------------------------------------- the stand-in
@pytest.fixture(scope="module")
def sample_dump() -> Path:
    from wikiref.stages.sample import SampleError, locate_gensim_dump

    try:
        return locate_gensim_dump()
    except SampleError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def standin_dir(base_params, sample_dump, tmp_path_factory) -> tuple[Path, dict]:
    folder = tmp_path_factory.mktemp("standin") / "qmdsir-standin"
    params = _params(base_params, folder, standin=True, standin_queries=80, files=STANDIN_FILES)
    manifest = stage.standin(params, {"dump": str(sample_dump)}, {"dir": str(folder)})
    return folder, manifest


def test_standin_is_deterministic_and_labelled(base_params, sample_dump, standin_dir, tmp_path):
    folder, manifest = standin_dir
    assert sorted(p.name for p in folder.iterdir()) == [
        "MANIFEST.json",
        "NOTICE.txt",
        "dev_v2.1.json",
        "train_v2.1.json",
    ]
    assert manifest["standin"] is True and "STAND-IN" in (folder / "NOTICE.txt").read_text()
    assert manifest["counts"]["queries"] == 80 and sum(manifest["counts"]["by_split"].values()) == 80
    assert set(manifest["counts"]["by_kind"]) == {"overlap", "disjoint", "short", "two", "none"}
    for name, entry in manifest["files"].items():
        from wikiref.files import sha256_file

        assert entry["sha256"] == sha256_file(folder / name)
    again = tmp_path / "again"
    params = _params(base_params, again, standin=True, standin_queries=80)
    stage.standin(params, {"dump": str(sample_dump)}, {"dir": str(again)})
    for name in ("train_v2.1.json", "dev_v2.1.json", "MANIFEST.json", "NOTICE.txt"):
        assert (again / name).read_bytes() == (folder / name).read_bytes(), name
    # the v2.1 layout of the real files: columns of row keys, integer ids, "[]" for no well-formed answer
    cols = json.loads((folder / "train_v2.1.json").read_text())
    assert list(cols) == ["answers", "passages", "query", "query_id", "query_type", "wellFormedAnswers"]
    assert all(isinstance(v, int) for v in cols["query_id"].values())
    assert set(cols["wellFormedAnswers"].values()) == {"[]"}
    assert all(p["url"].startswith(qs.URL_PREFIX) for ps in cols["passages"].values() for p in ps)
    assert all(q == q.lower() for q in cols["query"].values())


def test_standin_records_exercise_every_filter(base_params, standin_dir, tmp_path):
    folder, _ = standin_dir
    params = _params(base_params, folder, standin=True, test_from_dev=0.5, files=STANDIN_FILES)
    rows, stats, _ = _part(params, folder, tmp_path)
    counts = stats["counts"]
    assert counts["records_read"] == 80
    for reason in build.REASONS[1:]:  # the stand-in is well-formed
        assert counts.get(f"dropped:{reason}", 0) > 0, reason
    assert counts.get("source_document_passages", 0) > 0
    assert counts.get("kept:train", 0) > 0 and rows and all(r["standin"] for r in rows)
    assert all(len(r["summary"]) >= 2 and len(r["documents"]) >= 3 for r in rows)


def test_standin_never_replaces_a_real_folder(base_params, sample_dump, msmarco):
    params = _params(base_params, msmarco, standin=True, standin_queries=5)
    with pytest.raises(QmdsIrError, match="not a STAND-IN folder"):
        stage.standin(params, {"dump": str(sample_dump)}, {"dir": str(msmarco)})
    assert (msmarco / "train_v2.1.json").exists()


def test_standin_folder_read_as_real_data_is_an_error(base_params, standin_dir, tmp_path):
    folder, _ = standin_dir
    params = _params(base_params, folder, standin=False, files=STANDIN_FILES)
    with pytest.raises(QmdsIrError, match="qmdsir.standin is false"):
        _part(params, folder, tmp_path)


# ------------------------------------------------------------------------------------------- part + merge
def _merge_outputs(out_dir: Path) -> dict:
    return {
        "splits": {s: str(out_dir / f"{s}.parquet") for s in SPLITS},
        "table": str(out_dir / "table"),
        "metrics": str(out_dir / "metrics.json"),
    }


def test_part_and_merge_round_trip(base_params, msmarco, tmp_path):
    params = _params(base_params, msmarco, shards=3, test_from_dev=0.5)
    parts = [_part(params, msmarco, tmp_path, shard=k)[2] for k in range(3)]
    assert [examples.read(p["examples"]).num_rows for p in parts] == [1, 0, 2]  # an empty part too
    merge_params = {"profile": params["profile"], "qmdsir": params["qmdsir"]}
    out = _merge_outputs(tmp_path / "out")
    metrics = stage.merge(
        merge_params, {"parts": [p["examples"] for p in parts], "stats": [p["stats"] for p in parts]}, out
    )
    assert metrics["examples"] == 3 and sum(metrics["sizes"].values()) == 3
    assert metrics["counts"]["records_read"] == 15 and metrics["counts"]["dropped:bad_line"] == 2
    back = {s: examples.read(p) for s, p in out["splits"].items()}
    assert sum(t.num_rows for t in back.values()) == 3
    assert sorted(i for t in back.values() for i in t.column("id").to_pylist()) == [
        "qmdsir:101",
        "qmdsir:201",
        "qmdsir:202",
    ]
    for s, t in back.items():
        assert set(t.column("split").to_pylist()) <= {s}
    assert json.loads(Path(out["metrics"]).read_text()) == metrics
    assert Path(out["table"] + ".md").read_text().count("QmdsIr statistics") == 1

    # every shard once, no id in two parts
    with pytest.raises(QmdsIrError, match="cover shards"):
        stage.merge(merge_params, {"parts": [parts[0]["examples"]], "stats": [parts[0]["stats"]]}, out)
    with pytest.raises(QmdsIrError, match="in two parts"):
        stage.merge(
            merge_params,
            {
                "parts": [parts[0]["examples"], parts[0]["examples"], parts[1]["examples"], parts[2]["examples"]],
                "stats": [p["stats"] for p in parts],
            },
            out,
        )


def test_cli(base_params, msmarco, tmp_path, capsys):
    from wikiref.cli import COMMANDS, main
    from wikiref.registry import JOB_KEYS, params_json

    if "qmdsir" not in dict(COMMANDS) or ("qmdsir", "part") not in JOB_KEYS:
        pytest.skip("the qmdsir stage is not registered yet")
    params = _params(base_params, msmarco)
    part_json = params_json(params, "qmdsir", "part")
    ex, st = tmp_path / "p.parquet", tmp_path / "p.json"
    args = ["qmdsir", "part", "--params-json", part_json, "--shard", "0", "--examples", str(ex), "--stats", str(st)]
    assert main(args) == 0
    assert "qmdsir part 0/1: 15 records" in capsys.readouterr().out
    out_dir = tmp_path / "sources"
    merge_args = ["qmdsir", "merge", "--params-json", params_json(params, "qmdsir", "merge"), "--parts", str(ex)]
    merge_args += [
        "--stats",
        str(st),
        "--out-dir",
        str(out_dir),
        "--table",
        str(tmp_path / "t"),
        "--metrics",
        str(tmp_path / "m.json"),
    ]
    assert main(merge_args) == 0
    assert sorted(p.name for p in out_dir.iterdir()) == ["dev.parquet", "test.parquet", "train.parquet"]
    bad = ["qmdsir", "part", "--params-json", part_json, "--shard", "0", "--dir", str(tmp_path / "nowhere")]
    assert main(bad) == 1
    assert "Expected layout" in capsys.readouterr().err
