"""Stream MS MARCO QnA records (the open substitute for QmdsIr's private Bing logs) from their files.

Two layouts, told apart by the data, never by the file name (either may be gzip-compressed: the
magic bytes decide):

* **v2.1** (``train_v2.1.json``, ``dev_v2.1.json``): ONE column-oriented JSON object whose keys
  ``query``, ``query_id``, ``query_type``, ``passages``, ``answers``, ``wellFormedAnswers`` each map a
  row key (``"0"``, ``"1"``, ...) to that row's value. The train file is about 1 GB, so it is never
  loaded whole: :mod:`ijson` (C backend) streams it in three passes, each parsing the file at C speed
  and keeping only what this shard needs: (1) the ``query_id`` column (shard membership, duplicates),
  (2) the other small columns, for the kept rows only, (3) ``ijson.kvitems(f, "passages")``, joining
  each kept row's passages with its small columns and yielding the record. Memory is the kept rows'
  small columns plus one set of row keys, never the passages of more than one row.
* **v1.1** (JSON lines): one record object per line with the same field names (``passages`` a list).

Detection: the first JSON events of the file: ``{ "<key>": {`` (the first key's value an object) is
the column layout, anything else is JSON lines (no field of a record is an object).

Bad input:

* truncated or malformed v2.1 JSON -> :class:`QmdsIrError` naming the file, the line reached and the
  byte offset (the parser reads in :data:`READ_SIZE` blocks, so the line is where the block that
  failed ends: exact for a truncated file, within one block otherwise);
* a v1.1 line that is not UTF-8, not JSON or not an object -> counted ``dropped:bad_line`` (first few
  ``file:line`` locations kept);
* a duplicate ``query_id`` (within or across files; the first one is kept) -> ``dropped:duplicate_id``;
* a v2.1 row key missing from some column (e.g. present in ``query`` but not in ``passages``) -> the
  record is yielded without that field and :mod:`wikiref.stages.qmdsir.build` drops it as
  ``dropped:malformed`` (so are records missing fields in either layout).

Sharding: a record belongs to shard ``int(stable_id(key), 16) % shards`` where ``key`` is its
``query_id`` as a string, or ``<file name>#<row key or line>`` when it has none (bad lines, rows
without an id), so every record, good or bad, is counted in exactly one shard.
"""

from __future__ import annotations

import gzip
import io
import os
import zlib
from collections.abc import Callable, Iterator, MutableSet
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from wikiref.examples import Tally

# The fields of a record; v2.1 has one column per field.
FIELDS = ("query", "query_id", "query_type", "passages", "answers", "wellFormedAnswers")
SMALL_COLUMNS = ("query", "query_type", "answers", "wellFormedAnswers")  # besides query_id and passages
LAYOUT_V21 = "v2.1"
LAYOUT_JSONL = "v1.1-jsonl"
READ_SIZE = 16 * 1024  # bytes per read of the v2.1 parser (the precision of an error's line)
MAX_LOCATIONS = 5  # locations kept per drop reason (wikiref.examples.Tally)


class QmdsIrError(ValueError):
    """Bad QmdsIr input or parameters: a missing MS MARCO file, a truncated or malformed v2.1 file,
    inconsistent shards."""


@dataclass
class Record:
    """One MS MARCO record as read: its fields (any of :data:`FIELDS` may be missing or ill-typed; the
    builder checks them), the file name and where in it (v2.1 row key, or v1.1 line number)."""

    file: str
    where: str
    fields: dict

    @property
    def input_file(self) -> str:
        """``<file name>#<row key or line>`` (the EXAMPLE ``input_file`` column)."""
        return f"{self.file}#{self.where}"


def id_key(query_id) -> str | None:
    """The query id as the string used for duplicates, shards and split carving (``123`` and ``"123"``
    are the same id); None when there is no usable id."""
    if isinstance(query_id, bool) or query_id is None:
        return None
    if isinstance(query_id, int):
        return str(query_id)
    if isinstance(query_id, str) and query_id.strip():
        return query_id.strip()
    return None


def shard_of(key: str, shards: int) -> int:
    """The shard of a record key (:func:`id_key`, or ``<file>#<where>`` for a record without an id)."""
    from wikiref.files import stable_id

    return int(stable_id(key), 16) % int(shards)


class _CountingReader(io.RawIOBase):
    """A binary stream that counts the bytes and line breaks handed out (the position an error is at)."""

    def __init__(self, raw: BinaryIO):
        self.raw = raw
        self.bytes = 0
        self.newlines = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buf) -> int:
        data = self.raw.read(min(len(buf), READ_SIZE))
        n = len(data)
        buf[:n] = data
        self.bytes += n
        self.newlines += data.count(b"\n")
        return n

    def close(self) -> None:
        self.raw.close()
        super().close()


def open_binary(path: str | os.PathLike) -> BinaryIO:
    """The file's bytes, through gzip when it starts with the gzip magic bytes."""
    with open(path, "rb") as fh:
        magic = fh.read(2)
    return gzip.open(path, "rb") if magic == b"\x1f\x8b" else open(path, "rb")


def detect_layout(path: str | os.PathLike) -> str:
    """:data:`LAYOUT_V21` when the file's first key maps to an object, else :data:`LAYOUT_JSONL`.
    Raises :class:`QmdsIrError` for an empty file."""
    import ijson

    with open_binary(path) as fh:
        head = fh.read(1)
        while head and head.isspace():
            head = fh.read(1)
        if not head:
            raise QmdsIrError(f"{path}: empty file (expected MS MARCO QnA v2.1 JSON or v1.1 JSON lines)")
    events = []
    with open_binary(path) as fh:
        try:
            for event in ijson.parse(fh, multiple_values=True):
                events.append(event)
                if len(events) == 3:
                    break
        except ijson.JSONError:
            pass  # a broken first line: JSON lines (counted as a bad line); a broken v2.1 head fails later
    if len(events) == 3 and events[0][1] == "start_map" and events[1][1] == "map_key" and events[2][1] == "start_map":
        return LAYOUT_V21
    return LAYOUT_JSONL


def iter_records(
    path: str | os.PathLike,
    tally: Tally,
    *,
    keep: Callable[[str], bool] | None = None,
    seen: MutableSet[str] | None = None,
) -> Iterator[Record]:
    """The records of one MS MARCO file, either layout (:func:`detect_layout`), in file order.

    ``keep(key)`` says whether a record belongs to this run's shard (``key``: :func:`id_key` of its
    ``query_id``, or ``<file>#<where>`` without one); the others are skipped unseen and uncounted.
    ``seen``: the ids already read (shared across the files of a run; updated), for the duplicate
    check. Counts in ``tally``: ``records_read`` (every kept-shard record, bad lines included),
    ``dropped:bad_line``, ``dropped:duplicate_id``. Raises :class:`QmdsIrError` for a truncated or
    malformed v2.1 file."""
    keep = keep or (lambda _key: True)
    seen = seen if seen is not None else set()
    try:
        if detect_layout(path) == LAYOUT_V21:
            yield from _iter_v21(Path(path), tally, keep, seen)
        else:
            yield from _iter_jsonl(Path(path), tally, keep, seen)
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:  # a cut or corrupt .gz (either layout)
        raise QmdsIrError(f"{path}: truncated or corrupt gzip file: {exc}") from None


# ----------------------------------------------------------------------------------------- v1.1 JSONL
def _admit(
    key: str | None, location: str, where: str, tally: Tally, keep: Callable[[str], bool], seen: MutableSet[str]
) -> bool:
    """Whether a record with id ``key`` (None: sharded by its ``location``) is read by this shard and is
    not a repeated id; counts it as read, and a repeat as ``duplicate_id`` at ``where``."""
    if not keep(key if key is not None else location):
        return False
    tally.counts["records_read"] += 1
    if key is None:
        return True
    if key in seen:
        tally.drop("duplicate_id", where)
        return False
    seen.add(key)
    return True


def _iter_jsonl(path: Path, tally: Tally, keep: Callable[[str], bool], seen: MutableSet[str]) -> Iterator[Record]:
    import json

    name = path.name
    with open_binary(path) as fh:
        for line_no, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            where = str(line_no)
            try:
                obj = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, ValueError, RecursionError):  # RecursionError: absurdly deep nesting
                obj = None
            if not isinstance(obj, dict):
                if keep(f"{name}#{where}"):
                    tally.counts["records_read"] += 1
                    tally.drop("bad_line", f"{name}:{line_no}")
                continue
            if _admit(id_key(obj.get("query_id")), f"{name}#{where}", f"{name}:{line_no}", tally, keep, seen):
                yield Record(name, where, obj)


# ----------------------------------------------------------------------------------------------- v2.1
def _v21_error(path: Path, reader: _CountingReader, what: str, exc: Exception) -> QmdsIrError:
    detail = exc.args[0] if exc.args else exc
    if isinstance(detail, bytes):
        detail = detail.decode("utf-8", "replace")
    detail = str(detail).strip().splitlines()[0] if str(detail).strip() else type(exc).__name__
    return QmdsIrError(
        f"{path}: truncated or malformed MS MARCO v2.1 JSON at line {reader.newlines + 1} "
        f"(byte {reader.bytes:,} reached while reading {what}): {detail}"
    )


def _kvitems(path: Path, column: str) -> Iterator[tuple[str, object]]:
    """``(row key, value)`` of one column, streamed; a parse error becomes a :class:`QmdsIrError`."""
    import ijson

    reader = _CountingReader(open_binary(path))
    try:
        yield from ijson.kvitems(reader, column, buf_size=READ_SIZE)
    except (ijson.JSONError, UnicodeDecodeError, EOFError, OSError) as exc:
        raise _v21_error(path, reader, f"the {column!r} column", exc) from None
    finally:
        reader.close()


def _row_order(key: str) -> tuple:
    return (0, int(key), "") if key.isascii() and key.isdigit() else (1, 0, key)  # "²".isdigit(), int("²") fails


def _iter_v21(path: Path, tally: Tally, keep: Callable[[str], bool], seen: MutableSet[str]) -> Iterator[Record]:
    name = path.name
    # pass 1: ids -> the rows of this shard, duplicates
    id_rows: set[str] = set()
    kept: dict[str, dict] = {}  # row key -> the fields read so far
    for row, value in _kvitems(path, "query_id"):
        row = str(row)
        id_rows.add(row)
        if _admit(id_key(value), f"{name}#{row}", f"{name}#{row}", tally, keep, seen):
            kept[row] = {"query_id": value}

    def wanted(row: str) -> bool:
        """A row of this shard: kept in pass 1, or without an id (then sharded by its location)."""
        if row in kept:
            return True
        if row in id_rows or not keep(f"{name}#{row}"):
            return False
        tally.counts["records_read"] += 1  # a row missing from the query_id column: read, then malformed
        kept[row] = {}
        return True

    # pass 2: the other small columns, for this shard's rows only
    for column in SMALL_COLUMNS:
        for row, value in _kvitems(path, column):
            row = str(row)
            if wanted(row):
                kept[row][column] = value
    # pass 3: the passages, joined row by row
    done: set[str] = set()
    for row, value in _kvitems(path, "passages"):
        row = str(row)
        if row in done or not wanted(row):
            continue
        done.add(row)
        fields = kept.pop(row)
        fields["passages"] = value
        yield Record(name, row, fields)
    for row in sorted(kept, key=_row_order):  # rows without passages: yielded, dropped as malformed
        yield Record(name, row, kept[row])
