"""The collect stage's host-aware fetch scheduler (``collect/schedule.py`` through ``fetch_phase``) against a
loopback server that answers many host names (a stand-in resolver sends them all to 127.0.0.1).

Nothing here is timed. The per-host interval is checked as a causal bound that no machine load can
break: each request of a host reaches the server (its arrival, logged by the server's ``time.time``) at
least one interval after the limiter recorded the host's previous request as sent (the same clock, read
by the limiter and logged by :class:`SendLog`). The gap between two arrivals is not checked: a loaded
machine can delay the first request between its send and its arrival, which says nothing about the
limiter. "Hosts are fetched at once" is what the server saw (requests of two hosts in flight together),
made certain rather than likely by a server that holds a request until a request of another host arrives
(with a cap, so a scheduler that never sends one fails instead of hanging)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import pyarrow as pa
import pytest
import yaml
from send_log import FakeTime, SendLog, assert_interval_after_each_send

from wikiref.stages.collect.pipeline import CAND_SCHEMA, CollectSettings, _Killer, fetch_phase
from wikiref.stages.collect.schedule import host_of, interleave_by_host, run_by_host
from wikiref.web.fetch import CachedFetcher, FetchCache, LiveBackend
from wikiref.web.hostlimit import SharedHostLimiter
from wikiref.wiki.statements import valid_url

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def handler(loopback_handler, load_bench):
    page = load_bench("fetch").page  # the bench's page: passes extraction, names its host and path

    class Handler(loopback_handler):
        def do_GET(self):
            srv = self.server
            host = self.headers.get("Host", "").rsplit(":", 1)[0].lower()
            path = urlsplit(self.path).path
            with srv.cond:
                entry = {"host": host, "path": path, "t": time.time(), "others": False}
                srv.log.append(entry)
                for other in srv.in_flight:  # requests of two hosts in flight together: both overlapped
                    if other["host"] != host:
                        other["others"] = entry["others"] = True
                srv.same_host_in_flight = max(
                    srv.same_host_in_flight, 1 + sum(o["host"] == host for o in srv.in_flight)
                )
                srv.in_flight.append(entry)
                srv.cond.notify_all()
                if srv.pair_cap_s:  # hold until a request of another host is in flight too (at most the cap)
                    srv.cond.wait_for(lambda: entry["others"], timeout=srv.pair_cap_s)
                if host == srv.slow_host:  # answered once the good hosts are done (at most 5 s)
                    srv.slow_released_by_others.append(
                        srv.cond.wait_for(
                            lambda: sum(e["host"].startswith("good") for e in srv.log) >= srv.good_requests, timeout=5.0
                        )
                    )
            try:
                time.sleep(srv.latency_s)
                if path == "/robots.txt":
                    return self.send(200, b"User-agent: *\nAllow: /\n", "text/plain")
                if host == srv.failing_host:
                    return self.send(500, b"broken")
                return self.send(200, page(host, path))
            finally:
                with srv.cond:
                    srv.in_flight.remove(entry)

    return Handler


@pytest.fixture()
def server(loopback_server, handler):
    return loopback_server(
        handler,
        cond=threading.Condition(),
        log=[],
        in_flight=[],
        same_host_in_flight=0,
        latency_s=0.01,
        pair_cap_s=0.0,
        slow_host="",
        slow_released_by_others=[],
        good_requests=0,
        failing_host="",
    )


def resolver(host: str, port: int) -> list:
    """Every ``*.test`` name is 127.0.0.1 (the loopback server, or a closed port)."""
    if not host.endswith(".test"):
        raise socket.gaierror(f"{host}: not a test name")
    return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", ("127.0.0.1", port))]


def settings(tmp: Path, *, workers: int, interval: float, batch: int = 200, **fetch) -> CollectSettings:
    c = yaml.safe_load((REPO / "params.yaml").read_text())["collect"]
    c["fetch"].update(
        backend="live",
        allow_private_addresses=True,  # TEST ONLY: the loopback server
        cache_dir=str(tmp / "cache"),
        per_host_interval_s=interval,
        workers=workers,
        retries=0,
        backoff_s=0.01,
        connect_timeout_s=5,
        read_timeout_s=10,
        total_timeout_s=10,
        **fetch,
    )
    c["resume"]["urls_per_batch"] = batch
    return CollectSettings.from_params(c)


def fetcher_for(s: CollectSettings, send_log: list | None = None) -> CachedFetcher:
    live = LiveBackend(s.fetch, resolver=resolver)
    if send_log is not None:
        send_log.append(SendLog(live))
    return CachedFetcher(live, FetchCache(s.fetch.cache_dir, "live"))


def cands(urls: list[str]) -> pa.Table:
    rows = [
        dict(page_id=1, article="A", query=["A"], statement="s", statement_index=i, url=u, citation_type="cite web")
        | dict(citation_title="", access_date="", archive_url="")
        for i, u in enumerate(urls)
    ]
    return pa.Table.from_pylist(rows, schema=CAND_SCHEMA)


def urls_for(srv, mix: dict[str, int]) -> list[str]:
    """``mix``: host -> number of URLs (paths /d/0, /d/1, ...), listed host by host in reverse order."""
    return [f"http://{h}:{srv.server_port}/d/{i}" for h in sorted(mix, reverse=True) for i in range(mix[h])]


def run(tmp: Path, urls: list[str], work: str = "work", send_log: list | None = None, **kw) -> list[dict]:
    """fetch_phase of ``urls`` with the fetch cache ``tmp/cache`` and the work folder ``tmp/<work>``;
    ``send_log``, a list, receives the run's :class:`SendLog`."""
    s = settings(tmp, **kw)
    work = tmp / work
    work.mkdir(parents=True, exist_ok=True)
    return fetch_phase(cands(urls), work, s, _Killer(), fetcher=fetcher_for(s, send_log)).to_pylist()


def by_host(log: list[dict]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for e in log:
        out.setdefault(e["host"], []).append(e["t"])
    return out


# ---------------------------------------------------------------------------------------------


def test_batches_interleave_hosts():
    """Hosts round-robin, each host's URLs in order: a batch cut from a big site's run of sorted URLs would
    be that one host at one URL per interval."""
    urls = [f"http://big.test/{i:02d}" for i in range(6)] + ["http://a.test/1", "http://a.test/2", "http://z.test/x"]
    urls += ["http:///no-host"]
    order = interleave_by_host(list(reversed(urls)))
    assert sorted(order) == sorted(urls)
    assert order[:4] == ["http:///no-host", "http://a.test/1", "http://big.test/00", "http://z.test/x"]
    assert order[4:] == ["http://a.test/2", "http://big.test/01", *[f"http://big.test/{i:02d}" for i in range(2, 6)]]
    first_batch = order[:4]
    assert len({host_of(u) for u in first_batch}) == 4
    assert interleave_by_host(urls) == order  # depends on the URLs alone


def test_host_of_keys_like_the_limiter():
    assert host_of(" HTTPS://WWW.Example.ORG:8443/a?b ") == "www.example.org"
    assert host_of("http://[::1]:80/") == "::1"
    assert host_of("http://[bad/x") is None and host_of("no scheme") is None


MIXES = {
    "one host": {"solo.test": 7},
    "uneven": {"big.test": 6, "mid.test": 3, "one.test": 1},
    "spread": {f"h{i}.test": 2 for i in range(6)},
}


@pytest.mark.parametrize("mix", MIXES.values(), ids=MIXES.keys())
def test_rows_do_not_depend_on_the_workers(server, tmp_path, mix):
    no_host = f"http://:{server.server_port}/d/0"  # passes statements.valid_url; no host, so no request
    assert valid_url(no_host) and host_of(no_host) is None
    urls = urls_for(server, mix) + [no_host]
    one = run(tmp_path / "w1", urls, workers=1, interval=0.02)
    eight = run(tmp_path / "w8", urls, workers=8, interval=0.02)
    assert one == eight
    assert [r["url"] for r in one] == interleave_by_host(urls)  # batch order: hosts round-robin
    reasons = {r["url"]: r["reason"] for r in one}
    assert reasons.pop(no_host) == "fetch:unsupported_url"
    assert set(reasons.values()) == {""} and all(r["ok"] for r in one if r["url"] in reasons)
    assert {e["path"] for e in server.log} == {"/robots.txt"} | {f"/d/{i}" for i in range(max(mix.values()))}
    # from the cache (a finished batch redone after a kill, or another part citing the same pages): same rows
    n = len(server.log)
    assert run(tmp_path / "w8", urls, work="again", workers=8, interval=0.02) == one and len(server.log) == n


def test_per_host_interval_holds_with_8_workers_over_4_hosts(server, tmp_path):
    interval = 0.2
    mix = {f"h{i}.test": 4 for i in range(4)}
    logs: list[SendLog] = []
    rows = run(tmp_path, urls_for(server, mix), workers=8, interval=interval, send_log=logs)
    assert all(r["ok"] for r in rows) and len(rows) == 16
    times = by_host(server.log)
    assert sorted(times) == sorted(mix) and all(len(t) == 5 for t in times.values())  # robots.txt + 4 pages
    (sends,) = logs
    for host, t in times.items():
        assert_interval_after_each_send(t, sends.sent[host], interval)
    assert server.same_host_in_flight == 1  # one request per host at a time
    assert any(e["others"] for e in server.log)  # (and hosts did go in parallel)


def test_requests_to_different_hosts_overlap(server, tmp_path):
    """Two workers, four hosts of six URLs, listed host after host. The server holds each request until
    one of another host is in flight (cap 1 s): the scheduler sends two hosts at once nearly every time.
    The previous pool.map over the sorted URLs put both workers on one host at a time (all of a host's
    URLs are consecutive), so only the requests at a host boundary overlapped: at most 6 of 24."""
    server.pair_cap_s = 1.0
    mix = {f"h{i}.test": 6 for i in range(4)}
    rows = run(tmp_path, urls_for(server, mix), workers=2, interval=0.05, respect_robots=False)
    assert all(r["ok"] for r in rows)
    overlapped = sum(e["others"] for e in server.log)
    assert len(server.log) == 24 and overlapped >= 18, [(e["host"], e["path"], e["others"]) for e in server.log]


def test_failing_hosts_do_not_stall_the_others(server, tmp_path):
    """Hosts sorted first: one refusing connections, one answering 500, one whose requests wait until the
    server has seen every request of the good hosts (cap 5 s). Three workers: the good hosts are fetched
    while the slow one waits, and each failure is a row with its reason. (The previous pool.map over the
    sorted URLs put all three workers on the slow host's three URLs: the cap ran out first.)"""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed_port = s.getsockname()[1]  # nothing listens here once the socket is closed
    server.slow_host, server.failing_host, server.good_requests = "c-slow.test", "b-err500.test", 9
    port = server.server_port
    urls = [f"http://a-refused.test:{closed_port}/d/{i}" for i in range(3)]
    urls += [f"http://{h}:{port}/d/{i}" for h in ("b-err500.test", "c-slow.test") for i in range(3)]
    urls += [f"http://good{k}.test:{port}/d/{i}" for k in range(3) for i in range(3)]
    rows = run(tmp_path, urls, workers=3, interval=0.05, respect_robots=False)
    reasons = {r["url"]: r["reason"] for r in rows}
    assert [reasons[u] for u in urls] == ["fetch:connection_error"] * 3 + ["fetch:http_500"] * 3 + [""] * 12
    assert server.slow_released_by_others == [True] * 3, [(e["host"], e["path"]) for e in server.log]


def test_scheduler_waits_for_ready_hosts_and_reports_failures():
    """run_by_host alone, with a fake clock: a host is given out only once it is ready; an item without a
    host never waits; the worker's exception comes out after the running items finish."""
    now = [100.0]
    ready = {"a": 100.0, "b": 103.0}
    started = []

    def work(item):
        started.append((item, now[0]))
        return item.upper()

    def sleep(seconds):
        now[0] += seconds

    items, hosts = ["a1", "b1", "x", "a2"], ["a", "b", None, "a"]
    out = dict(run_by_host(items, work, hosts=hosts, workers=1, ready_at=ready.get, clock=lambda: now[0], sleep=sleep))
    assert out == {0: "A1", 1: "B1", 2: "X", 3: "A2"}
    # a host that is ready first (a2 too: a's record did not move), then the hostless item, then b once ready
    assert started == [("a1", 100.0), ("a2", 100.0), ("x", 100.0), ("b1", 103.0)]

    def boom(item):
        if item == "b":
            raise RuntimeError("extract broke")
        return item

    with pytest.raises(RuntimeError, match="extract broke"):
        list(run_by_host(["a", "b", "c"], boom, hosts=["h1", "h2", "h3"], workers=2))


def test_the_limiter_records_when_the_request_went_out(tmp_path):
    ft = FakeTime()
    lim = SharedHostLimiter(1.0, tmp_path / "hosts", clock=ft.clock, sleep=ft.sleep)
    assert lim.ready_at("h.test") == float("-inf")  # nothing on record (and nothing created)
    assert not (tmp_path / "hosts").exists()
    sent = lim.acquire("h.test")
    ft.now += 0.3  # setting the connection up took 0.3 s
    sent()
    sent()  # once only
    assert lim.ready_at("h.test") == 1001.3
    lim.wait("h.test")
    assert ft.slept == [1.0]  # a whole interval from when the request went out, not 0.7 from the wait's end
    assert lim.ready_at("H.TEST") == 1002.3 and lim.ready_at("other.test") == float("-inf")


def test_interval_counts_from_when_the_request_went_out(server, tmp_path):
    """The first request's connection is slow to set up (its address lookup, made inside the connection,
    takes 0.3 s); the second is not. Counted from the end of the limiter's wait, the host would see them
    0.2 - 0.3 < 0 s apart, i.e. at once; counted from when the first went out, a whole interval apart."""
    lookups, lookup_done = [], []

    def slow_first_connection(host, port):
        lookups.append(host)
        if len(lookups) == 2:  # 1: fetch()'s up-front check; 2: the first connection's own lookup
            time.sleep(0.3)
            lookup_done.append(time.time())
        return resolver(host, port)

    s = settings(tmp_path, workers=1, interval=0.2, respect_robots=False)
    live = LiveBackend(s.fetch, resolver=slow_first_connection)
    sends = SendLog(live)
    for i in range(2):
        assert live.fetch(f"http://slow.test:{server.server_port}/d/{i}").ok
    (arrivals,) = by_host(server.log).values()
    went_out = sends.sent["slow.test"]
    assert went_out[0] >= lookup_done[0]  # recorded once the connection was up, not at the wait's end
    assert_interval_after_each_send(arrivals, went_out, 0.2)


CHILD = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    sys.path.insert(0, sys.argv[1])
    import test_collect_fetch_concurrency as t
    from wikiref.stages.collect.pipeline import _Killer, fetch_phase
    args = json.loads(sys.argv[2])
    s = t.settings(Path(args["tmp"]), workers=4, interval=0.02, batch=4)
    fetch_phase(t.cands(args["urls"]), Path(args["work"]), s, _Killer(), fetcher=t.fetcher_for(s))
    """
)


@pytest.mark.slow
def test_a_killed_fetch_resumes_from_the_last_finished_batch(server, tmp_path):
    """WIKIREF_COLLECT_KILL_AFTER=7: four URLs of batch 0 + its parquet + two URLs of batch 1, then SIGKILL.
    The rerun keeps batch 0 (no request for its URLs), takes what the killed run cached, and gives the rows
    of an uninterrupted run."""
    urls = urls_for(server, {"h0.test": 5, "h1.test": 4, "h2.test": 3})
    reference = run(tmp_path / "ref", urls, workers=4, interval=0.02, batch=4)
    server.log.clear()
    work = tmp_path / "run" / "work"
    work.mkdir(parents=True)
    args = json.dumps({"tmp": str(tmp_path / "run"), "work": str(work), "urls": urls})
    env = {**os.environ, "WIKIREF_COLLECT_KILL_AFTER": "7"}
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(Path(__file__).parent), args], env=env, capture_output=True, timeout=300
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()[-2000:]
    assert sorted(p.name for p in work.glob("docs-*.parquet")) == ["docs-000000.parquet"]
    first = [f"{e['host']}{e['path']}" for e in server.log if e["path"] != "/robots.txt"]
    server.log.clear()
    rows = run(tmp_path / "run", urls, workers=4, interval=0.02, batch=4)
    assert rows == reference
    again = [f"{e['host']}{e['path']}" for e in server.log if e["path"] != "/robots.txt"]
    ordered = [u.replace(f":{server.server_port}", "").removeprefix("http://") for u in interleave_by_host(urls)]
    assert not set(again) & set(ordered[:4])  # batch 0 came from its checkpoint
    assert len(set(ordered[4:8]) - set(again)) >= 2  # the two URLs of batch 1 finished before the kill: cached
    assert sorted(set(first) | set(again)) == sorted(ordered) and len(again) == len(set(again))
