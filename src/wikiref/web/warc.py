"""The ``warc`` fetch backend: local WARC / WARC.gz files read with ``warcio``, indexed by target URI
(offsets only, so large archives are not loaded in memory), and the URL key archives are looked up by."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from wikiref.web.fetch import FetchConfig, FetchResult

log = logging.getLogger(__name__)


def normalise_url(url: str) -> str:
    """Lookup key for archives: scheme and host lower-cased, default port and fragment removed."""
    url = url.strip()
    try:
        p = urlsplit(url)
    except ValueError:
        return url
    netloc = (p.hostname or "").lower()
    if p.port and not ((p.scheme == "http" and p.port == 80) or (p.scheme == "https" and p.port == 443)):
        netloc += f":{p.port}"
    return urlunsplit((p.scheme.lower(), netloc, p.path or "/", p.query, ""))


class WarcBackend:
    name = "warc"

    def __init__(self, cfg: FetchConfig, paths: Iterable[str] | None = None):
        from warcio.archiveiterator import ArchiveIterator

        self.cfg = cfg
        self.paths = [str(p) for p in (paths if paths is not None else cfg.warc_paths)]
        self.exact: dict[str, tuple[str, int]] = {}
        self.loose: dict[str, tuple[str, int]] = {}
        self.records = 0
        for path in self.paths:
            if not Path(path).is_file():
                raise FileNotFoundError(f"WARC file {path} not found (collect.fetch.warc_paths)")
            with open(path, "rb") as fh:
                it = ArchiveIterator(fh)
                for record in it:
                    if record.rec_type not in ("response", "resource"):
                        continue
                    uri = record.rec_headers.get_header("WARC-Target-URI")
                    if not uri:
                        continue
                    uri = uri.strip("<> ")
                    offset = it.get_record_offset()
                    self.records += 1
                    self.exact.setdefault(uri, (path, offset))  # the first record of a URI wins
                    self.loose.setdefault(normalise_url(uri), (path, offset))
        log.info("WARC index: %d records over %d file(s)", self.records, len(self.paths))

    def fetch(self, url: str, access_date: str = "", archive_url: str = "") -> FetchResult:
        from warcio.archiveiterator import ArchiveIterator

        loc = self.exact.get(url.strip()) or self.loose.get(normalise_url(url))
        if loc is None:
            return FetchResult(url=url, ok=False, reason="not_in_archive", source=self.name)
        path, offset = loc
        with open(path, "rb") as fh:
            fh.seek(offset)
            record = next(iter(ArchiveIterator(fh)))
            standin = (record.rec_headers.get_header("WARC-Wikiref-Standin") or "").lower() == "true"
            status, ctype = 200, ""
            if record.rec_type == "response" and record.http_headers is not None:
                status = int(record.http_headers.get_statuscode() or 0)
                ctype = (record.http_headers.get_header("Content-Type") or "").split(";", 1)[0].strip().lower()
            else:
                ctype = (record.rec_headers.get_header("Content-Type") or "").split(";", 1)[0].strip().lower()
            base = dict(
                url=url,
                final_url=record.rec_headers.get_header("WARC-Target-URI") or url,
                source=self.name,
                standin=standin,
                status=status,
                content_type=ctype,
            )
            if status != 200:
                return FetchResult(ok=False, reason=f"http_{status}", **base)
            if ctype not in self.cfg.content_types:
                return FetchResult(ok=False, reason="bad_content_type", **base)
            body = record.content_stream().read(self.cfg.max_body_bytes + 1)
            if len(body) > self.cfg.max_body_bytes:
                return FetchResult(ok=False, reason="too_large", **base)
        return FetchResult(ok=True, body=body, **base)
