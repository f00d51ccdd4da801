"""The token walker (collect's fast statement extraction) returns exactly what the node walker returns."""

from __future__ import annotations

import dataclasses
import re
import sys
from collections import Counter

import pytest

from wikiref.wiki import statements as S
from wikiref.wiki import tokenwalk
from wikiref.wiki.statements import StatementConfig, clean_text, parse_article


def _both(text: str, title: str = "T", cfg: StatementConfig | None = None):
    cfg = cfg or StatementConfig()
    out = {}
    for name, kw in (
        ("nodes", {"method": "nodes"}),
        ("tokens", {"method": "tokens"}),
        ("only", {"method": "tokens", "statements_only": True}),
    ):
        stats = Counter()
        out[name] = (parse_article(title, text, cfg, stats, **kw), stats)
    return out


def assert_same(text: str, title: str = "T", cfg: StatementConfig | None = None) -> dict:
    out = _both(text, title, cfg)
    (ref, ref_stats), (tok, tok_stats), (only, only_stats) = out["nodes"], out["tokens"], out["only"]
    assert dataclasses.asdict(tok) == dataclasses.asdict(ref)
    assert tok_stats == ref_stats
    assert [dataclasses.asdict(s) for s in only.statements] == [dataclasses.asdict(s) for s in ref.statements]
    assert only_stats == ref_stats
    assert only.sections == []
    return out


@pytest.mark.slow
def test_every_page_of_the_sample_dump_is_identical():
    """The acceptance check of issue #18: byte-identical collect output on the sample dump. Here the whole
    article (sections, paragraphs, paragraph URLs, statements, citations) and the counters, page by page."""
    from wikiref.stages.sample import locate_gensim_dump
    from wikiref.wiki.dump import iter_pages

    pages = list(iter_pages(str(locate_gensim_dump())))
    assert len(pages) == 106
    kept = 0
    for page in pages:
        out = assert_same(page.text, page.title)
        kept += out["nodes"][1]["statements_kept"]
    assert kept == 2108  # the sample's statement count, so the pages really were walked


CASES = {
    "plain statement": "A fact about the world.<ref>{{cite web|url=http://a.example/1|title=A|access-date=1 May 2020}}</ref>",
    "group of refs": "Fact one here.<ref>{{cite news|url=http://n.example|title=N}}</ref>, <ref>{{cite web|url=http://w.example}}</ref> Next fact.<ref>x</ref>",
    "named reuse before and after definition": 'Early use.<ref name="a"/> Definition.<ref name="a">{{cite web|url=http://d.example|title=D}}</ref> Reuse here.<ref name=a />',
    "definition inside reflist": 'Reused statement text.<ref name="r"/>\n\n== References ==\n{{reflist|refs=<ref name="r">{{cite web|url=http://r.example}}</ref>}}',
    "unresolved and empty refs": 'Nothing defines it.<ref name="nope"/> Empty one.<ref></ref> Blank.<ref> </ref> Bare.<ref/>',
    "duplicate name attribute (last wins)": 'Two names.<ref name="a" name="b">{{cite web|url=http://ab.example}}</ref> Uses b.<ref name="b"/>',
    "valueless name attribute": "Odd.<ref name>{{cite web|url=http://v.example}}</ref> more.<ref name/>",
    "attribute holding markup": 'Templated name.<ref name="{{x}}">{{cite web|url=http://t.example}}</ref> again.<ref name="{{x}}"/>',
    "upper case and padded tag": 'Caps.<REF>{{cite web|url=http://caps.example}}</REF> Padded.<ref  name = "c" >{{cite web|url=http://c.example}}</ref >',
    "note group": "A note.<ref group=note>Explanation.</ref> And a fact.<ref>{{cite web|url=http://g.example}}</ref>",
    "bare url and link refs": "Bare ref here.<ref>http://bare.example/page</ref> Linked.<ref>[http://l.example Title of page]</ref> Plain.<ref>Book, p. 4</ref>",
    "link nested in markup inside a ref": "Nested.<ref>''[http://i.example Italic title]''</ref> Done.",
    "duplicate and odd parameters": "Dup.<ref>{{cite web|url=http://1.example|url=http://2.example|title=a=b|title = T2 }}</ref>",
    "parameter values holding markup": "Markup.<ref>{{cite web|url=http://m.example/{{x}}|title=[[Link|shown]] <!-- c --> &amp; more|access-date={{date|2020}}}}</ref>",
    "template name holding markup": "Comment name.<ref>{{cite web<!--c-->|url=http://c.example}}</ref> Prefix.<ref>{{Template:Cite_Web|URL=http://u.example}}</ref>",
    "alias and unknown types": "Alias.<ref>{{Cite Newspaper|url=http://alias.example}}</ref> Book.<ref>{{cite book|title=B}}</ref>",
    "short footnotes": "Claim one.{{sfn|Smith|2000|p=1}} Claim two.{{ Harvnb |A|1999}} Page.{{rp|5}} And {{Sfnp|X|2001}}.",
    "text templates": "It is {{convert|5|km}} or {{convert|1|to|2|mi}} long, {{lang|fr|mot}}, {{nowrap|a b}}{{ndash}}{{mdash}} end.<ref>{{cite web|url=http://tt.example}}</ref>",
    "links of every shape": "See [[Target]], [[Target|anchor]], [[a|b|c]], [[a&amp;b|x]], [[{{x}}|y]], [[File:x.jpg|thumb|cap <ref>in file</ref>]], [[Category:C]], [[:fr:Chose]], [[wikt:word]].<ref>{{cite web|url=http://links.example}}</ref>",
    "external links": "Go [http://e.example titled], [http://e.example], [http://x.example a|b] and http://free.example now.<ref>{{cite web|url=http://ext.example}}</ref>",
    "entities": "Caf&eacute; &amp; &#65;&#x42; &nbsp;x &#xD800; here.<ref>{{cite web|url=http://ent.example}}</ref>",
    "headings": "Lead fact.<ref>{{cite web|url=http://h0.example}}</ref>\n== History ==\nOld fact.<ref>{{cite web|url=http://h1.example}}</ref>\n=== ''Early'' &amp; [[late]] ===\nNew fact.<ref>{{cite web|url=http://h2.example}}</ref>\n== Heading <ref>in heading</ref> ==\nText.",
    "skipped sections": "Kept fact.<ref>{{cite web|url=http://k.example}}</ref>\n== See also ==\n* Item.<ref>{{cite web|url=http://s.example}}</ref>\n== Notes ==\nNote.{{sfn|A|1}}",
    "refs outside prose": "{{Infobox|pop=5<ref>{{cite web|url=http://i.example}}</ref>}}\n{| class=wikitable\n| cell <ref>tab</ref>\n|}\n<gallery>\nx.jpg|<ref>g</ref>\n</gallery>\n<!-- <ref>commented</ref> -->\n<pre><ref>p</ref></pre>\nProse.<ref>{{cite web|url=http://p.example}}</ref>",
    "inline and block tags": "<b>Bold fact</b> and <i>italic</i>.<ref>{{cite web|url=http://b.example}}</ref><br/>After break.<ref>x</ref>\n<p>In p.<ref>{{cite web|url=http://p2.example}}</ref></p>\n<p id=x>Attr p.</p><div>Div text.<ref>d</ref></div>",
    "lists and tables": "\n* One item.<ref>{{cite web|url=http://l1.example}}</ref>\n# Two.<ref>y</ref>\n; Term : def.<ref>z</ref>\n{|\n|-\n| a || b\n|}\n",
    "unbalanced markup": "Broken {{cite web|url=http://b.example text.<ref>{{cite web|url=http://ok.example}}</ref> [[unclosed <ref>r</ref> }} ]] {{{1}}} {{{",
    "style quotes": "'''Bold''' and ''it'' and '''''both''''' and l'''x'''.<ref>{{cite web|url=http://q.example}}</ref>",
    "empty and whitespace": "",
    "only whitespace": " \n\n \t\n",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_crafted_edge_cases_are_identical(name):
    assert_same(CASES[name])


def test_the_cases_reach_statements_drops_and_counters():
    """The crafted cases are not vacuous: together they keep statements, drop them for several reasons and
    count refs outside prose, named reuse and empty refs."""
    total = Counter()
    for text in CASES.values():
        total += _both(text)["nodes"][1]
    assert total["statements_kept"] >= 15
    for key in (
        "statement_dropped:in_skipped_section",
        "statement_dropped:note_ref",
        "statement_dropped:unresolved_named_ref",
        "statement_dropped:citation_type_not_kept",
        "refs_outside_prose",
        "named_ref_reused",
        "empty_ref",
        "citations_not_first",
        "kept_citation_type:cite news",
    ):
        assert total[key] > 0, key


def test_common_citations_are_read_without_building_nodes(monkeypatch):
    """The point of the token walker: a page of plain cited prose needs no node tree at all."""
    from mwparserfromhell.parser.builder import Builder

    calls = []
    real = Builder.build

    def counting(self, tokens):
        calls.append(len(tokens))
        return real(self, tokens)

    monkeypatch.setattr(Builder, "build", counting)
    text = "\n\n".join(
        f"Statement number {i} of the page, with a [[link]].<ref>{{{{cite web|url=http://s{i}.example|title=T{i}}}}}</ref>"
        for i in range(20)
    )
    stats = Counter()
    article = parse_article("T", text, StatementConfig(), stats, statements_only=True)
    assert stats["statements_kept"] == 20 and len(article.statements) == 20
    assert calls == []
    parse_article("T", text, StatementConfig(), Counter(), method="nodes")
    assert calls  # the reference path does build the tree


def test_pages_that_cannot_yield_statements_are_not_parsed(monkeypatch):
    stub = "'''Stub''' is a [[thing]].{{Infobox\n|a=b}}\n\n{{stub}} [[Category:Things]]"
    assert not tokenwalk.may_yield_statements(stub)
    for text in (
        "x<ref>y</ref>",
        "x<REF name=a/>",
        "x{{sfn|A|1}}",
        "x{{ Harvnb |A}}",
        "x{{Template:sfn|A}}",
        "{{{{{ Sfn |x}}",
        "{{ {{x}}sfn }}",
        "{{''sfn''|x}}",
        "{{&#115;fn|x}}",
        "{{s<!-- -->fn|x}}",
    ):
        assert tokenwalk.may_yield_statements(text), text
        assert_same(text)
    called = []
    monkeypatch.setattr(tokenwalk, "_Page", lambda text: called.append(text))
    stats = Counter()
    article = parse_article("T", stub, StatementConfig(), stats, statements_only=True)
    assert article.statements == [] and not stats and called == []
    monkeypatch.undo()
    assert_same(stub)  # and the full walk agrees that it holds nothing


def test_clean_text_is_unchanged_on_every_whitespace_character():
    """clean_text collapses whitespace with str.split(); the regex it replaced was \\s+ then strip(). The
    two agree on every code point, so collect's statements cannot change."""
    ws = re.compile(r"\s+")
    chars = [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]
    mismatched = [c for c in chars if bool(ws.fullmatch(c)) != c.isspace()]
    assert mismatched == []

    def old(text: str) -> str:
        text = S.SURROGATE.sub("\ufffd", text)
        text = ws.sub(" ", text).strip()
        text = S.SPACE_BEFORE_PUNCT.sub(r"\1", text)
        return text.replace("( ", "(")

    spaces = "".join(c for c in chars if c.isspace())
    samples = [f"{spaces}a{spaces}b ,c ( d{spaces}", "x\ud800 y", " \u2003 ( x ) .", "", spaces]
    for s in samples:
        assert clean_text(s) == old(s)


def test_unknown_method_is_an_error():
    with pytest.raises(ValueError, match="unknown parse method"):
        parse_article("T", "x", StatementConfig(), method="fast")


def test_parse_workers_zero_means_every_cpu_of_the_job(monkeypatch):
    import os

    from wikiref.stages.collect import pipeline

    assert pipeline.parse_workers(3) == 3
    assert pipeline.parse_workers(None) == 1
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 5, 7}, raising=False)
    assert pipeline.parse_workers(0) == 5
    assert (
        pipeline.CollectSettings.from_params(
            {"dump": {"parse_workers": 0}, "fetch": {"backend": "warc"}, "citation_types": ["cite web"]}
        ).parse_workers
        == 5
    )
