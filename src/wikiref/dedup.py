"""Document identity, shared by curate (duplicate cited documents, the document-disjoint split) and the DUC
stand-in builder: the normalised URL key and the body-text hash.
"""

from __future__ import annotations

import contextlib
import hashlib
from urllib.parse import urlsplit


# --------------------------------------------------------------------------------------------
# document identity
# --------------------------------------------------------------------------------------------
def url_key(url: str) -> str:
    """Normalised URL used to recognise the same cited document: courlan's normalisation (lower-case
    host, default port and tracking parameters removed, query sorted), then scheme, ``www.``,
    fragment and trailing slash dropped and the whole key lower-cased. Over-merging two URLs only
    makes the split more conservative, so the key errs on that side."""
    from courlan import normalize_url

    url = (url or "").strip()
    if not url:
        return ""
    with contextlib.suppress(Exception):  # malformed URL: keep the raw text, still lower-cased below
        url = normalize_url(url)
    parts = urlsplit(url if "//" in url else "//" + url)
    host = (parts.hostname or "").lower()
    if host.startswith("www."):
        host = host[4:]
    key = host + parts.path.rstrip("/")
    if parts.query:
        key += "?" + parts.query
    return key.lower()


def body_hash(text: str) -> str:
    """sha1 of the lower-cased, whitespace-normalised body text."""
    return hashlib.sha1(" ".join((text or "").lower().split()).encode("utf-8")).hexdigest()
