"""Per-host politeness: a minimum interval between two requests to one host, shared by every thread and
every process that uses the same lock directory.

The collect stage runs one job per dump part, and several of them at once; each job fetches with a
pool of threads. An in-process limiter would let ``jobs x workers`` requests reach one host at once,
so the last request time of each host lives in a small file, ``<lock_dir>/<sha256(host)[:32]>``,
updated under an exclusive ``fcntl.flock`` on that file. A caller holds the lock while it sleeps out
the rest of the interval and until its request has gone out (:meth:`SharedHostLimiter.acquire`), then
writes that time: callers for one host go one at a time, callers for other hosts are not held up, and
the interval holds between requests as the host sees them, not between the ends of two waits.

Written here on the standard library because no declared dependency offers it: ``filelock`` gives a
lock but not the shared time, and the rule is a few lines. The time is wall-clock (``time.time``) so
jobs on several machines sharing the cache over a network file system agree on it; a wait is never
longer than one interval, so a clock step backwards cannot stall a host. Where ``fcntl`` does not
exist (Windows), the limit holds within the process only (a warning says so).

:meth:`SharedHostLimiter.ready_at` reads the same record without the lock: when a host may next be
asked. The fetch scheduler (:mod:`.schedule`) uses it to give its free workers a host that is ready
instead of one that would keep them waiting; :meth:`~SharedHostLimiter.acquire` stays the rule.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

try:  # POSIX only
    import fcntl
except ImportError:  # pragma: no cover - not on the Linux/macOS machines this runs on
    fcntl = None

log = logging.getLogger(__name__)


class SharedHostLimiter:
    """At least ``interval_for(host)`` seconds between two requests to ``host``.

    ``interval`` is the default; :meth:`set_interval` raises it for one host (robots.txt Crawl-delay).
    ``lock_dir`` None keeps the limit within this process (threads only). The directory is made on the
    first wait that needs it, so a limiter with interval 0 never touches the disk."""

    def __init__(
        self,
        interval: float,
        lock_dir: str | Path | None = None,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.interval = float(interval)
        self.lock_dir = Path(lock_dir) if lock_dir is not None else None
        self.clock = clock
        self.sleep = sleep
        self.per_host: dict[str, float] = {}
        self.unreadable = 0  # lock files whose content was not a time (overwritten; counted and logged)
        self._guard = threading.Lock()
        self._host_locks: dict[str, threading.Lock] = {}
        self._last: dict[str, float] = {}  # the in-process record (no lock_dir or no fcntl)
        if self.lock_dir is not None and fcntl is None:  # pragma: no cover
            log.warning("fcntl unavailable: the per-host interval holds within this process only")
            self.lock_dir = None

    def set_interval(self, host: str, seconds: float) -> None:
        """Raise ``host``'s interval to at least ``seconds`` (never lowers it)."""
        host = (host or "").lower()
        with self._guard:
            self.per_host[host] = max(self.per_host.get(host, 0.0), float(seconds))

    def interval_for(self, host: str) -> float:
        return max(self.interval, self.per_host.get(host.lower(), 0.0))

    def _host_lock(self, host: str) -> threading.Lock:
        with self._guard:
            return self._host_locks.setdefault(host, threading.Lock())

    def _sleep_out(self, last: float | None, interval: float) -> float:
        """Sleep until ``last + interval`` (at most one interval); return the time of the request."""
        now = self.clock()
        if last is not None:
            wait = min(last + interval - now, interval)
            if wait > 0:
                self.sleep(wait)
                now = self.clock()
        return now

    def _path(self, host: str) -> Path:
        return self.lock_dir / hashlib.sha256(host.encode("utf-8")).hexdigest()[:32]

    def ready_at(self, host: str) -> float:
        """When ``host`` may next be asked, by this limiter's clock: its last request (this process's or,
        with a lock directory, any process's) plus its interval, at most one interval from now (as
        :meth:`acquire` never waits longer); ``-inf`` when no request is on record. Read without the lock
        and without creating anything: a hint for schedulers, never a permission (:meth:`acquire` is)."""
        host = (host or "").lower()
        last = self._last.get(host)
        if self.lock_dir is not None:
            try:
                raw = self._path(host).read_bytes()[:64]
                last = float(raw.decode("ascii"))
            except (OSError, UnicodeDecodeError, ValueError):  # no record yet, or one being written
                pass
        if last is None:
            return -math.inf
        interval = self.interval_for(host)
        return min(last + interval, self.clock() + interval)

    def wait(self, host: str) -> None:
        """Sleep out ``host``'s interval and record now as its last request."""
        self.acquire(host)()

    def acquire(self, host: str) -> Callable[[], None]:
        """Sleep out ``host``'s interval, then keep the host (other threads and processes asking for it wait)
        until the returned function is called: the time of that call is recorded as the host's last
        request. The live backend calls it once the request is written, so the next request to the host
        waits a full interval from when this one went out, however long the connection took to set up
        (a thread start, a busy interpreter, a slow connect: tens of milliseconds under load). Calling it
        again does nothing; it must be called, failure or not (``try``/``finally``)."""
        host = (host or "").lower()
        interval = self.interval_for(host)
        if interval <= 0:
            return _nothing
        # Threads of this process queue on a thread lock first, so only one of them at a time waits on
        # the file lock (flock itself would also order them: each open() is its own lock holder).
        lock = self._host_lock(host)
        lock.acquire()
        fd = None
        try:
            last = self._last.get(host)
            if self.lock_dir is not None:
                self.lock_dir.mkdir(parents=True, exist_ok=True)
                path = self._path(host)
                fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
                fcntl.flock(fd, fcntl.LOCK_EX)
                last = self._read(fd, path)
            self._sleep_out(last, interval)
        except BaseException:
            if fd is not None:
                os.close(fd)
            lock.release()
            raise
        released = False

        def sent() -> None:
            nonlocal released
            if released:
                return
            released = True
            try:
                now = self.clock()
                if fd is None:
                    self._last[host] = now
                else:
                    data = f"{now:.6f}".encode("ascii").ljust(32)
                    os.pwrite(fd, data, 0)
                    os.ftruncate(fd, len(data))
            finally:
                if fd is not None:
                    os.close(fd)  # releases the flock
                lock.release()

        return sent

    def _read(self, fd: int, path: Path) -> float | None:
        raw = os.pread(fd, 64, 0)
        if not raw.strip():
            return None
        try:
            return float(raw.decode("ascii"))
        except (UnicodeDecodeError, ValueError):
            self.unreadable += 1
            log.warning("host lock file %s unreadable (%r); treated as no earlier request", path, raw)
            return None


def _nothing() -> None:
    pass
