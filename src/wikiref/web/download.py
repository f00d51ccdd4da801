"""The dump download: the articles dump parts of ``collect.dump.download`` (wiki, date) from a Wikimedia mirror.

Two jobs, both ``wikiref collect download``:

* :func:`index` (``--index-only``, Snakemake checkpoint ``collect_download_index``): the dump's own index files,
  ``<mirror>/<wiki>/<date>/dumpstatus.json`` and ``<wiki>-<date>-sha1sums.txt``, written as served (atomically)
  after checking them: the articles job is ``done``, every part has a sha1 (both files agree where both have
  one) and every part ``collect.dump.parts`` lists is in the dump. ``parts: all`` reads the part list there.
* :func:`run` (rule ``collect_download``, one job per part file): each part into ``collect.dump.dir`` under the
  mirror's file name.

A part is streamed to ``.<file>.partial`` next to its final path, never held in memory. A cut connection,
timeout or server error is retried, resuming from the partial file with an HTTP ``Range`` request (a server
that answers 200 instead of 206 is read again from byte 0); a failure that brought no new byte counts
against ``retries`` (with ``backoff_s`` doubling, at most 60 s, or the server's ``Retry-After`` up to 120 s),
and no file takes more than :data:`MAX_REQUESTS` requests. A partial file left by a killed job is resumed
the same way. When the bytes are all there the file is fsync'ed, its sha1 computed by streaming it from disk
and compared with the index; only a match is renamed to the final path (then the folder is fsync'ed). A
mismatch removes the partial file and raises :class:`DownloadError` naming the part and both sha1s (when
the bytes came from more than one response, the part is first downloaded once more from byte 0). A 404 or
another client error stops at once. ``flock`` on the partial file keeps two processes from writing one part.
Progress (bytes, percent, MiB/s) is logged every :data:`PROGRESS_EVERY_S` seconds and per response.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import requests

from wikiref import layout
from wikiref.files import write_bytes
from wikiref.wiki.index import (
    DumpIndexError,
    checksums,
    file_of_part,
    parse_sha1sums,
    part_of_file,
    read_index,
    settings,
)

log = logging.getLogger(__name__)

MAX_REQUESTS = 1000  # per file, whatever happens (a server cutting every response after a few bytes)
MAX_INDEX_BYTES = 64 << 20  # dumpstatus.json / sha1sums.txt are well under 1 MB
PROGRESS_EVERY_S = 30.0
MAX_BACKOFF_S = 60.0
MAX_RETRY_AFTER_S = 120.0
_RETRYABLE_STATUS = {408, 425, 429, 500, 502, 503, 504}


class DownloadError(RuntimeError):
    """A dump file could not be downloaded, or its bytes do not match the dump's checksum."""


@dataclass(frozen=True)
class DownloadSettings:
    mirror: str
    wiki: str
    date: str
    multistream: bool
    retries: int
    backoff_s: float
    timeout_s: float
    chunk_bytes: int
    user_agent: str

    @classmethod
    def from_params(cls, params: Mapping) -> DownloadSettings:
        s = settings(params)
        return cls(
            mirror=str(s["mirror"]).rstrip("/"),
            wiki=s["wiki"],
            date=s["date"],
            multistream=bool(s["multistream"]),
            retries=int(s["retries"]),
            backoff_s=float(s["backoff_s"]),
            timeout_s=float(s["timeout_s"]),
            chunk_bytes=int(s["chunk_bytes"]),
            user_agent=str(params["collect"]["fetch"]["user_agent"]),
        )

    def url(self, name: str) -> str:
        return f"{self.mirror}/{self.wiki}/{self.date}/{name}"

    @property
    def sha1sums_name(self) -> str:
        return f"{self.wiki}-{self.date}-sha1sums.txt"


def new_session(s: DownloadSettings) -> requests.Session:
    session = requests.Session()
    # identity: Range offsets and Content-Length then count the file's own bytes
    session.headers.update({"User-Agent": s.user_agent, "Accept-Encoding": "identity"})
    return session


def _sleep_before_retry(s: DownloadSettings, failures: int, response=None) -> None:
    wait = min(s.backoff_s * 2 ** max(failures - 1, 0), MAX_BACKOFF_S)
    retry_after = response.headers.get("Retry-After", "") if response is not None else ""
    if retry_after.strip().isdigit():
        wait = max(wait, min(float(retry_after), MAX_RETRY_AFTER_S))
    if wait > 0:
        time.sleep(wait)


def _get_small(session, s: DownloadSettings, name: str, what: str) -> bytes:
    """A small file of the dump directory (the index files), with the same retries; at most MAX_INDEX_BYTES."""
    hint = f" for the {s.wiki} {s.date} dump's {what} (is the date on this mirror? mirrors keep only recent dumps)"
    return get_small(session, s, s.url(name), what, hint=hint)


def get_small(session, s: DownloadSettings, url: str, what: str, *, hint: str = "") -> bytes:
    """A small file at ``url`` (an index or checksum file), retried like a part; at most MAX_INDEX_BYTES."""
    failures = 0
    while True:
        response = None
        try:
            response = session.get(url, timeout=(s.timeout_s, s.timeout_s), stream=True)
            with contextlib.closing(response):
                if response.status_code == 200:
                    body = bytearray()
                    for block in response.iter_content(1 << 16):
                        body += block
                        if len(body) > MAX_INDEX_BYTES:
                            raise DownloadError(f"{url}: {what} is larger than {MAX_INDEX_BYTES} bytes")
                    return bytes(body)
                if response.status_code not in _RETRYABLE_STATUS:
                    raise DownloadError(f"{url}: HTTP {response.status_code}{hint or f' for {what}'}")
                reason = f"HTTP {response.status_code}"
        except requests.RequestException as exc:
            reason = f"{type(exc).__name__}: {exc}"
        failures += 1
        if failures > s.retries:
            raise DownloadError(f"{url}: {what} not downloaded after {failures} attempts (last: {reason})")
        log.warning("%s: %s; retry %d of %d", url, reason, failures, s.retries)
        _sleep_before_retry(s, failures, response)


def _wanted_files(params: Mapping, index: Mapping[str, dict], parts: Iterable[str] | None) -> list[str]:
    """The dump files of ``parts`` (default ``collect.dump.parts``, ``all``: every part), each checked to be
    a part file of the index."""
    if parts is None:
        listed = params["collect"]["dump"]["parts"]
        parts = [part_of_file(n) for n in index] if listed == "all" else listed
    files = [file_of_part(p) for p in parts]
    unknown = [f for f in files if f not in index]
    if unknown:
        s = settings(params)
        job = "articlesmultistreamdump" if s["multistream"] else "articlesdump"
        shown = ", ".join(part_of_file(n) for n in list(index)[:8]) + (", ..." if len(index) > 8 else "")
        raise DumpIndexError(
            f"part(s) {', '.join(part_of_file(f) for f in unknown)} (file(s) {', '.join(unknown)}) are not in the "
            f"{job} job of the {s['wiki']} {s['date']} dump; its {len(index)} part(s): {shown}"
        )
    return files


def index(params: Mapping, inputs: Mapping, outputs: Mapping, *, session=None) -> dict:
    """The index job: the dump's ``dumpstatus.json`` -> ``outputs["status"]`` and its sha1sums file ->
    ``outputs["sha1sums"]`` (bytes as served), after checking them (see the module docstring). ``params``: the
    ``collect`` keys of the download job. Returns what the index holds (part count, bytes)."""
    import json

    s = DownloadSettings.from_params(params)
    session = session or new_session(s)
    status_bytes = _get_small(session, s, "dumpstatus.json", "dumpstatus.json")
    sums_bytes = _get_small(session, s, s.sha1sums_name, s.sha1sums_name)
    try:
        status = json.loads(status_bytes.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DumpIndexError(f"{s.url('dumpstatus.json')}: not JSON ({exc})") from exc
    try:
        sums = parse_sha1sums(sums_bytes.decode("utf-8"), s.url(s.sha1sums_name))
    except UnicodeDecodeError as exc:
        raise DumpIndexError(f"{s.url(s.sha1sums_name)}: not text ({exc})") from exc
    table = checksums(status, sums, wiki=s.wiki, date=s.date, multistream=s.multistream)
    files = _wanted_files(params, table, None)
    write_bytes(outputs["status"], status_bytes)
    write_bytes(outputs["sha1sums"], sums_bytes)
    sizes = [table[f]["size"] for f in files]
    out = {
        "wiki": s.wiki,
        "date": s.date,
        "parts_in_dump": len(table),
        "parts_wanted": len(files),
        "bytes_wanted": sum(sizes) if None not in sizes else None,
    }
    log.info("index of %s %s: %d part(s) in the dump, %d wanted", s.wiki, s.date, len(table), len(files))
    return out


def sha1_file(path: Path, chunk: int) -> str:
    h = hashlib.sha1()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _content_range_start_total(value: str) -> tuple[int | None, int | None]:
    """``bytes START-END/TOTAL`` -> (START, TOTAL or None); (None, None) when malformed."""
    unit, _, rest = value.strip().partition(" ")
    span, _, total = rest.partition("/")
    start = span.partition("-")[0]
    if unit != "bytes" or not start.isdigit():
        return None, None
    return int(start), int(total) if total.isdigit() else None


def _what(name: str, s: DownloadSettings) -> str:
    """How errors name a file: ``part <part>`` for a dump's part, the file name for any other download."""
    return f"part {part_of_file(name)}" if s.wiki else name


class _Progress:
    def __init__(self, name: str, total: int | None):
        self.name, self.total = name, total
        self.t0 = self.last = time.monotonic()
        self.received = 0

    def add(self, n: int, have: int) -> None:
        self.received += n
        now = time.monotonic()
        if now - self.last >= PROGRESS_EVERY_S:
            self.last = now
            self.log(have)

    def log(self, have: int) -> None:
        rate = self.received / max(time.monotonic() - self.t0, 1e-9) / (1 << 20)
        pct = f" ({100 * have / self.total:.1f}%)" if self.total else ""
        total = f" of {self.total / (1 << 20):,.1f} MiB" if self.total else ""
        log.info("%s: %s MiB%s%s, %.2f MiB/s", self.name, f"{have / (1 << 20):,.1f}", total, pct, rate)


def download_file(
    url: str, dest: str | os.PathLike, *, sha1: str | None, size: int | None, s: DownloadSettings, session=None
) -> dict:
    """``url`` -> ``dest``, resumable and atomic, verified against ``sha1`` (``size``, when known, is checked
    against what the server announces). ``sha1`` None: nothing to verify against (an unpinned file, see
    :mod:`wikiref.stages.resources`): the file's sha1 is computed and returned. Returns what it took (requests,
    bytes received, restarts...) and the file's ``sha1``."""
    dest = Path(dest)
    name = dest.name
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(f".{name}.partial")
    session = session or new_session(s)
    stats = {"requests": 0, "bytes_received": 0, "resumed_from": 0, "range_ignored": 0, "restarts": 0, "pieces": 0}
    t0 = time.monotonic()
    try:
        with open(partial, "ab") as fh:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise DownloadError(f"{name}: another process is downloading it ({partial} is locked)") from None
            try:
                actual = _download_locked(fh, partial, dest, url, sha1, size, s, session, stats)
            finally:
                with contextlib.suppress(OSError):
                    if partial.stat().st_size == 0:
                        partial.unlink()  # nothing worth resuming (a 404, say)
        _fsync_dir(dest.parent)
    except OSError as exc:  # disk full, permissions (the HTTP errors are handled inside)
        raise DownloadError(f"{_what(name, s)}: writing {partial} or {dest}: {exc}") from exc
    stats.update(file=name, sha1=actual, bytes=dest.stat().st_size, seconds=round(time.monotonic() - t0, 3))
    log.info(
        "%s: %d bytes, sha1 %s, %d request(s), %.2f MiB/s received",
        name,
        stats["bytes"],
        "ok" if sha1 else f"{actual} (not verified: no checksum given)",
        stats["requests"],
        stats["bytes_received"] / max(stats["seconds"], 1e-9) / (1 << 20),
    )
    return stats


def _download_locked(
    fh, partial: Path, dest: Path, url: str, sha1: str | None, size, s: DownloadSettings, session, stats
) -> str:
    """:func:`download_file` holding the lock on ``fh`` (the partial file, opened for appending); returns the
    file's sha1."""
    name = dest.name
    stats["resumed_from"] = fh.seek(0, os.SEEK_END)
    stats["pieces"] = int(stats["resumed_from"] > 0)  # sources of the bytes: an earlier run, each response
    for fresh_start in (False, True):
        _fetch_into(fh, url, name, size, s, session, stats)
        fh.flush()
        os.fsync(fh.fileno())
        actual = sha1_file(partial, max(s.chunk_bytes, 1 << 20))
        if sha1 is None or actual == sha1:
            break
        if fresh_start or stats["pieces"] <= 1:
            partial.unlink()
            whose = "the dump's" if s.wiki else "the given"
            raise DownloadError(
                f"{_what(name, s)} ({url}): sha1 mismatch, expected {sha1} ({whose} checksum), "
                f"got {actual}; the file was not kept"
            )
        # the bytes came from several responses (or an earlier run): once more, from byte 0
        log.warning("%s: sha1 %s, not %s, after a resumed download; downloading it again", name, actual, sha1)
        stats["restarts"] += 1
        stats["pieces"] = 0
        fh.truncate(0)
        fh.seek(0)
    os.replace(partial, dest)
    return actual


def _fetch_into(fh, url: str, name: str, size: int | None, s: DownloadSettings, session, stats: dict) -> None:
    """Append to ``fh`` (the partial file, at its end) until it holds the whole file, resuming with Range."""
    failures = 0
    total = size
    while True:
        have = fh.seek(0, os.SEEK_END)
        if total is not None and have > total:
            log.warning("%s: partial file has %d bytes, more than the file's %d; starting again", name, have, total)
            fh.truncate(0)
            have = fh.seek(0)
            stats["pieces"] = 0
        if total is not None and have == total:
            return
        if stats["requests"] >= MAX_REQUESTS:
            raise DownloadError(f"{name}: not complete after {MAX_REQUESTS} requests ({have} bytes of {total})")
        stats["requests"] += 1
        headers = {"Range": f"bytes={have}-"} if have else {}
        response = None
        progress_before = have
        try:
            response = session.get(url, headers=headers, stream=True, timeout=(s.timeout_s, s.timeout_s))
            with contextlib.closing(response):
                checked = _check_response(response, fh, have, total, url, name, s, stats)
                if checked is None:
                    # we asked past the end: what we have may be the whole file (the sha1 decides)
                    return
                have, announced = checked
                progress_before = have  # 0 when the server ignored Range and the file starts again
                if announced is not None:
                    if total is not None and announced != total:
                        raise DownloadError(
                            f"{_what(name, s)}: {url} is {announced} bytes, the dump's index says {total}"
                        )
                    total = announced
                have = _read_body(response, fh, have, total, name, s, stats)
                if total is None:
                    return  # no length announced: the end of the body is the end of the file (the sha1 decides)
                if have < total:
                    raise _Retry(f"body ended at byte {have} of {total}")
        except (_Retry, requests.RequestException) as exc:
            failures = _after_failure(fh, exc, progress_before, failures, url, name, s)
            if failures:
                _sleep_before_retry(s, failures, response)


def _check_response(
    response, fh, have: int, total: int | None, url: str, name: str, s: DownloadSettings, stats: dict
) -> tuple[int, int | None] | None:
    """(bytes kept in ``fh``, the length the response announces or None) for a response to read; None
    when a 416 says the partial file may already be whole. Raises :class:`_Retry` for a status worth
    retrying, :class:`DownloadError` for any other failure. A 200 to a Range request empties ``fh``."""
    code = response.status_code
    announced = None
    if code == 206 and have:
        start, announced = _content_range_start_total(response.headers.get("Content-Range", ""))
        if start != have:
            raise DownloadError(
                f"{url}: asked for bytes {have}- and got Content-Range {response.headers.get('Content-Range')!r}"
            )
    elif code == 200:
        if have:
            log.warning("%s: the server ignored Range (200, not 206); reading it again from byte 0", name)
            stats["range_ignored"] += 1
            fh.truncate(0)
            have = fh.seek(0)
            stats["pieces"] = 0
        length = response.headers.get("Content-Length", "")
        announced = int(length) if length.isdigit() else None
    elif code == 416 and have and total is None:
        return None
    elif code == 404:
        raise DownloadError(
            f"{_what(name, s)}: HTTP 404 Not Found at {url}"
            + (
                f" (not on this mirror: it lists the {s.wiki} {s.date} dump's index but not this file)"
                if s.wiki
                else ""
            )
        )
    elif code in _RETRYABLE_STATUS:
        raise _Retry(f"HTTP {code}")
    else:
        raise DownloadError(f"{_what(name, s)}: HTTP {code} at {url}")
    return have, announced


def _read_body(response, fh, have: int, total: int | None, name: str, s: DownloadSettings, stats: dict) -> int:
    """Append the response body to ``fh`` (``have`` bytes in it so far), showing progress; returns the
    bytes held after it."""
    progress_before = have
    progress = _Progress(name, total)
    for block in response.iter_content(s.chunk_bytes):
        if have == progress_before:
            stats["pieces"] += 1
        fh.write(block)
        fh.flush()
        have += len(block)
        stats["bytes_received"] += len(block)
        progress.add(len(block), have)
    progress.log(have)
    return have


def _after_failure(fh, exc: Exception, progress_before: int, failures: int, url: str, name: str, s) -> int:
    """The failures in a row without progress after ``exc`` (0: bytes came in, resume at once); raises
    :class:`DownloadError` past ``s.retries``."""
    reason = str(exc) if isinstance(exc, _Retry) else f"{type(exc).__name__}: {exc}"
    fh.flush()
    have = fh.seek(0, os.SEEK_END)
    if have > progress_before:
        log.warning("%s: %s after %d bytes; resuming from byte %d", name, reason, have, have)
        return 0  # it moved: resume at once
    failures += 1
    if failures > s.retries:
        raise DownloadError(
            f"{_what(name, s)}: {url} failed {failures} times in a row without progress "
            f"(last: {reason}); {have} bytes kept in the partial file for the next run"
        ) from None
    log.warning("%s: %s; retry %d of %d", name, reason, failures, s.retries)
    return failures


class _Retry(Exception):
    """A response to retry (server error, short body)."""


def run(
    params: Mapping, inputs: Mapping, outputs: Mapping, *, parts: Iterable[str] | None = None, session=None
) -> dict:
    """The download job: the files of ``parts`` (default: ``collect.dump.parts``; ``all``: every part of the
    articles dump) -> ``outputs["dir"]`` (default ``collect.dump.dir``) under the mirror's names, or the one
    file ``outputs["file"]``. ``inputs["status"]`` / ``inputs["sha1sums"]``: the index files (:func:`index`).
    A file already at its final path with the right sha1 is kept; with another sha1 it is an error (it is
    not ours to delete). Returns per-file figures."""
    s = DownloadSettings.from_params(params)
    table = read_index(params, inputs["status"], inputs["sha1sums"])
    files = _wanted_files(params, table, parts)
    if outputs.get("file") and len(files) != 1:
        raise DownloadError(f"one output file given for {len(files)} parts")
    session = session or new_session(s)
    out: dict = {"files": {}}
    for name in files:
        dest = (
            Path(outputs["file"]) if outputs.get("file") else Path(outputs.get("dir") or layout.dump_dir(params)) / name
        )
        want = table[name]
        if dest.exists():
            actual = sha1_file(dest, max(s.chunk_bytes, 1 << 20))
            if actual != want["sha1"]:
                raise DownloadError(
                    f"{_what(name, s)}: {dest} exists with sha1 {actual}, the dump's is {want['sha1']}; "
                    "delete it to download the part again"
                )
            log.info("%s: already there, sha1 ok", dest)
            out["files"][name] = {"file": name, "sha1": actual, "bytes": dest.stat().st_size, "requests": 0}
            continue
        out["files"][name] = download_file(
            s.url(name), dest, sha1=want["sha1"], size=want["size"], s=s, session=session
        )
    out["bytes"] = sum(f["bytes"] for f in out["files"].values())
    return out
