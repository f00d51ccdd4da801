"""The per-host interval checked without timing: :class:`SendLog` records when a live backend's limiter
recorded each request of a host as sent; :func:`assert_interval_after_each_send` checks that each request
reached the server (its arrival, logged with ``time.time``) at least one interval after the previous request
went out. A loaded machine cannot break that bound (a request is written only after the limiter's wait, and
arrives after it is written), whereas the gap between two arrivals can shrink when the first request is
delayed between its send and its arrival, which says nothing about the limiter. :class:`FakeTime` is the clock
and sleep to inject into a limiter that is tested with no time passing at all."""

from __future__ import annotations

import threading

from wikiref.web.fetch import LiveBackend


class SendLog:
    """Wraps a live backend's limiter: ``sent[host]`` lists the times the limiter recorded as the host's
    requests going out (the clock value its ``sent()`` writes, read through a clock that logs only the
    reads made inside ``sent()``). The limiter's clock is ``time.time``, as the server's log is."""

    def __init__(self, live: LiveBackend):
        self.sent: dict[str, list[float]] = {}
        self._local = threading.local()
        self._lock = threading.Lock()
        limiter = live.limiter
        acquire, clock = limiter.acquire, limiter.clock

        def logging_clock() -> float:
            t = clock()
            host = getattr(self._local, "host", None)
            if host is not None:
                with self._lock:
                    self.sent.setdefault(host, []).append(t)
            return t

        def logging_acquire(host: str):
            sent = acquire(host)

            def logged_sent() -> None:
                self._local.host = host.lower()
                try:
                    sent()  # reads the clock once, the first time only
                finally:
                    self._local.host = None

            return logged_sent

        limiter.clock, limiter.acquire = logging_clock, logging_acquire


def assert_interval_after_each_send(arrivals: list[float], sent: list[float], interval: float) -> None:
    """Request k+1 of a host arrived at least ``interval`` after the limiter recorded request k as sent
    (1 ms for the 6-decimal record in the lock file and the two clocks' reads)."""
    arrivals, sent = sorted(arrivals), sorted(sent)
    assert len(arrivals) == len(sent), (arrivals, sent)
    for k, (went_out, next_arrival) in enumerate(zip(sent, arrivals[1:])):
        assert next_arrival >= went_out + interval - 1e-3, (k, sent, arrivals)


class FakeTime:
    """A clock that starts at 1000.0 and moves only when ``sleep()`` (or the test) moves it; ``slept`` lists
    the sleeps asked for, rounded to 6 decimals."""

    def __init__(self):
        self.now = 1000.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 6))
        self.now += seconds
