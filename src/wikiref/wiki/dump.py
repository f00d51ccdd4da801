"""Stream article pages out of a MediaWiki XML dump part (mwxml does the XML).

Handles ``.xml.bz2`` parts, plain and multistream (Python's bz2 reader decodes concatenated
streams), ``.xml.gz`` and uncompressed ``.xml``. Yields namespace-0, non-redirect pages with their
latest revision's wikitext; everything else is counted by reason. A truncated archive or broken
XML raises :class:`DumpError` naming the file and how far reading got, never a bare traceback from
deep inside the decompressor.
"""

from __future__ import annotations

import bz2
import gzip
import io
import logging
import os
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO
from xml.etree.ElementTree import ParseError

log = logging.getLogger(__name__)

SUFFIXES = ("", ".bz2", ".xml.bz2", ".xml.gz", ".gz", ".xml")


class DumpError(RuntimeError):
    """The dump part cannot be read to its end (truncated archive, broken XML)."""


@dataclass(frozen=True)
class Page:
    page_id: int
    title: str
    namespace: int
    text: str
    revision_id: int
    timestamp: str


class CountingReader(io.RawIOBase):
    """Wraps a (decompressing) stream and counts the bytes read out of it (the XML size)."""

    def __init__(self, raw: BinaryIO):
        self.raw = raw
        self.count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buf) -> int:
        data = self.raw.read(len(buf))
        n = len(data)
        buf[:n] = data
        self.count += n
        return n

    def close(self) -> None:
        self.raw.close()
        super().close()


def resolve_part(dump_dir: str | os.PathLike, part: str) -> Path:
    """The file of dump part ``part`` in ``dump_dir``: ``<part>``, ``<part>.bz2``, ``<part>.xml.bz2``..."""
    base = Path(dump_dir)
    for suffix in SUFFIXES:
        cand = base / f"{part}{suffix}"
        if cand.is_file():
            return cand
    raise FileNotFoundError(
        f"dump part {part!r} not found in {base} (tried {', '.join(part + s for s in SUFFIXES if s)})"
    )


def default_part_path(dump_dir: str, part: str) -> str:
    """Where Snakemake expects a part when it does not exist yet (the usual dump file name)."""
    for suffix in SUFFIXES:
        cand = os.path.join(dump_dir, f"{part}{suffix}")
        if os.path.isfile(cand):
            return cand
    if part.endswith((".bz2", ".gz", ".xml")):
        return os.path.join(dump_dir, part)
    if ".xml-p" in part:  # enwiki-YYYYMMDD-pages-articlesN.xml-pAAApBBB -> .bz2
        return os.path.join(dump_dir, f"{part}.bz2")
    return os.path.join(dump_dir, f"{part}.xml.bz2")


def open_dump(path: str | os.PathLike) -> BinaryIO:
    path = Path(path)
    with open(path, "rb") as fh:
        magic = fh.read(3)
    if magic == b"BZh":
        return bz2.open(path, "rb")
    if magic[:2] == b"\x1f\x8b":
        return gzip.open(path, "rb")
    return open(path, "rb")


def iter_pages(
    path: str | os.PathLike,
    stats: Counter | None = None,
    namespaces: tuple[int, ...] = (0,),
    counter: list | None = None,
) -> Iterator[Page]:
    """Yield the wanted pages of one dump part, counting skips in ``stats``.

    ``counter`` (optional one-element list) receives the :class:`CountingReader`, so a caller can
    read how many bytes of XML were consumed (throughput, progress).
    """
    import mwxml
    from mwxml.errors import MalformedXML

    stats = stats if stats is not None else Counter()
    reader = CountingReader(open_dump(path))
    buffered = io.BufferedReader(reader, buffer_size=1 << 20)
    if counter is not None:
        counter.append(reader)
    last_title = None
    try:
        try:
            dump = mwxml.Dump.from_file(buffered)
        except (ParseError, StopIteration, MalformedXML, AssertionError) as exc:  # mwxml asserts the root tag
            raise DumpError(f"{path}: not a MediaWiki XML dump ({type(exc).__name__}: {exc})") from exc
        for page in dump:
            stats["pages_read"] += 1
            last_title = page.title
            if page.namespace not in namespaces:
                stats["page_skipped:namespace"] += 1
                _drain(page)
                continue
            if page.redirect is not None:
                stats["page_skipped:redirect"] += 1
                _drain(page)
                continue
            latest = None
            for rev in page:
                latest = rev
            if latest is None or latest.text is None:
                stats["page_skipped:no_text"] += 1
                continue
            if latest.model not in (None, "wikitext"):
                stats["page_skipped:not_wikitext"] += 1
                continue
            yield Page(
                page_id=int(page.id),
                title=str(page.title),
                namespace=int(page.namespace),
                text=str(latest.text),
                revision_id=int(latest.id) if latest.id is not None else 0,
                timestamp=str(latest.timestamp) if latest.timestamp is not None else "",
            )
    except (EOFError, OSError, zlib.error) as exc:
        raise DumpError(
            f"{path}: archive ends or is corrupt after {reader.count:,} bytes of XML "
            f"(last page read: {last_title!r}): {exc}"
        ) from exc
    except ParseError as exc:
        raise DumpError(
            f"{path}: broken XML after {reader.count:,} bytes (last page read: {last_title!r}): {exc}"
        ) from exc
    except (MalformedXML, ValueError, TypeError, KeyError, AttributeError) as exc:  # mwxml: a bad <id>, no <title>
        raise DumpError(
            f"{path}: malformed page after {reader.count:,} bytes (last page read: {last_title!r}): "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    finally:
        buffered.close()


def _drain(page) -> None:
    for _ in page:
        pass


# ---------------------------------------------------------------------------------- writing (STAND-INs)
@dataclass(frozen=True)
class ExportRevision:
    rev_id: int
    parent_id: int | None
    timestamp: str  # ISO, e.g. 2019-01-01T00:00:00Z
    user: str
    comment: str
    text: str


@dataclass(frozen=True)
class ExportPage:
    page_id: int
    title: str
    namespace: int
    revisions: tuple[ExportRevision, ...]


def mediawiki_sha1(text: str) -> str:
    """A revision's ``<sha1>`` as MediaWiki computes it: base 36 of the SHA-1 of the UTF-8 text, 31 digits."""
    import hashlib

    n = int(hashlib.sha1(text.encode("utf-8")).hexdigest(), 16)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while n:
        n, r = divmod(n, 36)
        out = digits[r] + out
    return out.rjust(31, "0")


def export_xml(pages: list[ExportPage], *, sitename: str, generator: str, namespaces: dict[int, str]) -> str:
    """A MediaWiki XML export (0.10: ``parentid``, ``model``, ``format``, ``sha1``) of ``pages``, as the
    pages-articles (one revision a page) and pages-meta-history (every revision) dumps are written. For
    the STAND-IN inputs of the offline sample; same pages -> same text."""
    from xml.sax.saxutils import escape

    ns_lines = "".join(
        f'      <namespace key="{k}" case="first-letter"{f">{escape(v)}</namespace>" if v else " />"}\n'
        for k, v in sorted(namespaces.items())
    )
    out = [
        '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="en">\n'
        f"  <siteinfo>\n    <sitename>{escape(sitename)}</sitename>\n    <dbname>enwiki</dbname>\n"
        "    <base>https://en.wikipedia.org/wiki/Main_Page</base>\n"
        f"    <generator>{escape(generator)}</generator>\n    <case>first-letter</case>\n"
        f"    <namespaces>\n{ns_lines}    </namespaces>\n  </siteinfo>\n"
    ]
    for page in pages:
        out.append(
            f"  <page>\n    <title>{escape(page.title)}</title>\n    <ns>{page.namespace}</ns>\n    <id>{page.page_id}</id>\n"
        )
        for rev in page.revisions:
            parent = f"      <parentid>{rev.parent_id}</parentid>\n" if rev.parent_id else ""
            out.append(
                f"    <revision>\n      <id>{rev.rev_id}</id>\n{parent}      <timestamp>{rev.timestamp}</timestamp>\n"
                f"      <contributor>\n        <username>{escape(rev.user)}</username>\n        <id>0</id>\n      </contributor>\n"
                f"      <comment>{escape(rev.comment)}</comment>\n"
                "      <model>wikitext</model>\n      <format>text/x-wiki</format>\n"
                f'      <text bytes="{len(rev.text.encode("utf-8"))}" xml:space="preserve">{escape(rev.text)}</text>\n'
                f"      <sha1>{mediawiki_sha1(rev.text)}</sha1>\n    </revision>\n"
            )
        out.append("  </page>\n")
    out.append("</mediawiki>\n")
    return "".join(out)


def part_path(dump_dir: str | Path, part: str) -> str:
    """The part's file when it exists, else where it is expected (``<part>.xml.bz2``), so a workflow
    that lacks it reports a missing input instead of failing to build its DAG."""
    try:
        return str(resolve_part(dump_dir, part))
    except FileNotFoundError:
        return str(Path(dump_dir) / f"{part}.xml.bz2")
