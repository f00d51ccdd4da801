"""Candidate articles for the WCEP extension, read from local CC-NEWS WARC files (WCEP §3).

The paper looks for additional source articles in Common Crawl's news crawl (CC-NEWS) and keeps
those that the article-summary classifier (:mod:`wikiref.stages.wcep.classifier`) assigns to an
event published within ±1 day. This module turns WARC files (``.warc.gz`` or plain ``.warc``)
into :class:`Article` rows: id, URL, title, main text, publication date.

Per record, in this order (the first failing check decides; everything is counted in ``tally``,
a :class:`wikiref.examples.Tally`):

* every record read: ``records``; not a ``response`` record (warcinfo, request, metadata...):
  ``records:not_response`` (not a drop: such records are not candidate pages);
* drops (``dropped:<reason>``, with ``<file>:<offset>`` locations): ``no_url`` (no
  WARC-Target-URI), ``no_http_headers``, ``http_<status>`` (any HTTP status other than 200),
  ``not_html`` (Content-Type neither ``text/html`` nor ``application/xhtml+xml``; a missing
  Content-Type counts as not HTML), ``too_large`` (body over ``max_body_bytes``),
  ``duplicate_url`` (the normalised URL already gave an article: the first article is kept),
  ``extract:<reason>`` (:func:`wikiref.web.extract.extract_document` found no usable
  main text: ``empty_page``, ``boilerplate_only``, ``too_short``, ``non_english``, or ``error``
  when the extractor raised), ``no_date`` (no date in the page and no usable WARC-Date);
* ``truncated_archive`` (location: the file name): a file whose gzip member or record block
  ends early, or that cannot be decoded at all. The record being read is not used (its text
  may be cut), the rest of that file is skipped and reading continues with the next file;
* kept: ``articles``, ``date:published`` / ``date:crawl`` (where the date came from) and
  ``articles:standin`` (records marked ``WARC-Wikiref-Standin: true``, the offline sample).

Choices where the paper is silent (it used newspaper3k on CC-NEWS and gives no details):

* Text and title come from the project's trafilatura extractor with the same settings as the
  WikiRef cited pages (``ExtractConfig``: English only, at least ``min_doc_chars`` characters).
* Publication date: ``htmldate.find_date`` on the page bytes (never a URL string, so htmldate
  cannot download anything) with ``original_date=True`` (the first publication, not the last
  update, since the window is relative to the event date), ``extensive_search=False`` (htmldate's
  fast mode: header metadata, JSON-LD, time/abbr elements, the URL and precise patterns; the
  opportunistic free-text scan is skipped for speed) and ``max_date`` = the crawl day + 1 (a page
  cannot have been published after it was crawled; +1 for time zones). A date htmldate finds in
  the page's URL counts as ``published``. Without a page date the WARC-Date's day is used
  (``date_origin="crawl"``): CC-NEWS crawls news sites continuously, so the crawl day is a close
  upper bound of the publication day.
* Duplicates are decided on :func:`wikiref.web.warc.normalise_url` among the records
  that became articles, and checked before extraction (a duplicate costs nothing). A first
  record that failed (e.g. a 404 or an empty page) does not block a later good copy.
* Truncation is detected from the archive itself (the record's gzip member did not reach its
  end, or an uncompressed record block is shorter than its Content-Length): warcio reads a cut
  file without complaint and would otherwise hand out cut pages.

At CC-NEWS scale (millions of records) progress is logged every ``progress_every`` records.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

from wikiref.files import stable_id
from wikiref.web.extract import ExtractConfig, extract_document
from wikiref.web.warc import normalise_url

log = logging.getLogger(__name__)

HTML_TYPES = ("text/html", "application/xhtml+xml")
STANDIN_HEADER = "WARC-Wikiref-Standin"
DEFAULT_EXTRACT = ExtractConfig()  # the WikiRef cited-page settings
_MAX_BODY = 10_000_000  # bytes; CC-NEWS pages are far smaller, a larger body is not an article
_ISO_DAY = re.compile(r"^(\d{4})-(\d{2})-(\d{2})")


@dataclass(frozen=True)
class Article:
    article_id: str  # stable_id(normalise_url(url))
    url: str
    title: str
    text: str  # main text (trafilatura)
    date: str  # "YYYY-MM-DD" publication date, "" if unknown
    date_origin: str  # "published" (htmldate found it in the page) or "crawl" (WARC-Date)
    standin: bool  # the record has the header WARC-Wikiref-Standin: true
    location: str  # "<file>:<record offset>"


class _Truncated(Exception):
    """The archive ends inside a record (or cannot be decoded)."""


def article_id(url: str) -> str:
    """The id of the article at ``url``: :func:`stable_id` of its normalised URL."""
    return stable_id(normalise_url(url))


def warc_day(value: str | None) -> str:
    """The day ``YYYY-MM-DD`` of a WARC-Date (``2019-01-01T12:00:00Z``), or ``""`` if unusable."""
    m = _ISO_DAY.match((value or "").strip())
    if not m:
        return ""
    try:
        return date(int(m[1]), int(m[2]), int(m[3])).isoformat()
    except ValueError:
        return ""


def page_date(body: bytes, url: str = "", crawl_day: str = "") -> str:
    """Publication day found in the page by htmldate (fast mode, original date), ``""`` if none.

    ``crawl_day`` (``YYYY-MM-DD``), when given, caps the date at that day + 1."""
    from htmldate import find_date

    max_date = None
    if crawl_day:
        max_date = (date.fromisoformat(crawl_day) + timedelta(days=1)).isoformat()
    try:
        found = find_date(
            bytes(body),  # bytes, never a str: htmldate downloads a str that looks like a URL
            extensive_search=False,
            original_date=True,
            outputformat="%Y-%m-%d",
            url=url or None,
            max_date=max_date,
        )
    except Exception as err:  # htmldate on broken markup: no date rather than a crashed run
        log.debug("htmldate failed on %s: %s", url, err)
        return ""
    return warc_day(found) if found else ""


def _content_type(record) -> str:
    value = record.http_headers.get_header("Content-Type") or ""
    return value.split(";", 1)[0].strip().lower()


def _check_complete(it, record) -> None:
    """Raise :class:`_Truncated` when the record just read is cut short (call after reading it)."""
    it.get_record_offset()  # reads the record to its end (warcio), nothing more
    reader = getattr(it, "reader", None)
    decompressor = getattr(reader, "decompressor", None) if reader is not None else None
    if decompressor is not None:
        if not getattr(decompressor, "eof", True):
            raise _Truncated("gzip member ends early")
    elif getattr(record.raw_stream, "limit", 0) > 0:
        raise _Truncated("record block shorter than its Content-Length")


def _records(path: Path, tally, max_body_bytes: int, progress_every: int) -> Iterator[tuple[object, int, bytes | None]]:
    """(record, offset, body or None) of one file; body is read for HTML 200 responses only.

    Counts and drops the records that cannot be candidates; stops at a truncated/corrupt file."""
    from warcio.archiveiterator import ArchiveIterator

    name = path.name
    try:
        with open(path, "rb") as fh:
            it = ArchiveIterator(fh)
            while True:
                try:
                    record = next(it)
                except StopIteration:
                    return
                body = None
                reason = ""
                if record.rec_type == "response":
                    reason, body = _read_response(record, max_body_bytes)
                _check_complete(it, record)
                offset = it.get_record_offset()
                tally.counts["records"] += 1
                if progress_every and tally.counts["records"] % progress_every == 0:
                    log.info("%d records read, %d articles kept", tally.counts["records"], tally.counts["articles"])
                if record.rec_type != "response":
                    tally.counts["records:not_response"] += 1
                    continue
                if reason:
                    tally.drop(reason, f"{name}:{offset}")
                    continue
                yield record, offset, body
    except _Truncated as err:
        log.warning("%s: truncated archive (%s); skipping the rest of the file", path, err)
        tally.drop("truncated_archive", name)
    except Exception as err:  # warcio/zlib on a corrupt file: count it, go on with the next file
        log.warning("%s: unreadable archive (%s: %s); skipping the rest", path, type(err).__name__, err)
        tally.drop("truncated_archive", name)


def _read_response(record, max_body_bytes: int) -> tuple[str, bytes | None]:
    """(drop reason or "", body) of a response record."""
    if not record.rec_headers.get_header("WARC-Target-URI"):
        return "no_url", None
    if record.http_headers is None:
        return "no_http_headers", None
    try:
        status = int(record.http_headers.get_statuscode() or 0)
    except ValueError:
        status = 0
    if status != 200:
        return f"http_{status}", None
    if _content_type(record) not in HTML_TYPES:
        return "not_html", None
    body = record.content_stream().read(max_body_bytes + 1)
    if len(body) > max_body_bytes:
        return "too_large", None
    return "", body


def iter_articles(
    paths: Sequence[str | Path],
    tally,
    *,
    extract_cfg: ExtractConfig = DEFAULT_EXTRACT,
    progress_every: int = 10_000,
    max_body_bytes: int = _MAX_BODY,
    find_dates: bool = True,
) -> Iterator[Article]:
    """The candidate articles of the WARC files ``paths``, in file and record order.

    ``tally`` (:class:`wikiref.examples.Tally`) receives the counters and drops listed in the module
    docstring. ``find_dates=False`` skips htmldate and dates every article by its WARC-Date. A
    missing file raises :class:`FileNotFoundError` before anything is read."""
    files = [Path(p) for p in paths]
    for f in files:
        if not f.is_file():
            raise FileNotFoundError(f"CC-NEWS WARC file {f} not found")
    seen: set[str] = set()
    for f in files:
        log.info("reading %s", f)
        before = tally.counts["records"]
        for record, offset, body in _records(f, tally, max_body_bytes, progress_every):
            where = f"{f.name}:{offset}"
            url = record.rec_headers.get_header("WARC-Target-URI").strip().strip("<>")
            aid = article_id(url)
            art = None
            if aid in seen:
                tally.drop("duplicate_url", where)
            else:
                art = _article(record, body, url, aid, where, tally, extract_cfg, find_dates)
            if art is not None:
                seen.add(aid)
                tally.counts["articles"] += 1
                tally.counts[f"date:{art.date_origin}"] += 1
                if art.standin:
                    tally.counts["articles:standin"] += 1
                yield art
        log.info("%s: %d records", f.name, tally.counts["records"] - before)
    log.info(
        "CC-NEWS: %d records, %d articles from %d file(s)",
        tally.counts["records"],
        tally.counts["articles"],
        len(files),
    )


def _article(record, body, url, aid, where, tally, cfg, find_dates) -> Article | None:
    try:
        ex = extract_document(body, url, cfg)
    except Exception as err:  # a page that breaks the extractor is one drop, not a crashed run
        log.debug("extraction failed for %s: %s", url, err)
        tally.drop("extract:error", where)
        return None
    if not ex.ok:
        tally.drop(f"extract:{ex.reason}", where)
        return None
    crawl_day = warc_day(record.rec_headers.get_header("WARC-Date"))
    day = page_date(body, url, crawl_day) if find_dates else ""
    origin = "published"
    if not day:
        day, origin = crawl_day, "crawl"
    if not day:
        tally.drop("no_date", where)
        return None
    standin = (record.rec_headers.get_header(STANDIN_HEADER) or "").strip().lower() == "true"
    return Article(
        article_id=aid,
        url=url,
        title=ex.title,
        text=ex.text,
        date=day,
        date_origin=origin,
        standin=standin,
        location=where,
    )


__all__ = ["Article", "HTML_TYPES", "article_id", "iter_articles", "page_date", "warc_day"]
