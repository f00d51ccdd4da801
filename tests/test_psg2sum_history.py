"""Psg2Sum's revision-history reader (wikiref.stages.psg2sum.history): real Wikipedia page histories
from ../shared/data/mediawiki-history and hand-made histories (bz2, gz, plain, multistream, 7z)."""

from __future__ import annotations

import bz2
import gc
import gzip
import hashlib
import io
import logging
import os
import shutil
import subprocess
import tracemalloc
import weakref
from xml.sax.saxutils import escape

import pytest

from wikiref.examples import Tally
from wikiref.stages.psg2sum import history
from wikiref.stages.psg2sum.history import (
    Edit,
    Revision,
    SevenZipMissing,
    is_redirect,
    iter_edits,
    iter_pages,
    mediawiki_sha1,
    open_history,
    page_edits,
)
from wikiref.wiki.dump import DumpError

HEAD_010 = (
    '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="en">\n'
    "<siteinfo><sitename>Wikipedia</sitename><namespaces>"
    '<namespace key="0" case="first-letter" /><namespace key="1" case="first-letter">Talk</namespace>'
    "</namespaces></siteinfo>\n"
)


def rev_xml(rev_id: int, text: str | None, *, parent: int | None = None, k: int = 0, **kw) -> str:
    """One <revision> of export 0.10; ``text=None``: deleted text. kw: minor, comment, user, ip,
    model, sha1, hidden_user, hidden_comment."""
    out = [f"<revision><id>{rev_id}</id>"]
    if parent is not None:
        out.append(f"<parentid>{parent}</parentid>")
    out.append(f"<timestamp>2020-01-{1 + k // 60:02d}T00:{k % 60:02d}:00Z</timestamp>")
    if kw.get("hidden_user"):
        out.append('<contributor deleted="deleted" />')
    elif kw.get("ip"):
        out.append(f"<contributor><ip>{kw['ip']}</ip></contributor>")
    else:
        out.append(f"<contributor><username>{escape(kw.get('user', 'Editor'))}</username><id>7</id></contributor>")
    if kw.get("minor"):
        out.append("<minor />")
    if kw.get("hidden_comment"):
        out.append('<comment deleted="deleted" />')
    elif "comment" in kw:
        out.append(f"<comment>{escape(kw['comment'])}</comment>")
    out.append(f"<model>{kw.get('model', 'wikitext')}</model><format>text/x-wiki</format>")
    if text is None:
        out.append('<text deleted="deleted" />')
    else:
        out.append(f'<text bytes="{len(text.encode())}" xml:space="preserve">{escape(text)}</text>')
    if kw.get("sha1"):
        out.append(f"<sha1>{kw['sha1']}</sha1>")
    out.append("</revision>")
    return "".join(out)


def page_xml(page_id: int, title: str, revisions, *, ns: int = 0, redirect: str | None = None) -> str:
    """A <page>; ``revisions``: texts (str, None = deleted) or (text, kw) tuples. Revision ids are
    ``page_id * 1000 + k``; each names the one before it in the dump as parent, like MediaWiki."""
    out = [f"<page><title>{escape(title)}</title><ns>{ns}</ns><id>{page_id}</id>"]
    if redirect is not None:
        out.append(f'<redirect title="{escape(redirect)}" />')
    prev = None
    for k, item in enumerate(revisions):
        text, kw = item if isinstance(item, tuple) else (item, {})
        rev_id = page_id * 1000 + k + 1
        out.append(rev_xml(rev_id, text, parent=prev, k=k, **kw))
        prev = rev_id
    out.append("</page>\n")
    return "".join(out)


def dump_xml(*pages: str) -> bytes:
    return (HEAD_010 + "".join(pages) + "</mediawiki>\n").encode("utf-8")


def write_bz2(path, data: bytes):
    path.write_bytes(bz2.compress(data))
    return path


def edits_of(path, **kw) -> tuple[list[Edit], Tally]:
    tally = Tally()
    return list(iter_edits(path, tally, **kw)), tally


def read_pages(path, tally: Tally) -> list[tuple[int, str, list[Revision]]]:
    """The pages ``iter_pages`` reads from ``path``: (page id, title, the page's revisions as a list)."""
    return [(pid, title, list(revs)) for pid, title, revs in iter_pages(path, tally)]


def pairs(edits) -> list[tuple[int, int]]:
    return [(e.parent.rev_id, e.child.rev_id) for e in edits]


def body(n: int, seed: str = "x") -> str:
    """Distinct, poorly compressible wikitext of about n characters."""
    words, i = [], 0
    while sum(len(w) + 1 for w in words) < n:
        words.append(hashlib.md5(f"{seed}{i}".encode()).hexdigest()[:8])
        i += 1
    return " ".join(words)[:n]


# ------------------------------------------------------------------------------------- real histories


@pytest.fixture(scope="module")
def histories(shared_data):
    folder = shared_data / "mediawiki-history"
    if not folder.is_dir():
        pytest.skip(f"{folder} missing")
    return folder


@pytest.mark.shared_data
def test_sha1_is_mediawikis_base36_sha1_of_the_dump(histories):
    seen = 0
    for name in ("pair-0.10.xml", "article-pear-0.10.xml"):
        tally = Tally()
        for _pid, _title, revs in iter_pages(histories / name, tally, namespaces=(0, 1)):
            for rev in revs:
                assert len(rev.sha1) == 31
                assert rev.sha1 == mediawiki_sha1(rev.text), (name, rev.rev_id)
                seen += 1
        assert tally.counts["revisions:sha1_computed"] == 0  # every value above is the dump's own
    assert seen == 5
    assert mediawiki_sha1("") == "phoiac9h4m842xq45sp7s6u21eteeq1"  # MediaWiki's sha1 of an empty text


def test_sha1_keeps_leading_zeros():
    text = next(f"text {i}" for i in range(10000) if int(hashlib.sha1(f"text {i}".encode()).hexdigest(), 16) < 36**30)
    digest = mediawiki_sha1(text)
    assert len(digest) == 31 and digest[0] == "0"
    assert int(digest, 36) == int(hashlib.sha1(text.encode()).hexdigest(), 16)
    assert mediawiki_sha1("Çullu") == mediawiki_sha1("Çullu") != mediawiki_sha1("Cullu")


@pytest.mark.shared_data
def test_pear_export_03_order_fields_and_edits(histories):
    tally = Tally()
    pages = read_pages(histories / "article-pear.xml", tally)
    assert [(pid, title) for pid, title, _ in pages] == [(24278, "Pear")]
    revs = pages[0][2]
    assert [r.rev_id for r in revs] == [185185, 185241, 185408, 188924]
    assert [r.timestamp for r in revs][:2] == ["2002-02-25T15:43:11Z", "2002-08-31T02:16:06Z"]
    assert all(r.parent_id is None for r in revs)  # export 0.3 has no <parentid>
    assert [r.minor for r in revs] == [True, False, True, True]
    assert [r.user for r in revs] == ["Conversion script", "Quercusrobur", "Mav", "PierreAbbat"]
    assert revs[0].comment == "Automated conversion" and revs[1].comment == ""
    assert revs[0].text.startswith("Pears are [[tree]]s of the [[genus]] <em>Pyrus</em>")  # entities decoded
    # no <sha1> in export 0.3: computed; the last revision ("sp") saved the same text again
    assert tally.counts["revisions:sha1_computed"] == 4
    assert [r.sha1 for r in revs] == [mediawiki_sha1(r.text) for r in revs]
    assert revs[3].text == revs[2].text and revs[3].sha1 == revs[2].sha1

    edits, tally = edits_of(histories / "article-pear.xml")
    assert pairs(edits) == [(185185, 185241), (185241, 185408)]
    assert all(e.page_id == 24278 and e.title == "Pear" for e in edits)
    assert tally.counts["revisions:first"] == 1
    assert tally.counts["skipped:no_change"] == 1
    assert tally.counts["edits:yielded"] == 2
    assert tally.counts["revisions:parentid_mismatch"] == 0


@pytest.mark.shared_data
def test_pyrus_is_a_redirect_page_and_is_skipped(histories):
    # export 0.3 marks redirects with an empty <redirect /> (mwxml reads it as "no redirect")
    edits, tally = edits_of(histories / "article-pyrus.xml")
    assert edits == []
    assert tally.counts["pages:read"] == 1 and tally.counts["pages:redirect"] == 1
    assert tally.counts["revisions:read"] == 0
    assert list(iter_pages(histories / "article-pyrus.xml", Tally())) == []


@pytest.mark.shared_data
def test_pyrus_history_reverts_and_redirect_edits(histories, tmp_path):
    """The same real history read as if the page were not a redirect now: its two "rv" revisions
    restore an earlier text (revert), and every other edit has a redirect on one side."""
    xml = (histories / "article-pyrus.xml").read_text(encoding="utf-8")
    assert xml.count("<redirect />") == 1
    path = write_bz2(tmp_path / "pyrus.xml.bz2", xml.replace("<redirect />", "").encode("utf-8"))
    tally = Tally()
    [(pid, title, revs)] = read_pages(path, tally)
    assert (pid, title) == (9261472, "Pyrus")
    ids = [r.rev_id for r in revs]
    assert ids == [104997415, 104997738, 189729426, 190346463, 238138507, 238392911]
    assert revs[3].sha1 == revs[1].sha1 == revs[5].sha1  # "rv" and "Reverted edits by ..." restore rev 2
    assert [is_redirect(r.text) for r in revs] == [True, True, False, True, True, True]

    tally = Tally()
    edits = list(page_edits(pid, title, iter(revs), tally))
    assert edits == []
    assert tally.counts["revisions:first"] == 1
    assert tally.counts["skipped:revert"] == 2
    assert tally.counts["skipped:redirect"] == 3  # redirect -> redirect, redirect -> dab, + category


@pytest.mark.shared_data
def test_pair_010_parentids_namespaces_and_redirect_edits(histories):
    path = histories / "pair-0.10.xml"
    tally = Tally()
    pages = read_pages(path, tally)
    assert [(pid, title) for pid, title, _ in pages] == [(19252820, "Çullu, Agdam")]
    assert tally.counts["pages:namespace"] == 1  # Talk:Çullu, Agdam
    revs = pages[0][2]
    assert [(r.rev_id, r.parent_id) for r in revs] == [(237382899, None), (237383099, 237382899)]
    assert revs[0].sha1 == "9onarlg8ywgp11wnrddqebdry0jyz56" and revs[1].sha1 == "senkho7ycefskq5d8mllalt33oxiy7v"
    assert revs[1].comment == "create dab" and revs[1].user == "Carlossuarez46" and not revs[1].minor

    edits, tally = edits_of(path, namespaces=(0, 1))
    assert edits == []
    assert tally.counts["pages:read"] == 2 and tally.counts["pages:namespace"] == 0
    assert tally.counts["revisions:first"] == 2
    assert tally.counts["skipped:redirect"] == 2  # both pages start as redirects (page moves)
    assert tally.counts["revisions:parentid_mismatch"] == 0


@pytest.mark.shared_data
def test_pear_010_first_revision_names_a_parent_outside_the_dump(histories):
    edits, tally = edits_of(histories / "article-pear-0.10.xml")
    assert edits == []
    assert tally.counts["revisions:read"] == 1 and tally.counts["revisions:first"] == 1
    assert tally.counts["revisions:parentid_mismatch"] == 1
    assert "638548877" in tally.locations["revisions:parentid_mismatch"][0]
    [(_, _, revs)] = read_pages(histories / "article-pear-0.10.xml", Tally())
    assert revs[0].parent_id == 638548865 and revs[0].user == "ClueBot NG" and revs[0].minor
    assert len(revs[0].text) > 25000


# ---------------------------------------------------------------------------------- hand-made rules


def test_revert_is_skipped_and_becomes_the_parent(tmp_path):
    a, b, c = "Alpha text.", "Alpha text. Vandalism!", "Alpha text. More."
    path = write_bz2(tmp_path / "h.xml.bz2", dump_xml(page_xml(5, "P", [a, b, a, c])))
    edits, tally = edits_of(path)
    assert pairs(edits) == [(5001, 5002), (5003, 5004)]  # A->B mined; A again not; C's parent is the revert
    assert edits[1].parent.text == a
    assert tally.counts["skipped:revert"] == 1
    assert tally.counts["revisions:parentid_mismatch"] == 0


def test_revert_to_an_older_state_than_the_previous(tmp_path):
    a, b, c = "one", "one two", "one two three"
    path = write_bz2(tmp_path / "h.xml.bz2", dump_xml(page_xml(5, "P", [a, b, c, a, b + "!"])))
    edits, tally = edits_of(path)
    assert pairs(edits) == [(5001, 5002), (5002, 5003), (5004, 5005)]
    assert tally.counts["skipped:revert"] == 1


def test_identical_consecutive_revisions(tmp_path):
    a, b = "Some text.", "Some text. And more."
    path = write_bz2(tmp_path / "h.xml.bz2", dump_xml(page_xml(5, "P", [a, a, b])))
    edits, tally = edits_of(path)
    assert pairs(edits) == [(5002, 5003)]
    assert tally.counts["skipped:no_change"] == 1 and tally.counts["skipped:revert"] == 0


def test_large_edit_is_skipped_and_becomes_the_parent(tmp_path):
    a = "Lead.\n\n== S ==\nBody."
    big = a + "\n" + body(25000)
    path = write_bz2(tmp_path / "h.xml.bz2", dump_xml(page_xml(5, "P", [a, big, big + " Fix."])))
    edits, tally = edits_of(path)
    assert pairs(edits) == [(5002, 5003)]
    assert tally.counts["skipped:large_edit"] == 1
    assert pairs(edits_of(path, max_edit_chars=None)[0]) == [(5001, 5002), (5002, 5003)]
    edits, tally = edits_of(path, max_edit_chars=2)
    assert edits == [] and tally.counts["skipped:large_edit"] == 2  # " Fix." is 5 characters
    assert pairs(edits_of(path, max_edit_chars=5)[0]) == [(5002, 5003)]  # the bound is inclusive


def test_deleted_revision_is_skipped_and_counted(tmp_path):
    a, b = "Text one.", "Text one. Text two."
    path = write_bz2(tmp_path / "h.xml.bz2", dump_xml(page_xml(5, "P", [a, None, b])))
    edits, tally = edits_of(path)
    assert pairs(edits) == [(5001, 5003)]
    assert tally.counts["revisions:no_text"] == 1
    assert tally.counts["revisions:parentid_mismatch"] == 1  # 5003 names the deleted 5002
    # a deleted first revision: the next one is the first kept
    path = write_bz2(tmp_path / "h2.xml.bz2", dump_xml(page_xml(6, "Q", [None, a, b])))
    edits, tally = edits_of(path)
    assert pairs(edits) == [(6002, 6003)]
    assert tally.counts["revisions:first"] == 1 and tally.counts["revisions:no_text"] == 1


def test_blanked_page_is_a_revision_and_its_restore_a_revert(tmp_path):
    a = "Article text."
    path = write_bz2(tmp_path / "h.xml.bz2", dump_xml(page_xml(5, "P", [a, "", a, a + " New."])))
    tally = Tally()
    [(_, _, revs)] = read_pages(path, tally)
    assert [r.text for r in revs] == [a, "", a, a + " New."]
    assert tally.counts["revisions:no_text"] == 0
    edits, tally = edits_of(path)
    assert pairs(edits) == [(5001, 5002), (5003, 5004)]
    assert tally.counts["skipped:revert"] == 1


def test_non_wikitext_revisions_are_skipped(tmp_path):
    path = write_bz2(tmp_path / "h.xml.bz2", dump_xml(page_xml(5, "P", ["a", ("b {}", {"model": "json"}), "a c"])))
    edits, tally = edits_of(path)
    assert pairs(edits) == [(5001, 5003)]
    assert tally.counts["revisions:not_wikitext"] == 1
    assert "json" in tally.locations["revisions:not_wikitext"][0]


def test_namespaces_and_redirect_pages(tmp_path):
    path = write_bz2(
        tmp_path / "h.xml.bz2",
        dump_xml(
            page_xml(1, "Art", ["a", "a b"]),
            page_xml(2, "Talk:Art", ["t", "t u"], ns=1),
            page_xml(3, "Old name", ["#REDIRECT [[Art]]", "#REDIRECT [[Art]] {{R}}"], redirect="Art"),
            page_xml(4, "Template:X", ["x", "x y"], ns=10),
        ),
    )
    edits, tally = edits_of(path)
    assert pairs(edits) == [(1001, 1002)]
    assert tally.counts["pages:read"] == 4
    assert tally.counts["pages:namespace"] == 2 and tally.counts["pages:redirect"] == 1
    assert tally.counts["revisions:read"] == 2  # skipped pages' revisions are not parsed
    edits, tally = edits_of(path, namespaces=(0, 1))
    assert [(e.page_id, e.title) for e in edits] == [(1, "Art"), (2, "Talk:Art")]


def test_redirect_revisions_are_not_mined(tmp_path):
    art = "'''X''' is a thing.\n\n== History ==\nIt was made."
    path = write_bz2(
        tmp_path / "h.xml.bz2",
        dump_xml(page_xml(5, "X", ["#REDIRECT [[Y]]", art, art + " Later.", "#REDIRECT [[Y]]", art + " Z."])),
    )
    edits, tally = edits_of(path)
    # redirect -> article is the article's creation, article -> redirect (here a revert) removes it
    assert pairs(edits) == [(5002, 5003)]
    assert tally.counts["skipped:redirect"] == 2 and tally.counts["skipped:revert"] == 1
    assert is_redirect("  #REDIRECT: [[A]]") and not is_redirect("See #REDIRECT [[A]]")


def test_export_03_namespace_from_the_title_prefix(tmp_path):
    xml = (
        '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.3/" version="0.3">'
        '<siteinfo><namespaces><namespace key="0" /><namespace key="1">Talk</namespace></namespaces></siteinfo>'
        "<page><title>Talk:Foo</title><id>1</id><revision><id>11</id><timestamp>2002-01-01T00:00:00Z</timestamp>"
        "<contributor><ip>1.2.3.4</ip></contributor><text>t</text></revision></page>"
        "<page><title>Foo: a story</title><id>2</id><revision><id>21</id><timestamp>2002-01-01T00:00:00Z"
        "</timestamp><contributor><ip>1.2.3.4</ip></contributor><text>f</text></revision></page>"
        "</mediawiki>"
    )
    path = tmp_path / "h.xml"
    path.write_text(xml, encoding="utf-8")
    tally = Tally()
    got = [(pid, title, [(r.rev_id, r.user, r.text) for r in revs]) for pid, title, revs in iter_pages(path, tally)]
    assert got == [(2, "Foo: a story", [(21, "1.2.3.4", "f")])]
    assert tally.counts["pages:namespace"] == 1


def test_revision_fields(tmp_path):
    revs = [
        ("first", {"user": "Ann", "comment": "start", "sha1": "0" * 31}),
        ("second", {"ip": "203.0.113.9", "minor": True, "comment": "x & y"}),
        ("third", {"hidden_user": True, "hidden_comment": True}),
    ]
    path = write_bz2(tmp_path / "h.xml.bz2", dump_xml(page_xml(5, "P & Q", revs)))
    tally = Tally()
    [(pid, title, got)] = read_pages(path, tally)
    assert (pid, title) == (5, "P & Q")
    assert got[0] == Revision(5001, None, "2020-01-01T00:00:00Z", "0" * 31, "first", False, "start", "Ann")
    assert got[1] == Revision(
        5002, 5001, "2020-01-01T00:01:00Z", mediawiki_sha1("second"), "second", True, "x & y", "203.0.113.9"
    )
    assert (got[2].user, got[2].comment) == ("", "")
    assert tally.counts["revisions:sha1_computed"] == 2  # the dump's <sha1> is taken as it is


def test_start_after_page_and_out_of_order_pages(tmp_path):
    pages = [page_xml(pid, f"P{pid}", ["a", "a b"]) for pid in (10, 20, 30)]
    path = write_bz2(tmp_path / "h.xml.bz2", dump_xml(*pages))
    edits, tally = edits_of(path, start_after_page=20)
    assert [e.page_id for e in edits] == [30]
    assert tally.counts["pages:before_start"] == 2 and tally.counts["revisions:read"] == 2
    assert edits_of(path, start_after_page=30)[0] == []
    assert [e.page_id for e in edits_of(path, start_after_page=5)[0]] == [10, 20, 30]

    shuffled = [page_xml(pid, f"P{pid}", ["a", "a b"]) for pid in (10, 30, 20, 40)]
    path = write_bz2(tmp_path / "o.xml.bz2", dump_xml(*shuffled))
    edits, tally = edits_of(path, start_after_page=15)
    assert [e.page_id for e in edits] == [30, 20, 40]
    assert tally.counts["pages:out_of_order"] == 1 and tally.counts["pages:before_start"] == 1
    assert "page 20 after 30" in tally.locations["pages:out_of_order"][0]


def test_page_without_revisions_and_unread_revision_iterators(tmp_path):
    path = write_bz2(
        tmp_path / "h.xml.bz2",
        dump_xml(
            "<page><title>Empty</title><ns>0</ns><id>1</id></page>\n",
            page_xml(2, "Two", ["a", "b", "c"]),
            page_xml(3, "Three", ["x", "y"]),
            page_xml(4, "Four", ["p", "q"]),
        ),
    )
    tally = Tally()
    it = iter_pages(path, tally)
    pid, title, revs1 = next(it)
    assert (pid, title, list(revs1)) == (1, "Empty", [])
    _, _, revs2 = next(it)
    assert next(revs2).text == "a"  # read one revision of page 2, then move on
    _, _, revs3 = next(it)
    assert list(revs2) == []  # a page's iterator is empty once the next page was asked for
    _, _, revs4 = next(it)
    assert list(revs3) == []  # never read: skipped without parsing
    assert [r.text for r in revs4] == ["p", "q"]
    assert list(it) == []
    assert tally.counts["revisions:read"] == 3 and tally.counts["pages:read"] == 4


@pytest.mark.parametrize("form", ["bz2", "multistream", "gz", "xml"])
def test_compressions_read_alike(tmp_path, form):
    pages = [page_xml(pid, f"P{pid}", ["a", "a b", "a b c"]) for pid in (1, 2, 3)]
    data = dump_xml(*pages)
    path = tmp_path / "h.xml"
    if form == "bz2":
        path.write_bytes(bz2.compress(data))
    elif form == "multistream":  # like enwiki's multistream parts: one bz2 stream per block of pages
        head, rest = data.split(b"<page>", 1)
        chunks = [head] + [b"<page>" + c for c in rest.split(b"<page>")]
        path.write_bytes(b"".join(bz2.compress(c) for c in chunks))
    elif form == "gz":
        path.write_bytes(gzip.compress(data))
    else:
        path.write_bytes(data)
    with open_history(path) as fh:
        assert fh.read() == data
    edits, tally = edits_of(path)
    assert pairs(edits) == [(1001, 1002), (1002, 1003), (2001, 2002), (2002, 2003), (3001, 3002), (3002, 3003)]
    assert tally.counts["pages:read"] == 3


# ------------------------------------------------------------------------------------------ failures


def _big_dump(n_pages: int = 40) -> bytes:
    return dump_xml(
        *[page_xml(pid, f"Page {pid}", [body(3000, f"{pid}a"), body(3100, f"{pid}b")]) for pid in range(1, n_pages + 1)]
    )


def test_truncated_bz2_raises_dump_error_with_file_and_last_page(tmp_path):
    data = bz2.compress(_big_dump(), compresslevel=1)  # 100k blocks: the cut leaves whole blocks to read
    path = tmp_path / "cut.xml.bz2"
    path.write_bytes(data[: len(data) * 2 // 3])
    tally = Tally()
    got = []
    with pytest.raises(DumpError) as err:
        for edit in iter_edits(path, tally):
            got.append(edit.page_id)
    msg = str(err.value)
    assert str(path) in msg and "last page read:" in msg
    named = int(msg.split("last page read: ")[1].split()[0])
    assert got and named in (got[-1], got[-1] + 1)  # the page being read when the archive ended
    assert f"{named} 'Page {named}'" in msg
    assert isinstance(err.value.__cause__, EOFError | OSError)


def test_truncation_inside_a_revision_iterator_is_a_dump_error(tmp_path):
    data = dump_xml(page_xml(1, "Long", [body(300, str(k)) for k in range(1000)]))
    path = tmp_path / "cut.xml.bz2"
    comp = bz2.compress(data, compresslevel=1)
    path.write_bytes(comp[: len(comp) // 2])
    it = iter_pages(path, Tally())
    _, title, revs = next(it)
    read = 0
    with pytest.raises(DumpError, match="last page read: 1 'Long'"):
        for _ in revs:
            read += 1
    assert 0 < read < 1000


def test_broken_xml_and_not_a_dump(tmp_path):
    bad = dump_xml(page_xml(1, "A", ["a", "a b"]), page_xml(2, "B", ["b", "b c"])).replace(b"</page>", b"</pag>", 2)
    path = write_bz2(tmp_path / "bad.xml.bz2", bad)
    with pytest.raises(DumpError, match=r"broken XML .*last page read: 1 'A'"):
        list(iter_edits(path, Tally()))
    path = tmp_path / "other.xml"
    path.write_text("<html><body>no</body></html>")
    with pytest.raises(DumpError, match="not a MediaWiki XML dump"):
        list(iter_edits(path, Tally()))
    path = tmp_path / "empty.xml"
    path.write_text("")
    with pytest.raises(DumpError, match=str(path)):
        list(iter_edits(path, Tally()))
    path = tmp_path / "id.xml"
    path.write_bytes(dump_xml(page_xml(1, "A", ["a"])).replace(b"<id>1</id>", b"<id>one</id>"))
    with pytest.raises(DumpError, match="<id> is not a number"):
        list(iter_edits(path, Tally()))


def test_corrupt_bz2_block_raises_dump_error(tmp_path):
    data = bytearray(bz2.compress(_big_dump(), compresslevel=1))
    for i in range(len(data) // 2, len(data) // 2 + 64):
        data[i] ^= 0x5A
    path = tmp_path / "corrupt.xml.bz2"
    path.write_bytes(bytes(data))
    with pytest.raises(DumpError, match="corrupt|broken"):
        list(iter_edits(path, Tally()))


# ------------------------------------------------------------------------------------------- memory


class _GeneratedDump(io.RawIOBase):
    """A dump of one page with ``n`` revisions of ``size`` characters, produced on demand."""

    def __init__(self, n: int, size: int):
        self.n, self.size = n, size
        self.produced = 0
        self._pool = [body(size, str(j)) for j in range(7)]
        self._chunks = self._gen()
        self._buf = b""

    def _gen(self):
        yield HEAD_010.encode() + b"<page><title>Big</title><ns>0</ns><id>1</id>"
        for k in range(self.n):
            self.produced += 1
            text = f"rev {k} " + self._pool[k % 7]
            yield rev_xml(1001 + k, text, parent=1000 + k if k else None, k=k % 3000).encode()
        yield b"</page></mediawiki>"

    def readable(self):
        return True

    def readinto(self, buf):
        while not self._buf:
            try:
                self._buf = next(self._chunks)
            except StopIteration:
                return 0
        n = min(len(buf), len(self._buf))
        buf[:n] = self._buf[:n]
        self._buf = self._buf[n:]
        return n


def test_revisions_are_read_lazily_and_not_kept(monkeypatch, tmp_path):
    n, size = 3000, 2000  # ~6.5 MB of XML in one page
    source = _GeneratedDump(n, size)
    monkeypatch.setattr(history, "open_history", lambda path: source)
    it = iter_edits(tmp_path / "generated.xml", Tally())
    first = next(it)
    assert (first.parent.rev_id, first.child.rev_id) == (1001, 1002)
    assert source.produced < n // 3  # only a read-ahead buffer's worth of the page was produced
    ref = weakref.ref(first.parent)
    del first
    for _ in range(20):
        next(it)
    gc.collect()
    assert ref() is None  # the reader keeps no earlier revision
    rest = sum(1 for _ in it)
    assert rest == n - 1 - 21 and source.produced == n


@pytest.mark.slow
def test_peak_memory_is_bounded_by_a_revision_not_the_page(monkeypatch, tmp_path):
    n, size = 1500, 16000  # 24 MB of revision text in one page; the reader's buffers are ~2 MB
    source = _GeneratedDump(n, size)
    monkeypatch.setattr(history, "open_history", lambda path: source)
    tracemalloc.start()
    try:
        count = sum(1 for _ in iter_edits(tmp_path / "generated.xml", Tally()))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == n - 1
    assert peak < n * size / 4, peak  # holding the page's revisions would need > n * size bytes


class _ManySmall(_GeneratedDump):
    """``pages`` pages of ``n`` one-word revisions each."""

    def __init__(self, pages: int, n: int):
        super().__init__(n, 0)
        self.pages = pages

    def _gen(self):
        yield HEAD_010.encode()
        for p in range(1, self.pages + 1):
            yield f"<page><title>P{p}</title><ns>0</ns><id>{p}</id>".encode()
            for k in range(self.n):
                self.produced += 1
                yield rev_xml(p * 100000 + k, f"w{k}", k=k % 3000).encode()
            yield b"</page>\n"
        yield b"</mediawiki>"


@pytest.mark.parametrize("pages,n", [(1, 15000), (15000, 1)], ids=["long-page", "many-pages"])
@pytest.mark.slow
def test_read_elements_are_released(monkeypatch, tmp_path, pages, n):
    """Tens of thousands of revisions (in one page, or one per page): what was read is cleared and
    detached from the XML tree, so memory does not grow with the revisions or pages read."""
    source = _ManySmall(pages, n)
    monkeypatch.setattr(history, "open_history", lambda path: source)
    tracemalloc.start()
    try:
        count = sum(1 for _pid, _title, revs in iter_pages(tmp_path / "generated.xml", Tally()) for _ in revs)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == pages * n
    assert peak < 500_000, peak  # kept (even cleared) elements would take ~80 bytes each, > 1 MB


# ----------------------------------------------------------------------------------------------- 7z


@pytest.fixture
def seven_zip():
    for name in history.SEVEN_ZIP_BINARIES:
        found = shutil.which(name)
        if found:
            return found
    if os.environ.get("CI"):
        pytest.fail("no 7z binary in CI: .ci/run installs p7zip-full")
    pytest.skip("no 7z binary (apt-get install p7zip-full)")


def _make_7z(binary: str, folder, data: bytes):
    xml = folder / "enwiki-pages-meta-history1.xml"
    xml.write_bytes(data)
    out = folder / "enwiki-pages-meta-history1.xml.7z"
    subprocess.run([binary, "a", "-bd", "-bso0", str(out), str(xml)], check=True, capture_output=True)
    xml.unlink()
    return out


def test_7z_streams_like_bz2(tmp_path, seven_zip):
    data = dump_xml(
        page_xml(1, "A", ["a", "a b", "a", "a c"]),
        page_xml(2, "Talk:A", ["t", "t u"], ns=1),
        page_xml(3, "B", ["b", None, "b c"]),
    )
    path = _make_7z(seven_zip, tmp_path, data)
    with open_history(path) as fh:
        assert fh.read() == data
    edits, tally = edits_of(path)
    ref, ref_tally = edits_of(write_bz2(tmp_path / "same.xml.bz2", data))
    assert pairs(edits) == pairs(ref) == [(1001, 1002), (1003, 1004), (3001, 3003)]
    assert tally.counts == ref_tally.counts


def test_7z_stops_the_process_when_closed_early(tmp_path, seven_zip):
    path = _make_7z(seven_zip, tmp_path, _big_dump(200))
    fh = open_history(path)
    assert fh.read(100).startswith(b"<mediawiki")
    proc = fh.raw.proc
    fh.close()
    assert proc.poll() is not None
    it = iter_edits(path, Tally())
    next(it)
    it.close()  # no hanging 7z process, no error


def test_truncated_7z_raises_dump_error(tmp_path, seven_zip):
    path = _make_7z(seven_zip, tmp_path, _big_dump())
    data = path.read_bytes()
    cut = tmp_path / "cut.xml.7z"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(DumpError, match=r"cut\.xml\.7z.*7z exited with status"):
        list(iter_edits(cut, Tally()))


def test_corrupt_7z_data_raises_dump_error(tmp_path, seven_zip):
    path = _make_7z(seven_zip, tmp_path, _big_dump(200))
    data = bytearray(path.read_bytes())
    for i in range(len(data) // 3, len(data) // 3 + 256):
        data[i] ^= 0xA5
    path.write_bytes(bytes(data))
    with pytest.raises(DumpError, match=str(path.name)):
        list(iter_edits(path, Tally()))


def test_missing_7z_binary_names_the_package(tmp_path, monkeypatch):
    path = tmp_path / "h.xml.7z"
    path.write_bytes(b"7z\xbc\xaf\x27\x1c" + b"\0" * 26)
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    with pytest.raises(SevenZipMissing, match="p7zip-full"):
        open_history(path)
    with pytest.raises(SevenZipMissing, match="p7zip-full"):
        list(iter_edits(path, Tally()))


# -------------------------------------------------------------------------------------------- logging


def test_progress_is_logged(tmp_path, caplog):
    path = write_bz2(tmp_path / "h.xml.bz2", dump_xml(*[page_xml(p, f"P{p}", ["a", "a b"]) for p in range(1, 5)]))
    with caplog.at_level(logging.INFO, logger="wikiref.stages.psg2sum.history"):
        edits, _ = edits_of(path, progress_every=2)
    assert len(edits) == 4
    lines = [r.getMessage() for r in caplog.records]
    progress = [m for m in lines if "MB of XML read" in m and "done" not in m]
    assert len(progress) == 2
    assert "2 pages" in progress[0] and "4 pages" in progress[1] and "edits yielded" in progress[1]
    assert any("done: 4 pages, 8 revisions" in m and "4 edits yielded" in m for m in lines)
