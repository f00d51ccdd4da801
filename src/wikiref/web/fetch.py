"""Cited URL -> page bytes, through one of four backends, behind a persistent cache.

Backends (``collect.fetch.backend``):

``live``
    HTTP(S) with ``requests``. Timeouts: connect and read (per socket operation) plus
    ``total_timeout_s``, a hard deadline per exchange (connect, request, headers, body): a timer
    shuts the socket down when it runs out, so a trickling server cannot hold a fetch longer.
    Retries with exponential backoff on connection errors, timeouts, 429 and 5xx; ``Retry-After``
    (seconds or HTTP date) lengthens the wait, capped at ``max_retry_after_s``. Politeness: at
    least ``per_host_interval_s`` between two requests to one host, raised by robots.txt
    ``Crawl-delay`` (integer seconds, as ``urllib.robotparser`` reads it; capped at
    ``max_crawl_delay_s``), held across threads and across the processes sharing ``cache_dir``
    (:mod:`.hostlimit`, ``<cache_dir>/hosts/``). robots.txt (RFC 9309 reading: 4xx = allow all,
    5xx/unreachable = disallow), redirects followed by hand so every hop is checked, a maximum body
    size, a content-type allow list, a descriptive User-Agent. Addresses: every address a host
    resolves to must be global (:func:`address_refusal`: not private, loopback, link-local, shared
    100.64.0.0/10, reserved, documentation or multicast, and no IPv6 form embedding such an IPv4
    address: mapped, NAT64, SIIT, Teredo; 6to4 and local-use NAT64 refused outright). The
    connection resolves, checks and connects to the checked addresses in one step (no second
    lookup), so DNS rebinding cannot reach a private address; one connection per request, no proxy
    or ``.netrc`` from the environment. ``allow_private_addresses`` exists for the loopback test
    server only.
``wayback``
    The Wayback Machine availability API (snapshot closest to the citation's access-date when the
    citation has one), then the snapshot's original bytes (``id_`` URL) through the live client.
    A citation's own ``archive-url`` (a Wayback snapshot URL) is used directly (:mod:`.wayback`).
``warc``
    Local WARC / WARC.gz files read with ``warcio``, indexed by target URI (offsets only, so large
    archives are not loaded in memory; :mod:`.warc`).
``commoncrawl``
    The Common Crawl URL index (capture closest to the access-date over ``commoncrawl.crawls``), then that one
    WARC record by an HTTP range request, through the live client (:mod:`.commoncrawl`).

Cache (``collect.fetch.cache_dir``, network backends): ``urls/<h>.json`` holds the outcome for
``h = sha256(backend + URL)``; bodies are content-addressed ``blobs/<sha256>.gz``. Both are written
atomically, so several jobs may share one cache; an outcome, failure included, is never fetched
again (``retry_cached_errors: true`` retries the failures). Reading a local WARC is not fetching,
so the warc backend is not cached (a rebuilt archive is always read afresh).
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import ipaddress
import json
import logging
import socket
import sys
import threading
import time
import urllib.robotparser
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import urljoin, urlsplit

from wikiref.files import write_bytes, write_json
from wikiref.web.hostlimit import SharedHostLimiter

log = logging.getLogger(__name__)

RETRY_STATUS = frozenset({429, 500, 502, 503, 504})


@dataclass
class FetchResult:
    url: str
    ok: bool
    reason: str = ""  # empty when ok, else why the page could not be had
    status: int = 0
    final_url: str = ""
    content_type: str = ""
    source: str = ""  # live / wayback / warc / commoncrawl
    standin: bool = False  # the archive says this page is a stand-in (the offline sample)
    snapshot: str = ""  # wayback / commoncrawl capture timestamp
    body: bytes = field(default=b"", repr=False)

    def meta(self) -> dict:
        d = asdict(self)
        d.pop("body")
        return d


@dataclass(frozen=True)
class FetchConfig:
    backend: str = "live"
    warc_paths: tuple[str, ...] = ()
    cache_dir: str = "resources/cache/fetch"
    user_agent: str = "wikiref/0.1 (WikiRef reproduction research crawler; one request per cited URL)"
    connect_timeout_s: float = 10.0
    read_timeout_s: float = 30.0
    total_timeout_s: float = 60.0
    retries: int = 3
    backoff_s: float = 1.0
    max_retry_after_s: float = 60.0
    per_host_interval_s: float = 1.0
    max_crawl_delay_s: float = 60.0
    max_body_bytes: int = 5_000_000
    max_redirects: int = 5
    content_types: tuple[str, ...] = ("text/html", "application/xhtml+xml")
    respect_robots: bool = True
    allow_private_addresses: bool = False
    workers: int = 4
    wayback_api: str = "https://archive.org/wayback/available"
    retry_cached_errors: bool = False
    # backend commoncrawl: the collect.fetch.commoncrawl section as given (read by commoncrawl.CommonCrawlConfig)
    commoncrawl: Mapping = field(default_factory=dict, hash=False)

    @classmethod
    def from_params(cls, fetch: Mapping) -> FetchConfig:
        kwargs = {}
        for name in cls.__dataclass_fields__:
            if name in fetch:
                value = fetch[name]
                kwargs[name] = tuple(value) if isinstance(value, list) else value
        return cls(**kwargs)


# ---------------------------------------------------------------------------------------------
# the persistent cache


def _sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class FetchCache:
    """Outcome per (backend, URL) + content-addressed bodies, under ``root``."""

    def __init__(self, root: str | Path, backend: str):
        self.root = Path(root)
        self.backend = backend

    def _meta_path(self, url: str) -> Path:
        key = _sha256_hex(f"{self.backend}\x1f{url}")
        return self.root / "urls" / key[:2] / f"{key}.json"

    def _blob_path(self, digest: str) -> Path:
        return self.root / "blobs" / digest[:2] / f"{digest}.gz"

    def get(self, url: str) -> FetchResult | None:
        path = self._meta_path(url)
        if not path.exists():
            return None
        try:
            meta = json.loads(path.read_text(encoding="utf-8"))
            digest = meta.pop("sha256", "")
            res = FetchResult(**meta)
            if res.ok:
                blob = self._blob_path(digest)
                res.body = gzip.decompress(blob.read_bytes())
                if hashlib.sha256(res.body).hexdigest() != digest:
                    raise ValueError("body digest mismatch")
            return res
        except (OSError, ValueError, TypeError, EOFError) as exc:  # a damaged entry is refetched
            log.warning("fetch cache entry for %s unreadable (%s); fetching again", url, exc)
            return None

    def put(self, res: FetchResult) -> None:
        meta = res.meta()
        meta["sha256"] = ""
        if res.ok:
            digest = hashlib.sha256(res.body).hexdigest()
            blob = self._blob_path(digest)
            if not blob.exists():
                write_bytes(blob, gzip.compress(res.body, compresslevel=6, mtime=0))
            meta["sha256"] = digest
        # The outcome is written after the body: an outcome on disk always has its body.
        write_json(self._meta_path(res.url), meta)


class CachedFetcher:
    """Backend + cache + per-run dedupe (a URL cited many times is fetched once)."""

    def __init__(self, backend, cache: FetchCache | None, retry_cached_errors: bool = False):
        self.backend = backend
        self.cache = cache
        self.retry_cached_errors = retry_cached_errors
        self.cache_hits = 0
        self.fetched = 0

    def fetch(self, url: str, access_date: str = "", archive_url: str = "") -> FetchResult:
        if self.cache is not None:
            hit = self.cache.get(url)
            if hit is not None and (hit.ok or not self.retry_cached_errors):
                self.cache_hits += 1
                return hit
        res = self.backend.fetch(url, access_date=access_date, archive_url=archive_url)
        self.fetched += 1
        if self.cache is not None:
            self.cache.put(res)
        return res


# ---------------------------------------------------------------------------------------------
# live HTTP


class AddressRefused(Exception):
    pass


class DnsFailure(Exception):
    """A host name that does not resolve (not an ``OSError``, so urllib3 lets it through unwrapped)."""


# IPv6 prefixes that carry an IPv4 address in their last 32 bits (the IPv4 address must pass too).
_V4_IN_LAST_32 = (
    ipaddress.ip_network("64:ff9b::/96"),  # NAT64 well-known prefix (RFC 6052)
    ipaddress.ip_network("::ffff:0:0:0/96"),  # IPv4-translated (RFC 2765 SIIT)
)
# Refused outright, whatever this Python's ``is_global`` says (its tables changed in 3.12.4/3.13):
# IETF protocol assignments, local-use NAT64 (RFC 8215), the deprecated IPv4-compatible form and
# 6to4 (deprecated, RFC 7526; it can embed any IPv4 address).
_REFUSED_NETS = tuple(ipaddress.ip_network(n) for n in ("192.0.0.0/24", "64:ff9b:1::/48", "::/96", "2002::/16"))


def address_refusal(addr: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str:
    """Why ``addr`` may not be fetched from ("" when it may): every address that is not global
    (private, loopback, link-local, shared 100.64.0.0/10, reserved, documentation...), multicast, the
    ranges in ``_REFUSED_NETS``, and IPv6 forms that embed a refused IPv4 address (mapped, NAT64...)."""
    if addr.is_multicast:
        return "multicast"
    if not addr.is_global:
        return "not global"
    for net in _REFUSED_NETS:
        if addr.version == net.version and addr in net:
            return f"in {net}"
    if isinstance(addr, ipaddress.IPv6Address):
        embedded = [addr.ipv4_mapped, *(addr.teredo or ())]
        if any(addr in net for net in _V4_IN_LAST_32):
            embedded.append(ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF))
        for v4 in embedded:
            if v4 is not None and address_refusal(v4):
                return f"embeds {v4}"
    return ""


def _getaddrinfo(host: str, port: int) -> list:
    # socket.getaddrinfo looked up at call time, so a test can stand in for DNS.
    return socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)


def check_host(host: str, port: int, allow_private: bool, resolver: Callable[[str, int], list] | None = None) -> list:
    """Resolve ``host`` once and return its ``getaddrinfo`` entries, after refusing the host if any
    address is not public (:func:`address_refusal`); ``allow_private`` (the loopback tests) skips the
    refusal. The live backend connects to these very entries (no second lookup between check and
    connect), so DNS rebinding cannot swap in a private address."""
    try:
        infos = (resolver or _getaddrinfo)(host, port)
    except (socket.gaierror, UnicodeError) as exc:
        raise DnsFailure(f"cannot resolve {host}: {exc}") from exc
    if not infos:
        raise DnsFailure(f"cannot resolve {host}: no address")
    if allow_private:
        return infos
    for info in infos:
        addr = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        why = address_refusal(addr)
        if why:
            raise AddressRefused(f"{host} resolves to non-public address {addr} ({why})")
    return infos


# ---------------------------------------------------------------------------------------------
# the connection: pinned to the checked addresses, under a hard per-response deadline

_exchange = threading.local()  # the running request's _Deadline, per thread


class _Deadline:
    """``total_timeout_s`` for one exchange (connect, request, headers, body). A timer shuts the
    socket down when it runs out, which ends a blocked read at once; ``expired`` then says why."""

    def __init__(self, seconds: float):
        self.end = time.monotonic() + seconds
        self.expired = False
        self._sock = None
        self._done = False
        self._lock = threading.Lock()
        self._timer = threading.Timer(max(seconds, 0.0), self._expire)
        self._timer.daemon = True

    def remaining(self) -> float:
        return self.end - time.monotonic()

    def start(self) -> None:
        self._timer.start()

    @staticmethod
    def _shutdown(sock) -> None:
        # socket.socket.shutdown, not SSLSocket.shutdown: the TLS object stays with the reading thread.
        with contextlib.suppress(OSError):  # already closed
            socket.socket.shutdown(sock, socket.SHUT_RDWR)

    def attach(self, sock) -> None:
        with self._lock:
            self._sock = sock
            if self.expired and not self._done:
                self._shutdown(sock)

    def _expire(self) -> None:
        with self._lock:
            if self._done:
                return
            self.expired = True
            if self._sock is not None:
                self._shutdown(self._sock)

    def finish(self) -> None:
        with self._lock:
            self._done = True
        self._timer.cancel()


def _pinned_adapter(resolve: Callable[[str, int], list]):
    """A ``requests`` transport adapter whose connections resolve and check the host through
    ``resolve`` (:func:`check_host`) and connect to those addresses; the Host header, SNI and the
    certificate check keep the host name (only where the socket goes changes)."""
    import urllib3.connection
    from requests.adapters import HTTPAdapter
    from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
    from urllib3.exceptions import ConnectTimeoutError, NewConnectionError

    class Pinned:
        def _new_conn(self):
            # Written here because urllib3's create_connection resolves the name itself: this one
            # connects only to addresses that passed the check, in getaddrinfo order.
            deadline = getattr(_exchange, "deadline", None)
            timeout = self.timeout if isinstance(self.timeout, (int, float)) else socket.getdefaulttimeout()
            if deadline is not None:
                left = max(deadline.remaining(), 0.001)
                timeout = left if timeout is None else min(timeout, left)
            infos = resolve(self.host, self.port)
            err: OSError | None = None
            for family, type_, proto, _, sockaddr in infos:
                sock = socket.socket(family, type_, proto)
                try:
                    for opt in self.socket_options or ():
                        sock.setsockopt(*opt)
                    sock.settimeout(timeout)
                    if self.source_address:
                        sock.bind(self.source_address)
                    sock.connect(sockaddr)
                except OSError as exc:
                    err = exc
                    sock.close()
                    continue
                sys.audit("http.client.connect", self, self.host, self.port)
                if deadline is not None:
                    deadline.attach(sock)
                return sock
            if isinstance(err, socket.timeout):
                raise ConnectTimeoutError(self, f"Connection to {self.host} timed out") from err
            raise NewConnectionError(self, f"Failed to establish a new connection: {err}") from err

        def connect(self):
            super().connect()
            deadline = getattr(_exchange, "deadline", None)
            if deadline is not None and self.sock is not None:  # the TLS socket replaces the plain one
                deadline.attach(self.sock)

        def request(self, *args, **kwargs):
            deadline = getattr(_exchange, "deadline", None)
            if deadline is not None and self.sock is not None:  # HTTPS: connected (and TLS-wrapped) already
                deadline.attach(self.sock)
            result = super().request(*args, **kwargs)
            sent = getattr(_exchange, "sent", None)
            if sent is not None:  # the request is written: the host's interval counts from now (LiveBackend._get)
                sent()
            return result

    class Conn(Pinned, urllib3.connection.HTTPConnection):
        pass

    class SConn(Pinned, urllib3.connection.HTTPSConnection):
        pass

    class Pool(HTTPConnectionPool):
        ConnectionCls = Conn

    class SPool(HTTPSConnectionPool):
        ConnectionCls = SConn

    class Adapter(HTTPAdapter):
        def init_poolmanager(self, *args, **kwargs):
            super().init_poolmanager(*args, **kwargs)
            self.poolmanager.pool_classes_by_scheme = {"http": Pool, "https": SPool}

    return Adapter()


class _Failure(Exception):
    def __init__(self, reason: str, status: int = 0):
        super().__init__(reason)
        self.reason = reason
        self.status = status


class LiveBackend:
    name = "live"

    def __init__(self, cfg: FetchConfig, session=None, sleep=time.sleep, resolver=None, clock=time.time):
        import requests

        self.cfg = cfg
        self.requests = requests
        self.resolver = resolver  # None: socket.getaddrinfo (tests stand in for DNS)
        self.session = session or requests.Session()
        # No proxy or .netrc from the environment: the address check holds only for direct connections.
        self.session.trust_env = False
        adapter = _pinned_adapter(self._resolve)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)
        self.session.headers.update(
            {
                "User-Agent": cfg.user_agent,
                "Accept": "text/html,application/xhtml+xml;q=0.9,*/*;q=0.1",
                "Accept-Language": "en",
                # One connection per request: each is resolved and checked afresh, and a socket is never
                # shared between two requests (the deadline timer shuts down only its own). At one
                # request per host per interval, keep-alive would save little.
                "Connection": "close",
            }
        )
        self.sleep = sleep
        self.limiter = SharedHostLimiter(
            cfg.per_host_interval_s, Path(cfg.cache_dir) / "hosts", clock=clock, sleep=sleep
        )
        self.robots: dict[str, urllib.robotparser.RobotFileParser | str] = {}
        self.robots_lock = threading.Lock()

    def _resolve(self, host: str, port: int) -> list:
        return check_host(host, port, self.cfg.allow_private_addresses, self.resolver)

    def _retry_wait(self, attempt: int, retry_after: str) -> float:
        """Seconds before attempt ``attempt + 1``: the exponential backoff, or the server's
        ``Retry-After`` (seconds or an HTTP date) when longer, capped at ``max_retry_after_s``."""
        wait = self.cfg.backoff_s * (2**attempt)
        retry_after = (retry_after or "").strip()
        asked = None
        if retry_after.isdigit():
            asked = float(retry_after)
        elif retry_after:
            from email.utils import parsedate_to_datetime

            try:
                when = parsedate_to_datetime(retry_after)
            except (TypeError, ValueError, IndexError):
                when = None
            if when is not None and when.tzinfo is not None:
                asked = when.timestamp() - time.time()
        if asked is not None:
            wait = max(wait, min(asked, self.cfg.max_retry_after_s))
        return wait

    # one HTTP exchange, with retries; returns (status, headers, body) ------------------------
    def _get(self, url: str, max_bytes: int, check_type: bool) -> tuple[int, Mapping, bytes, str]:
        # The address is checked by the connection itself (every attempt); fetch() checks each hop
        # up front as well, so a refused page says private_address rather than robots_disallowed.
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise _Failure("unsupported_url")
        last_reason, last_status = "connection_error", 0
        wait = 0.0
        for attempt in range(self.cfg.retries + 1):
            if attempt:
                self.sleep(wait)
            wait = self._retry_wait(attempt, "")
            # The host is kept until the request is written (the connection calls _exchange.sent), so the
            # interval counts from when the host got it, not from before the connection was set up.
            sent = _exchange.sent = self.limiter.acquire(parts.hostname)
            try:
                status, headers, body, ctype = self._once(url, max_bytes, check_type)
            except self.requests.exceptions.Timeout:
                last_reason, last_status = "timeout", 0
                continue
            except _Failure as f:
                if f.reason == "timeout":
                    last_reason, last_status = "timeout", 0
                    continue
                raise
            except AddressRefused:
                raise _Failure("private_address") from None
            except DnsFailure:
                raise _Failure("dns_error") from None
            except (
                self.requests.exceptions.ConnectionError,
                self.requests.exceptions.ChunkedEncodingError,
                self.requests.exceptions.ContentDecodingError,
            ):
                last_reason, last_status = "connection_error", 0
                continue
            except self.requests.exceptions.RequestException:
                raise _Failure("request_error") from None
            finally:
                _exchange.sent = None
                sent()  # nothing once the request went out; else this failed attempt is the last request
            if status in RETRY_STATUS:
                last_reason, last_status = f"http_{status}", status
                wait = self._retry_wait(attempt, headers.get("Retry-After", ""))
                continue
            return status, headers, body, ctype
        raise _Failure(last_reason, last_status)

    def _once(self, url: str, max_bytes: int, check_type: bool):
        deadline = _Deadline(self.cfg.total_timeout_s)
        _exchange.deadline = deadline
        deadline.start()
        try:
            status, headers, body, ctype = self._exchange(url, max_bytes, check_type, deadline)
        except (_Failure, AddressRefused, DnsFailure):
            raise
        except Exception:
            if deadline.expired:  # the timer cut the socket: whatever broke, the deadline is why
                raise _Failure("timeout") from None
            raise
        finally:
            deadline.finish()
            _exchange.deadline = None
        if deadline.expired:  # a body read to a cut-off "end" is not the body
            raise _Failure("timeout", status)
        return status, headers, body, ctype

    def _exchange(self, url: str, max_bytes: int, check_type: bool, deadline: _Deadline):
        resp = self.session.get(
            url, stream=True, allow_redirects=False, timeout=(self.cfg.connect_timeout_s, self.cfg.read_timeout_s)
        )
        try:
            status = resp.status_code
            headers = resp.headers
            ctype = headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
            if status != 200 or not check_type:
                body = b""
                if status == 200:
                    body = self._read(resp, max_bytes, deadline)
                return status, headers, body, ctype
            if ctype not in self.cfg.content_types:
                raise _Failure("bad_content_type", status)
            length = headers.get("Content-Length", "")
            if length.isdigit() and int(length) > max_bytes:
                raise _Failure("too_large", status)
            return status, headers, self._read(resp, max_bytes, deadline), ctype
        finally:
            resp.close()

    def _read(self, resp, max_bytes: int, deadline: _Deadline) -> bytes:
        chunks, size = [], 0
        for chunk in resp.iter_content(chunk_size=65536):
            size += len(chunk)
            if size > max_bytes:
                raise _Failure("too_large", resp.status_code)
            chunks.append(chunk)
            if deadline.expired or deadline.remaining() < 0:
                raise _Failure("timeout", resp.status_code)
        return b"".join(chunks)

    def _check_target(self, url: str) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise _Failure("unsupported_url")
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            raise _Failure("unsupported_url") from None
        try:
            self._resolve(parts.hostname, port)
        except AddressRefused:
            raise _Failure("private_address") from None
        except DnsFailure:
            raise _Failure("dns_error") from None

    # robots.txt ----------------------------------------------------------------------------
    def allowed(self, url: str) -> bool:
        parts = urlsplit(url)
        key = f"{parts.scheme}://{parts.netloc}"
        with self.robots_lock:
            rp = self.robots.get(key)
        if rp is None:
            rp = self._load_robots(key)
            with self.robots_lock:
                self.robots[key] = rp
            if not isinstance(rp, str):
                delay = rp.crawl_delay(self.cfg.user_agent)
                if delay:  # robots.txt Crawl-delay raises this host's interval, up to max_crawl_delay_s
                    self.limiter.set_interval(parts.hostname, min(float(delay), self.cfg.max_crawl_delay_s))
        if rp == "allow":
            return True
        if rp == "deny":
            return False
        return rp.can_fetch(self.cfg.user_agent, url)

    def _load_robots(self, origin: str):
        """RFC 9309: 4xx -> allow all; 5xx or unreachable -> disallow all; up to 5 redirects followed."""
        url = origin + "/robots.txt"
        try:
            for _ in range(6):
                status, headers, body, _ = self._get(url, 512 * 1024, check_type=False)
                if status in (301, 302, 303, 307, 308) and headers.get("Location"):
                    url = urljoin(url, headers["Location"])
                    continue
                break
        except _Failure as f:
            if f.status and 400 <= f.status < 500:
                return "allow"
            return "deny"
        if 400 <= status < 500:
            return "allow"
        if status != 200:
            return "deny"
        rp = urllib.robotparser.RobotFileParser()
        rp.parse(body.decode("utf-8", errors="replace").splitlines())
        return rp

    # the public call -----------------------------------------------------------------------
    def fetch(self, url: str, access_date: str = "", archive_url: str = "", source: str = "live") -> FetchResult:
        current = url.strip()
        try:
            for _ in range(self.cfg.max_redirects + 1):
                self._check_target(current)  # scheme and address first: robots.txt is a request too
                if self.cfg.respect_robots and not self.allowed(current):
                    return FetchResult(url=url, ok=False, reason="robots_disallowed", final_url=current, source=source)
                status, headers, body, ctype = self._get(current, self.cfg.max_body_bytes, check_type=True)
                if status in (301, 302, 303, 307, 308) and headers.get("Location"):
                    current = urljoin(current, headers["Location"])
                    continue
                if status != 200:
                    return FetchResult(
                        url=url, ok=False, reason=f"http_{status}", status=status, final_url=current, source=source
                    )
                return FetchResult(
                    url=url, ok=True, status=200, final_url=current, content_type=ctype, body=body, source=source
                )
            return FetchResult(url=url, ok=False, reason="too_many_redirects", final_url=current, source=source)
        except _Failure as f:
            return FetchResult(url=url, ok=False, reason=f.reason, status=f.status, final_url=current, source=source)


def make_fetcher(cfg: FetchConfig) -> CachedFetcher:
    if cfg.backend == "warc":
        from wikiref.web.warc import WarcBackend

        return CachedFetcher(WarcBackend(cfg), cache=None)
    if cfg.backend == "commoncrawl":
        from wikiref.web.commoncrawl import CommonCrawlBackend

        cc = CommonCrawlBackend(cfg)
        return CachedFetcher(cc, FetchCache(cfg.cache_dir, cc.cache_key), cfg.retry_cached_errors)
    if cfg.backend == "live":
        backend = LiveBackend(cfg)
    elif cfg.backend == "wayback":
        from wikiref.web.wayback import WaybackBackend

        backend = WaybackBackend(cfg)
    else:
        raise ValueError(f"unknown fetch backend {cfg.backend!r} (live, wayback, warc, commoncrawl)")
    return CachedFetcher(backend, FetchCache(cfg.cache_dir, cfg.backend), cfg.retry_cached_errors)


def fetcher_for(fetch: Mapping, backend: str, warc_paths: Iterable[str] = ()) -> CachedFetcher | None:
    """A fetcher with the ``collect.fetch`` settings (cache, HTTP, politeness) but another backend and
    archives, as the source builders use for their own lookups; None for backend ``none``."""
    if backend == "none":
        return None
    return make_fetcher(FetchConfig.from_params(dict(fetch, backend=backend, warc_paths=list(warc_paths))))
