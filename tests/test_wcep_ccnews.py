"""CC-NEWS candidate articles from WARC files (wikiref.stages.wcep.ccnews)."""

from __future__ import annotations

import gzip
import io
import logging

import pytest

from wikiref.examples import Tally
from wikiref.files import stable_id
from wikiref.stages.wcep.ccnews import Article, article_id, iter_articles, page_date, warc_day
from wikiref.web.extract import ExtractConfig
from wikiref.web.warc import normalise_url

SENTENCES = (
    "The national parliament approved the new budget after a long debate on Tuesday evening. "
    "Ministers said the plan would fund hospitals, schools and roads across the country. "
    "Opposition leaders criticised the spending cuts and promised to challenge them in court. "
    "Economists expect the measures to reduce the deficit over the next three years. "
)


def html(title: str, published: str = "", n: int = 3) -> bytes:
    meta = f'<meta property="article:published_time" content="{published}T08:30:00+00:00">' if published else ""
    paras = "".join(f"<p>{SENTENCES}</p>" for _ in range(n))
    return (
        f"<html><head><title>{title}</title>{meta}</head><body><article><h1>{title}</h1>{paras}</article></body></html>"
    ).encode()


def write_warc(path, records, *, gzip_records: bool = True) -> list[int]:
    """records: dicts url, body, [status, ctype, rec_type, date, standin]; returns the record offsets."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    buf = io.BytesIO()
    writer = WARCWriter(buf, gzip=gzip_records, warc_version="1.0")
    offsets = []
    for r in records:
        body = r.get("body", b"")
        rec_type = r.get("rec_type", "response")
        headers = {"WARC-Record-ID": f"<urn:uuid:{stable_id(r['url'], str(len(offsets)), length=32)}>"}
        if r.get("date", "2019-03-05T12:00:00Z"):
            headers["WARC-Date"] = r.get("date", "2019-03-05T12:00:00Z")
        if r.get("standin"):
            headers["WARC-Wikiref-Standin"] = "true"
        http = None
        if rec_type == "response":
            http = StatusAndHeaders(
                r.get("status", "200 OK"),
                [("Content-Type", r.get("ctype", "text/html; charset=utf-8")), ("Content-Length", str(len(body)))],
                protocol="HTTP/1.1",
            )
        elif rec_type == "request":
            http = StatusAndHeaders("GET / HTTP/1.1", [("Host", "example.org")], is_http_request=True)
        offsets.append(buf.tell())
        writer.write_record(
            writer.create_warc_record(
                r["url"],
                rec_type,
                payload=io.BytesIO(body),
                length=len(body),
                http_headers=http,
                warc_headers_dict=headers,
            )
        )
    path.write_bytes(buf.getvalue())
    return offsets


def run(paths, **kw) -> tuple[list[Article], Tally]:
    tally = Tally()
    return list(iter_articles(paths, tally, **kw)), tally


def test_articles_dates_drops_and_counters(tmp_path):
    recs = [
        {"url": "http://example.org/", "rec_type": "warcinfo", "body": b"software: test\r\n"},
        {"url": "https://News.Example.com:443/a?x=1#frag", "body": html("Budget approved", "2019-03-04")},
        {"url": "https://news.example.com/a?x=1", "rec_type": "request"},
        {"url": "https://news.example.com/b", "body": html("Undated budget story"), "date": "2019-03-06T23:10:00Z"},
        {"url": "https://news.example.com/gone", "body": html("Gone"), "status": "404 Not Found"},
        {"url": "https://news.example.com/feed.json", "body": b'{"a": 1}', "ctype": "application/json"},
        {"url": "https://news.example.com/a?x=1", "body": html("Budget approved again", "2019-03-04")},
        {"url": "https://news.example.com/short", "body": b"<html><body><p>Too short.</p></body></html>"},
        {"url": "https://news.example.com/nodate", "body": html("No date anywhere"), "date": "unknown"},
        {"url": "https://news.example.com/standin", "body": html("Stand-in", "2019-03-05"), "standin": True},
    ]
    path = tmp_path / "CC-NEWS-1.warc.gz"
    offsets = write_warc(path, recs)
    arts, tally = run([path])

    assert [a.url for a in arts] == [
        "https://News.Example.com:443/a?x=1#frag",
        "https://news.example.com/b",
        "https://news.example.com/standin",
    ]
    a, b, s = arts
    assert a.article_id == stable_id(normalise_url(a.url)) == stable_id("https://news.example.com/a?x=1")
    assert article_id("https://news.example.com/a?x=1") == a.article_id
    assert (a.date, a.date_origin) == ("2019-03-04", "published")
    assert a.title == "Budget approved" and "parliament approved the new budget" in a.text
    assert a.location == f"CC-NEWS-1.warc.gz:{offsets[1]}"
    assert (b.date, b.date_origin) == ("2019-03-06", "crawl")  # nothing in the page: WARC-Date's day
    assert not a.standin and not b.standin and s.standin

    c = tally.counts
    assert c["records"] == len(recs)
    assert c["records:not_response"] == 2  # warcinfo + request
    assert c["dropped:http_404"] == 1
    assert c["dropped:not_html"] == 1
    assert c["dropped:duplicate_url"] == 1
    assert c["dropped:extract:too_short"] == 1
    assert c["dropped:no_date"] == 1
    assert c["articles"] == 3 and c["date:published"] == 2 and c["date:crawl"] == 1
    assert c["articles:standin"] == 1
    assert tally.locations["duplicate_url"] == [f"CC-NEWS-1.warc.gz:{offsets[6]}"]
    assert tally.locations["no_date"] == [f"CC-NEWS-1.warc.gz:{offsets[8]}"]
    assert not any(k.startswith("dropped:truncated") for k in c)


def test_failed_first_copy_does_not_block_a_later_good_one(tmp_path):
    path = tmp_path / "x.warc.gz"
    write_warc(
        path,
        [
            {"url": "https://n.example.com/p", "body": html("Gone"), "status": "500 Internal Server Error"},
            {"url": "https://n.example.com/p", "body": html("Back", "2019-01-02")},
            {"url": "https://n.example.com/p", "body": html("Again", "2019-01-02")},
        ],
    )
    arts, tally = run([path])
    assert [a.title for a in arts] == ["Back"]
    assert tally.counts["dropped:http_500"] == 1 and tally.counts["dropped:duplicate_url"] == 1


def test_truncated_archive_is_counted_and_reading_goes_on(tmp_path):
    recs = [{"url": f"https://n.example.com/{i}", "body": html(f"Story {i}", "2019-02-0{i + 1}")} for i in range(3)]
    whole = tmp_path / "whole.warc.gz"
    write_warc(whole, recs)
    data = whole.read_bytes()
    cut = tmp_path / "cut.warc.gz"
    cut.write_bytes(data[: len(data) - 40])  # inside the last record's gzip member
    trailer = tmp_path / "trailer.warc.gz"
    trailer.write_bytes(data[: len(data) - 4])  # text complete, gzip trailer missing
    garbage = tmp_path / "garbage.warc.gz"
    garbage.write_bytes(gzip.compress(b"this is not a WARC file at all\r\n" * 10))
    after = tmp_path / "after.warc.gz"
    write_warc(after, [{"url": "https://n.example.com/after", "body": html("After", "2019-02-09")}])

    arts, tally = run([cut, garbage, trailer, after])
    titles = [a.title for a in arts]
    # the cut record is not used; the same URLs from the other file are then duplicates
    assert titles == ["Story 0", "Story 1", "After"]
    assert tally.counts["dropped:truncated_archive"] == 3
    assert tally.locations["truncated_archive"] == ["cut.warc.gz", "garbage.warc.gz", "trailer.warc.gz"]
    assert tally.counts["dropped:duplicate_url"] == 2


def test_uncompressed_warc_and_its_truncation(tmp_path):
    recs = [{"url": f"https://n.example.com/{i}", "body": html(f"Story {i}", "2019-02-0{i + 1}")} for i in range(2)]
    plain = tmp_path / "plain.warc"
    write_warc(plain, recs, gzip_records=False)
    arts, tally = run([plain])
    assert [a.title for a in arts] == ["Story 0", "Story 1"]
    data = plain.read_bytes()
    cut = tmp_path / "cut.warc"
    cut.write_bytes(data[: len(data) - 300])
    arts, tally = run([cut])
    assert [a.title for a in arts] == ["Story 0"]
    assert tally.locations["truncated_archive"] == ["cut.warc"]


def test_missing_file_raises_before_reading(tmp_path):
    with pytest.raises(FileNotFoundError):
        run([tmp_path / "nope.warc.gz"])


def test_extraction_config_and_dates_off(tmp_path):
    path = tmp_path / "x.warc.gz"
    write_warc(path, [{"url": "https://n.example.com/a", "body": html("Budget", "2019-03-01"), "date": "bad"}])
    arts, tally = run([path], extract_cfg=ExtractConfig(min_doc_chars=10_000))
    assert arts == [] and tally.counts["dropped:extract:too_short"] == 1
    # without htmldate and without a usable WARC-Date there is no date at all
    arts, tally = run([path], find_dates=False)
    assert arts == [] and tally.counts["dropped:no_date"] == 1


def test_progress_is_logged(tmp_path, caplog):
    path = tmp_path / "x.warc.gz"
    write_warc(path, [{"url": f"https://n.example.com/{i}", "body": b"<html></html>"} for i in range(4)])
    with caplog.at_level(logging.INFO, logger="wikiref.stages.wcep.ccnews"):
        run([path], progress_every=2)
    assert sum("records read" in m for m in caplog.messages) == 2


def test_helpers():
    assert warc_day("2019-03-05T23:59:59Z") == "2019-03-05"
    assert warc_day("2019-02-30T00:00:00Z") == "" and warc_day("") == "" and warc_day(None) == ""
    page = html("Story", "2019-03-01")
    assert page_date(page) == "2019-03-01"
    # a date after the crawl day + 1 is not believed
    assert page_date(page, crawl_day="2019-02-20") == ""
    assert page_date(b"<html><body><p>no date</p></body></html>") == ""
    # the date in the URL counts as found in the page
    assert page_date(b"<html><body><p>x</p></body></html>", "https://n.example.com/2018/07/14/story") == "2018-07-14"
