"""Statement extraction (DESIGN §3.1) on hand-written wikitext, one edge case per test."""

from __future__ import annotations

from collections import Counter

import pytest

from wikiref.wiki.statements import (
    StatementConfig,
    citation_from_ref,
    inline_text,
    kept_statements,
    normalise_template_name,
    parse_article,
    prose_link,
    valid_url,
)

CFG = StatementConfig()


def web(url="http://example.org/a", title="T", extra=""):
    return f"{{{{cite web|url={url}|title={title}{extra}}}}}"


def parse(text, cfg=CFG):
    stats = Counter()
    art = parse_article("Article", text, cfg, stats)
    return art, stats


def kept(text, cfg=CFG):
    art, stats = parse(text, cfg)
    return [(st.query, st.text, st.citation.type, st.citation.url) for st in kept_statements(art)], stats


def test_statement_runs_from_previous_citation_or_paragraph_start():
    text = (
        f"First sentence here. Second sentence.<ref>{web('http://a.org/1')}</ref> Third one follows."
        f"<ref>{web('http://a.org/2')}</ref>\n\nNew paragraph starts.<ref>{web('http://a.org/3')}</ref>"
    )
    rows, stats = kept(text)
    assert [r[1] for r in rows] == [
        "First sentence here. Second sentence.",
        "Third one follows.",
        "New paragraph starts.",
    ]
    assert [r[3] for r in rows] == ["http://a.org/1", "http://a.org/2", "http://a.org/3"]
    assert stats["statements_total"] == 3 and stats["statements_kept"] == 3


def test_uncited_text_before_a_paragraph_break_is_not_part_of_the_next_statement():
    text = f"Uncited paragraph.\n\nCited one.<ref>{web()}</ref>"
    rows, _ = kept(text)
    assert [r[1] for r in rows] == ["Cited one."]


def test_section_hierarchy_is_the_query():
    text = (
        f"Lead text.<ref>{web('http://a.org/0')}</ref>\n"
        f"== History ==\nEarly days.<ref>{web('http://a.org/1')}</ref>\n"
        f"=== Founding ===\nFounded in 1900.<ref>{web('http://a.org/2')}</ref>\n"
        f"==== Charter ====\nA charter was signed.<ref>{web('http://a.org/3')}</ref>\n"
        f"== Geography ==\nIt is hilly terrain.<ref>{web('http://a.org/4')}</ref>\n"
    )
    rows, _ = kept(text)
    assert [r[0] for r in rows] == [
        ("Article",),
        ("Article", "History"),
        ("Article", "History", "Founding"),
        ("Article", "History", "Founding", "Charter"),
        ("Article", "Geography"),
    ]


def test_consecutive_refs_belong_to_one_statement_and_only_the_first_counts():
    text = (
        f"A claim with support.<ref>{web('http://first.org')}</ref><ref>{web('http://second.org')}</ref> "
        f"<ref>{{{{cite book|title=B}}}}</ref>, <ref>{web('http://fourth.org')}</ref> Next claim here."
        f"<ref>{{{{cite book|title=C}}}}</ref><ref>{web('http://ignored.org')}</ref>"
    )
    art, stats = parse(text)
    assert [(s.text, s.citation.type, s.drop) for s in art.statements] == [
        ("A claim with support.", "cite web", ""),
        ("Next claim here.", "cite book", "citation_type_not_kept"),
    ]
    assert art.statements[0].citation.url == "http://first.org"
    assert stats["citations_first"] == 2
    assert stats["citations_not_first"] == 4


@pytest.mark.parametrize(
    "name,expected",
    [
        ("cite web", "cite web"),
        ("Cite web", "cite web"),
        ("Cite_Web", "cite web"),
        (" cite  web ", "cite web"),
        ("Template:Cite web", "cite web"),
        ("cite website", "cite web"),
        ("Web cite", "cite web"),
        ("cite newspaper", "cite news"),
        ("Cite News", "cite news"),
        ("cite_press_release", "cite press release"),
        ("Cite press release", "cite press release"),
        ("cite pr", "cite press release"),
    ],
)
def test_citation_type_variants_and_aliases_are_kept(name, expected):
    rows, _ = kept(f"Some statement text.<ref>{{{{{name}|url=http://x.org/p|title=T}}}}</ref>")
    assert [r[2] for r in rows] == [expected]


@pytest.mark.parametrize(
    "name",
    [
        "cite book",
        "cite journal",
        "cite av media",
        "cite encyclopedia",
        "citation",
        "cite episode",
        "cite thesis",
        "cite video game",
    ],
)
def test_other_citation_types_are_dropped_with_a_counted_reason(name):
    art, stats = parse(f"Some statement text.<ref>{{{{{name}|url=http://x.org/p|title=T}}}}</ref>")
    assert [s.drop for s in art.statements] == ["citation_type_not_kept"]
    assert stats[f"first_citation_type:{name}"] == 1
    assert stats["statement_dropped:citation_type_not_kept"] == 1


def test_named_refs_resolved_before_and_after_their_definition_and_list_defined():
    text = (
        'Reused before the definition.<ref name="late" />\n\n'
        f'Defined here.<ref name="late">{web("http://late.org")}</ref>\n\n'
        "Reused after it.<ref name=late/>\n\n"
        "Quoted differently.<ref name='late' />\n\n"
        'From the reference list.<ref name="ld"/>\n\n'
        'Nowhere defined at all.<ref name="ghost"/>\n\n'
        "== References ==\n"
        f'{{{{reflist|refs=\n<ref name="ld">{{{{cite news|url=http://ld.org|title=LD}}}}</ref>\n}}}}\n'
    )
    art, stats = parse(text)
    got = [(s.text, s.citation.url if s.citation else None, s.drop) for s in art.statements]
    assert got == [
        ("Reused before the definition.", "http://late.org", ""),
        ("Defined here.", "http://late.org", ""),
        ("Reused after it.", "http://late.org", ""),
        ("Quoted differently.", "http://late.org", ""),
        ("From the reference list.", "http://ld.org", ""),
        ("Nowhere defined at all.", None, "unresolved_named_ref"),
    ]
    assert art.statements[4].citation.type == "cite news"
    assert stats["named_ref_reused"] == 4
    assert stats["statement_dropped:unresolved_named_ref"] == 1


def test_markup_is_stripped_from_statements():
    text = (
        "<!-- hidden comment -->'''Bold''' and ''italic'' with [[Link target|shown text]] and [[Plain]], "
        "[[File:Pic.jpg|thumb|A caption [[inside]]]] a {{citation needed|date=May 2019}}template, "
        "[http://ext.org an external link], &amp; an entity, {{convert|5|km}} long, "
        '<span style="x">spanned</span> text[[Category:Things]].<ref>' + web() + "</ref>"
    )
    rows, _ = kept(text)
    assert rows[0][1] == (
        "Bold and italic with shown text and Plain, a template, an external link, & an entity, 5 km long, spanned text."
    )


def test_tables_infoboxes_and_galleries_are_not_prose_but_their_refs_are_counted():
    text = (
        "{{Infobox country|name=X|population=5<ref>" + web("http://info.org") + "</ref>}}\n"
        '{| class="wikitable"\n|-\n| cell text<ref>' + web("http://table.org") + "</ref>\n|}\n"
        "<gallery>\nFile:A.jpg|caption<ref>" + web("http://gal.org") + "</ref>\n</gallery>\n"
        "Real prose sentence.<ref>" + web("http://prose.org") + "</ref>"
    )
    rows, stats = kept(text)
    assert [(r[1], r[3]) for r in rows] == [("Real prose sentence.", "http://prose.org")]
    assert stats["refs_outside_prose"] == 3


def test_list_items_are_separate_paragraphs():
    text = (
        "Intro line:\n* first item claim<ref>" + web("http://1.org") + "</ref>\n"
        "* second item claim<ref>" + web("http://2.org") + "</ref>\n"
    )
    rows, _ = kept(text)
    assert [r[1] for r in rows] == ["first item claim", "second item claim"]


def test_reference_sections_are_skipped_and_counted():
    text = (
        "Body claim here.<ref>" + web("http://body.org") + "</ref>\n== External links ==\n"
        "* Official site<ref>" + web("http://ext.org") + "</ref>\n"
    )
    art, stats = parse(text)
    assert [s.drop for s in art.statements] == ["", "in_skipped_section"]
    assert stats["statement_dropped:in_skipped_section"] == 1


def test_bare_urls_notes_missing_urls_short_and_empty_statements_are_counted():
    text = (
        "Bare link support.<ref>[http://bare.org Some page]</ref>\n\n"
        'An explanatory note.<ref group="note">Just a remark.</ref>\n\n'
        "Web citation without a URL.<ref>{{cite web|title=No URL}}</ref>\n\n"
        "Web citation with a bad URL.<ref>{{cite web|url=not a url|title=X}}</ref>\n\n"
        "Tiny.<ref>" + web("http://tiny.org") + "</ref>\n\n"
        "<ref>" + web("http://nothing.org") + "</ref>\n\n"
        "Plain text reference.<ref>Smith, J. (2001). A Book. p. 4.</ref>\n\n"
        "Short footnote ends this statement.{{sfn|Smith|2001|p=3}} Then more.<ref>" + web("http://m.org") + "</ref>"
    )
    art, stats = parse(text)
    got = [(s.text, s.citation.type if s.citation else None, s.drop) for s in art.statements]
    assert got == [
        ("Bare link support.", "bare_url", "citation_type_not_kept"),
        ("An explanatory note.", None, "note_ref"),
        ("Web citation without a URL.", "cite web", "citation_without_url"),
        ("Web citation with a bad URL.", "cite web", "citation_bad_url"),
        ("Tiny.", "cite web", "short_statement"),
        ("", "cite web", "empty_statement"),
        ("Plain text reference.", "plain_text", "citation_type_not_kept"),
        ("Short footnote ends this statement.", "sfn", "citation_type_not_kept"),
        ("Then more.", "cite web", ""),
    ]
    assert stats["statements_total"] == stats["statements_kept"] + sum(
        v for k, v in stats.items() if k.startswith("statement_dropped:")
    )


def test_access_date_title_and_archive_url_are_read():
    import mwparserfromhell

    code = mwparserfromhell.parse(
        "{{cite web |url= http://x.org/p |title=The ''Title'' |access-date=5 January 2019"
        " |archive-url=https://web.archive.org/web/2019/http://x.org/p}}"
    )
    c = citation_from_ref(code, CFG.alias_map())
    assert (c.type, c.url, c.title, c.access_date) == ("cite web", "http://x.org/p", "The ''Title''", "5 January 2019")
    assert c.archive_url.startswith("https://web.archive.org/web/2019/")
    code = mwparserfromhell.parse("{{cite news|url=http://y.org|accessdate=2019-01-05}}")
    assert citation_from_ref(code, CFG.alias_map()).access_date == "2019-01-05"


@pytest.mark.parametrize(
    "text",
    [
        "Unclosed template {{cite web|url=http://x.org and text.<ref>" + web() + "</ref>",
        "Unclosed ref <ref>{{cite web|url=http://x.org|title=T}} and more text",
        "{{Infobox|a=b\n== Heading ==\nText.<ref>" + web() + "</ref>",
        'Broken [[link and <ref name="x">dangling',
        "}}}} ]] |} stray closers.<ref>" + web() + "</ref>",
        "",
    ],
)
def test_malformed_wikitext_never_crashes_and_balances(text):
    art, stats = parse(text)
    assert stats["statements_total"] == stats["statements_kept"] + sum(
        v for k, v in stats.items() if k.startswith("statement_dropped:")
    )
    for st in kept_statements(art):
        assert "{{" not in st.text and "<ref" not in st.text and "[[" not in st.text


def test_unbalanced_markup_in_a_statement_is_a_counted_skip():
    art, stats = parse("Unclosed template {{cite web|url=http://x.org and text.<ref>" + web() + "</ref>")
    assert [s.drop for s in art.statements] == ["unbalanced_markup"]
    assert stats["statement_dropped:unbalanced_markup"] == 1


def test_paragraphs_record_the_urls_they_cite():
    text = (
        "One.<ref>" + web("http://a.org") + "</ref> Two.<ref>" + web("http://b.org") + "</ref>"
        "<ref>" + web("http://c.org") + "</ref>\n\nOther paragraph text.\n"
    )
    art, _ = parse(text)
    lead = art.sections[0]
    assert lead.paragraphs == ["One. Two.", "Other paragraph text."]
    assert lead.paragraph_urls == [{"http://a.org", "http://b.org", "http://c.org"}, set()]
    assert [s.paragraph_index for s in art.statements] == [0, 0]


def test_config_from_params_and_helpers():
    cfg = StatementConfig.from_params(
        {
            "citation_types": ["Cite_Web"],
            "statements": {"min_statement_chars": 3, "aliases": {"cite web": ["my web"]}, "skip_sections": ["Refs"]},
        }
    )
    assert cfg.citation_types == ("cite web",)
    assert cfg.alias_map()["my web"] == "cite web"
    assert cfg.skip_sections == ("refs",)
    assert normalise_template_name("Template:Cite_ news") == "cite news"
    assert valid_url("https://x.org/a?b=c") and not valid_url("ftp://x.org") and not valid_url("http://a b")


def test_a_character_reference_to_a_surrogate_becomes_the_replacement_character():
    """mwparserfromhell decodes &#xD800; into a lone surrogate, which Parquet cannot write (found by bench/fuzz.py
    through the Psg2Sum miner, which shares clean_text): it becomes U+FFFD, in statements and section titles."""
    import pyarrow as pa

    rows, _ = kept(f"== A &#xD800; B ==\nThe town &#xDFFF; was founded by settlers in 1900.<ref>{web()}</ref>\n")
    assert rows == [
        (
            ("Article", "A \ufffd B"),
            "The town \ufffd was founded by settlers in 1900.",
            "cite web",
            "http://example.org/a",
        )
    ]
    pa.array([rows[0][1], rows[0][0][1]])  # writable as UTF-8 (raises on a surrogate)


@pytest.mark.parametrize(
    ("title", "prose"),
    [
        ("Paris", True),
        ("Help:Contents", True),
        ("wikt:word", True),
        (":w:Paris", True),
        ("Category:Things", False),
        ("File:A.jpg", False),
        (" image : a.png", False),
        ("fr:Paris", False),
        ("zh-yue:X", False),
    ],
)
def test_prose_links(title, prose):
    assert prose_link(title) is prose


def test_inline_text_of_links_and_entities():
    import mwparserfromhell

    nodes = mwparserfromhell.parse(
        "[[Paris|the city]] [[Lyon]] [[Category:X]] [http://a.example label] http://b.example &amp; ''t''"
    ).nodes
    shown = [inline_text(n) for n in nodes]
    assert [s for s in shown if s is not None] == ["the city", "Lyon", "", "label", "", "&"]
    assert shown[1] is None  # the text between the links is no link
