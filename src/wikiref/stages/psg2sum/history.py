"""Stream page histories out of a MediaWiki ``pages-meta-history`` dump: per page, the (parent, child)
revision pairs that Psg2Sum mines (paper §2.1: "we compare two temporally adjacent revisions of a page").

Reads ``.xml.bz2`` (plain and multistream), ``.xml.gz``, plain ``.xml`` (through
:func:`wikiref.wiki.dump.open_dump`) and ``.7z``, the other format history dumps are published
in, streamed from the ``7z`` binary's standard output (Debian package ``p7zip-full``): py7zr's
``read()`` decompresses a whole member into memory, which a history part (tens of GB of XML) does not fit.

The XML is parsed with :func:`xml.etree.ElementTree.iterparse`, one revision at a time: every revision
element is cleared and detached once read, so memory holds one revision's text at a time (plus, in
:func:`iter_edits`, the previous kept revision and the page's set of sha1s), never a page's revision list
or the dump. Export versions 0.3 (no ``<ns>``: the namespace comes from the title's prefix and the
siteinfo) to 0.11 are read; an empty ``<redirect />`` (export 0.3) marks a redirect page too.

Counters (``tally.counts``; for anomalies the first places also go to ``tally.locations``):

- ``pages:read``; ``pages:before_start`` (``start_after_page``), ``pages:namespace``, ``pages:redirect``
  (pages not read further); ``pages:out_of_order`` (a page id not above the previous one; reading goes on).
- ``revisions:read`` (of the pages read further); ``revisions:no_text`` (deleted/suppressed or absent
  text), ``revisions:not_wikitext`` (``<model>`` other than wikitext): not yielded at all;
  ``revisions:sha1_computed`` (no ``<sha1>`` in the dump).
- :func:`iter_edits` / :func:`page_edits` only: ``revisions:first`` (the first kept revision of a page: no parent),
  ``revisions:parentid_mismatch`` (``<parentid>`` is not the previous kept revision, e.g. after a deleted
  one, or a first kept revision that names a parent), ``skipped:no_change``, ``skipped:revert``,
  ``skipped:redirect`` (the parent or the child is a ``#REDIRECT``: a redirect has no lead to mine, and
  redirect -> article is the creation of the article), ``skipped:large_edit``, ``edits:yielded``.
"""

from __future__ import annotations

import io
import logging
import os
import re
import shutil
import subprocess
import tempfile
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO
from xml.etree.ElementTree import Element, ParseError, iterparse

from wikiref.wiki.dump import CountingReader, DumpError, mediawiki_sha1, open_dump

log = logging.getLogger(__name__)

SEVEN_ZIP_PACKAGE = "p7zip-full"
SEVEN_ZIP_BINARIES = ("7z", "7za", "7zr", "7zz")
_7Z_MAGIC = b"7z\xbc\xaf\x27\x1c"
# MediaWiki's redirect syntax (English magic word): "#REDIRECT [[Target]]" at the start of the text.
_REDIRECT = re.compile(r"\s*#\s*redirect\s*:?\s*\[\[", re.IGNORECASE)
_HEADER_TAGS = frozenset({"title", "ns", "id", "redirect", "restrictions"})


class SevenZipMissing(RuntimeError):
    """A ``.7z`` dump was given but no 7-Zip binary is on PATH."""


@dataclass(frozen=True)
class Revision:
    rev_id: int
    parent_id: int | None  # <parentid> when the dump has it, else None
    timestamp: str  # ISO, as in the dump
    sha1: str  # the dump's <sha1>, else computed like MediaWiki (see mediawiki_sha1)
    text: str
    minor: bool
    comment: str
    user: str  # user name or IP; "" when hidden


@dataclass(frozen=True)
class Edit:
    page_id: int
    title: str
    parent: Revision  # the previous kept revision of the page (in dump order)
    child: Revision


def is_redirect(text: str) -> bool:
    """True for a redirect's wikitext (``#REDIRECT [[...]]``)."""
    return _REDIRECT.match(text) is not None


# --------------------------------------------------------------------------------------------------- 7z


def seven_zip_binary() -> str:
    """The first 7-Zip binary on PATH; :class:`SevenZipMissing` (naming the package) when there is none."""
    for name in SEVEN_ZIP_BINARIES:
        found = shutil.which(name)
        if found:
            return found
    raise SevenZipMissing(
        f"reading .7z dumps needs a 7-Zip binary ({', '.join(SEVEN_ZIP_BINARIES)}) on PATH: install the "
        f"Debian package {SEVEN_ZIP_PACKAGE} (apt-get install {SEVEN_ZIP_PACKAGE}), or recompress the dump "
        "as .bz2"
    )


class _SevenZipReader(io.RawIOBase):
    """The decompressed bytes of a .7z archive, read from ``7z e -so`` as they come (nothing held but
    the pipe's buffer). At the end of the output a non-zero exit status of 7z (truncated or corrupt
    archive) raises OSError with 7z's own message; closing early kills the process."""

    def __init__(self, path: Path):
        self.path = path
        binary = seven_zip_binary()
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed in close())
        self.proc = subprocess.Popen(
            [binary, "e", "-so", "-bd", str(path)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
        )
        self._finished = False

    def readable(self) -> bool:
        return True

    def readinto(self, buf) -> int:
        if self._finished:
            return 0
        n = self.proc.stdout.readinto(buf)
        if n:
            return n
        self._finished = True
        rc = self.proc.wait()
        if rc != 0:
            self._stderr.seek(0)
            msg = " ".join(self._stderr.read()[-2000:].decode("utf-8", "replace").split())
            raise OSError(f"7z exited with status {rc} reading {self.path}: {msg}")
        return 0

    def close(self) -> None:
        if self.closed:
            return
        try:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
        finally:
            self.proc.stdout.close()
            self._stderr.close()
            super().close()


def open_history(path: str | os.PathLike) -> BinaryIO:
    """A binary stream of the XML of a history dump part: ``.bz2`` (incl. multistream), ``.gz``, plain
    ``.xml`` (recognised by their magic bytes, as in :func:`~wikiref.wiki.dump.open_dump`) or
    ``.7z`` (streamed from the 7z binary; :class:`SevenZipMissing` when there is none)."""
    path = Path(path)
    with open(path, "rb") as fh:
        magic = fh.read(len(_7Z_MAGIC))
    if magic == _7Z_MAGIC:
        return io.BufferedReader(_SevenZipReader(path), buffer_size=1 << 20)
    return open_dump(path)


# ----------------------------------------------------------------------------------------------- parsing


def _local(tag: str) -> str:
    return tag[tag.rfind("}") + 1 :]


def _count(tally, key: str, where: str = "") -> None:
    tally.counts[key] += 1
    if where:
        kept = tally.locations.setdefault(key, [])
        if len(kept) < tally.max_locations:
            kept.append(where)


class _Malformed(ValueError):
    """An element whose content breaks the export format (a non-numeric id...)."""


def _int(text: str | None, what: str) -> int:
    try:
        return int((text or "").strip())
    except ValueError:
        raise _Malformed(f"<{what}> is not a number: {text!r}") from None


@dataclass
class _Head:
    page_id: int
    title: str
    seq: int


class _Cursor:
    """One pass over a dump: pulls XML events on demand, for the next page header or the current page's
    next revision, and clears what it has read."""

    def __init__(self, path, tally, namespaces, start_after_page):
        self.path = str(path)
        self.tally = tally
        self.namespaces = frozenset(int(n) for n in namespaces)
        self.start_after = start_after_page
        self.reader = CountingReader(open_history(path))
        # iterparse reads 16 KiB at a time straight from the (buffered) decompressor: a read-ahead buffer
        # here would hide, on a truncated archive, the pages decompressed before the break
        self.events = iterparse(self.reader, events=("start", "end"))
        self.closed = False
        self.depth = 0
        self.root: Element | None = None
        self.ns_names: dict[str, int] = {}
        self.page_el: Element | None = None
        self.head_done = False
        self.skip = True  # revisions of the current page are not parsed
        self.seq = 0  # pages handed out so far
        self.prev_page_id: int | None = None
        self.last_page = "none"
        self.pages = 0
        self.revisions_read = 0
        self.on_page = None  # called after each page header read

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.reader.close()

    @contextmanager
    def guard(self):
        """Decompressor and parser failures -> DumpError naming the file and the last page read."""
        try:
            yield
        except DumpError:
            raise
        except (EOFError, OSError, zlib.error) as exc:
            raise DumpError(
                f"{self.path}: archive ends or is corrupt after {self.reader.count:,} bytes of XML "
                f"(last page read: {self.last_page}): {exc}"
            ) from exc
        except (ParseError, _Malformed) as exc:
            raise DumpError(
                f"{self.path}: broken XML after {self.reader.count:,} bytes (last page read: {self.last_page}): {exc}"
            ) from exc

    def _pull(self, want: str):
        """Process events until ``want`` is reached: "page" -> the header of the next page to yield
        (:class:`_Head`), or None at the end of the dump; "revision" -> the next ``<revision>`` element
        of the current page (parsed by the caller, then :meth:`_release`), or None at the page's end."""
        while True:
            with self.guard():
                item = next(self.events, None)
            if item is None:
                return None
            event, el = item
            if event == "start":
                self.depth += 1
                if self.depth == 1:
                    if _local(el.tag) != "mediawiki":
                        raise DumpError(f"{self.path}: not a MediaWiki XML dump (root <{_local(el.tag)}>)")
                    self.root = el
                elif self.depth == 2 and _local(el.tag) == "page":
                    self.page_el, self.head_done, self.skip = el, False, True
                elif (
                    self.depth == 3 and self.page_el is not None and not self.head_done and _local(el.tag) == "revision"
                ):
                    with self.guard():
                        head = self._head()
                    if head is not None and want == "page":
                        return head
                continue
            depth, self.depth = self.depth, self.depth - 1
            tag = _local(el.tag)
            if depth == 3 and self.page_el is not None:
                if tag == "revision":
                    if want == "revision" and not self.skip:
                        return el
                    self._release(el)
                elif self.head_done or tag not in _HEADER_TAGS:
                    el.clear()  # <upload>, <discussionthreadinginfo>...
            elif depth == 2:
                if tag == "siteinfo":
                    with self.guard():  # a non-numeric key: DumpError, as for a non-numeric <id>
                        self.ns_names = {
                            (ns.text or "").strip(): _int(ns.get("key", "0"), "namespace key")
                            for ns in el.iter()
                            if _local(ns.tag) == "namespace" and (ns.text or "").strip()
                        }
                if tag == "page":
                    head = None
                    if not self.head_done:  # a page without revisions
                        with self.guard():
                            head = self._head()
                    self.page_el, self.skip = None, True
                    el.clear()
                    if self.root is not None:
                        del self.root[:]
                    if want == "revision":
                        return None
                    if head is not None:
                        return head
                else:
                    el.clear()

    def _release(self, el: Element) -> None:
        el.clear()
        if self.page_el is not None:
            self.page_el.remove(el)

    def _head(self) -> _Head | None:
        """Read the current page's header; count it; None when the page is not wanted."""
        self.head_done = True
        fields = {}
        redirect = False
        for child in self.page_el:
            tag = _local(child.tag)
            if tag == "redirect":
                redirect = True
            elif tag in ("title", "ns", "id") and tag not in fields:
                fields[tag] = child.text or ""
        page_id = _int(fields.get("id"), "id")
        title = fields.get("title", "")
        if "ns" in fields:
            namespace = _int(fields["ns"], "ns")
        else:  # export 0.3 and older: from the title's prefix
            prefix, sep, _ = title.partition(":")
            namespace = self.ns_names.get(prefix, 0) if sep else 0
        self.pages += 1
        self.last_page = f"{page_id} {title!r}"
        tally = self.tally
        _count(tally, "pages:read")
        if self.prev_page_id is not None and page_id <= self.prev_page_id:
            _count(tally, "pages:out_of_order", f"{self.path}: page {page_id} after {self.prev_page_id}")
        self.prev_page_id = page_id
        if self.on_page is not None:
            self.on_page(self)
        if self.start_after is not None and page_id <= self.start_after:
            _count(tally, "pages:before_start")
            return None
        if namespace not in self.namespaces:
            _count(tally, "pages:namespace")
            return None
        if redirect:
            _count(tally, "pages:redirect")
            return None
        self.skip = False
        self.seq += 1
        return _Head(page_id=page_id, title=title, seq=self.seq)

    def next_page(self) -> _Head | None:
        if self.page_el is not None and self.head_done:
            self.skip = True  # the caller left the current page's revisions unread: drain without parsing
        return self._pull("page")

    def revisions(self, head: _Head) -> Iterator[Revision]:
        """The kept revisions of page ``head``, while it is the current page (empty afterwards)."""
        while not self.closed and head.seq == self.seq and not self.skip:
            el = self._pull("revision")
            if el is None:
                return
            with self.guard():
                rev = self._revision(el, head)
            self._release(el)
            if rev is not None:
                yield rev

    def _revision(self, el: Element, head: _Head) -> Revision | None:
        self.revisions_read += 1
        _count(self.tally, "revisions:read")
        f: dict[str, Element] = {}
        for child in el:
            f.setdefault(_local(child.tag), child)
        rev_id = _int(f["id"].text, "id") if "id" in f else 0
        where = f"{self.path}: page {head.page_id} revision {rev_id}"
        text_el = f.get("text")
        if text_el is None or text_el.get("deleted") is not None:
            _count(self.tally, "revisions:no_text")
            return None
        model = (f["model"].text or "").strip() if "model" in f else ""
        if model and model != "wikitext":
            _count(self.tally, "revisions:not_wikitext", f"{where} ({model})")
            return None
        text = text_el.text or ""
        sha1 = (f["sha1"].text or "").strip() if "sha1" in f else ""
        if not sha1:
            sha1 = mediawiki_sha1(text)
            _count(self.tally, "revisions:sha1_computed")
        parent_id = _int(f["parentid"].text, "parentid") if "parentid" in f else None
        user = ""
        contributor = f.get("contributor")
        if contributor is not None and contributor.get("deleted") is None:
            for sub in contributor:
                if _local(sub.tag) in ("username", "ip"):
                    user = sub.text or ""
                    break
        comment_el = f.get("comment")
        comment = (comment_el.text or "") if comment_el is not None and comment_el.get("deleted") is None else ""
        return Revision(
            rev_id=rev_id,
            parent_id=parent_id or None,
            timestamp=(f["timestamp"].text or "").strip() if "timestamp" in f else "",
            sha1=sha1,
            text=text,
            minor="minor" in f,
            comment=comment,
            user=user,
        )


def _pages(cursor: _Cursor) -> Iterator[tuple[int, str, Iterator[Revision]]]:
    try:
        while True:
            head = cursor.next_page()
            if head is None:
                return
            yield head.page_id, head.title, cursor.revisions(head)
    finally:
        cursor.close()


def iter_pages(
    path: str | os.PathLike,
    tally,
    *,
    namespaces: tuple[int, ...] = (0,),
    start_after_page: int | None = None,
) -> Iterator[tuple[int, str, Iterator[Revision]]]:
    """Yield ``(page id, title, revisions)`` for the wanted pages of a history dump part: in
    ``namespaces``, not redirects, ids above ``start_after_page``. ``revisions`` yields the page's
    revisions that have wikitext, in dump order, read lazily from the stream: it is valid until the next
    page is asked for (then it is empty; unread revisions are skipped without parsing). Counts in
    ``tally`` (:class:`wikiref.examples.Tally`); a truncated archive or broken XML raises
    :class:`~wikiref.wiki.dump.DumpError`, from either iterator."""
    cursor = _Cursor(path, tally, namespaces, start_after_page)
    yield from _pages(cursor)


def page_edits(
    page_id: int,
    title: str,
    revisions: Iterable[Revision],
    tally,
    *,
    max_edit_chars: int | None = 20000,
) -> Iterator[Edit]:
    """The edits to mine of one page, from its revisions in dump order (as :func:`iter_pages` yields
    them): the rules of :func:`iter_edits`, which is this over every page. Holds only the previous kept
    revision and the page's set of sha1s."""
    parent: Revision | None = None
    seen: set[str] = set()
    for rev in revisions:
        expected = parent.rev_id if parent is not None else None
        if rev.parent_id is not None and rev.parent_id != expected:
            _count(
                tally,
                "revisions:parentid_mismatch",
                f"page {page_id} revision {rev.rev_id}: parentid {rev.parent_id}, previous kept {expected}",
            )
        if parent is None:
            _count(tally, "revisions:first")
        elif rev.text == parent.text:
            _count(tally, "skipped:no_change")
        elif rev.sha1 in seen:
            _count(tally, "skipped:revert")
        elif is_redirect(rev.text) or is_redirect(parent.text):
            _count(tally, "skipped:redirect")
        elif max_edit_chars is not None and abs(len(rev.text) - len(parent.text)) > max_edit_chars:
            _count(tally, "skipped:large_edit")
        else:
            _count(tally, "edits:yielded")
            yield Edit(page_id=page_id, title=title, parent=parent, child=rev)
        seen.add(rev.sha1)
        parent = rev


def iter_edits(
    path: str | os.PathLike,
    tally,
    *,
    namespaces: tuple[int, ...] = (0,),
    max_edit_chars: int | None = 20000,
    start_after_page: int | None = None,
    progress_every: int = 1000,
) -> Iterator[Edit]:
    """Yield the (parent, child) revision pairs of a history dump part to mine, page after page.

    The parent of a revision is the previous kept revision of its page (dump order). Not yielded, but
    still the new parent: a text identical to the parent's (``skipped:no_change``), a text whose sha1
    an earlier revision of the page had (``skipped:revert``: the page is back to that state), a pair
    with a redirect on either side (``skipped:redirect``), a pair whose lengths differ by more than
    ``max_edit_chars`` characters (``skipped:large_edit``; None: no limit). Holds only the previous kept
    revision and the page's set of sha1s. Logs progress every ``progress_every`` pages (0: never)."""
    cursor = _Cursor(path, tally, namespaces, start_after_page)
    yielded = 0

    def progress(c: _Cursor) -> None:
        if progress_every and c.pages % progress_every == 0:
            log.info(
                "%s: %d pages, %d revisions, %.1f MB of XML read, %d edits yielded",
                c.path,
                c.pages,
                c.revisions_read,
                c.reader.count / 1e6,
                yielded,
            )

    cursor.on_page = progress
    try:
        for page_id, title, revisions in _pages(cursor):
            for edit in page_edits(page_id, title, revisions, tally, max_edit_chars=max_edit_chars):
                yielded += 1
                yield edit
    finally:
        cursor.close()
    log.info(
        "%s: done: %d pages, %d revisions, %.1f MB of XML read, %d edits yielded",
        cursor.path,
        cursor.pages,
        cursor.revisions_read,
        cursor.reader.count / 1e6,
        yielded,
    )
