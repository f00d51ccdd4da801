"""QMSum reader: the real validation slice (../shared/data/qmsum, skipped when absent) against counts
taken another way, every drop reason on hand-written bad lines, spans, the seeded meeting re-split and
the STAND-IN file (published format, read back, deterministic)."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from wikiref.examples import Tally
from wikiref.rouge.oracle import sentence_scores
from wikiref.schemas import QMSUM
from wikiref.stages.qmsum import reader, standin
from wikiref.stages.qmsum.reader import SpanError, read_meetings, resplit, spans_to_turns, split_sizes, turn_text


# ------------------------------------------------------------------------------------------ real slice
@pytest.fixture(scope="module")
def real(shared_data):
    """The real slice read once: (raw lines, meetings, tally, rows)."""
    path = shared_data / "qmsum" / "val.jsonl"
    if not path.is_file():
        pytest.skip(f"{path} missing")
    tally = Tally()
    meetings = list(read_meetings(path, split="dev", tally=tally))
    rows = [r for m in meetings for r in reader.query_rows(m)]
    lines = path.read_text(encoding="utf-8").splitlines()
    return lines, meetings, tally, rows


@pytest.mark.slow
def test_real_meetings_and_turns_match_an_independent_count(real):
    lines, meetings, tally, _ = real
    assert len(meetings) == 35 == len([x for x in lines if x.strip()])
    assert tally.counts["meetings_read"] == tally.counts["meetings_kept"] == 35
    assert not [k for k in tally.counts if k.startswith("dropped:")]
    for n, (line, m) in enumerate(zip(lines, meetings), start=1):
        assert m.meeting_id == f"val-{n:04d}" and m.input_file == f"val.jsonl:{n}" and m.split == "dev"
        # Every turn is an object with a "speaker" key, nothing else has one; inside a content string
        # the quotes would be escaped, so the pattern cannot match there.
        assert len(m.turns) == len(re.findall(r'"speaker":', line)), m.meeting_id
    assert sum(len(m.turns) for m in meetings) == 20_123


@pytest.mark.slow
def test_real_queries_match_an_independent_count(real):
    lines, meetings, tally, rows = real
    by_meeting = Counter((r["meeting_id"], r["query_type"]) for r in rows)
    for line, m in zip(lines, meetings):
        # "relevant_text_span" belongs to topics and specific queries, "query" to both query lists.
        specific = line.count('"relevant_text_span":') - line.count('"topic":')
        general = line.count('"query":') - specific
        assert (by_meeting[m.meeting_id, "general"], by_meeting[m.meeting_id, "specific"]) == (general, specific)
        assert len(m.topics) == line.count('"topic":')
    assert Counter(r["query_type"] for r in rows) == {"general": 35, "specific": 237}
    assert tally.counts["queries_read"] == 272
    assert (tally.counts["kept:general"], tally.counts["kept:specific"]) == (35, 237)


@pytest.mark.slow
def test_real_spans_resolve_to_the_raw_turns(real):
    lines, meetings, _, rows = real
    by_id = {r["id"]: r for r in rows}
    checked = 0
    for line, m in zip(lines, meetings):
        raw = json.loads(line)
        transcript = raw["meeting_transcripts"]
        for k, q in enumerate(raw["specific_query_list"]):
            row = by_id[f"{m.meeting_id}:specific-{k:02d}"]
            covered = set()
            for start, end in q["relevant_text_span"]:
                a, b = int(start), int(end)
                covered.update(range(a, b + 1))
                for i in (a, b):  # the first and last turn of the span are the raw file's entries
                    assert row["speakers"][i] == transcript[i]["speaker"]
                    assert (
                        row["turns"][i] == f"{transcript[i]['speaker']}: {' '.join(transcript[i]['content'].split())}"
                    )
                checked += 1
            assert row["span_turns"] == sorted(covered)
            assert row["answer"] == " ".join(q["answer"].split()) and row["query"] == [" ".join(q["query"].split())]
    assert checked == 248  # 226 one-span queries + 11 two-span queries


@pytest.mark.slow
def test_real_general_queries_cover_every_turn_and_rows_fit_the_schema(real):
    _, meetings, _, rows = real
    n_turns = {m.meeting_id: len(m.turns) for m in meetings}
    for r in rows:
        assert len(r["turns"]) == len(r["speakers"]) == len(r["turn_targets"]) == n_turns[r["meeting_id"]]
        if r["query_type"] == "general":
            assert r["span_turns"] == list(range(n_turns[r["meeting_id"]]))
        assert re.fullmatch(r"val-\d{4}:(general|specific)-\d{2}", r["id"])
        assert r["standin"] is False and r["split"] == "dev"
    table = reader.to_table(rows)
    assert table.schema.equals(QMSUM)
    ids = table.column("id").to_pylist()
    assert ids == sorted(ids) and len(set(ids)) == len(ids) == 272
    # turn_targets are wikiref.rouge.oracle.sentence_scores (computed here on pre-tokenized turns)
    for r in rows[::60]:
        assert r["turn_targets"] == sentence_scores(r["turns"], r["answer"], metric="rouge2_recall")
        assert max(r["turn_targets"]) > 0


@pytest.mark.slow
def test_real_without_speaker(real):
    _, meetings, _, _ = real
    m = meetings[0]
    rows = reader.query_rows(m, with_speaker=False)
    assert rows[0]["turns"] == [" ".join(c.split()) for _, c in m.turns]


# ------------------------------------------------------------------------------------------ bad input
def _turns(n: int) -> list[dict]:
    return [{"speaker": f"S{i % 2}", "content": f"turn {i} says  something\n"} for i in range(n)]


def _meeting(n_turns: int = 6, **over) -> dict:
    obj = {
        "topic_list": [{"topic": "all", "relevant_text_span": [["0", str(n_turns - 1)]]}],
        "general_query_list": [{"query": "Summarize the meeting.", "answer": "They talked."}],
        "specific_query_list": [
            {"query": "What about turn 2?", "answer": "Turn 2 said it.", "relevant_text_span": [["2", "3"]]}
        ],
        "meeting_transcripts": _turns(n_turns),
    }
    obj.update(over)
    return obj


def _specific(span, query="Q?", answer="A.") -> dict:
    return {"query": query, "answer": answer, "relevant_text_span": span}


def test_bad_lines_are_counted_with_their_location_and_good_meetings_read(tmp_path):
    no_transcript = _meeting()
    del no_transcript["meeting_transcripts"]
    bad_content = _meeting()
    bad_content["meeting_transcripts"][3]["content"] = 7
    queries = _meeting(
        general_query_list=[{"query": "  ", "answer": "x"}, {"query": "Summarize.", "answer": "They met."}],
        specific_query_list=[
            _specific([["1", "2"]], answer=""),  # 00 empty_answer
            _specific([["3", "1"]]),  # 01 reversed
            _specific([["0", "6"]]),  # 02 past the last turn (6 turns)
            _specific([["a", "3"]]),  # 03 not an integer
            _specific([["1"]]),  # 04 not a pair
            _specific([]),  # 05 no span
            _specific([[True, 2]]),  # 06 a bool is no index
            _specific([["-1", "2"]]),  # 07 signed
            _specific([[1, 2], ["4", "5"]]),  # 08 ints and strings: kept
            _specific([["0", "0"]]),  # 09 kept
        ],
        topic_list=[
            {"topic": "t", "relevant_text_span": [["2", "9"]]},
            {"topic": "u", "relevant_text_span": [["0", "1"]]},
        ],
    )
    lines = [
        json.dumps(_meeting()),  # 1 good
        "",  # 2 blank: ignored, still a line
        "{not json",  # 3
        "[1, 2]",  # 4 JSON, not an object
        json.dumps(no_transcript),  # 5
        json.dumps(bad_content),  # 6
        json.dumps(_meeting(meeting_transcripts=[])),  # 7
        json.dumps(_meeting(meeting_transcripts=[{"speaker": "A", "content": "  "}])),  # 8 no text
        json.dumps(queries),  # 9
        json.dumps(_meeting(specific_query_list={"query": "x"})),  # 10 a list that is not a list
        json.dumps(_meeting(general_query_list=[{"query": "x"}])),  # 11 an entry without its answer
        json.dumps(_meeting(specific_query_list=[{"query": "x", "answer": "y", "relevant_text_span": "0-1"}])),  # 12
        "   ",  # 13 blank
    ]
    path = tmp_path / "bad.jsonl"
    tail = b"\n\xff\xfe not utf-8\n" + json.dumps(_meeting(8)).encode() + b"\n" + b"[" * 100_000 + b"\n"
    data = "\n".join(lines).encode("utf-8") + tail
    path.write_bytes(data)
    tally = Tally()
    meetings = list(read_meetings(path, split="test", tally=tally))
    assert [m.meeting_id for m in meetings] == ["bad-0001", "bad-0009", "bad-0015"]
    assert [len(m.turns) for m in meetings] == [6, 6, 8]
    assert tally.to_json()["locations"] == {
        "bad_json": ["bad.jsonl:3", "bad.jsonl:4", "bad.jsonl:14", "bad.jsonl:16"],
        "missing_field": [
            "bad.jsonl:5:meeting_transcripts",
            "bad.jsonl:6:meeting_transcripts[3].content",
            "bad.jsonl:10:specific_query_list",
            "bad.jsonl:11:general_query_list[0].answer",
            "bad.jsonl:12:specific_query_list[0].relevant_text_span",
        ],
        "empty_transcript": ["bad.jsonl:7", "bad.jsonl:8"],
        "empty_query": ["bad.jsonl:9:general-00"],
        "empty_answer": ["bad.jsonl:9:specific-00"],
        "bad_span": [f"bad.jsonl:9:specific-{k:02d}" for k in range(1, 8)],
        "bad_topic_span": ["bad.jsonl:9:topic-00"],
    }
    counts = tally.counts
    assert counts["meetings_read"] == 14 and counts["meetings_kept"] == 3
    assert counts["meetings_read"] == counts["meetings_kept"] + sum(
        counts[f"dropped:{r}"] for r in ("bad_json", "missing_field", "empty_transcript")
    )
    assert counts["queries_read"] == 2 + 12 + 2
    assert (counts["kept:general"], counts["kept:specific"]) == (3, 4)
    query_drops = sum(counts[f"dropped:{r}"] for r in ("empty_query", "empty_answer", "bad_span"))
    assert counts["queries_read"] == counts["kept:general"] + counts["kept:specific"] + query_drops
    # the kept queries of line 9 keep their index in the file's lists
    m = meetings[1]
    assert [q.index for q in m.general] == [1] and [q.index for q in m.specific] == [8, 9]
    assert m.specific[0].spans == [(1, 2), (4, 5)] and [t.topic for t in m.topics] == ["u"]
    rows = [r for mm in meetings for r in reader.query_rows(mm)]
    assert [r["id"] for r in rows if r["meeting_id"] == "bad-0009"] == [
        "bad-0009:general-01",
        "bad-0009:specific-08",
        "bad-0009:specific-09",
    ]
    assert {r["id"]: r for r in rows}["bad-0009:specific-08"]["span_turns"] == [1, 2, 4, 5]
    assert reader.to_table(rows).num_rows == 7


def test_missing_file_and_bad_arguments(tmp_path):
    missing = tmp_path / "nope.jsonl"
    with pytest.raises(FileNotFoundError, match="nope.jsonl"):
        read_meetings(missing, split="dev")  # raised at the call, not at the first meeting
    (tmp_path / "x.jsonl").write_text(json.dumps(_meeting()) + "\n")
    with pytest.raises(ValueError, match="split"):
        read_meetings(tmp_path / "x.jsonl", split="validation")


def test_spans_to_turns():
    assert spans_to_turns([["8", "14"]], 20) == list(range(8, 15))
    assert spans_to_turns([["5", "7"], ["0", "1"], [6, 9]], 10) == [0, 1, 5, 6, 7, 8, 9]
    assert spans_to_turns([["3", "3"]], 4) == [3]
    for bad in ([["3", "2"]], [["0", "4"]], [["1"]], [], [["x", "1"]], [[1.0, 2]], [[False, 1]], [["+1", "2"]], "0-1"):
        with pytest.raises(SpanError):
            spans_to_turns(bad, 4)
    assert issubclass(SpanError, ValueError)


def test_turn_text():
    assert turn_text("Grad  G", " So ,\n OK .  ", True) == "Grad G: So , OK ."
    assert turn_text("Grad G", " So ,\n OK .  ", False) == "So , OK ."
    assert turn_text("", "hello", True) == "hello"
    assert turn_text("PhD A", "  ", True) == "PhD A:"


def test_to_table_rejects_duplicates_and_bad_rows(tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_text(json.dumps(_meeting()) + "\n")
    rows = reader.query_rows(next(read_meetings(path, split="train")))
    assert [r["id"] for r in rows] == ["m-0001:general-00", "m-0001:specific-00"]
    assert rows[1]["span_turns"] == [2, 3] and rows[0]["span_turns"] == list(range(6))
    with pytest.raises(reader.QmsumError, match="duplicate"):
        reader.to_table(rows + [dict(rows[0])])
    with pytest.raises(reader.QmsumError, match="span_turns"):
        reader.to_table([dict(rows[1], span_turns=[3, 2])])
    with pytest.raises(reader.QmsumError, match="split"):
        reader.to_table([dict(rows[1], split="val")])
    assert reader.to_table(rows[::-1]).column("id").to_pylist() == [r["id"] for r in rows]


def test_file_rows_are_every_meetings_rows_of_one_type(tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_text(json.dumps(_meeting()) + "\n" + json.dumps(_meeting()) + "\n")
    every = [r for m in read_meetings(path, split="test") for r in reader.query_rows(m)]
    assert reader.file_rows(path, split="test") == every and len(every) == 4
    specific = reader.file_rows(path, split="test", query_type="specific")
    assert [r["id"] for r in specific] == ["m-0001:specific-00", "m-0002:specific-00"]
    assert (
        reader.file_rows(path, split="test", query_type="specific", with_speaker=False)[0]["turns"]
        != specific[0]["turns"]
    )


# ------------------------------------------------------------------------------------------ re-split
def test_split_sizes():
    assert split_sizes(35, {"dev": 0.15, "test": 0.15}) == {"train": 25, "dev": 5, "test": 5}
    assert split_sizes(10, {"dev": 0.25, "test": 0.25}) == {"train": 5, "dev": 3, "test": 2}  # 2.5s: earlier split
    assert split_sizes(3, {"dev": 0.01, "test": 0.01}) == {"train": 1, "dev": 1, "test": 1}  # at least one each
    assert split_sizes(2, {"dev": 0.01, "test": 0.01}) == {"train": 2, "dev": 0, "test": 0}  # not enough
    assert split_sizes(4, {"dev": 0.5}) == {"train": 2, "dev": 2, "test": 0}  # no test fraction: none
    assert split_sizes(4, {"dev": 0.5, "test": 0.5}) == {"train": 0, "dev": 2, "test": 2}
    assert split_sizes(0, {"dev": 0.5}) == {"train": 0, "dev": 0, "test": 0}
    for bad in ({"val": 0.1}, {"dev": -0.1}, {"dev": 0.6, "test": 0.5}):
        with pytest.raises(ValueError):
            split_sizes(10, bad)


def test_resplit_is_seeded_whole_meetings_with_exact_counts():
    ids = [f"val-{i:04d}" for i in range(1, 36)]
    fractions = {"dev": 0.15, "test": 0.15}
    a = resplit(ids, fractions, seed=1)
    assert a == resplit(list(reversed(ids)), fractions, seed=1)  # the order of the ids does not matter
    assert set(a) == set(ids)  # every meeting, once, in one split
    assert Counter(a.values()) == {"train": 25, "dev": 5, "test": 5}
    assert resplit(ids, fractions, seed=2) != a
    # rows of one meeting all follow their meeting
    rows = [{"meeting_id": m, "q": k} for m in ids for k in range(3)]
    per_meeting = {}
    for r in rows:
        per_meeting.setdefault(r["meeting_id"], set()).add(a[r["meeting_id"]])
    assert all(len(s) == 1 for s in per_meeting.values())
    with pytest.raises(ValueError, match="repeated"):
        resplit(ids + ids[:1], fractions, seed=1)


# ------------------------------------------------------------------------------------------ stand-in
@pytest.fixture(scope="module")
def standin_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("qmsum") / "standin.jsonl"
    standin.write_standin(path, meetings=10, seed=3)
    return path


def test_standin_is_in_the_published_format(standin_file):
    lines = standin_file.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 10
    for line in lines:
        obj = json.loads(line)
        assert list(obj) == list(reader.KEYS)
        n = len(obj["meeting_transcripts"])
        assert standin.MIN_TURNS <= n <= standin.MAX_TURNS
        assert len(obj["general_query_list"]) == 1 and 3 <= len(obj["specific_query_list"]) <= 6
        spans = [s for q in obj["specific_query_list"] + obj["topic_list"] for s in q["relevant_text_span"]]
        assert all(isinstance(x, str) and x.isdigit() for s in spans for x in s)
        assert all(t["speaker"].startswith("Stand-in ") for t in obj["meeting_transcripts"])
        assert "STAND-IN" in obj["meeting_transcripts"][0]["content"]
        assert all(t["topic"].startswith("Stand-in topic:") for t in obj["topic_list"])
        assert len({q["query"] for q in obj["specific_query_list"]}) == len(obj["specific_query_list"])


def test_standin_reads_back_with_every_span_valid(standin_file):
    tally = Tally()
    meetings = list(read_meetings(standin_file, split="train", standin=True, tally=tally))
    assert len(meetings) == 10 and not [k for k in tally.counts if k.startswith("dropped:")]
    rows = [r for m in meetings for r in reader.query_rows(m, tally=tally)]
    assert all(r["standin"] for r in rows)
    assert tally.counts["kept:general"] == 10 and tally.counts["kept:specific"] == len(rows) - 10
    assert any(len(s.spans) == 2 for m in meetings for s in m.specific)  # two-span queries occur
    assert reader.to_table(rows).schema.equals(QMSUM)
    # the answer of a specific query shares more bigrams with its span than with any other turn
    for r in rows:
        if r["query_type"] == "specific":
            inside = max(r["turn_targets"][i] for i in r["span_turns"])
            outside = [x for i, x in enumerate(r["turn_targets"]) if i not in set(r["span_turns"])]
            assert inside > 0 and inside >= max(outside, default=0.0), r["id"]


def test_a_standin_file_is_labelled_from_its_data(standin_file, tmp_path):
    """Read without the caller's flag (as the studies read any QMSum file), the STAND-IN meetings are still
    labelled: their first turn is the writer's notice. A real-looking meeting stays unlabelled."""
    rows = reader.file_rows(standin_file, split="test", query_type="specific")
    assert rows and all(r["standin"] for r in rows)
    plain = tmp_path / "plain.jsonl"
    plain.write_text(json.dumps(_meeting()) + "\n", encoding="utf-8")
    assert not any(r["standin"] for r in reader.file_rows(plain, split="test"))


def test_standin_is_deterministic(tmp_path, standin_file):
    again = tmp_path / "again.jsonl"
    info = standin.write_standin(again, meetings=10, seed=3)
    assert again.read_bytes() == standin_file.read_bytes()
    assert info["standin"] is True and "STAND-IN" in info["label"] and info["meetings"] == 10
    other = tmp_path / "other.jsonl"
    standin.write_standin(other, meetings=10, seed=4)
    assert other.read_bytes() != standin_file.read_bytes()
    # meeting k depends on (seed, k) only: a shorter file is a prefix of the longer one
    short = tmp_path / "short.jsonl"
    standin.write_standin(short, meetings=4, seed=3)
    assert standin_file.read_bytes().startswith(short.read_bytes())
    assert not list(tmp_path.glob(".*.tmp"))  # written atomically, nothing left behind
