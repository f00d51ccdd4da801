"""Dump reader on the real gensim fragment and on synthetic / malformed dumps."""

from __future__ import annotations

import bz2
import gzip
import re
from collections import Counter

import pytest
from wiki_dump_xml import page_xml

from wikiref.stages.sample import locate_gensim_dump
from wikiref.wiki.dump import DumpError, default_part_path, iter_pages, resolve_part
from wikiref.wiki.statements import StatementConfig, parse_article

HEADER = """<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="en">
  <siteinfo><sitename>Wikipedia</sitename><dbname>enwiki</dbname><base>https://en.wikipedia.org/wiki/Main_Page</base>
    <generator>MediaWiki</generator><case>first-letter</case>
    <namespaces><namespace key="0" case="first-letter" /><namespace key="4" case="first-letter">Wikipedia</namespace></namespaces>
  </siteinfo>
"""


def dump_xml(pages):
    return HEADER + "".join(pages) + "</mediawiki>\n"


PAGES = [
    page_xml(1, "Alpha", "Alpha text.<ref>{{cite web|url=http://a.org|title=A}}</ref>"),
    page_xml(2, "Beta", "", redirect="Alpha"),
    page_xml(3, "Wikipedia:About", "Project page", ns=4),
    page_xml(4, "Gamma", "Gamma text & more."),
]


@pytest.fixture(scope="module")
def real_dump():
    return locate_gensim_dump()


def test_real_sample_dump_counts(real_dump):
    stats = Counter()
    pages = list(iter_pages(real_dump, stats))
    assert stats["pages_read"] == 206
    assert len(pages) == 106  # the ~106 real articles
    assert stats["page_skipped:redirect"] == 99 and stats["page_skipped:namespace"] == 1
    assert all(p.namespace == 0 and p.text for p in pages)
    assert pages[0].title == "Anarchism" and pages[0].page_id == 12


def independent_first_citation_count(text: str) -> Counter:
    """A deliberately different method: regexes over raw wikitext (no mwparserfromhell)."""
    ref = re.compile(r"<ref\b([^>]*?)(/>|>(.*?)</ref\s*>)", re.S | re.I)
    name_re = re.compile(r"""name\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s/>]+))""", re.I)
    tpl = re.compile(r"\{\{\s*([^|}]+)")
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    refs = list(ref.finditer(text))

    def name_of(m):
        n = name_re.search(m.group(1) or "")
        return next(x for x in n.groups() if x is not None).strip() if n else ""

    defs = {}
    for m in refs:
        if name_of(m) and m.group(3) and m.group(3).strip():
            defs.setdefault(name_of(m), m.group(3))
    out, prev_end = Counter(), None
    for m in refs:
        first = prev_end is None or not re.fullmatch(r"[\s,;:.]*", text[prev_end : m.start()])
        prev_end = m.end()
        if not first:
            continue
        body = m.group(3) if m.group(3) and m.group(3).strip() else defs.get(name_of(m))
        t = tpl.search(body or "")
        name = re.sub(r"\s+", " ", t.group(1).replace("_", " ")).strip().lower() if t else ""
        if name in ("cite web", "cite news", "cite press release") and re.search(r"\|\s*url\s*=\s*\S", body):
            out[name] += 1
    return out


def test_statement_citation_pairs_match_an_independent_count(real_dump):
    cfg = StatementConfig()
    stats, independent = Counter(), Counter()
    for page in iter_pages(real_dump):
        parse_article(page.title, page.text, cfg, stats)
        independent.update(independent_first_citation_count(page.text))
    # Exact figures of this parser on the real fragment (regression guard).
    assert stats["statements_total"] == stats["citations_first"] == 7079
    assert (
        stats["kept_citation_type:cite web"],
        stats["kept_citation_type:cite news"],
        stats["kept_citation_type:cite press release"],
    ) == (1838, 262, 8)
    # The regex count also sees refs inside infoboxes/tables/captions (495 such refs, all types),
    # which are not prose statements; the two must agree within that margin, type by type.
    for t in ("cite web", "cite news", "cite press release"):
        ours = stats[f"first_citation_type:{t}"]
        assert ours <= independent[t] <= ours + stats["refs_outside_prose"], (t, ours, independent[t])
        assert ours >= 0.85 * independent[t], (t, ours, independent[t])
    assert stats["statements_total"] == stats["statements_kept"] + sum(
        v for k, v in stats.items() if k.startswith("statement_dropped:")
    )


def test_plain_multistream_gzip_and_xml(tmp_path):
    xml = dump_xml(PAGES).encode()
    (tmp_path / "plain.xml.bz2").write_bytes(bz2.compress(xml))
    # multistream: the header, each page and the footer in separate bz2 streams (as enwiki does)
    head, body = xml.split(b"  <page>", 1)
    chunks = [head] + [b"  <page>" + c for c in body.split(b"  <page>")]
    (tmp_path / "multi.xml.bz2").write_bytes(b"".join(bz2.compress(c) for c in chunks))
    (tmp_path / "g.xml.gz").write_bytes(gzip.compress(xml))
    (tmp_path / "x.xml").write_bytes(xml)
    for name in ("plain", "multi", "g", "x"):
        stats = Counter()
        pages = list(iter_pages(resolve_part(tmp_path, name), stats))
        assert [p.title for p in pages] == ["Alpha", "Gamma"], name
        assert pages[1].text == "Gamma text & more."
        assert stats == Counter({"pages_read": 4, "page_skipped:redirect": 1, "page_skipped:namespace": 1})


def test_truncated_bz2_is_a_clear_error(tmp_path):
    data = bz2.compress(dump_xml(PAGES * 50).encode())
    path = tmp_path / "cut.xml.bz2"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(DumpError, match="archive ends or is corrupt"):
        list(iter_pages(path))


def test_broken_xml_is_a_clear_error(tmp_path):
    broken = dump_xml(PAGES).replace("<title>Gamma</title>", "<title>Gamma</titel>")
    path = tmp_path / "broken.xml.bz2"
    path.write_bytes(bz2.compress(broken.encode()))
    with pytest.raises(DumpError, match="broken XML|not a MediaWiki"):
        list(iter_pages(path))
    path2 = tmp_path / "notxml.xml"
    path2.write_bytes(b"this is not xml at all")
    with pytest.raises(DumpError):
        list(iter_pages(path2))


def test_part_resolution(tmp_path):
    (tmp_path / "enwiki-20190101-pages-articles1.xml-p10p30302.bz2").write_bytes(b"")
    assert resolve_part(tmp_path, "enwiki-20190101-pages-articles1.xml-p10p30302").name.endswith("p30302.bz2")
    with pytest.raises(FileNotFoundError, match="not found"):
        resolve_part(tmp_path, "missing")
    assert default_part_path("d", "enwiki-sample") == "d/enwiki-sample.xml.bz2"
    assert default_part_path("d", "enwiki-20190101-pages-articles1.xml-p10p30302").endswith(".xml-p10p30302.bz2")
