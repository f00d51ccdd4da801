"""The commoncrawl fetch backend on loopback: a fake CDX index server (two crawls) and a fake WARC file written
with warcio (so offsets and lengths are real), served with HTTP Range support. The server logs every request
(time, path, Range header, query), so the tests assert what went over the wire, not only the outcome."""

from __future__ import annotations

import gzip
import io
import json
import threading
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pyarrow.parquet as pq
import pytest
import yaml
from loopback_fetch import loopback_fetch_config
from send_log import SendLog, assert_interval_after_each_send

from wikiref.stages.collect.pipeline import run_part
from wikiref.web.commoncrawl import (
    Capture,
    CommonCrawlBackend,
    CommonCrawlConfig,
    choose_capture,
    parse_cdx_lines,
    read_record,
    target_day,
)
from wikiref.web.fetch import AddressRefused, CachedFetcher, FetchConfig, make_fetcher

REPO = Path(__file__).resolve().parents[1]
OLD, NEW = "CC-MAIN-2018-51", "CC-MAIN-2019-04"
WARC_NAME = f"crawl-data/{OLD}/segments/1544376823009.19/warc/{OLD}-20181210000000-00001.warc.gz"
HTML = "text/html; charset=utf-8"

STORY = "http://example.org/story"  # cited URL; captured as CAPTURED (the index matches by SURT key)
CAPTURED = "https://www.example.org/story"
NOHTML = "http://example.org/doc"  # only a 404 and a PDF capture
MISSING = "http://example.org/missing"  # in no crawl
CORRUPT = "http://example.org/corrupt"  # the record's bytes are damaged
CUT = "http://example.org/cut"  # the index length stops short of the member's end
DIGEST = "http://example.org/digest"  # the record's WARC-Payload-Digest does not match its payload
WRONG = "http://example.org/wrong"  # the index points at another page's record
BIG = "http://example.org/big"  # the body is larger than max_body_bytes
HUGE = "http://example.org/huge"  # the index says the record is far larger than max_body_bytes
GARBLED = "http://example.org/garbled"  # the index answers lines that are not captures


def page(title: str) -> bytes:
    paras = "".join(
        f"<p>In {1921 + i} the harbour of {title} was rebuilt after the storm destroyed the old piers and the "
        "warehouses along the river front, and trade returned within a few years.</p>"
        for i in range(4)
    )
    return f"<html><head><title>{title}</title></head><body><article>{paras}</article></body></html>".encode()


# ---------------------------------------------------------------------------------------------
# the fake WARC file and index


def build_warc(records) -> tuple[bytes, dict]:
    """(file bytes, {key: (offset, length)}): each record one gzip member, as Common Crawl writes them."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    buf = io.BytesIO()
    w = WARCWriter(buf, gzip=True)
    w.write_record(w.create_warcinfo_record(WARC_NAME.rsplit("/", 1)[1], {"software": "wikiref-test"}))
    locs = {}
    for key, uri, status, ctype, body, extra in records:
        start = buf.tell()
        http = StatusAndHeaders(status, [("Content-Type", ctype), ("Content-Length", str(len(body)))], "HTTP/1.1")
        w.write_record(
            w.create_warc_record(
                uri, "response", payload=io.BytesIO(body), length=len(body), http_headers=http, warc_headers_dict=extra
            )
        )
        locs[key] = (start, buf.tell() - start)
    return buf.getvalue(), locs


def damage(member: bytes) -> bytes:
    """The same length, bytes in the middle of the deflate stream changed."""
    mid = len(member) // 2
    return member[:mid] + bytes(b ^ 0x5A for b in member[mid : mid + 16]) + member[mid + 16 :]


def make_archive():
    records = [
        ("A1", CAPTURED, "200 OK", HTML, page("Capture one"), {}),
        ("A2", CAPTURED, "200 OK", HTML, page("Capture two"), {}),
        ("A5", CAPTURED, "200 OK", HTML, page("Capture five"), {}),
        ("A3", CAPTURED, "200 OK", HTML, page("Capture three"), {}),
        ("A4", CAPTURED, "200 OK", HTML, page("Capture four"), {}),
        ("X", CORRUPT, "200 OK", HTML, page("Corrupt"), {}),
        ("C", CUT, "200 OK", HTML, page("Cut"), {}),
        ("D", DIGEST, "200 OK", HTML, page("Digest"), {"WARC-Payload-Digest": "sha1:" + "A" * 32}),
        ("B", BIG, "200 OK", HTML, b"<html><body>" + b"word " * 2000 + b"</body></html>", {}),
    ]
    data, locs = build_warc(records)
    off, length = locs["X"]
    data = data[:off] + damage(data[off : off + length]) + data[off + length :]
    return data, locs


def cdx(url, ts, loc, status="200", mime="text/html", captured=None):
    offset, length = loc
    return {
        "urlkey": "org,example)/" + urlsplit(url).path.strip("/"),
        "timestamp": ts,
        "url": captured or url,
        "mime": mime,
        "mime-detected": mime,
        "status": status,
        "digest": "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ",
        "length": str(length),
        "offset": str(offset),
        "filename": WARC_NAME,
    }


def make_index(locs):
    L = locs
    return {
        OLD: {
            STORY: [
                cdx(STORY, "20181210120000", L["A1"], captured=CAPTURED),
                cdx(STORY, "20181213120000", L["A2"], captured=CAPTURED),
                cdx(STORY, "20181214090000", L["A2"], status="404", captured=CAPTURED),  # on the day, but a 404
                cdx(STORY, "20181214100000", L["A2"], mime="application/pdf", captured=CAPTURED),  # and not HTML
                cdx(STORY, "20181215120000", L["A5"], captured=CAPTURED),
            ],
            NOHTML: [
                cdx(NOHTML, "20181211000000", L["A1"], status="404"),
                cdx(NOHTML, "20181212000000", L["A1"], mime="application/pdf"),
            ],
            CORRUPT: [cdx(CORRUPT, "20181212000000", L["X"])],
            CUT: [cdx(CUT, "20181212000000", (L["C"][0], L["C"][1] - 10))],
            DIGEST: [cdx(DIGEST, "20181212000000", L["D"])],
            WRONG: [cdx(WRONG, "20181212000000", L["A1"])],
            BIG: [cdx(BIG, "20181212000000", L["B"])],
            HUGE: [cdx(HUGE, "20181212000000", (L["B"][0], 900_000_000))],
            GARBLED: ["<html>busy</html>", {"url": GARBLED, "timestamp": "20181212000000"}],
        },
        NEW: {
            STORY: [
                cdx(STORY, "20190118120000", L["A3"], captured=CAPTURED),
                cdx(STORY, "20190122080000", L["A4"], captured=CAPTURED),
            ],
        },
    }


@pytest.fixture(scope="module")
def handler(loopback_handler):
    class CCHandler(loopback_handler):
        content_type = "application/json"

        def do_GET(self):
            srv = self.server
            parts = urlsplit(self.path)
            query = parse_qs(parts.query)
            with srv.lock:
                srv.log.append((time.time(), parts.path, self.headers.get("Range"), query))
                busy = srv.busy.pop(0) if srv.busy and parts.path.startswith(srv.busy[0]) else None
            if busy:  # Common Crawl's answer when it is overloaded
                return self.send(503, b"SlowDown", "text/plain", [("Retry-After", "1")])
            if parts.path.startswith("/index/"):
                return self.index(parts.path[len("/index/") :].removesuffix("-index"), query)
            if parts.path.startswith("/data/"):
                return self.data(parts.path[len("/data/") :])
            return self.send(404, b"")

        def index(self, crawl, query):
            srv = self.server
            if crawl not in srv.index:
                return self.send(404, b'{"message": "collection not found"}')
            url = query.get("url", [""])[0]
            lines = srv.index[crawl].get(url)
            if not lines:  # what index.commoncrawl.org answers
                return self.send(404, json.dumps({"message": f"No Captures found for: {url}"}).encode())
            limit = int(query.get("limit", ["0"])[0])
            lines = lines[:limit] if limit else lines
            body = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines).encode()
            return self.send(200, body, "text/x-ndjson")

        def data(self, name):
            srv = self.server
            if name != WARC_NAME:
                return self.send(404, b"", "text/plain")
            rng = self.headers.get("Range")
            if rng is None or srv.ignore_range:  # the whole file: streamed until the client hangs up
                self.send_response(200)
                self.send_header("Connection", "close")
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(srv.whole_size))
                self.end_headers()
                chunk = (srv.warc * (1 + (1 << 20) // len(srv.warc)))[: 1 << 20]
                sent = 0
                try:
                    while sent < srv.whole_size:
                        self.wfile.write(chunk)
                        sent += len(chunk)
                except OSError:
                    pass
                srv.whole_sent.append(sent)
                return None
            first, last = (int(x) for x in rng.removeprefix("bytes=").split("-"))
            body = srv.warc[first : last + 1]
            return self.send(
                206,
                body,
                "application/octet-stream",
                [("Content-Range", f"bytes {first}-{first + len(body) - 1}/{len(srv.warc)}")],
            )

    return CCHandler


@pytest.fixture()
def server(loopback_server, handler):
    warc, locs = make_archive()
    return loopback_server(
        handler,
        lock=threading.Lock(),
        log=[],
        busy=[],
        whole_sent=[],
        ignore_range=False,
        warc=warc,
        locs=locs,
        whole_size=256 << 20,  # what a client that ignored the refusal would have to read
        index=make_index(locs),
    )


def cc_section(srv, **kw):
    base = f"http://127.0.0.1:{srv.server_port}"
    section = dict(
        index_url=f"{base}/index", data_url=f"{base}/data/", crawls=[OLD, NEW], max_captures=50, fallback_date=""
    )
    return {**section, **kw}


def cfg(srv, tmp_path, cc=None, **kw):
    """The commoncrawl fetcher for ``srv``: the loopback settings the live-backend tests use too
    (``loopback_fetch_config``), two retries, a 10 s deadline; ``cc`` overrides the commoncrawl section's keys,
    ``kw`` the fetcher's."""
    commoncrawl = cc_section(srv, **(cc or {}))
    base = dict(backend="commoncrawl", retries=2, total_timeout_s=10, max_body_bytes=8000, commoncrawl=commoncrawl)
    return loopback_fetch_config(tmp_path, **{**base, **kw})


def requests_to(srv, prefix):
    return [(p, r, q) for _, p, r, q in srv.log if p.startswith(prefix)]


def range_of(srv, key):
    offset, length = srv.locs[key]
    return f"bytes={offset}-{offset + length - 1}"


# ---------------------------------------------------------------------------------------------
# the capture chosen, and only its bytes fetched


@pytest.mark.parametrize(
    ("access_date", "fallback", "expected", "ts"),
    [
        ("2018-12-14", "", "A5", "20181215120000"),  # 12 h after the day = 12 h before it: the later capture
        ("13 December 2018", "", "A2", "20181213120000"),  # a capture on the day itself
        ("2019-01-19", "", "A3", "20190118120000"),  # the other crawl; the earlier capture, closer
        ("", "", "A4", "20190122080000"),  # no access-date, no fallback: the latest
        ("", "2018-12-01", "A1", "20181210120000"),  # no access-date: the fallback date
        ("sometime", "2018-12-01", "A1", "20181210120000"),  # an unreadable access-date: the fallback date
    ],
)
def test_closest_capture_and_only_its_byte_range(server, tmp_path, access_date, fallback, expected, ts):
    backend = CommonCrawlBackend(cfg(server, tmp_path, cc={"fallback_date": fallback}))
    res = backend.fetch(STORY, access_date=access_date)
    title = {"A1": "one", "A2": "two", "A3": "three", "A4": "four", "A5": "five"}[expected]
    assert res.ok, res
    assert res.source == "commoncrawl" and res.url == STORY and res.final_url == CAPTURED
    assert res.snapshot == ts and res.status == 200 and res.content_type == "text/html"
    assert res.body == page(f"Capture {title}")
    index = requests_to(server, "/index/")
    assert [p for p, _, _ in index] == [f"/index/{OLD}-index", f"/index/{NEW}-index"]
    assert all(q["url"] == [STORY] and q["output"] == ["json"] and q["limit"] == ["50"] for _, _, q in index)
    # one request to the data server: exactly the chosen record's bytes, never the whole file
    assert requests_to(server, "/data/") == [(f"/data/{WARC_NAME}", range_of(server, expected), {})]


def test_cache_second_fetch_reaches_no_server(server, tmp_path):
    c = cfg(server, tmp_path)
    for _ in range(2):  # two "runs": fresh fetchers over the same cache folder
        f = make_fetcher(c)
        assert isinstance(f, CachedFetcher) and isinstance(f.backend, CommonCrawlBackend)
        assert f.fetch(STORY, access_date="2018-12-14").body == page("Capture five")
        assert f.fetch(MISSING).reason == "cc_not_in_index"  # failures are cached too
    assert len(server.log) == 2 + 1 + 2  # STORY: two index queries + one range; MISSING: two index queries
    assert f.cache_hits == 2 and f.fetched == 0
    # the cache key holds the crawls: other crawls are another lookup, never an outcome chosen from these
    other = make_fetcher(cfg(server, tmp_path, cc={"crawls": [NEW]}))
    assert other.fetch(STORY).snapshot == "20190122080000" and other.fetched == 1
    assert len(server.log) == 5 + 2


def test_not_in_index_and_no_html_capture(server, tmp_path):
    backend = CommonCrawlBackend(cfg(server, tmp_path))
    res = backend.fetch(MISSING, access_date="2018-12-14")
    assert not res.ok and res.reason == "cc_not_in_index" and res.source == "commoncrawl"
    res = backend.fetch(NOHTML, access_date="2018-12-11")
    assert not res.ok and res.reason == "cc_no_html_capture"
    assert requests_to(server, "/data/") == []  # neither reached the data server
    assert backend.fetch("ftp://example.org/x").reason == "unsupported_url"
    assert len(server.log) == 4


def test_index_errors_and_an_oversized_capture(server, tmp_path):
    # a crawl the server does not have: its 404 is not "No Captures found", so not a missing page
    res = CommonCrawlBackend(cfg(server, tmp_path, cc={"crawls": ["CC-MAIN-2000-01"]})).fetch(STORY)
    assert not res.ok and res.reason == "cc_index_error" and res.status == 404
    backend = CommonCrawlBackend(cfg(server, tmp_path))
    res = backend.fetch(GARBLED)  # a 200 answer without one readable line
    assert not res.ok and res.reason == "cc_index_error"
    res = backend.fetch(HUGE)  # a 900 MB record is not asked for
    assert not res.ok and res.reason == "too_large" and res.snapshot == "20181212000000"
    assert requests_to(server, "/data/") == []


def test_server_answering_200_to_a_range_is_refused(server, tmp_path):
    server.ignore_range = True
    res = CommonCrawlBackend(cfg(server, tmp_path)).fetch(STORY, access_date="2018-12-14")
    assert not res.ok and res.reason == "cc_range_unsupported" and res.status == 200
    assert requests_to(server, "/data/") == [(f"/data/{WARC_NAME}", range_of(server, "A5"), {})]  # not retried
    for _ in range(200):  # the handler stops writing when the client has hung up
        if server.whole_sent:
            break
        time.sleep(0.05)
    assert server.whole_sent and server.whole_sent[0] < 64 << 20, server.whole_sent  # far from the 256 MiB


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        (CORRUPT, "cc_record_corrupt"),  # damaged deflate stream
        (CUT, "cc_record_corrupt"),  # the range ends inside the member
        (WRONG, "cc_record_corrupt"),  # a record, but of another URL
        (DIGEST, "cc_digest_mismatch"),
        (BIG, "too_large"),
    ],
)
def test_bad_records_are_failures(server, tmp_path, url, reason):
    res = CommonCrawlBackend(cfg(server, tmp_path)).fetch(url, access_date="2018-12-12")
    assert not res.ok and res.reason == reason and res.source == "commoncrawl"
    assert len(requests_to(server, "/data/")) == 1  # a bad record is not fetched again


def test_slowdown_is_retried_then_succeeds(server, tmp_path):
    sleeps = []
    backend = CommonCrawlBackend(cfg(server, tmp_path, max_retry_after_s=5), sleep=sleeps.append)
    server.busy = [f"/index/{OLD}-index", "/data/"]  # the first index query and the first range request
    res = backend.fetch(STORY, access_date="2018-12-14")
    assert res.ok and res.body == page("Capture five")
    assert [p for p, _, _ in requests_to(server, "/index/")] == [f"/index/{OLD}-index"] * 2 + [f"/index/{NEW}-index"]
    assert [r for _, r, _ in requests_to(server, "/data/")] == [range_of(server, "A5")] * 2
    assert sleeps == [1.0, 1.0]  # Retry-After: 1 (longer than the 0.01 s backoff), each time
    # still busy after every retry: an index error, counted, not a crash
    server.busy = [f"/index/{OLD}-index"] * 3
    res = backend.fetch(DIGEST)
    assert not res.ok and res.reason == "cc_index_error" and res.status == 503
    server.busy = ["/data/"] * 3
    res = CommonCrawlBackend(cfg(server, tmp_path, max_retry_after_s=0), sleep=sleeps.append).fetch(WRONG)
    assert not res.ok and res.reason == "cc_data_http_503" and res.status == 503


def test_per_host_interval_holds(server, tmp_path):
    backend = CommonCrawlBackend(cfg(server, tmp_path, per_host_interval_s=0.3))
    sends = SendLog(backend.client)
    assert backend.fetch(STORY, access_date="2018-12-14").ok
    assert backend.fetch(DIGEST).reason == "cc_digest_mismatch"
    times = sorted(t for t, _, _, _ in server.log)
    assert len(times) == 6  # two URLs x (two index queries + one range request)
    (sent,) = sends.sent.values()  # index and data: one host here
    assert_interval_after_each_send(times, sent, 0.3)
    assert len(list((tmp_path / "cache" / "hosts").iterdir())) == 1  # index and data: one host here


def test_private_addresses_refused_without_the_test_switch(server, tmp_path):
    res = CommonCrawlBackend(cfg(server, tmp_path, allow_private_addresses=False)).fetch(STORY)
    assert not res.ok and res.reason == "cc_index_error"
    assert server.log == []  # nothing reached the loopback server

    def resolver(host, port):  # the data host resolving to a private address is refused as well
        import socket

        return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", ("10.0.0.7", port))]

    backend = CommonCrawlBackend(cfg(server, tmp_path, allow_private_addresses=False), resolver=resolver)
    with pytest.raises(AddressRefused):
        backend.client._resolve("data.commoncrawl.org", 443)


# ---------------------------------------------------------------------------------------------
# collect end to end


def test_collect_part_end_to_end(server, one_page_dump, tmp_path):
    wikitext = (
        f"The harbour was rebuilt.<ref>{{{{cite web|url={STORY}|title=S|access-date=14 December 2018}}}}</ref>\n\n"
        f"Never crawled.<ref>{{{{cite web|url={MISSING}|title=M}}}}</ref>\n\n"
        f"Damaged in the archive.<ref>{{{{cite web|url={CORRUPT}|title=C}}}}</ref>\n"
    )
    c = one_page_dump(wikitext, backend="commoncrawl", commoncrawl=cc_section(server))
    out = {"raw": tmp_path / "out" / "p1.parquet", "stats": tmp_path / "out" / "p1.stats.json"}
    stats = run_part({"collect": c}, {}, out, part="p1")
    n = len(server.log)
    assert n == 3 * 2 + 2  # three URLs x two crawls, then two range requests (MISSING has no capture)
    assert run_part({"collect": c}, {}, out, part="p1") == stats  # a second run: from the cache
    assert len(server.log) == n
    rows = pq.read_table(out["raw"]).to_pylist()
    assert [(r["statement"], r["fetch_source"], r["final_url"]) for r in rows] == [
        ("The harbour was rebuilt.", "commoncrawl", CAPTURED)
    ]
    assert rows[0]["doc_title"] == "Capture five" and "harbour of Capture five" in rows[0]["doc_text"]
    assert stats["examples"]["dropped"] == {"fetch:cc_not_in_index": 1, "fetch:cc_record_corrupt": 1}


# ---------------------------------------------------------------------------------------------
# the pieces


def test_parse_cdx_lines_skips_and_counts_bad_lines():
    good = cdx(STORY, "20181210120000", (10, 20))
    lines = [
        json.dumps(good),
        "",
        "not json",
        json.dumps([1, 2]),
        json.dumps({**good, "offset": "-1"}),
        json.dumps({**good, "length": "0"}),
        json.dumps({**good, "timestamp": "20181310120000"}),  # month 13
        json.dumps({**good, "filename": "../../etc/passwd"}),
        json.dumps({**good, "filename": "http://elsewhere.example/x.warc.gz"}),
        json.dumps({**good, "filename": WARC_NAME + "\n"}),  # a whole-string match, not "$"
        json.dumps({**good, "timestamp": "\u0662\u0660\u0661\u0668" + "1210120000"}),  # ASCII digits only
        json.dumps({**good, "status": 200, "offset": 5, "length": 7}),  # numbers are fine
        "[" * 5000,
    ]
    caps, bad = parse_cdx_lines("\n".join(lines).encode(), OLD, 100)
    assert [(c.offset, c.length, c.status) for c in caps] == [(10, 20, "200"), (5, 7, "200")]
    assert bad == 10 and caps[0].crawl == OLD and caps[0].filename == WARC_NAME
    caps, bad = parse_cdx_lines("\n".join(lines).encode(), OLD, 3)  # max_lines counts non-blank lines read
    assert len(caps) == 1 and bad == 2


def test_choose_capture_rules():
    def cap(ts, status="200", mime="text/html", crawl=OLD):
        return Capture(crawl, ts, STORY, mime, status, "", 0, 1, "f.warc.gz")

    types = ("text/html", "application/xhtml+xml")
    caps = [cap("20181213120000"), cap("20181215120000"), cap("20181214000000", status="404")]
    assert choose_capture(caps, types, target_day("2018-12-14")).timestamp == "20181215120000"  # tie: later
    caps.append(cap("20181214235959", mime="Text/HTML; charset=utf-8"))
    assert choose_capture(caps, types, target_day("2018-12-14")).timestamp == "20181214235959"  # on the day
    assert choose_capture(caps, types, None).timestamp == "20181215120000"  # no day: the latest
    assert choose_capture([cap("20181214000000", status="301")], types, None) is None
    assert target_day("", "2019-01-01").isoformat() == "2019-01-01"
    assert target_day("5 Jan 2019", "2019-01-01").isoformat() == "2019-01-05" and target_day("", "") is None


def test_read_record_never_raises():
    data, locs = make_archive()
    off, length = locs["A1"]
    assert read_record(data[off : off + length], 8000).body == page("Capture one")
    assert read_record(data[off : off + length] + b"x", 8000).reason == "cc_record_corrupt"  # trailing bytes
    assert read_record(b"", 8000).reason == "cc_record_corrupt"
    assert read_record(gzip.compress(b"WARC/1.0\r\n\r\n"), 8000).reason == "cc_record_corrupt"
    bomb = gzip.compress(b"\0" * (64 << 20))  # 64 MiB of zeros in 64 kB
    assert len(bomb) < 100_000 and read_record(bomb, 10).reason == "too_large"  # stops at 10 B + 1 MiB
    off, length = locs["D"]
    assert read_record(data[off : off + length], 8000).reason == "cc_digest_mismatch"


def test_config_from_params_and_checks(server, tmp_path):
    params = yaml.safe_load((REPO / "params.yaml").read_text())["collect"]["fetch"]
    c = FetchConfig.from_params(dict(params, backend="commoncrawl"))
    assert CommonCrawlConfig.from_params(c.commoncrawl) == CommonCrawlConfig()  # the defaults are params.yaml's
    f = make_fetcher(cfg(server, tmp_path))
    assert isinstance(f.backend, CommonCrawlBackend) and f.cache.backend.startswith("commoncrawl:")
    for bad in (
        {"crawls": ["CC-MAIN-2019-4"]},
        {"crawls": "CC-MAIN-2019-04"},
        {"crawls": []},
        {"max_captures": 0},
        {"index_url": "ftp://index.example"},
        {"data_url": "https://data.example/?x=1"},
        {"fallback_date": "soon"},
        {"unknown_key": 1},
    ):
        with pytest.raises(ValueError, match="collect.fetch.commoncrawl"):
            CommonCrawlConfig.from_params({**cc_section(server), **bad})
