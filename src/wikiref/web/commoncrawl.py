"""Common Crawl backend (``collect.fetch.backend: commoncrawl``): cited URL -> the Common Crawl capture
closest to the citation's access-date -> that one WARC record, read by an HTTP range request.

1. The URL index: for every crawl of ``collect.fetch.commoncrawl.crawls`` the CDX index server is asked
   ``<index_url>/<crawl>-index?url=<URL>&output=json&limit=<max_captures>`` (JSON lines with ``urlkey,
   timestamp, url, mime, status, digest, length, offset, filename``); at most ``max_captures`` lines are
   read per crawl. A 404 whose body says "No Captures found" means the crawl has no capture of the URL;
   any other failure (another status, a connection error after the retries, an answer with no readable
   line) makes the URL ``cc_index_error``: a capture is never chosen from a partial answer.
2. The capture (:func:`choose_capture`): only status 200 captures whose mime type is one of
   ``collect.fetch.content_types``; the one closest to the citation's access-date (its whole day: a capture
   made that day is at distance 0), else to ``fallback_date``, else the latest; ties go to the later
   capture. Outcomes: ``cc_not_in_index`` (no crawl has a capture), ``cc_no_html_capture`` (captures, none
   a 200 HTML page).
3. The record: ``<data_url>/<filename>`` with ``Range: bytes=<offset>-<offset+length-1>`` and
   ``Accept-Encoding: identity``. Only a 206 answer with that exact ``Content-Range`` is read (at most
   ``length`` bytes); a 200 answer (the server ignored the range and would send the whole WARC file, about
   1 GB) is refused at once, ``cc_range_unsupported``. The bytes must be one gzip member holding one WARC
   ``response`` record for the captured URL, decompressed to at most ``max_body_bytes`` + 1 MiB
   (:func:`read_record`, warcio): else ``cc_record_corrupt`` (or ``too_large``). When the record carries a
   ``WARC-Payload-Digest`` the payload is checked against it (``cc_digest_mismatch``). Then the same checks
   as the other backends: HTTP status (``http_<code>``), content type (``bad_content_type``), size
   (``too_large``). Failures of the range request itself are ``cc_data_<live reason>``
   (``cc_data_http_503``, ``cc_data_timeout``...).

HTTP goes through the live backend's machinery (a :class:`~wikiref.web.fetch.LiveBackend`
subclass): the address check on every connection (private addresses refused unless
``allow_private_addresses``, the loopback tests' switch), the hard per-exchange deadline, retries with
backoff on connection errors, timeouts, 429 and 5xx (Common Crawl answers 503 "SlowDown" when busy),
``Retry-After`` capped at ``max_retry_after_s``, and the per-host interval shared by every collect job
through ``<cache_dir>/hosts/`` (it applies to the index host and the data host like to any other). robots.txt
is not read: the index and the data server are APIs (as the Wayback availability API is).

The result is the :class:`~wikiref.web.fetch.FetchResult` of the other backends (``source``
``commoncrawl``, ``final_url`` the captured URL, ``snapshot`` the capture's timestamp), cached by
:func:`~wikiref.web.fetch.make_fetcher` under :attr:`CommonCrawlBackend.cache_key`: the backend
name and the settings that choose the capture (crawls, ``max_captures``, ``fallback_date``), so changing
the crawls fetches afresh rather than reading outcomes chosen from other crawls.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import logging
import re
import threading
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from urllib.parse import urlencode, urlsplit

from wikiref.web.fetch import FetchConfig, FetchResult, LiveBackend, _Failure
from wikiref.web.wayback import wayback_timestamp

log = logging.getLogger(__name__)

# ASCII digits only, whole strings only (fullmatch: "$" would let a trailing newline through)
CRAWL_NAME = re.compile(r"CC-MAIN-[0-9]{4}-[0-9]{2}")
# A WARC file name from the index: a relative path of plain segments (appended to data_url as it is).
_FILENAME = re.compile(r"[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)*")
_TIMESTAMP = re.compile(r"[0-9]{14}")
_CONTENT_RANGE = re.compile(r"bytes ([0-9]+)-([0-9]+)/([0-9]+|\*)")
INDEX_MAX_BYTES = 4 << 20  # one crawl's index answer for one URL (a line is under 1 kB)
HEADER_ALLOWANCE = 1 << 20  # WARC + HTTP headers on top of max_body_bytes, decompressed
RECORD_OVERHEAD = 64 << 10  # a compressed record longer than max_body_bytes + this is not fetched


# ---------------------------------------------------------------------------------------------
# settings


@dataclass(frozen=True)
class CommonCrawlConfig:
    index_url: str = "https://index.commoncrawl.org"
    data_url: str = "https://data.commoncrawl.org"
    crawls: tuple[str, ...] = ("CC-MAIN-2018-51", "CC-MAIN-2019-04")
    max_captures: int = 50
    fallback_date: str = "2019-01-01"

    @classmethod
    def from_params(cls, section: Mapping | None) -> CommonCrawlConfig:
        """``collect.fetch.commoncrawl`` -> settings (missing keys: the defaults); ValueError on bad values."""
        section = dict(section or {})
        unknown = sorted(set(section) - set(cls.__dataclass_fields__))
        if unknown:
            raise ValueError(f"collect.fetch.commoncrawl: unknown key(s) {unknown}")
        kwargs = dict(section)
        if "crawls" in kwargs:
            crawls = kwargs["crawls"]
            if isinstance(crawls, str) or not isinstance(crawls, Iterable):
                raise ValueError(f"collect.fetch.commoncrawl.crawls must be a list of crawl names, not {crawls!r}")
            kwargs["crawls"] = tuple(crawls)
        cfg = cls(**kwargs)
        cfg.check()
        return cfg

    def check(self) -> None:
        for key in ("index_url", "data_url"):
            value = getattr(self, key)
            parts = urlsplit(value) if isinstance(value, str) else None
            if parts is None or parts.scheme not in ("http", "https") or not parts.hostname or parts.query:
                raise ValueError(f"collect.fetch.commoncrawl.{key} must be an http(s) URL without a query: {value!r}")
        if not self.crawls:
            raise ValueError("collect.fetch.commoncrawl.crawls is empty: name at least one crawl (CC-MAIN-2019-04)")
        for crawl in self.crawls:
            if not isinstance(crawl, str) or not CRAWL_NAME.fullmatch(crawl):
                raise ValueError(
                    f"collect.fetch.commoncrawl.crawls: {crawl!r} is not a crawl name like CC-MAIN-2019-04"
                )
        if isinstance(self.max_captures, bool) or not isinstance(self.max_captures, int) or self.max_captures < 1:
            raise ValueError(
                f"collect.fetch.commoncrawl.max_captures must be a positive integer: {self.max_captures!r}"
            )
        if not isinstance(self.fallback_date, str) or (
            self.fallback_date and not wayback_timestamp(self.fallback_date)
        ):
            raise ValueError(f"collect.fetch.commoncrawl.fallback_date is not a date: {self.fallback_date!r}")


# ---------------------------------------------------------------------------------------------
# the index answer and the choice of a capture


@dataclass(frozen=True)
class Capture:
    crawl: str
    timestamp: str  # 14 digits, UTC
    url: str
    mime: str
    status: str
    digest: str
    offset: int
    length: int
    filename: str

    @property
    def when(self) -> datetime:
        return datetime.strptime(self.timestamp, "%Y%m%d%H%M%S")


def _non_negative_int(value) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, str) and value.isascii() and value.isdigit():
        return int(value)
    return None


def _capture(obj, crawl: str) -> Capture | None:
    """One index line's object -> a Capture, or None when a field the fetch needs is missing or wrong."""
    if not isinstance(obj, dict):
        return None
    url, ts, filename = obj.get("url"), obj.get("timestamp"), obj.get("filename")
    status, mime, digest = obj.get("status", ""), obj.get("mime", ""), obj.get("digest", "")
    offset, length = _non_negative_int(obj.get("offset")), _non_negative_int(obj.get("length"))
    if not isinstance(url, str) or not url.strip() or offset is None or not length:
        return None
    if not isinstance(ts, str) or not _TIMESTAMP.fullmatch(ts):
        return None
    try:
        datetime.strptime(ts, "%Y%m%d%H%M%S")
    except ValueError:
        return None
    if not isinstance(filename, str) or not _FILENAME.fullmatch(filename) or ".." in filename.split("/"):
        return None
    if isinstance(status, int) and not isinstance(status, bool):
        status = str(status)
    if not isinstance(status, str) or not isinstance(mime, str) or not isinstance(digest, str):
        return None
    return Capture(crawl, ts, url, mime, status.strip(), digest, offset, length, filename)


def parse_cdx_lines(body: bytes, crawl: str, max_lines: int) -> tuple[list[Capture], int]:
    """The captures in one CDX server answer (``output=json``: one JSON object per line), reading at most
    ``max_lines`` non-blank lines, and the number of those lines skipped as unreadable (not a JSON object;
    url, timestamp (14 digits, a real time), offset, length (> 0) or filename (a plain relative path)
    missing or ill-typed). Never raises."""
    text = body.decode("utf-8", errors="replace")
    captures: list[Capture] = []
    bad = 0
    read = 0
    for line in text.splitlines():
        if read >= max_lines:
            break
        if not line.strip():
            continue
        read += 1
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):
            obj = None
        cap = _capture(obj, crawl)
        if cap is None:
            bad += 1
        else:
            captures.append(cap)
    return captures, bad


def _mime(value: str) -> str:
    return value.split(";", 1)[0].strip().lower()


def target_day(access_date: str, fallback_date: str = "") -> date | None:
    """The day a capture should be closest to: the citation's access-date, else ``fallback_date``, else None."""
    for value in (access_date, fallback_date):
        ts = wayback_timestamp(value)
        if ts:
            return date(int(ts[:4]), int(ts[4:6]), int(ts[6:8]))
    return None


def _distance(when: datetime, day: date | None) -> float:
    """Seconds between ``when`` and the whole of ``day`` (0 inside it, and for every capture without a day)."""
    if day is None:
        return 0.0
    start = datetime(day.year, day.month, day.day)
    end = start + timedelta(days=1)
    if when < start:
        return (start - when).total_seconds()
    if when >= end:
        return (when - end).total_seconds()
    return 0.0


def choose_capture(captures: Iterable[Capture], content_types: Iterable[str], day: date | None) -> Capture | None:
    """The status 200 capture of an HTML mime type (``content_types``) closest to ``day``; ties (every capture
    when ``day`` is None) go to the later capture, then to the first crawl / file / offset in sort order."""
    types = {t.lower() for t in content_types}
    usable = [c for c in captures if c.status == "200" and _mime(c.mime) in types]
    if not usable:
        return None
    return min(usable, key=lambda c: (_distance(c.when, day), -int(c.timestamp), c.crawl, c.filename, c.offset))


# ---------------------------------------------------------------------------------------------
# the record


@dataclass
class Record:
    reason: str = ""  # "" when read; else cc_record_corrupt, cc_digest_mismatch or too_large
    target_uri: str = ""
    status: int = 0
    content_type: str = ""
    body: bytes = b""


def _digest_matches(expected: str, payload: bytes) -> bool | None:
    """``WARC-Payload-Digest`` (``sha1:<base32>``, as Common Crawl writes it; hex accepted) against the
    payload: True / False, or None for an algorithm hashlib does not know (not checked)."""
    algo, _, value = expected.strip().partition(":")
    algo = algo.strip().lower().replace("-", "")
    if algo not in hashlib.algorithms_available:
        return None
    try:
        digest = hashlib.new(algo, payload).digest()
    except (ValueError, TypeError):  # e.g. shake_* (needs a length)
        return None
    value = value.strip()
    return value.upper().rstrip("=") == base64.b32encode(digest).decode("ascii").rstrip("=") or (
        value.lower() == digest.hex()
    )


def read_record(data: bytes, max_body_bytes: int) -> Record:
    """One WARC record as Common Crawl stores it (one gzip member) -> its HTTP response: target URI, status,
    content type and body (at most ``max_body_bytes``). Never raises: a member that does not decompress, is cut
    short or is followed by other bytes, a record that is not one ``response`` with HTTP headers, a block
    shorter than its ``Content-Length`` are ``cc_record_corrupt``; a payload that does not match the record's
    ``WARC-Payload-Digest`` is ``cc_digest_mismatch``; more than ``max_body_bytes`` of body (or of the
    decompressed record, headers included, beyond a 1 MiB allowance) is ``too_large``."""
    from warcio.archiveiterator import ArchiveIterator
    from warcio.bufferedreaders import ChunkedDataException
    from warcio.exceptions import ArchiveLoadFailed
    from warcio.statusandheaders import StatusAndHeadersParserException

    cap = max_body_bytes + HEADER_ALLOWANCE
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        raw = inflater.decompress(data, cap)
    except zlib.error:
        return Record("cc_record_corrupt")
    if not inflater.eof:
        return Record("too_large" if len(raw) >= cap else "cc_record_corrupt")
    if inflater.unused_data:  # the range holds more than the one member: offset/length do not fit the file
        return Record("cc_record_corrupt")
    try:
        record = next(iter(ArchiveIterator(io.BytesIO(raw))), None)
        if record is None or record.rec_type != "response" or record.http_headers is None:
            return Record("cc_record_corrupt")
        uri = (record.rec_headers.get_header("WARC-Target-URI") or "").strip().strip("<>").strip()
        payload = record.raw_stream.read(cap + 1)
        if getattr(record.raw_stream, "limit", 0) > 0:  # the block ended before its Content-Length
            return Record("cc_record_corrupt", uri)
        status = int(record.http_headers.get_statuscode() or 0)
        ctype = _mime(record.http_headers.get_header("Content-Type") or "")
        out = Record("", uri, status, ctype)
        expected = record.rec_headers.get_header("WARC-Payload-Digest") or ""
        if expected and _digest_matches(expected, payload) is False:
            out.reason = "cc_digest_mismatch"
            return out
        record.raw_stream = io.BytesIO(payload)  # content_stream() undoes chunking / content-encoding
        body = record.content_stream().read(max_body_bytes + 1)
    except (
        ArchiveLoadFailed,
        StatusAndHeadersParserException,
        ChunkedDataException,
        zlib.error,
        EOFError,
        OSError,
        ValueError,
        LookupError,
    ):
        return Record("cc_record_corrupt")
    if len(body) > max_body_bytes:
        out.reason = "too_large"
        return out
    out.body = body
    return out


# ---------------------------------------------------------------------------------------------
# HTTP: the live backend's machinery, with index answers read on 404 and ranged GETs


class _IndexError(Exception):
    def __init__(self, why: str, status: int = 0):
        super().__init__(why)
        self.why = why
        self.status = status


class CommonCrawlClient(LiveBackend):
    """:class:`LiveBackend`'s ``_get`` (address checks, deadline, retries, Retry-After, per-host interval)
    with its own exchange: an index query's body is read on 404 too (the "No Captures found" answer), and
    :meth:`get_range` sends ``Range`` and accepts only the matching 206 answer."""

    def __init__(self, cfg: FetchConfig, **kwargs):
        super().__init__(cfg, **kwargs)
        self._span = threading.local()  # (start, length) of the running ranged GET, per thread

    def get_range(self, url: str, start: int, length: int) -> bytes:
        """Bytes ``start`` .. ``start + length - 1`` of ``url``; raises ``_Failure`` (``cc_range_unsupported``
        when the server answers 200 or another range, ``http_<code>``, the live reasons)."""
        self._span.value = (start, length)
        try:
            status, _, body, _ = self._get(url, length, check_type=False)
        finally:
            self._span.value = None
        if status != 206:
            raise _Failure(f"http_{status}", status)
        return body

    def _exchange(self, url: str, max_bytes: int, check_type: bool, deadline):
        span = getattr(self._span, "value", None)
        headers = {}
        if span is not None:
            start, length = span
            # identity: the range is of the file's own bytes, and the body is not decoded on the way
            headers = {"Range": f"bytes={start}-{start + length - 1}", "Accept-Encoding": "identity"}
        resp = self.session.get(
            url,
            stream=True,
            allow_redirects=False,
            timeout=(self.cfg.connect_timeout_s, self.cfg.read_timeout_s),
            headers=headers,
        )
        try:
            status, got = resp.status_code, resp.headers
            ctype = _mime(got.get("Content-Type", ""))
            if span is None:  # an index query: 200 lines, or 404 "No Captures found"
                body = self._read(resp, max_bytes, deadline) if status in (200, 404) else b""
                return status, got, body, ctype
            if status == 200:  # the whole file is coming: hang up before reading any of it
                raise _Failure("cc_range_unsupported", status)
            if status != 206:
                return status, got, b"", ctype
            m = _CONTENT_RANGE.fullmatch(got.get("Content-Range", "").strip())
            encoding = got.get("Content-Encoding", "").strip().lower()
            if (
                not m
                or (int(m.group(1)), int(m.group(2))) != (start, start + length - 1)
                or encoding not in ("", "identity")
            ):
                raise _Failure("cc_range_unsupported", status)
            return status, got, self._read(resp, length, deadline), ctype
        finally:
            resp.close()


# ---------------------------------------------------------------------------------------------
# the backend


class CommonCrawlBackend:
    name = "commoncrawl"

    def __init__(self, cfg: FetchConfig, cc: CommonCrawlConfig | None = None, **client_kwargs):
        """``client_kwargs`` go to :class:`LiveBackend` (``session``, ``sleep``, ``resolver``, ``clock``)."""
        self.cfg = cfg
        self.cc = cc or CommonCrawlConfig.from_params(getattr(cfg, "commoncrawl", None))
        self.index_url = self.cc.index_url.rstrip("/")
        self.data_url = self.cc.data_url.rstrip("/")
        self.client = CommonCrawlClient(cfg, **client_kwargs)

    @property
    def cache_key(self) -> str:
        """The fetch cache's backend name: the backend and the settings that choose the capture."""
        chosen = {"crawls": list(self.cc.crawls), "max_captures": self.cc.max_captures}
        chosen["fallback_date"] = self.cc.fallback_date
        return f"{self.name}:{json.dumps(chosen, sort_keys=True)}"

    def _fail(self, url: str, reason: str, status: int = 0, capture: Capture | None = None) -> FetchResult:
        return FetchResult(
            url=url,
            ok=False,
            reason=reason,
            status=status,
            final_url=capture.url if capture else "",
            source=self.name,
            snapshot=capture.timestamp if capture else "",
        )

    def lookup(self, crawl: str, url: str) -> list[Capture]:
        """The captures of ``url`` in one crawl's index (empty: "No Captures found"); raises ``_IndexError``."""
        query = urlencode({"url": url, "output": "json", "limit": self.cc.max_captures})
        api = f"{self.index_url}/{crawl}-index?{query}"
        try:
            status, _, body, _ = self.client._get(api, INDEX_MAX_BYTES, check_type=False)
        except _Failure as f:
            raise _IndexError(f.reason, f.status) from None
        if status == 404 and b"no captures found" in body.lower():
            return []
        if status != 200:
            raise _IndexError(f"http_{status}", status)
        captures, bad = parse_cdx_lines(body, crawl, self.cc.max_captures)
        if bad:
            log.warning("%s index: %d unreadable line(s) for %s skipped", crawl, bad, url)
            if not captures:
                raise _IndexError("no readable line", status)
        return captures

    def fetch(self, url: str, access_date: str = "", archive_url: str = "") -> FetchResult:
        target = url.strip()
        try:
            parts = urlsplit(target)
            ok_url = parts.scheme in ("http", "https") and bool(parts.hostname)
        except ValueError:
            ok_url = False
        if not ok_url:
            return self._fail(url, "unsupported_url")
        captures: list[Capture] = []
        for crawl in self.cc.crawls:
            try:
                captures.extend(self.lookup(crawl, target))
            except _IndexError as err:
                log.warning("Common Crawl index %s for %s: %s", crawl, target, err.why)
                return self._fail(url, "cc_index_error", err.status)
        if not captures:
            return self._fail(url, "cc_not_in_index")
        capture = choose_capture(captures, self.cfg.content_types, target_day(access_date, self.cc.fallback_date))
        if capture is None:
            return self._fail(url, "cc_no_html_capture")
        return self._fetch_capture(url, capture)

    def _fetch_capture(self, url: str, capture: Capture) -> FetchResult:
        if capture.length > self.cfg.max_body_bytes + RECORD_OVERHEAD:
            return self._fail(url, "too_large", capture=capture)
        try:
            data = self.client.get_range(f"{self.data_url}/{capture.filename}", capture.offset, capture.length)
        except _Failure as f:
            reason = f.reason if f.reason.startswith("cc_") else f"cc_data_{f.reason}"
            return self._fail(url, reason, f.status, capture)
        rec = read_record(data, self.cfg.max_body_bytes)
        if not rec.reason and rec.target_uri != capture.url:  # another page's record: the index is wrong
            rec.reason = "cc_record_corrupt"
        if rec.reason:
            log.warning("%s: %s in %s at %d+%d", url, rec.reason, capture.filename, capture.offset, capture.length)
            return self._fail(url, rec.reason, rec.status, capture)
        if rec.status != 200:
            return self._fail(url, f"http_{rec.status}", rec.status, capture)
        if rec.content_type not in self.cfg.content_types:
            return self._fail(url, "bad_content_type", rec.status, capture)
        return FetchResult(
            url=url,
            ok=True,
            status=200,
            final_url=capture.url,
            content_type=rec.content_type,
            source=self.name,
            snapshot=capture.timestamp,
            body=rec.body,
        )
