"""Fetch throughput of the collect stage's live fetcher at 1, 8 and 64 hosts: the host-aware scheduler beside
the scheduling it replaced, in one run, against a loopback server.

The server (a subprocess, so its threads do not share the fetcher's interpreter lock) answers any host name
with a small HTML page after a fixed service latency and logs the host and arrival time of every request:
on Linux the kernel's receive time of the request's bytes (SO_TIMESTAMPNS), so the server's own scheduling
does not blur the gaps (elsewhere the time the server read them; ``arrival_clock`` says which).
The host names (``h00.bench.test``...) are resolved to 127.0.0.1 by the live backend's injectable resolver;
private addresses are allowed for this fetcher only (``allow_private_addresses``, TEST ONLY). A fixed list of
URLs, spread evenly over the hosts, goes through the real ``fetch_phase`` (batches, per-host limiter with its
files under the cache, robots.txt, live backend, extraction) twice, each time with a fresh cache:

  host_aware   the scheduler of ``wikiref.stages.collect.schedule`` (what collect runs)
  sorted       the previous scheduling, kept here as the baseline: each batch of sorted URLs mapped over a
               pool of ``collect.fetch.workers`` threads (consecutive URLs share a host, so the workers
               mostly wait on one host's interval)

One JSON line per number of hosts: urls, hosts, workers, interval and latency, the ideal rate
(hosts / interval, bounded by workers / latency; each host's robots.txt costs one more interval), and per
schedule: seconds, urls_per_s, cpu_s (the process's CPU seconds: near ``seconds``, extraction is the limit),
requests (robots.txt included: several threads waiting on one host each read it under the old scheduling),
the smallest gap between two requests to one host seen by the server, violations (gaps shorter than the
interval minus --tolerance), the most hosts and the most requests to one host the server had in flight.
Exit 1 when an interval is violated, when the two schedules' rows differ, or when a page failed to fetch.

    python bench/fetch.py                       # 128 URLs, 1/8/64 hosts, 16 workers, 0.2 s, 50 ms (~2 min)
    python bench/fetch.py --quick               # 64 URLs, 1/8/32 hosts (~40 s)
    python bench/fetch.py --workers 64 --urls 256 --hosts 64
"""

from __future__ import annotations

import argparse
import contextlib
import json
import socket
import socketserver
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from unittest import mock
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parents[1]
PROSE = (
    "The committee met on Tuesday to discuss the new library building, which will open next spring after two "
    "years of construction. Residents asked whether the reading rooms would stay open in the evening and whether "
    "the old building on the main square would be sold or kept for the town archive. The mayor said that a "
    "decision would be taken after the summer, once the costs are known."
)


# ---------------------------------------------------------------------------------------------
# the loopback server (a subprocess: python bench/fetch.py --serve --latency S)


def page(host: str, path: str) -> bytes:
    """A page that passes extraction. Its number is spelt in letters ("/doc/17" -> "report bh"): a number in
    the text sends trafilatura's date search into dateparser (~15 ms CPU a page here), and this bench is
    about fetching (``cpu_s`` shows when extraction is what limits a run)."""
    label = "".join(chr(ord("a") + int(c)) if c.isdigit() else c for c in path.rsplit("/", 1)[-1])
    return (
        f"<html><head><title>Report {label}</title></head><body><article><h1>Report {label}</h1>"
        f"<p>This page was served for report {label} by the host {host}. {PROSE}</p>"
        "<p>Other news followed in the evening paper, with letters from readers about the plan.</p>"
        "</article></body></html>"
    ).encode()


# Linux: each received segment carries the kernel's receive time (SOL_SOCKET / SO_TIMESTAMPNS, 35 on the
# common architectures; Python does not name it). A request's arrival is then when its bytes reached this
# machine, whatever the server's threads were doing; elsewhere it is when the server read them.
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)


def _kernel_time(ancillary) -> float | None:
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(data) >= 16:
            sec, nsec = struct.unpack("qq", data[:16])
            return sec + nsec / 1e9
    return None


class Handler(socketserver.BaseRequestHandler):
    """HTTP/1.1, GET only, one request per connection."""

    def answer(self, body: bytes, ctype: str) -> None:
        head = f"HTTP/1.1 200 OK\r\nContent-Type: {ctype}\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        self.request.sendall(head.encode("ascii") + body)

    def handle(self):
        srv, data, arrived, clock = self.server, b"", None, "server"
        while b"\r\n\r\n" not in data:
            chunk, ancillary, _, _ = self.request.recvmsg(65536, socket.CMSG_SPACE(16))
            if not chunk:
                return
            if arrived is None:
                arrived = _kernel_time(ancillary)
                arrived, clock = (arrived, "kernel") if arrived is not None else (time.time(), "server")
            data += chunk
        lines = data.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        host, path = headers.get("host", "").rsplit(":", 1)[0].lower(), urlsplit(lines[0].split(" ")[1]).path
        if path == "/__log":  # the bench reads (and clears) the log
            with srv.lock:
                body, srv.log = json.dumps(srv.log).encode(), []
            return self.answer(body, "application/json")
        entry = {"host": host, "path": path, "t": arrived, "clock": clock, "end": None}
        with srv.lock:
            srv.log.append(entry)
        time.sleep(srv.latency)
        entry["end"] = time.time()  # before the answer: a client that has it finds the entry complete
        if path == "/robots.txt":
            self.answer(b"User-agent: *\nAllow: /\n", "text/plain")
        else:
            self.answer(page(host, path), "text/html; charset=utf-8")


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    request_queue_size = 256  # 64 workers connect at once

    def server_bind(self):
        super().server_bind()
        with contextlib.suppress(OSError):  # accepted connections inherit it
            self.socket.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)

    def handle_error(self, request, client_address):
        pass  # a client that went away


def serve(latency: float) -> None:
    srv = Server(("127.0.0.1", 0), Handler)
    srv.latency, srv.lock, srv.log = latency, threading.Lock(), []
    print(srv.server_address[1], flush=True)
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    sys.stdin.read()  # until the bench closes the pipe
    srv.shutdown()


def read_log(port: int) -> list[dict]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/__log", timeout=30) as resp:
        return json.loads(resp.read())


# ---------------------------------------------------------------------------------------------
# the baseline: collect's previous batch scheduling


def sorted_batch(fetcher, s, batch, urls, killer) -> list[dict]:
    """The batch loop ``fetch_phase`` had before the host-aware scheduler: the batch's sorted URLs mapped
    over a pool of ``collect.fetch.workers`` threads, rows in batch order."""
    from wikiref.stages.collect.pipeline import _fetch_one

    def job(u: str) -> dict:
        acc, arch, title = urls[u]
        return _fetch_one(fetcher, s, u, acc, arch, title)

    rows = []
    with ThreadPoolExecutor(max_workers=max(1, s.fetch.workers)) as pool:
        for row in pool.map(job, batch):
            rows.append(row)
            killer.tick()
    return rows


# ---------------------------------------------------------------------------------------------


def resolver(host: str, port: int) -> list:
    if not host.endswith(".bench.test"):
        raise socket.gaierror(f"{host}: not a bench host")
    return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", ("127.0.0.1", port))]


def settings(cache: Path, args):
    import yaml

    from wikiref.stages.collect.pipeline import CollectSettings

    c = yaml.safe_load((REPO / "params.yaml").read_text())["collect"]
    c["fetch"].update(
        backend="live",
        allow_private_addresses=True,  # TEST ONLY: the loopback server
        cache_dir=str(cache),
        per_host_interval_s=args.interval,
        workers=args.workers,
        retries=0,
        connect_timeout_s=10,
        read_timeout_s=30,
        total_timeout_s=60,
    )
    c["resume"]["urls_per_batch"] = args.batch
    return CollectSettings.from_params(c)


def figures(log: list[dict], interval: float, tolerance: float) -> dict:
    by_host: dict[str, list[float]] = {}
    for e in log:
        by_host.setdefault(e["host"], []).append(e["t"])
    gaps = [b - a for t in by_host.values() for a, b in zip(sorted(t), sorted(t)[1:])]
    events = sorted([(e["t"], 1, e["host"]) for e in log] + [(e["end"], -1, e["host"]) for e in log])
    open_by_host: dict[str, int] = {}
    max_hosts = max_same = 0
    for _, step, host in events:  # departures sort before arrivals at the same instant
        open_by_host[host] = open_by_host.get(host, 0) + step
        max_same = max(max_same, open_by_host[host])
        max_hosts = max(max_hosts, sum(1 for n in open_by_host.values() if n > 0))
    return {
        "requests": len(log),
        "arrival_clock": "/".join(sorted({e["clock"] for e in log})),  # kernel: the request's bytes reached the host
        "min_gap_s": round(min(gaps), 4) if gaps else None,
        "violations": sum(1 for g in gaps if g < interval - tolerance),
        "max_hosts_in_flight": max_hosts,
        "max_requests_to_one_host_in_flight": max_same,
    }


def run_one(schedule: str, urls: list[str], port: int, args) -> tuple[dict, list[dict]]:
    import pyarrow as pa

    from wikiref.stages.collect import pipeline
    from wikiref.web.fetch import CachedFetcher, FetchCache, LiveBackend

    with tempfile.TemporaryDirectory(prefix="bench-fetch-") as tmp:
        s = settings(Path(tmp) / "cache", args)
        fetcher = CachedFetcher(LiveBackend(s.fetch, resolver=resolver), FetchCache(s.fetch.cache_dir, "live"))
        cands = pa.Table.from_pylist(
            [
                {"page_id": 1, "article": "A", "query": ["A"], "statement": "s", "statement_index": i, "url": u}
                | {"citation_type": "cite web", "citation_title": "", "access_date": "", "archive_url": ""}
                for i, u in enumerate(urls)
            ],
            schema=pipeline.CAND_SCHEMA,
        )
        work = Path(tmp) / "work"
        work.mkdir()
        read_log(port)  # start from an empty log
        batch_loop = sorted_batch if schedule == "sorted" else pipeline._fetch_batch
        with mock.patch.object(pipeline, "_fetch_batch", batch_loop):
            t0, cpu0 = time.perf_counter(), time.process_time()
            rows = pipeline.fetch_phase(cands, work, s, pipeline._Killer(), fetcher=fetcher).to_pylist()
            seconds, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        log = read_log(port)
    out = {"seconds": round(seconds, 3), "urls_per_s": round(len(urls) / seconds, 2), "cpu_s": round(cpu, 3)}
    out.update(figures(log, args.interval, args.tolerance))
    out["rows_ok"] = sum(r["ok"] for r in rows)
    return out, rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--urls", type=int, default=None, help="URLs in the list (default 128; --quick 64)")
    ap.add_argument("--hosts", type=int, nargs="+", default=None, help="host counts (default 1 8 64; --quick 1 8 32)")
    ap.add_argument("--workers", type=int, default=16, help="collect.fetch.workers for both schedules")
    ap.add_argument("--interval", type=float, default=0.2, help="collect.fetch.per_host_interval_s")
    ap.add_argument("--latency", type=float, default=0.05, help="the server's service time per request (s)")
    ap.add_argument("--tolerance", type=float, default=0.005, help="a gap shorter than interval - this violates")
    ap.add_argument("--batch", type=int, default=200, help="collect.resume.urls_per_batch")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        serve(args.latency)
        return 0
    args.urls = args.urls or (64 if args.quick else 128)
    args.hosts = args.hosts or ([1, 8, 32] if args.quick else [1, 8, 64])

    from wikiref.web.extract import ExtractConfig, extract_document

    extract_document(page("h00.bench.test", "/doc/0"), cfg=ExtractConfig())  # warm-up: the language model

    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", "--latency", str(args.latency)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    failed = False
    try:
        port = int(server.stdout.readline())
        for hosts in args.hosts:
            urls = [f"http://h{i % hosts:02d}.bench.test:{port}/doc/{i}" for i in range(args.urls)]
            new, new_rows = run_one("host_aware", urls, port, args)
            old, old_rows = run_one("sorted", urls, port, args)
            ideal = min(hosts / args.interval, args.workers / args.latency)
            line = {
                "bench": "fetch",
                "urls": args.urls,
                "hosts": hosts,
                "workers": args.workers,
                "interval_s": args.interval,
                "latency_s": args.latency,
                "ideal_urls_per_s": round(ideal, 2),
                "host_aware": new,
                "sorted": old,
                "speedup": round(new["urls_per_s"] / old["urls_per_s"], 2),
                "host_aware_of_ideal": round(new["urls_per_s"] / ideal, 3),
                "rows_identical": new_rows == old_rows,
            }
            print(json.dumps(line), flush=True)
            problems = []
            if new["violations"] or old["violations"]:
                problems.append("per-host interval violated")
            if not line["rows_identical"]:
                problems.append("the two schedules' rows differ")
            if new["rows_ok"] != args.urls or old["rows_ok"] != args.urls:
                problems.append("pages failed to fetch")
            if problems:
                failed = True
                print(f"bench/fetch.py: {hosts} hosts: {'; '.join(problems)}", file=sys.stderr)
    finally:
        server.stdin.close()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
