"""The ``wayback`` fetch backend: the Wayback Machine availability API (snapshot closest to the citation's
access-date), then the snapshot's original bytes (``id_`` URL) through the live client
(:class:`wikiref.web.fetch.LiveBackend`); a citation's own ``archive-url`` is used directly."""

from __future__ import annotations

import json
import re

from wikiref.web.fetch import FetchConfig, FetchResult, LiveBackend, _Failure

# A Wayback snapshot URL: <origin>/web/<timestamp>[<flag>_]/<original URL>.
WAYBACK_SNAPSHOT = re.compile(r"^(https?://[^/]+/web/)(\d{4,14})(?:[a-z]{2}_)?/(.+)$")


def wayback_timestamp(access_date: str) -> str:
    """A citation's access-date ("2019-01-05", "5 January 2019", ...) -> "20190105" ("" if unreadable)."""
    if not access_date or not access_date.strip():
        return ""
    from dateutil import parser as dateparser

    try:
        dt = dateparser.parse(access_date.strip(), default=None, fuzzy=False)
    except (ValueError, OverflowError, TypeError):
        return ""
    if dt is None or not (1995 <= dt.year <= 2100):
        return ""
    return dt.strftime("%Y%m%d")


class WaybackBackend:
    name = "wayback"

    def __init__(self, cfg: FetchConfig, live: LiveBackend | None = None):
        self.cfg = cfg
        self.live = live or LiveBackend(cfg)

    def snapshot_url(self, url: str, access_date: str = "") -> tuple[str, str] | None:
        """(original-bytes snapshot URL, timestamp) closest to the access date, or None."""
        from urllib.parse import urlencode

        query = {"url": url}
        ts = wayback_timestamp(access_date)
        if ts:
            query["timestamp"] = ts
        api = f"{self.cfg.wayback_api}?{urlencode(query)}"
        status, _, body, _ = self.live._get(api, 1 << 20, check_type=False)
        if status != 200:
            raise _Failure(f"wayback_api_http_{status}", status)
        try:
            closest = json.loads(body.decode("utf-8"))["archived_snapshots"]["closest"]
        except (ValueError, KeyError, TypeError):
            return None
        if not closest or not closest.get("available") or str(closest.get("status", "200")) != "200":
            return None
        return to_raw_snapshot(closest["url"]), str(closest.get("timestamp", ""))

    def fetch(self, url: str, access_date: str = "", archive_url: str = "") -> FetchResult:
        try:
            m = WAYBACK_SNAPSHOT.match(archive_url.strip()) if archive_url else None
            if m:
                snap, ts = to_raw_snapshot(archive_url.strip()), m.group(2)
            else:
                found = self.snapshot_url(url, access_date)
                if found is None:
                    return FetchResult(url=url, ok=False, reason="wayback_not_archived", source=self.name)
                snap, ts = found
        except _Failure as f:
            return FetchResult(
                url=url,
                ok=False,
                reason=f.reason if f.reason.startswith("wayback") else f"wayback_api_{f.reason}",
                status=f.status,
                source=self.name,
            )
        res = self.live.fetch(snap, source=self.name)
        res.url = url
        res.snapshot = ts
        return res


def to_raw_snapshot(snapshot: str) -> str:
    """``.../web/20190105123456/http://x`` -> ``.../web/20190105123456id_/http://x`` (original bytes)."""
    m = WAYBACK_SNAPSHOT.match(snapshot)
    if not m:
        return snapshot
    return f"{m.group(1)}{m.group(2)}id_/{m.group(3)}"
