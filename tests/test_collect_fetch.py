"""Fetch backends: live HTTP against a loopback server, wayback (emulated on loopback), WARC, cache."""

from __future__ import annotations

import io
import json
import time
from collections import Counter
from urllib.parse import parse_qs, urlsplit

import pytest

from wikiref.web.fetch import (
    AddressRefused,
    CachedFetcher,
    FetchCache,
    FetchConfig,
    LiveBackend,
    check_host,
    make_fetcher,
)
from wikiref.web.hostlimit import SharedHostLimiter
from wikiref.web.warc import WarcBackend, normalise_url
from wikiref.web.wayback import WaybackBackend, to_raw_snapshot, wayback_timestamp

PAGE = b"<html><head><title>Loopback page</title></head><body><p>Hello from the loopback server.</p></body></html>"


@pytest.fixture(scope="module")
def handler(loopback_handler):
    class Handler(loopback_handler):
        def do_GET(self):  # noqa: C901 - one branch per scenario
            srv = self.server
            path = urlsplit(self.path).path
            srv.hits[path] += 1
            srv.user_agents.add(self.headers.get("User-Agent", ""))
            if path == "/robots.txt":
                if srv.robots_status != 200:
                    return self.send(srv.robots_status, b"")
                return self.send(200, b"User-agent: *\nDisallow: /private/\n", "text/plain")
            if path in ("/ok", "/private/page", "/counted", "/counted2"):
                return self.send(200, PAGE)
            if path == "/r1":
                return self.send(302, b"", headers=[("Location", "/r2")])
            if path == "/r2":
                return self.send(301, b"", headers=[("Location", f"http://127.0.0.1:{srv.server_port}/ok")])
            if path == "/loop":
                return self.send(302, b"", headers=[("Location", "/loop")])
            if path == "/to-private":
                return self.send(302, b"", headers=[("Location", "/private/page")])
            if path == "/404":
                return self.send(404, b"not found")
            if path == "/500":
                return self.send(500, b"boom")
            if path == "/flaky":
                if srv.hits[path] == 1:
                    return self.send(503, b"busy", headers=[("Retry-After", "0")])
                return self.send(200, PAGE)
            if path == "/slow":
                time.sleep(1.5)
                return self.send(200, PAGE)
            if path == "/drip":  # headers at once, then a trickle of bytes (each under the read timeout)
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", "4000")
                self.end_headers()
                for _ in range(20):
                    try:
                        self.wfile.write(b"x" * 200)
                        self.wfile.flush()
                    except OSError:
                        return
                    time.sleep(0.1)
                return
            if path == "/big":
                return self.send(200, b"<html><body>" + b"a" * 5000 + b"</body></html>")
            if path == "/big-chunked":  # no Content-Length: the limit must hold while streaming
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for _ in range(10):
                    chunk = b"b" * 1000
                    self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                self.wfile.write(b"0\r\n\r\n")
                return
            if path == "/pdf":
                return self.send(200, b"%PDF-1.4", "application/pdf")
            if path == "/wayback/available":
                q = parse_qs(urlsplit(self.path).query)
                srv.wayback_queries.append(q)
                if q["url"][0].endswith("/never-archived"):
                    return self.send(200, json.dumps({"archived_snapshots": {}}).encode(), "application/json")
                ts = q.get("timestamp", ["20200101"])[0] + "000000"
                snap = f"http://127.0.0.1:{srv.server_port}/web/{ts}/{q['url'][0]}"
                body = {
                    "archived_snapshots": {
                        "closest": {"available": True, "status": "200", "url": snap, "timestamp": ts}
                    }
                }
                return self.send(200, json.dumps(body).encode(), "application/json")
            if path.startswith("/web/"):
                srv.snapshots.append(path)
                if "id_/" not in path:
                    return self.send(200, b"<html><body>WAYBACK TOOLBAR + page</body></html>")
                return self.send(
                    200, b"<html><head><title>Archived</title></head><body><p>Archived copy.</p></body></html>"
                )
            return self.send(404, b"")

    return Handler


@pytest.fixture()
def make_server(loopback_server, handler):
    """``make_server(robots_status=200)`` -> a started loopback server (shut down at teardown)."""

    def make(robots_status=200):
        return loopback_server(
            handler, hits=Counter(), user_agents=set(), robots_status=robots_status, wayback_queries=[], snapshots=[]
        )

    return make


@pytest.fixture()
def server(make_server):
    return make_server()


def cfg(**kw):
    """A live fetcher fit for the loopback server (``kw`` overrides): private addresses allowed and no
    politeness delay, quick retries and timeouts, small bodies."""
    loopback = dict(backend="live", allow_private_addresses=True, per_host_interval_s=0.0, max_body_bytes=3000)
    quick = dict(retries=2, backoff_s=0.01, connect_timeout_s=2, read_timeout_s=0.5, total_timeout_s=5)
    return FetchConfig(**{**loopback, **quick, "user_agent": "wikiref-test/1.0 (+loopback)", **kw})


def url(srv, path):
    return f"http://127.0.0.1:{srv.server_port}{path}"


def test_ok_page_and_user_agent(server):
    res = LiveBackend(cfg()).fetch(url(server, "/ok"))
    assert res.ok and res.status == 200 and res.body == PAGE and res.content_type == "text/html"
    assert server.user_agents == {"wikiref-test/1.0 (+loopback)"}
    assert server.hits["/robots.txt"] == 1


def test_robots_disallow_is_honoured(server):
    live = LiveBackend(cfg())
    res = live.fetch(url(server, "/private/page"))
    assert not res.ok and res.reason == "robots_disallowed"
    assert server.hits["/private/page"] == 0
    # a redirect into a disallowed path is refused at that hop
    res = live.fetch(url(server, "/to-private"))
    assert res.reason == "robots_disallowed" and server.hits["/private/page"] == 0
    assert server.hits["/robots.txt"] == 1  # robots.txt read once per origin
    assert LiveBackend(cfg(respect_robots=False)).fetch(url(server, "/private/page")).ok


def test_robots_server_error_means_disallow_and_404_means_allow(make_server):
    for status, ok in ((500, False), (404, True)):
        srv = make_server(robots_status=status)
        res = LiveBackend(cfg(retries=0)).fetch(url(srv, "/ok"))
        assert res.ok is ok, status


def test_redirect_chain_and_loop(server):
    live = LiveBackend(cfg())
    res = live.fetch(url(server, "/r1"))
    assert res.ok and res.final_url == url(server, "/ok") and res.url == url(server, "/r1")
    res = live.fetch(url(server, "/loop"))
    assert not res.ok and res.reason == "too_many_redirects"


def test_http_errors_and_retries(server):
    sleeps = []
    live = LiveBackend(cfg(), sleep=sleeps.append)
    assert live.fetch(url(server, "/404")).reason == "http_404"
    assert server.hits["/404"] == 1  # 4xx is not retried
    res = live.fetch(url(server, "/500"))
    assert not res.ok and res.reason == "http_500" and res.status == 500
    assert server.hits["/500"] == 3  # 1 + retries
    assert sleeps[:2] == [0.01, 0.02]  # exponential backoff
    assert live.fetch(url(server, "/flaky")).ok and server.hits["/flaky"] == 2


def test_slow_response_times_out(server):
    res = LiveBackend(cfg(retries=1)).fetch(url(server, "/slow"))
    assert not res.ok and res.reason == "timeout"
    res = LiveBackend(cfg(retries=0, read_timeout_s=2, total_timeout_s=0.5, max_body_bytes=10_000)).fetch(
        url(server, "/drip")
    )
    assert not res.ok and res.reason == "timeout"


def test_oversized_body_and_non_html(server):
    live = LiveBackend(cfg())
    assert live.fetch(url(server, "/big")).reason == "too_large"
    assert live.fetch(url(server, "/big-chunked")).reason == "too_large"
    assert live.fetch(url(server, "/pdf")).reason == "bad_content_type"
    assert live.fetch("ftp://example.org/x").reason == "unsupported_url"


def test_private_addresses_are_refused_by_default(server):
    live = LiveBackend(cfg(allow_private_addresses=False))
    res = live.fetch(url(server, "/ok"))
    assert not res.ok and res.reason == "private_address"
    assert server.hits["/ok"] == 0 and server.hits["/robots.txt"] == 0
    for host in (
        "127.0.0.1",
        "10.1.2.3",
        "192.168.0.1",
        "172.16.5.4",
        "169.254.169.254",
        "::1",
        "fe80::1",
        "0.0.0.0",
        "224.0.0.1",
    ):
        with pytest.raises(AddressRefused):
            check_host(host, 80, allow_private=False)
    check_host("8.8.8.8", 80, allow_private=False)  # a public literal passes (no DNS needed)
    check_host("127.0.0.1", 80, allow_private=True)


def test_rate_limiter_spaces_requests_per_host():
    now = [0.0]
    slept = []

    def sleep(s):
        slept.append(round(s, 6))
        now[0] += s

    lim = SharedHostLimiter(1.0, clock=lambda: now[0], sleep=sleep)
    lim.wait("a")
    lim.wait("a")
    lim.wait("b")
    lim.wait("a")
    assert slept == [1.0, 1.0]


def test_cache_never_fetches_twice_and_is_content_addressed(server, tmp_path):
    c = cfg(cache_dir=str(tmp_path / "cache"))
    for _ in range(2):  # two "runs": fresh fetcher objects over the same cache folder
        f = CachedFetcher(LiveBackend(c), FetchCache(c.cache_dir, "live"))
        assert f.fetch(url(server, "/counted")).body == PAGE
        assert f.fetch(url(server, "/counted2")).body == PAGE
        assert f.fetch(url(server, "/404")).reason == "http_404"
    assert server.hits["/counted"] == 1 and server.hits["/counted2"] == 1 and server.hits["/404"] == 1
    blobs = list((tmp_path / "cache" / "blobs").rglob("*.gz"))
    assert len(blobs) == 1  # two URLs, one body
    # a failure can be retried on request; a success still is not
    f = CachedFetcher(LiveBackend(c), FetchCache(c.cache_dir, "live"), retry_cached_errors=True)
    f.fetch(url(server, "/404"))
    f.fetch(url(server, "/counted"))
    assert server.hits["/404"] == 2 and server.hits["/counted"] == 1
    # the cache is per backend: a wayback outcome never answers for live
    assert FetchCache(c.cache_dir, "wayback").get(url(server, "/counted")) is None


def test_damaged_cache_entry_is_refetched(server, tmp_path):
    c = cfg(cache_dir=str(tmp_path / "cache"))
    f = CachedFetcher(LiveBackend(c), FetchCache(c.cache_dir, "live"))
    f.fetch(url(server, "/counted"))
    for blob in (tmp_path / "cache" / "blobs").rglob("*.gz"):
        blob.write_bytes(b"garbage")
    assert f.fetch(url(server, "/counted")).body == PAGE
    assert server.hits["/counted"] == 2


def test_wayback_closest_to_access_date(server):
    c = cfg(backend="wayback", wayback_api=url(server, "/wayback/available"))
    wb = WaybackBackend(c)
    res = wb.fetch("http://example.org/page", access_date="5 January 2019")
    assert res.ok and res.source == "wayback" and res.snapshot == "20190105000000"
    assert b"Archived copy" in res.body
    assert server.wayback_queries[-1]["timestamp"] == ["20190105"]
    assert server.snapshots[-1] == "/web/20190105000000id_/http://example.org/page"  # original bytes
    res = wb.fetch("http://example.org/page")
    assert res.ok and "timestamp" not in server.wayback_queries[-1]
    res = wb.fetch("http://example.org/never-archived", access_date="2019-01-05")
    assert not res.ok and res.reason == "wayback_not_archived"
    n = len(server.wayback_queries)
    res = wb.fetch("http://example.org/x", archive_url=url(server, "/web/20180101000000/http://example.org/x"))
    assert res.ok and len(server.wayback_queries) == n  # the citation's archive-url is used directly


def test_wayback_helpers():
    assert wayback_timestamp("2019-01-05") == "20190105"
    assert wayback_timestamp("January 5, 2019") == "20190105"
    assert wayback_timestamp("5 Jan 2019") == "20190105"
    assert wayback_timestamp("") == wayback_timestamp("someday") == ""
    assert (
        to_raw_snapshot("https://web.archive.org/web/20190105123456/http://x.org/a")
        == "https://web.archive.org/web/20190105123456id_/http://x.org/a"
    )


def write_warc(path, records):
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    with open(path, "wb") as fh:
        w = WARCWriter(fh, gzip=str(path).endswith(".gz"))
        for uri, status, ctype, body, extra in records:
            http = StatusAndHeaders(status, [("Content-Type", ctype)], protocol="HTTP/1.1")
            w.write_record(
                w.create_warc_record(
                    uri,
                    "response",
                    payload=io.BytesIO(body),
                    length=len(body),
                    http_headers=http,
                    warc_headers_dict=extra,
                )
            )


@pytest.mark.parametrize("name", ["a.warc.gz", "a.warc"])
def test_warc_backend(tmp_path, name):
    path = tmp_path / name
    write_warc(
        path,
        [
            (
                "http://Example.org:80/page#frag",
                "200 OK",
                "text/html; charset=utf-8",
                PAGE,
                {"WARC-Wikiref-Standin": "true"},
            ),
            ("http://example.org/gone", "404 Not Found", "text/html", b"", {}),
            ("http://example.org/doc.pdf", "200 OK", "application/pdf", b"%PDF", {}),
            ("http://example.org/huge", "200 OK", "text/html", b"x" * 5000, {}),
            ("http://example.org/page", "200 OK", "text/html", b"second copy", {}),
        ],
    )
    wb = WarcBackend(cfg(backend="warc", max_body_bytes=3000), [str(path)])
    res = wb.fetch("http://Example.org:80/page#frag")
    assert res.ok and res.body == PAGE and res.standin and res.source == "warc"
    res = wb.fetch("HTTP://EXAMPLE.ORG/page")  # normalised lookup
    assert res.ok and res.body == PAGE
    assert wb.fetch("http://example.org/gone").reason == "http_404"
    assert wb.fetch("http://example.org/doc.pdf").reason == "bad_content_type"
    assert wb.fetch("http://example.org/huge").reason == "too_large"
    assert wb.fetch("http://example.org/missing").reason == "not_in_archive"
    assert normalise_url("HTTP://A.org:80/x#y") == "http://a.org/x"


def test_warc_missing_file_and_make_fetcher(tmp_path):
    with pytest.raises(FileNotFoundError, match="warc_paths"):
        make_fetcher(cfg(backend="warc", warc_paths=(str(tmp_path / "nope.warc.gz"),)))
    f = make_fetcher(cfg(backend="live", cache_dir=str(tmp_path / "c")))
    assert isinstance(f.backend, LiveBackend) and f.cache is not None
    with pytest.raises(ValueError):
        make_fetcher(cfg(backend="ftp"))


def test_config_from_params():
    c = FetchConfig.from_params(
        {
            "backend": "warc",
            "warc_paths": ["a.warc.gz"],
            "cache_dir": "c",
            "content_types": ["text/html"],
            "allow_private_addresses": False,
        }
    )
    assert c.warc_paths == ("a.warc.gz",) and c.content_types == ("text/html",) and not c.allow_private_addresses
