"""Writing STAND-IN documents, shared by the stages that build stand-ins for unreachable sources (sample,
qmdscnn, wcep): the stand-in page record, its HTML (with the stand-in notice) and a reproducible WARC of
stand-in pages (fixed date, content-derived record ids, sorted records, gzip members without timestamps).
"""

from __future__ import annotations

import html
import io
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from wikiref.files import atomic_path, stable_id

WARC_DATE = "2019-01-01T00:00:00Z"  # fixed, so the archive is reproducible byte for byte


STANDIN_NOTE = (
    "STAND-IN: the cited web pages of the offline sample cannot be fetched offline. Each page in "
    "this archive was built by `wikiref sample` from the citing Wikipedia article itself (the citing "
    "section's other paragraphs, extended with neighbouring sections), never from the cited source, "
    "and never contains a paragraph that cites the URL. Results computed on it are NOT comparable to "
    "the paper's."
)


@dataclass
class Standin:
    url: str
    title: str
    article: str
    page_id: int
    sections: list[str]  # section paths used, "A > B"
    paragraphs: list[str]
    tokens: int
    citing_statements: int


def standin_html(page: Standin) -> bytes:
    esc = html.escape
    paras = "\n".join(f"<p>{esc(p)}</p>" for p in page.paragraphs)
    notice = (
        f"STAND-IN PAGE, not the cited source. Built by wikiref sample for the offline sample from the "
        f"Wikipedia article &ldquo;{esc(page.article)}&rdquo; (sections: {esc('; '.join(page.sections))}), "
        f"without the paragraphs that cite this URL. Original URL: {esc(page.url)}"
    )
    doc = (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{esc(page.title)}</title>\n"
        '<meta name="robots" content="noindex">\n'
        '<meta name="wikiref-standin" content="true">\n</head>\n<body>\n'
        f'<header><p class="wikiref-standin-notice"><strong>{notice}</strong></p></header>\n'
        f"<main>\n<article>\n{paras}\n</article>\n</main>\n"
        "<footer><p>wikiref offline sample: STAND-IN content derived from Wikipedia (CC BY-SA).</p></footer>\n"
        "</body>\n</html>\n"
    )
    return doc.encode("utf-8")


def _record_id(*parts: str) -> str:
    return f"<urn:uuid:{uuid.UUID(stable_id(*parts, length=32))}>"


def write_standin_warc(
    pages: Iterable[Standin],
    path: str | Path,
    source_note: str,
    *,
    note: str = STANDIN_NOTE,
    render: Callable[[Standin], bytes] = standin_html,
    software: str = "wikiref sample",
    warc_date: Callable[[Standin], str] | None = None,
) -> int:
    """Write the stand-in pages as WARC response records (gzip per record); returns the count. ``note``
    describes the archive (warcinfo), ``render`` makes a page's HTML, ``warc_date`` a record's capture time
    (default: the fixed :data:`WARC_DATE`)."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    buf = io.BytesIO()
    writer = WARCWriter(buf, gzip=True, warc_version="1.0")
    info = (
        f"software: {software}\r\nformat: WARC File Format 1.0\r\ndescription: {note}\r\nsource: {source_note}\r\n"
    ).encode()
    writer.write_record(
        writer.create_warc_record(
            "",
            "warcinfo",
            payload=io.BytesIO(info),
            length=len(info),
            warc_content_type="application/warc-fields",
            warc_headers_dict={
                "WARC-Date": WARC_DATE,
                "WARC-Record-ID": _record_id("warcinfo", source_note),
                "WARC-Filename": Path(path).name,
                "WARC-Wikiref-Standin": "true",
            },
        )
    )
    n = 0
    for page in pages:
        body = render(page)
        http_headers = StatusAndHeaders(
            "200 OK",
            [
                ("Content-Type", "text/html; charset=utf-8"),
                ("Content-Length", str(len(body))),
            ],
            protocol="HTTP/1.1",
        )
        writer.write_record(
            writer.create_warc_record(
                page.url,
                "response",
                payload=io.BytesIO(body),
                length=len(body),
                http_headers=http_headers,
                warc_headers_dict={
                    "WARC-Date": warc_date(page) if warc_date else WARC_DATE,
                    "WARC-Record-ID": _record_id(page.url, body.decode("utf-8")),
                    "WARC-Wikiref-Standin": "true",
                    "WARC-Wikiref-Description": (
                        f'STAND-IN page built from Wikipedia article "{page.article}" (page id {page.page_id}), '
                        f"{len(page.paragraphs)} paragraph(s), {page.tokens} tokens; not the cited source"
                    ),
                    "WARC-Wikiref-Source-Article": page.article,
                },
            )
        )
        n += 1
    with atomic_path(path) as tmp:
        tmp.write_bytes(buf.getvalue())
    return n
