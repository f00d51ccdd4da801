"""The fetcher settings of the tests that fetch from a loopback server (tests/conftest.py's ``loopback_server``)."""

from __future__ import annotations

from pathlib import Path

from wikiref.web.fetch import FetchConfig


def loopback_fetch_config(tmp_path: Path, **kw) -> FetchConfig:
    """A fetcher fit for a loopback server: private addresses allowed (the server is on 127.0.0.1), no
    politeness delay, its cache under ``tmp_path``, quick backoff and timeouts, the tests' user agent; ``kw``
    (the backend, retries, the total timeout, ...) adds to and overrides these."""
    base = dict(
        allow_private_addresses=True,
        per_host_interval_s=0.0,
        cache_dir=str(tmp_path / "cache"),
        backoff_s=0.01,
        connect_timeout_s=2,
        read_timeout_s=5,
        user_agent="wikiref-test/1.0 (+loopback)",
    )
    return FetchConfig(**{**base, **kw})
