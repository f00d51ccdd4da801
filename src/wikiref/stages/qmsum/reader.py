"""The QMSum reader: the published JSON-lines files -> meetings -> rows of :data:`wikiref.schemas.QMSUM`.

A QMSum file (``train.jsonl``, ``val.jsonl``, ``test.jsonl`` of the ``ALL`` folder) has one meeting a line,
an object with four lists::

    topic_list           [{"topic", "relevant_text_span"}]
    general_query_list   [{"query", "answer"}]
    specific_query_list  [{"query", "answer", "relevant_text_span"}]
    meeting_transcripts  [{"speaker", "content"}]

A ``relevant_text_span`` is a list of ``[start, end]`` pairs of turn indices written as strings
(``[["8", "14"]]``), inclusive, indexing ``meeting_transcripts``. QMSum's general queries ("summarize
the whole meeting") have no span: they are about every turn.

What is dropped, and counted in a :class:`wikiref.examples.Tally` with its location
(``<file>:<line>`` for a meeting, ``<file>:<line>:<general|specific|topic>-<nn>`` for a query or topic,
``nn`` = its index in its list):

* the meeting (its line): ``bad_json`` (not UTF-8 JSON, or not an object), ``missing_field`` (one of the
  four lists missing or not a list, or an entry of a list that is not an object with the published keys
  as strings / a list of spans: the line does not have the published structure, so none of it is
  trusted), ``empty_transcript`` (no turn with any text);
* one query: ``empty_query``, ``empty_answer`` (blank text), ``bad_span`` (no span, or a span that is
  not a pair of non-negative integers written as digit strings or ints, reversed, or past the last turn);
* one topic: ``bad_topic_span`` (same rule; topics are read for completeness, no row is made of them).

Blank lines are ignored (they still count for line numbers). Also counted: ``meetings_read`` (non-blank
lines), ``meetings_kept``, ``queries_read`` (the queries of the meetings that passed the meeting checks),
``kept:general`` / ``kept:specific`` (queries kept), so that ``meetings_read = meetings_kept + meeting
drops`` and ``queries_read = kept + query drops``.

A meeting's id is ``<file stem>-<line number, 4 digits>`` (1-based); a row's id is
``<meeting_id>:<general|specific>-<nn>`` with ``nn`` the query's index in the file's list, so an id
keeps pointing at the same query when another query of the meeting is dropped.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from wikiref.examples import Tally
from wikiref.files import stable_id
from wikiref.layout import SPLITS
from wikiref.schemas import QMSUM

QUERY_TYPES = ("general", "specific")
KEYS = ("topic_list", "general_query_list", "specific_query_list", "meeting_transcripts")
# The string keys of an entry of each list (topics and specific queries also have a relevant_text_span list).
ENTRY_KEYS = {
    "topic_list": ("topic",),
    "general_query_list": ("query", "answer"),
    "specific_query_list": ("query", "answer"),
    "meeting_transcripts": ("speaker", "content"),
}
SPAN_LISTS = ("topic_list", "specific_query_list")
_DIGITS = re.compile(r"[0-9]+")


class QmsumError(ValueError):
    """Rows that break the QMSUM table's rules (duplicate id, unknown split or type, inconsistent lists)."""


class SpanError(ValueError):
    """A ``relevant_text_span`` that does not name turns of the transcript."""


class GeneralQuery(NamedTuple):
    query: str
    answer: str
    index: int  # position in the file's general_query_list (the row id's nn)


class SpecificQuery(NamedTuple):
    query: str
    answer: str
    spans: list[tuple[int, int]]  # validated, inclusive
    index: int  # position in the file's specific_query_list


class Topic(NamedTuple):
    topic: str
    spans: list[tuple[int, int]]
    index: int


@dataclass
class Meeting:
    meeting_id: str
    split: str
    turns: list[tuple[str, str]]  # (speaker, content) as in the file
    topics: list[Topic] = field(default_factory=list)
    general: list[GeneralQuery] = field(default_factory=list)
    specific: list[SpecificQuery] = field(default_factory=list)
    input_file: str = ""  # "<file>:<line>"
    standin: bool = False


# ---------------------------------------------------------------------------------------------- spans
def parse_span(span, n_turns: int) -> tuple[int, int]:
    """One ``[start, end]`` pair -> ints, checked: two non-negative integers (digit strings as published,
    or ints; not bools, floats or signed strings), start <= end < ``n_turns``."""
    if not isinstance(span, (list, tuple)) or len(span) != 2:
        raise SpanError(f"span {span!r} is not a [start, end] pair")
    ends = []
    for x in span:
        if isinstance(x, bool):  # bool is an int subclass; True is no turn index
            raise SpanError(f"span {span!r}: {x!r} is not a turn index")
        if isinstance(x, int):
            value = x
        elif isinstance(x, str) and _DIGITS.fullmatch(x):
            value = int(x)
        else:
            raise SpanError(f"span {span!r}: {x!r} is not a turn index")
        if value < 0:
            raise SpanError(f"span {span!r}: negative turn index")
        ends.append(value)
    start, end = ends
    if start > end:
        raise SpanError(f"span {span!r} is reversed")
    if end >= n_turns:
        raise SpanError(f"span {span!r} ends past the last turn ({n_turns} turns)")
    return start, end


def parse_spans(spans, n_turns: int) -> list[tuple[int, int]]:
    """A whole ``relevant_text_span`` (a non-empty list of pairs) -> checked (start, end) pairs."""
    if not isinstance(spans, (list, tuple)) or not spans:
        raise SpanError(f"relevant_text_span {spans!r} is not a non-empty list of spans")
    return [parse_span(s, n_turns) for s in spans]


def spans_to_turns(spans, n_turns: int) -> list[int]:
    """The turn indices covered by ``spans`` (inclusive pairs, overlaps merged), sorted and unique; a
    :class:`SpanError` (a ``ValueError``) for anything :func:`parse_spans` rejects."""
    covered: set[int] = set()
    for start, end in parse_spans(spans, n_turns):
        covered.update(range(start, end + 1))
    return sorted(covered)


# ---------------------------------------------------------------------------------------------- text
def normalise(text: str) -> str:
    """Runs of whitespace (newlines included) -> one space, no leading/trailing space."""
    return " ".join(text.split())


def turn_text(speaker: str, content: str, with_speaker: bool) -> str:
    """A turn as one "sentence": ``"Speaker: content"`` (QMSum's own preprocessing joins the speaker and
    the content, so a query about what someone said can match the name) or the content alone;
    whitespace normalised. A blank speaker gives the content alone."""
    content = normalise(content)
    speaker = normalise(speaker)
    if with_speaker and speaker:
        return f"{speaker}: {content}" if content else f"{speaker}:"
    return content


# ---------------------------------------------------------------------------------------------- reading
def _structure_error(obj: Mapping) -> str:
    """'' when ``obj`` has the published structure, else the first offending field path."""
    for key in KEYS:
        entries = obj.get(key)
        if not isinstance(entries, list):
            return key
        for n, entry in enumerate(entries):
            if not isinstance(entry, dict):
                return f"{key}[{n}]"
            for name in ENTRY_KEYS[key]:
                if not isinstance(entry.get(name), str):
                    return f"{key}[{n}].{name}"
            # The span list itself must be a list; what is inside is checked per query (bad_span).
            if key in SPAN_LISTS and not isinstance(entry.get("relevant_text_span"), list):
                return f"{key}[{n}].relevant_text_span"
    return ""


def _meeting(obj: Mapping, meeting_id: str, split: str, where: str, standin: bool, tally: Tally) -> Meeting | None:
    """One parsed line -> a :class:`Meeting`, or None after counting why it is dropped."""
    bad = _structure_error(obj)
    if bad:
        tally.drop("missing_field", f"{where}:{bad}")
        return None
    turns = [(t["speaker"], t["content"]) for t in obj["meeting_transcripts"]]
    if not any(c.strip() for _, c in turns):
        tally.drop("empty_transcript", where)
        return None
    n = len(turns)
    meeting = Meeting(meeting_id, split, turns, input_file=where, standin=standin)
    for k, t in enumerate(obj["topic_list"]):
        try:
            meeting.topics.append(Topic(t["topic"], parse_spans(t["relevant_text_span"], n), k))
        except SpanError:
            tally.drop("bad_topic_span", f"{where}:topic-{k:02d}")
    for qtype, key in zip(QUERY_TYPES, ("general_query_list", "specific_query_list")):
        for k, q in enumerate(obj[key]):
            tally.counts["queries_read"] += 1
            loc = f"{where}:{qtype}-{k:02d}"
            if not q["query"].strip():
                tally.drop("empty_query", loc)
                continue
            if not q["answer"].strip():
                tally.drop("empty_answer", loc)
                continue
            if qtype == "general":
                meeting.general.append(GeneralQuery(q["query"], q["answer"], k))
            else:
                try:
                    spans = parse_spans(q["relevant_text_span"], n)
                except SpanError:
                    tally.drop("bad_span", loc)
                    continue
                meeting.specific.append(SpecificQuery(q["query"], q["answer"], spans, k))
            tally.counts[f"kept:{qtype}"] += 1
    tally.counts["meetings_kept"] += 1
    return meeting


def read_meetings(
    path: str | Path, *, split: str, standin: bool = False, tally: Tally | None = None
) -> Iterator[Meeting]:
    """The meetings of one QMSum JSON-lines file, in file order, every meeting in ``split``; rows made from
    them get ``standin``: given, or read from the data (a meeting whose first turn is the STAND-IN writer's
    notice, :data:`wikiref.stages.qmsum.standin.NOTICE_TURN`, is a STAND-IN whatever the caller says). Bad lines and
    queries are skipped and counted in ``tally`` (module docstring); a missing file is a
    ``FileNotFoundError`` raised at the call, before any meeting is read."""
    path = Path(path)
    if split not in SPLITS:
        raise ValueError(f"split {split!r} is not one of {SPLITS}")
    if not path.is_file():
        raise FileNotFoundError(f"QMSum file not found: {path}")
    return _iter_meetings(path, split, standin, tally if tally is not None else Tally())


def _has_notice(obj: Mapping) -> bool:
    """Whether a meeting object opens with the STAND-IN notice turn (what the STAND-IN writer puts first)."""
    from wikiref.stages.qmsum.standin import NOTICE_TURN

    turns = obj.get("meeting_transcripts")
    first = turns[0] if isinstance(turns, list) and turns else None
    return isinstance(first, dict) and str(first.get("content", "")).strip() == NOTICE_TURN


def _iter_meetings(path: Path, split: str, standin: bool, tally: Tally) -> Iterator[Meeting]:
    name, stem = path.name, path.stem
    # Binary lines, decoded one by one: a stray invalid byte costs its line (bad_json), not the file.
    with open(path, "rb") as fh:
        for line_no, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            tally.counts["meetings_read"] += 1
            where = f"{name}:{line_no}"
            try:
                obj = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, ValueError, RecursionError):  # RecursionError: absurdly deep nesting
                obj = None
            if not isinstance(obj, dict):
                tally.drop("bad_json", where)
                continue
            meeting = _meeting(obj, f"{stem}-{line_no:04d}", split, where, standin or _has_notice(obj), tally)
            if meeting is not None:
                yield meeting


# ---------------------------------------------------------------------------------------------- rows
def query_rows(meeting: Meeting, *, with_speaker: bool = True, tally: Tally | None = None) -> list[dict]:
    """The rows of :data:`wikiref.schemas.QMSUM` of one meeting: its general queries, then its specific
    ones. ``turn_targets`` = ROUGE-2 recall of each turn alone against the answer
    (:func:`wikiref.rouge.oracle.sentence_scores`; the same values, with the turns tokenized once per
    meeting rather than once per query). ``tally`` gets information counters (nothing is
    dropped here): ``blank_turns`` (turns without content, kept so that span indices stay valid) and
    ``zero_targets:<type>`` (queries whose answer shares no bigram with any turn of the meeting)."""
    from wikiref.rouge.fast import SentenceSetRouge, tokenize

    tally = tally if tally is not None else Tally()
    speakers = [normalise(s) for s, _ in meeting.turns]
    turns = [turn_text(s, c, with_speaker) for s, c in meeting.turns]
    tokens = [tokenize(t) for t in turns]
    tally.counts["blank_turns"] += sum(not c.strip() for _, c in meeting.turns)
    every_turn = list(range(len(turns)))
    queries = [("general", q.index, q.query, q.answer, every_turn) for q in meeting.general]
    queries += [("specific", q.index, q.query, q.answer, spans_to_turns(q.spans, len(turns))) for q in meeting.specific]
    rows = []
    for qtype, index, query, answer, span_turns in queries:
        answer = normalise(answer)
        targets = [x.recall for x in SentenceSetRouge(tokens, answer, "rouge2", pretokenized=True).sentence_scores()]
        if not any(targets):
            tally.counts[f"zero_targets:{qtype}"] += 1
        rows.append(
            {
                "id": f"{meeting.meeting_id}:{qtype}-{index:02d}",
                "split": meeting.split,
                "meeting_id": meeting.meeting_id,
                "query_type": qtype,
                "query": [normalise(query)],
                "turns": list(turns),
                "speakers": list(speakers),
                "span_turns": list(span_turns),
                "answer": answer,
                "turn_targets": [float(x) for x in targets],
                "standin": bool(meeting.standin),
                "input_file": meeting.input_file,
            }
        )
    return rows


def file_rows(
    path: str | Path,
    *,
    split: str,
    query_type: str | None = None,
    with_speaker: bool = True,
    tally: Tally | None = None,
) -> list[dict]:
    """:func:`query_rows` of every meeting of one QMSum file (:func:`read_meetings`), in file order; only the
    ``query_type`` ones (``general`` / ``specific``) when given. What the recipe study and the bi-encoder bench
    read from the real meetings."""
    tally = tally if tally is not None else Tally()
    rows = [
        r
        for m in read_meetings(path, split=split, tally=tally)
        for r in query_rows(m, with_speaker=with_speaker, tally=tally)
    ]
    return [r for r in rows if query_type is None or r["query_type"] == query_type]


def check_row(row: Mapping) -> None:
    """Raise :class:`QmsumError` unless ``row`` is a consistent QMSUM row."""
    where = f"QMSum row {row.get('id')!r}"
    if row.get("split") not in SPLITS:
        raise QmsumError(f"{where}: split {row.get('split')!r} is not one of {SPLITS}")
    if row.get("query_type") not in QUERY_TYPES:
        raise QmsumError(f"{where}: query_type {row.get('query_type')!r} is not one of {QUERY_TYPES}")
    n = len(row["turns"])
    if not n or len(row["speakers"]) != n or len(row["turn_targets"]) != n:
        raise QmsumError(f"{where}: turns, speakers and turn_targets differ in length or are empty")
    span = list(row["span_turns"])
    if not span or span != sorted(set(span)) or span[0] < 0 or span[-1] >= n:
        raise QmsumError(f"{where}: span_turns must be sorted unique turn indices (got {span[:5]}...)")
    if not row["answer"].strip() or not any(q.strip() for q in row["query"]):
        raise QmsumError(f"{where}: empty query or answer")


def to_table(rows: Iterable[Mapping]):
    """The rows as an Arrow table with :data:`~wikiref.schemas.QMSUM`, sorted by id; every row checked
    (:func:`check_row`), a repeated id is a :class:`QmsumError`."""
    import pyarrow as pa

    rows = sorted(rows, key=lambda r: r["id"])
    for a, b in zip(rows, rows[1:]):
        if a["id"] == b["id"]:
            raise QmsumError(f"duplicate QMSum row id {a['id']!r} ({a['input_file']} and {b['input_file']})")
    for r in rows:
        check_row(r)
    return pa.Table.from_pylist([{f: r[f] for f in QMSUM.names} for r in rows], schema=QMSUM)


# ---------------------------------------------------------------------------------------------- re-split
def split_sizes(n: int, fractions: Mapping[str, float]) -> dict[str, int]:
    """Meetings per split for ``n`` meetings: ``fractions`` gives dev and test (train gets the rest).
    Counts are the largest-remainder rounding of ``fraction * n`` (they sum to ``n`` exactly; ties go to
    the earlier split of train, dev, test); then, when ``n`` allows it, every split with a non-zero
    fraction gets at least one meeting, taken from the largest split."""
    unknown = set(fractions) - {"dev", "test"}
    if unknown:
        raise ValueError(f"fractions: unknown split(s) {sorted(unknown)} (give dev and/or test)")
    dev, test = float(fractions.get("dev", 0.0)), float(fractions.get("test", 0.0))
    if not (0.0 <= dev <= 1.0 and 0.0 <= test <= 1.0) or dev + test > 1.0 + 1e-9:
        raise ValueError(f"fractions must be in [0, 1] and sum to at most 1 (got dev={dev}, test={test})")
    if n < 0:
        raise ValueError("n must be >= 0")
    want = {"train": max(1.0 - dev - test, 0.0) * n, "dev": dev * n, "test": test * n}
    sizes = {s: math.floor(want[s]) for s in SPLITS}
    by_remainder = sorted(SPLITS, key=lambda s: (-(want[s] - sizes[s]), SPLITS.index(s)))
    for s in by_remainder[: n - sum(sizes.values())]:
        sizes[s] += 1
    needed = [s for s in SPLITS if want[s] > 0]
    if n >= len(needed):
        for s in needed:
            if sizes[s] == 0:
                donor = max(SPLITS, key=lambda d: (sizes[d], -SPLITS.index(d)))
                sizes[donor] -= 1
                sizes[s] += 1
    return sizes


def resplit(meeting_ids: Iterable[str], fractions: Mapping[str, float], seed: int) -> dict[str, str]:
    """A seeded assignment of whole meetings to train / dev / test (:func:`split_sizes` meetings each):
    meetings ordered by a hash of (seed, meeting id), the first ones go to test, the next to dev, the rest
    to train. It depends only on the set of ids and the seed, not on their order; a repeated id is an
    error. Used by the sample, whose only QMSum file is the validation split: no transcript is shared
    between two splits."""
    ids = list(meeting_ids)
    if len(set(ids)) != len(ids):
        raise ValueError("resplit: repeated meeting ids")
    sizes = split_sizes(len(ids), fractions)
    order = sorted(ids, key=lambda m: (stable_id(str(seed), "qmsum-split", m), m))
    out: dict[str, str] = {}
    start = 0
    for split in ("test", "dev", "train"):
        for m in order[start : start + sizes[split]]:
            out[m] = split
        start += sizes[split]
    return {m: out[m] for m in sorted(out)}
