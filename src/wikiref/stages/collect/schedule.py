"""Host-aware scheduling of one batch of fetches over a pool of threads (:func:`run_by_host`).

The batch's items are grouped by host (each host's items in batch order). A free worker takes the next
item of a host that is not being fetched already and whose interval has elapsed, soonest-ready host
first (ties: the host whose next item comes first in the batch); items without a host go to workers no
host can use. When nothing is ready the scheduler waits for a fetch to finish or for the next host to
become ready, whichever comes first. So N hosts are fetched at once while one host never has two of
its items in flight, and a worker never sits in the per-host limiter behind a busy host while another
host could be fetched.

"Ready" comes from the caller's ``ready_at(host)`` (:meth:`.hostlimit.SharedHostLimiter.ready_at`: the
last request on record, this process's or another collect job's, plus the host's interval). It is read
when a host's item finishes and again just before a host is given to a worker, so an item answered
from the fetch cache (no request, no new record) does not make its host wait. It is only a hint: the
limiter's :meth:`~.hostlimit.SharedHostLimiter.wait`, called by the fetch itself before every request
(robots.txt, redirects and retries included), still guarantees the interval across threads and
processes.

Results are yielded as they finish, with their index in the batch; the caller puts them back in batch
order, so what it writes depends neither on the number of workers nor on timing.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import TypeVar
from urllib.parse import urlsplit

T = TypeVar("T")
R = TypeVar("R")


def host_of(url: str) -> str | None:
    """The host the per-host limiter keys a request to ``url`` on (the lower-case host name); None when
    the URL has none or cannot be read (its fetch fails without a request)."""
    try:
        return urlsplit(url.strip()).hostname or None
    except ValueError:
        return None


def interleave_by_host(urls: Sequence[str]) -> list[str]:
    """``urls`` in host round-robin order: hosts in the order of their first URL in ``sorted(urls)``, each
    host's URLs sorted, one URL of each host per round. Batches cut from this order hold as many hosts as
    possible, so big sites are fetched side by side instead of one after another (a batch of sorted URLs
    inside one newspaper is that one host at one URL per interval); a host's URLs still go in order, and
    the order depends on the URLs alone."""
    queues: dict[str | None, deque[str]] = {}
    for url in sorted(urls):
        queues.setdefault(host_of(url), deque()).append(url)
    out: list[str] = []
    rounds = list(queues.values())
    while rounds:
        out.extend(q.popleft() for q in rounds)
        rounds = [q for q in rounds if q]
    return out


def run_by_host(
    items: Sequence[T],
    work: Callable[[T], R],
    *,
    hosts: Sequence[str | None],
    workers: int,
    ready_at: Callable[[str], float] | None = None,
    clock: Callable[[], float] = time.time,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[tuple[int, R]]:
    """``work(item)`` for every item on ``workers`` threads, at most one item per host at a time and a
    host's item only once ``ready_at(host) <= clock()`` (None: a host is ready when it is not busy);
    ``hosts[i]`` is item ``i``'s host, None for no host. Yields ``(index, result)`` as items finish
    (several finishing together: in index order). An exception raised by ``work`` is raised here once
    the items already running have finished; no further item is started."""
    if len(hosts) != len(items):
        raise ValueError(f"{len(items)} items but {len(hosts)} hosts")
    workers = max(1, int(workers))
    queues: dict[str, deque[int]] = {}  # host -> its waiting items, in batch order
    hostless: deque[int] = deque()
    for i, host in enumerate(hosts):
        if host is None:
            hostless.append(i)
        else:
            queues.setdefault(host, deque()).append(i)

    def readiness(host: str) -> float:
        return ready_at(host) if ready_at is not None else -math.inf

    ready = {host: readiness(host) for host in queues}
    busy: set[str] = set()
    running: dict[Future, tuple[int, str | None]] = {}

    def next_item() -> tuple[int, str | None] | None:
        while True:
            now = clock()
            best = min(
                ((ready[h], q[0], h) for h, q in queues.items() if h not in busy and ready[h] <= now),
                default=None,
            )
            if best is None:
                return (hostless.popleft(), None) if hostless else None
            host = best[2]
            fresh = readiness(host)  # another collect job may have asked this host since
            if fresh > now:
                ready[host] = fresh
                continue
            queue = queues[host]
            i = queue.popleft()
            if not queue:
                del queues[host]
            busy.add(host)
            return i, host

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="fetch") as pool:
        while queues or hostless or running:
            while len(running) < workers:
                picked = next_item()
                if picked is None:
                    break
                running[pool.submit(work, items[picked[0]])] = picked
            # A free worker waits for the next host to become ready; with none free, only a finish matters.
            waiting = [ready[h] for h in queues if h not in busy] if len(running) < workers else []
            timeout = max(0.0, min(waiting) - clock()) if waiting else None
            if not running:
                if timeout:  # every remaining host is waiting out its interval
                    sleep(timeout)
                continue
            done, _ = wait(running, timeout=timeout, return_when=FIRST_COMPLETED)
            for fut in sorted(done, key=lambda f: running[f][0]):
                i, host = running.pop(fut)
                result = fut.result()
                if host is not None:
                    busy.discard(host)
                    if host in queues:
                        ready[host] = readiness(host)
                yield i, result
