"""Live fetcher hardening: address policy, DNS rebinding, the hard per-response deadline, and politeness
(per-host interval through the live backend, across threads and processes; Retry-After cap; robots.txt
Crawl-delay). The per-host interval is checked as a causal bound, not timed (``send_log``); the deadline
tests bound when a loopback server saw the client hang up, with wide margins."""

from __future__ import annotations

import email.utils
import json
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from loopback_fetch import loopback_fetch_config
from send_log import FakeTime, SendLog, assert_interval_after_each_send

from wikiref.web.fetch import AddressRefused, LiveBackend, address_refusal, check_host
from wikiref.web.hostlimit import SharedHostLimiter

TESTS = Path(__file__).resolve().parent
PAGE = b"<html><head><title>Limits</title></head><body><p>A loopback page.</p></body></html>"
TRICKLE_CAP_S = 8.0  # the trickling handlers give up after this long, so a regression cannot hang the run


@pytest.fixture(scope="module")
def handler(loopback_handler):
    class LogHandler(loopback_handler):
        content_type = "text/html"

        def trickle(self, pieces):
            """Write ``pieces`` one every 50 ms; record when the client went away (or None if it stayed)."""
            srv = self.server
            start = time.monotonic()
            for piece in pieces:
                if time.monotonic() - start > TRICKLE_CAP_S:
                    break
                try:
                    self.wfile.write(piece)
                    self.wfile.flush()
                except OSError:
                    srv.trickles.append((start, time.monotonic()))
                    return
                time.sleep(0.05)
            srv.trickles.append((start, None))

        def do_GET(self):
            srv = self.server
            path = urlsplit(self.path).path
            with srv.lock:
                srv.log.append((time.time(), self.path, self.headers.get("Host", "")))  # on arrival
                srv.hits[path] = srv.hits.get(path, 0) + 1
                n = srv.hits[path]
            if path == "/robots.txt":
                return self.send(200, srv.robots.encode(), "text/plain")
            if path in ("/x/A/0", "/x/B/0"):  # two processes' first pages: answer once the other one has asked
                other = "/x/B/" if path == "/x/A/0" else "/x/A/"
                for _ in range(400):  # bounded: 20 s
                    with srv.lock:
                        if any(p.startswith(other) for _, p, _ in srv.log):
                            break
                    time.sleep(0.05)
                return self.send(200, PAGE)
            if path == "/busy":  # Retry-After far beyond any cap, then fine
                if n == 1:
                    return self.send(503, b"busy", headers=[("Retry-After", "3600")])
                return self.send(200, PAGE)
            if path == "/busy-date":  # the HTTP-date form, an hour ahead
                if n == 1:
                    when = email.utils.formatdate(time.time() + 3600, usegmt=True)
                    return self.send(429, b"slow down", headers=[("Retry-After", when)])
                return self.send(200, PAGE)
            if path == "/busy-short":  # a modest Retry-After, honoured as asked
                if n == 1:
                    return self.send(503, b"busy", headers=[("Retry-After", "2")])
                return self.send(200, PAGE)
            if path == "/trickle-body":  # headers at once, a huge Content-Length, then one byte per 50 ms
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", "10000000")
                self.end_headers()
                self.wfile.flush()
                return self.trickle(b"x" for _ in range(10_000_000))
            if path == "/trickle-headers":  # the header block itself, one line per 50 ms, then a small page
                self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n")
                lines = [f"X-Pad-{i}: {'a' * 20}\r\n".encode() for i in range(90)]
                lines.append(f"Content-Length: {len(PAGE)}\r\nConnection: close\r\n\r\n".encode() + PAGE)
                return self.trickle(lines)
            if path == "/trickle-eof":  # no length, no chunks: the body ends when the connection does
                self.close_connection = True
                self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n")
                return self.trickle(b"y" for _ in range(10_000_000))
            return self.send(200, PAGE)

    return LogHandler


@pytest.fixture()
def server(loopback_server, handler):
    robots = "User-agent: *\nDisallow: /private/\n"
    return loopback_server(handler, lock=threading.Lock(), log=[], hits={}, trickles=[], robots=robots)


def cfg(tmp_path, **kw):
    """The live fetcher for the loopback server: no retries, a 5 s deadline (``kw`` overrides)."""
    return loopback_fetch_config(tmp_path, **{"backend": "live", "retries": 0, "total_timeout_s": 5, **kw})


def url(srv, path, host="127.0.0.1"):
    return f"http://{host}:{srv.server_port}{path}"


# ---------------------------------------------------------------------------------------------
# address policy and DNS rebinding

REFUSED = [
    "127.0.0.1",
    "10.1.2.3",
    "172.16.5.4",
    "192.168.0.1",
    "100.64.0.1",  # shared address space (carrier-grade NAT): not private, not global
    "100.127.255.254",
    "169.254.169.254",
    "0.0.0.0",
    "192.0.0.8",
    "198.18.0.1",
    "203.0.113.5",
    "224.0.0.1",
    "239.255.255.250",
    "255.255.255.255",
    "::1",
    "::",
    "fe80::1",
    "fc00::1",
    "fd12:3456::1",
    "ff0e::1",  # global-scope multicast: is_global, refused as multicast
    "2001:db8::1",
    "::ffff:10.0.0.1",  # IPv4-mapped
    "::ffff:127.0.0.1",
    "::ffff:0:a00:1",  # IPv4-translated (SIIT)
    "::a00:1",  # IPv4-compatible (deprecated)
    "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
    "64:ff9b::7f00:1",  # NAT64 of 127.0.0.1
    "64:ff9b::6440:1",  # NAT64 of 100.64.0.1
    "64:ff9b:1::808:808",  # local-use NAT64
    "2002:a00:1::1",  # 6to4 of 10.0.0.1
    "2002:7f00:1::",  # 6to4 of 127.0.0.1
    "2002:a9fe:a9fe::1",  # 6to4 of 169.254.169.254
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",  # Teredo
    "2002:808:808::1",  # 6to4 even of a public address (deprecated; newer Pythons call 2002::/16 not global)
    "192.0.0.9",  # IETF protocol assignments, refused on every Python version
]
ALLOWED = ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "64:ff9b::808:808"]


@pytest.mark.parametrize("host", REFUSED)
def test_non_global_addresses_are_refused(host):
    with pytest.raises(AddressRefused):
        check_host(host, 80, allow_private=False)
    check_host(host, 80, allow_private=True)  # the loopback-test switch lets everything through


@pytest.mark.parametrize("host", ALLOWED)
def test_global_addresses_pass(host):
    infos = check_host(host, 80, allow_private=False)
    assert infos and address_refusal(__import__("ipaddress").ip_address(infos[0][4][0])) == ""


def fake_infos(*addrs, port=80):
    out = []
    for a in addrs:
        if ":" in a:
            out.append((socket.AF_INET6, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (a, port, 0, 0)))
        else:
            out.append((socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (a, port)))
    return out


def test_every_resolved_address_is_checked():
    with pytest.raises(AddressRefused, match="100.64.1.1"):
        check_host("mixed.test", 80, False, resolver=lambda h, p: fake_infos("8.8.8.8", "100.64.1.1", port=p))
    assert check_host("public.test", 80, False, resolver=lambda h, p: fake_infos("8.8.8.8", port=p))


def _connecting() -> bool:
    """True when called (indirectly) by the code that opens the socket."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name in ("_new_conn", "create_connection"):
            return True
        frame = frame.f_back
    return False


@pytest.mark.parametrize("rebind", ["after-first-lookup", "at-connect-time"])
def test_dns_rebinding_cannot_reach_a_private_address(server, tmp_path, monkeypatch, rebind):
    """The name is public when checked and loopback when the socket is opened (``after-first-lookup``:
    every lookup but the first; ``at-connect-time``: the lookups made while connecting, however many
    checks came before). The connection must connect only to addresses it checked, or refuse."""
    real = socket.getaddrinfo
    calls = []

    def rebinding(host, port, *args, **kw):
        if host != "rebind.test":
            return real(host, port, *args, **kw)
        calls.append(host)
        private = len(calls) > 1 if rebind == "after-first-lookup" else _connecting()
        return fake_infos("127.0.0.1" if private else "93.184.216.34", port=port)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    live = LiveBackend(cfg(tmp_path, allow_private_addresses=False, respect_robots=False))
    res = live.fetch(url(server, "/ok", host="rebind.test"))
    assert not res.ok and res.reason == "private_address"
    assert server.log == []  # nothing reached the loopback server
    assert len(calls) == 2  # the up-front check, then the connection's own (checked) lookup


def test_connection_goes_to_the_resolved_address_with_the_host_name_kept(server, tmp_path, monkeypatch):
    lookups = []

    def resolver(host, port):
        lookups.append(host)
        return fake_infos("127.0.0.1", port=port)

    # a proxy in the environment would carry the request past the check: it is not used
    for var in ("HTTP_PROXY", "http_proxy"):
        monkeypatch.setenv(var, f"http://127.0.0.1:{server.server_port}")
    live = LiveBackend(cfg(tmp_path, respect_robots=False), resolver=resolver)
    res = live.fetch(url(server, "/ok", host="pinned.test"))
    assert res.ok and res.body == PAGE
    assert [(p, h) for _, p, h in server.log] == [("/ok", f"pinned.test:{server.server_port}")]  # Host: the name
    assert set(lookups) == {"pinned.test"}  # never the proxy's address


# ---------------------------------------------------------------------------------------------
# the hard per-response deadline


@pytest.mark.parametrize("path", ["/trickle-body", "/trickle-headers", "/trickle-eof"])
def test_trickle_stops_at_the_total_deadline(server, tmp_path, path):
    """Each byte/line comes every 50 ms and the read timeout is longer than the server's cap, so only
    total_timeout_s (1 s) can make the client hang up before the server gives up: the server records when the
    client went away (None when it stayed to the cap). No wall-clock bound: the order of events is the check."""
    live = LiveBackend(cfg(tmp_path, total_timeout_s=1.0, read_timeout_s=2 * TRICKLE_CAP_S, max_body_bytes=20_000_000))
    res = live.fetch(url(server, path))
    assert not res.ok and res.reason == "timeout"
    for _ in range(100):  # the handler notices the hang-up on its next write (<= 50 ms later)
        if server.trickles:
            break
        time.sleep(0.05)
    (_, gone), *_ = server.trickles
    assert gone is not None, "the client read on until the server gave up"


@pytest.fixture()
def tls_server(loopback_server, handler, tmp_path):
    """The logging server behind TLS, with a self-signed certificate for ``pinned.test``."""
    import shutil
    import ssl

    if shutil.which("openssl") is None:
        pytest.skip("openssl not available to make a test certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=pinned.test"]
        + ["-addext", "subjectAltName=DNS:pinned.test", "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
        timeout=60,
    )
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    state = dict(lock=threading.Lock(), log=[], hits={}, trickles=[], robots="User-agent: *\n", cert=str(cert))
    return loopback_server(handler, ssl_context=ctx, **state)


def test_tls_pinned_connection_keeps_sni_certificate_check_and_deadline(tls_server, tmp_path):
    import requests

    session = requests.Session()
    session.verify = tls_server.cert
    live = LiveBackend(
        cfg(
            tmp_path,
            total_timeout_s=1.0,
            read_timeout_s=2 * TRICKLE_CAP_S,  # only the total deadline can end the trickle before the server's cap
            max_body_bytes=20_000_000,
            respect_robots=False,
        ),
        session=session,
        resolver=lambda host, port: fake_infos("127.0.0.1", port=port),
    )
    port = tls_server.server_port
    assert live.fetch(f"https://pinned.test:{port}/ok").ok  # certificate checked against the name
    res = live.fetch(f"https://other.test:{port}/ok")  # same address, a name the certificate lacks
    assert not res.ok and res.reason == "connection_error"
    assert [p for _, p, _ in tls_server.log] == ["/ok"]
    res = live.fetch(f"https://pinned.test:{port}/trickle-body")
    assert not res.ok and res.reason == "timeout"
    for _ in range(100):
        if tls_server.trickles:
            break
        time.sleep(0.05)
    (_, gone), *_ = tls_server.trickles
    assert gone is not None, "the client read on until the server gave up"


# ---------------------------------------------------------------------------------------------
# politeness


def test_per_host_interval_through_the_live_backend(server, tmp_path):
    live = LiveBackend(cfg(tmp_path, per_host_interval_s=0.4))
    sends = SendLog(live)
    for i in range(3):
        assert live.fetch(url(server, f"/p/{i}")).ok
    times = [t for t, _, _ in server.log]
    assert [p for _, p, _ in server.log] == ["/robots.txt", "/p/0", "/p/1", "/p/2"]
    assert_interval_after_each_send(times, sends.sent["127.0.0.1"], 0.4)
    assert len(list((tmp_path / "cache" / "hosts").iterdir())) == 1  # one host, one shared record


def test_per_host_interval_holds_across_threads(server, tmp_path):
    live = LiveBackend(cfg(tmp_path, per_host_interval_s=0.3, respect_robots=False))
    sends = SendLog(live)
    results = []

    def worker(tag):
        for i in range(3):
            results.append(live.fetch(url(server, f"/t/{tag}/{i}")).ok)

    threads = [threading.Thread(target=worker, args=(tag,)) for tag in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert results == [True] * 6
    assert_interval_after_each_send([t for t, _, _ in server.log], sends.sent["127.0.0.1"], 0.3)


CHILD = textwrap.dedent(
    """
    import json, os, sys, time
    from wikiref.web.fetch import FetchConfig, LiveBackend
    base, tag, cache, go, tests = sys.argv[1:6]
    sys.path.insert(0, tests)
    from send_log import SendLog
    cfg = FetchConfig(backend="live", allow_private_addresses=True, per_host_interval_s=0.5, cache_dir=cache,
                      retries=0, connect_timeout_s=2, read_timeout_s=30, total_timeout_s=30)
    live = LiveBackend(cfg)
    sends = SendLog(live)
    print("ready", flush=True)
    for _ in range(600):  # start together (bounded: 30 s)
        if os.path.exists(go):
            break
        time.sleep(0.05)
    for i in range(3):
        res = live.fetch(f"{base}/x/{tag}/{i}")
        assert res.ok, res
    print(json.dumps(sends.sent["127.0.0.1"]), flush=True)
    """
)


@pytest.mark.slow
def test_per_host_interval_holds_across_processes(server, tmp_path):
    """Two collect jobs (processes) sharing the fetch cache fetch the same host at the same time. The overlap is
    made certain, not left to the scheduler (on a loaded 2-core machine one process could finish its four requests
    before the other was woken): the server answers each process's first page only once the other process has
    asked for one of its own, which it can do because the host lock is given up as soon as a request is sent."""
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, url(server, ""), tag, str(tmp_path / "cache"), str(go), str(TESTS)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in ("A", "B")
    ]
    try:
        for p in procs:
            assert p.stdout.readline().strip() == "ready", p.stderr.read()
        go.touch()
        sent = []
        for p in procs:
            out, err = p.communicate(timeout=120)
            assert p.returncode == 0, err
            sent += json.loads(out)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    log = sorted(server.log)
    paths = [p for _, p, _ in log]
    assert paths.count("/robots.txt") == 2 and len(paths) == 8
    # both processes were fetching during the same span (the server's rule above makes it so)
    span = {tag: [t for t, p, _ in log if f"/x/{tag}/" in p] for tag in "AB"}
    assert min(span["A"]) < max(span["B"]) and min(span["B"]) < max(span["A"])
    assert_interval_after_each_send([t for t, _, _ in log], sent, 0.5)  # the two processes' requests together


def test_retry_after_is_capped(server, tmp_path):
    sleeps = []
    live = LiveBackend(cfg(tmp_path, retries=2, max_retry_after_s=0.05), sleep=sleeps.append)
    assert live.fetch(url(server, "/busy")).ok  # 503 + Retry-After: 3600
    assert server.hits["/busy"] == 2 and sleeps == [0.05]
    sleeps.clear()
    assert live.fetch(url(server, "/busy-date")).ok  # 429 + Retry-After: <an hour ahead>
    assert server.hits["/busy-date"] == 2 and sleeps == [0.05]


def test_retry_after_below_the_cap_is_honoured(server, tmp_path):
    sleeps = []
    live = LiveBackend(cfg(tmp_path, retries=1, max_retry_after_s=60), sleep=sleeps.append)
    assert live.fetch(url(server, "/busy-short")).ok
    assert sleeps == [2.0]  # asked 2 s (more than the 0.01 s backoff)


def test_robots_crawl_delay_widens_the_interval(server, tmp_path):
    server.robots = "User-agent: *\nCrawl-delay: 1\nDisallow: /private/\n"
    live = LiveBackend(cfg(tmp_path, per_host_interval_s=0.1))
    sends = SendLog(live)
    for i in range(2):
        assert live.fetch(url(server, f"/c/{i}")).ok
    times = [t for t, _, _ in server.log]
    assert len(times) == 3
    assert_interval_after_each_send(times, sends.sent["127.0.0.1"], 1.0)
    assert live.limiter.interval_for("127.0.0.1") == 1.0


def test_robots_crawl_delay_is_capped(server, tmp_path):
    server.robots = "User-agent: *\nCrawl-delay: 30\n"
    live = LiveBackend(cfg(tmp_path, per_host_interval_s=0.1, max_crawl_delay_s=0.5))
    sends = SendLog(live)
    assert live.allowed(url(server, "/c/0"))  # reads robots.txt (checked before any 30 s wait could happen)
    assert live.limiter.interval_for("127.0.0.1") == 0.5
    assert live.fetch(url(server, "/c/0")).ok
    times = [t for t, _, _ in server.log]
    assert len(times) == 2
    assert_interval_after_each_send(times, sends.sent["127.0.0.1"], 0.5)


# ---------------------------------------------------------------------------------------------
# the shared limiter itself (injected clock)


def test_shared_limiter_spaces_requests_across_instances(tmp_path):
    ft = FakeTime()
    one = SharedHostLimiter(1.0, tmp_path / "hosts", clock=ft.clock, sleep=ft.sleep)
    two = SharedHostLimiter(1.0, tmp_path / "hosts", clock=ft.clock, sleep=ft.sleep)  # "another process"
    one.wait("a.example")
    ft.now += 0.25
    two.wait("a.example")
    assert ft.slept == [0.75]
    two.wait("b.example")  # another host is not held up
    one.wait("A.EXAMPLE")
    assert ft.slept == [0.75, 1.0]


def test_shared_limiter_survives_clock_steps_and_bad_records(tmp_path):
    ft = FakeTime()
    lim = SharedHostLimiter(2.0, tmp_path / "hosts", clock=ft.clock, sleep=ft.sleep)
    lim.wait("h")
    ft.now -= 3600  # the wall clock stepped back an hour
    lim.wait("h")
    assert ft.slept == [2.0]  # never more than one interval
    for f in (tmp_path / "hosts").iterdir():
        f.write_bytes(b"not a time")
    lim.wait("h")
    assert lim.unreadable == 1 and ft.slept == [2.0]
    lim.set_interval("h", 5.0)
    lim.set_interval("h", 3.0)  # never lowered
    assert lim.interval_for("h") == 5.0 and lim.interval_for("other") == 2.0


def test_limiter_with_no_interval_touches_no_disk(tmp_path):
    SharedHostLimiter(0.0, tmp_path / "hosts").wait("h")
    assert not (tmp_path / "hosts").exists()
