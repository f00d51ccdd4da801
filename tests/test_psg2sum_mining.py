"""Psg2Sum mining of one edit (wikiref.stages.psg2sum.mining): parse, diff, overlap rate, threshold."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from wikiref.examples import Tally
from wikiref.stages.psg2sum.mining import COUNTERS, DEFAULT_SKIP_SECTIONS, Miner, Pair, Parsed, Passage
from wikiref.text import load_nlp

LAMBDA = 0.6

LEAD = "'''Quince''' is a small deciduous tree. It bears a golden pome fruit."
CULTIVATION = (
    "Quince trees grow in warm temperate regions and need a sunny position with shelter from cold winds in spring."
)
# An added lead sentence and the body passage that goes with it.
JELLY = "Quince fruit is cooked into jelly and marmalade across southern Europe."
USES = "The hard fruit is rarely eaten raw; cooks turn it into jelly, marmalade and membrillo paste in southern Europe."
# Content words of JELLY: quince fruit cooked jelly marmalade southern europe (7); USES holds 5 of them.
JELLY_IN_USES = 5 / 7


def page(lead: str, *sections: tuple[str, str]) -> str:
    """Wikitext: the lead, then ``(heading, body)`` sections (``body`` may hold several paragraphs)."""
    parts = [lead]
    for heading, body in sections:
        parts.append(f"== {heading} ==\n{body}")
    return "\n\n".join(parts) + "\n"


@pytest.fixture(scope="module")
def nlp():
    return load_nlp()


@pytest.fixture
def miner(nlp):
    return Miner(nlp, skip_sections=DEFAULT_SKIP_SECTIONS)


def mine(miner: Miner, old: str, new: str, min_score: float = LAMBDA) -> tuple[list[Pair], Tally]:
    tally = Tally()
    pairs = miner.mine(miner.parse(old), miner.parse(new), min_score=min_score, tally=tally)
    return pairs, tally


def test_one_added_lead_sentence_and_one_added_passage(miner):
    old = page(LEAD, ("Cultivation", CULTIVATION))
    new = page(f"{LEAD} {JELLY}", ("Cultivation", CULTIVATION), ("Uses", USES))
    pairs, tally = mine(miner, old, new)
    assert pairs == [
        Pair(summary=JELLY, passage=Passage(USES, ("Uses",)), score=pytest.approx(JELLY_IN_USES), candidates=1)
    ]
    assert tally.counts == {COUNTERS["kept"]: 1}


def test_the_better_overlapping_passage_is_chosen(miner):
    weak = "Markets in southern Europe sell the fruit in autumn, when the trees drop their leaves and rest for months."
    old = page(LEAD, ("Cultivation", CULTIVATION))
    new = page(f"{LEAD} {JELLY}", ("Cultivation", f"{CULTIVATION}\n\n{weak}"), ("Uses", USES))
    pairs, _ = mine(miner, old, new)
    assert len(pairs) == 1
    assert pairs[0].passage.text == USES  # 5/7 beats the earlier passage's 3/7 (southern, europe, fruit)
    assert pairs[0].candidates == 2
    assert miner.overlap(JELLY, weak) == pytest.approx(3 / 7)


def test_a_tie_goes_to_the_earliest_passage(miner):
    first = "Southern Europe grows the fruit for jelly and marmalade; growers there also keep orchards of apples."
    second = "In southern Europe the fruit becomes jelly or marmalade, and the paste is sold in blocks at markets."
    old = page(LEAD, ("Cultivation", CULTIVATION))
    new = page(f"{LEAD} {JELLY}", ("Cultivation", CULTIVATION), ("Uses", f"{first}\n\n{second}"))
    assert miner.overlap(JELLY, first) == miner.overlap(JELLY, second) == pytest.approx(JELLY_IN_USES)
    pairs, _ = mine(miner, old, new)
    assert [p.passage.text for p in pairs] == [first]
    # the same two passages in the other order: the other one is now the earliest
    new = page(f"{LEAD} {JELLY}", ("Cultivation", CULTIVATION), ("Uses", f"{second}\n\n{first}"))
    pairs, _ = mine(miner, old, new)
    assert [p.passage.text for p in pairs] == [second]


def test_an_edit_adding_only_body_text_gives_no_pair(miner):
    old = page(LEAD, ("Cultivation", CULTIVATION))
    new = page(LEAD, ("Cultivation", CULTIVATION), ("Uses", USES))
    pairs, tally = mine(miner, old, new)
    assert pairs == []
    assert tally.counts == {COUNTERS["no_sentence"]: 1}


def test_an_edit_adding_only_a_lead_sentence_gives_no_pair(miner):
    old = page(LEAD, ("Cultivation", CULTIVATION))
    new = page(f"{LEAD} {JELLY}", ("Cultivation", CULTIVATION))
    pairs, tally = mine(miner, old, new)
    assert pairs == []
    assert tally.counts == {COUNTERS["no_passage"]: 1}


def test_threshold_is_inclusive_at_lambda(miner):
    # content words: growers prune pear orchards winter (5); "every" is a stop word
    exact = "Growers prune the pear orchards every winter."
    # content words: growers graft pear orchards spring rootstock quince (7)
    below = "Growers graft pear orchards each spring onto rootstock of quince."
    body = "Most growers in the valley keep old pear orchards and sell the crop to canneries along the river banks."
    assert miner.overlap(exact, body) == 3 / 5 == LAMBDA  # growers pear orchards
    assert miner.overlap(below, body) == pytest.approx(3 / 7)
    old = page(LEAD, ("Cultivation", CULTIVATION))
    new = page(f"{LEAD} {exact} {below}", ("Cultivation", f"{CULTIVATION}\n\n{body}"))
    pairs, tally = mine(miner, old, new, min_score=LAMBDA)
    assert [(p.summary, p.score) for p in pairs] == [(exact, LAMBDA)]
    assert tally.counts == {COUNTERS["kept"]: 1, COUNTERS["below_threshold"]: 1}
    pairs, tally = mine(miner, old, new, min_score=0.61)
    assert pairs == []
    assert tally.counts == {COUNTERS["below_threshold"]: 2}
    pairs, _ = mine(miner, old, new, min_score=3 / 7)
    assert [p.summary for p in pairs] == [exact, below]


def test_a_modified_lead_sentence_counts_as_added(miner):
    assert Miner.added(["a", "b", "c"], ["a", "B", "c", "d"]) == [1, 3]
    assert Miner.added(["a", "b", "c"], ["a", "c"]) == []  # deletions add nothing
    assert Miner.added([], ["x", "y"]) == [0, 1]
    old_sentence = "Quince fruit is cooked into jelly."
    new_sentence = "Quince fruit is cooked into jelly and marmalade across southern Europe."
    old = page(f"{LEAD} {old_sentence}", ("Cultivation", CULTIVATION))
    new = page(f"{LEAD} {new_sentence}", ("Cultivation", CULTIVATION), ("Uses", USES))
    assert miner.added(miner.parse(old).lead, miner.parse(new).lead) == [2]
    pairs, _ = mine(miner, old, new)
    assert [(p.summary, p.passage.section) for p in pairs] == [(new_sentence, ("Uses",))]


def test_stopwords_punctuation_and_case_do_not_count(miner):
    assert miner.overlap("The pear, and the APPLE!", "a pear") == 0.5  # {pear, apple}
    assert miner.overlap("It is what it is.", "anything at all") == 0.0  # no content word at all
    assert miner.overlap("Pear ... !!! -- of the", "PEAR") == 1.0
    assert miner.overlap("pear, pear; pear and apple", "pear") == 0.5  # a set: 1 of 2 distinct words
    assert miner.overlap("pear apple", "the , . ; of") == 0.0


def test_skip_sections_and_their_subsections_are_ignored(miner):
    refs = "* Smith, J. (2001). Quinces of Europe. Orchard Press, London, and many more books about the fruit."
    notes = (
        "Quince fruit is cooked into jelly and marmalade in southern Europe, according to the notes of this article."
    )
    text = page(
        LEAD,
        ("History", "Early years text about quince cultivation, which began in the Caucasus thousands of years ago."),
        ("See also", notes),
        ("References", f"{refs}\n\n=== Further notes ===\n{notes}"),
    )
    text = text.replace("== History ==\n", "== History ==\n=== Early years ===\n")
    parsed = miner.parse(text)
    assert [p.section for p in parsed.passages] == [("History", "Early years")]
    old = page(LEAD)
    new = page(
        f"{LEAD} {JELLY}",
        ("See also", notes),
        ("References", f"=== Further notes ===\n{USES}"),
        ("External links", USES),
    )
    pairs, tally = mine(miner, old, new)
    assert pairs == []
    assert tally.counts == {COUNTERS["no_passage"]: 1}


def test_markup_templates_refs_files_lists_and_tables_are_stripped(miner):
    text = """{{Short description|Species of tree}}
{{Infobox plant
| name = Quince
| image = Quince.jpg
}}
[[File:Quince fruit.jpg|thumb|A [[quince]] fruit]]
:''For the surname, see [[Quince (surname)]].''
The '''quince''' (''Cydonia oblonga'') is a [[Rosaceae|rose-family]] tree.<ref>{{cite web|url=http://example.org|title=Quince}}</ref> It is grown for its [[fruit]]<ref name="a"/>{{citation needed|date=May 2020}} in [[Europe]].<!-- hidden note -->

== Uses ==
[[File:Membrillo.jpg|right|thumb|Membrillo]]
The fruit is made into {{lang|es|membrillo}} paste&nbsp;and [http://example.org/jelly jelly] at home.<ref name="a">{{cite book|title=Fruit}}</ref>
* A list item about quince wine
* Another item
{| class="wikitable"
| Quince || 30 kg
|}
Trees live long.<br/>They are hardy.

[[Category:Maloideae]]
[[de:Quitte]]
"""
    parsed = miner.parse(text)
    assert parsed.lead == (
        "The quince (Cydonia oblonga) is a rose-family tree.",
        "It is grown for its fruit in Europe.",
    )
    assert parsed.passages == (
        Passage("The fruit is made into paste and jelly at home.", ("Uses",)),
        Passage("Trees live long. They are hardy.", ("Uses",)),
    )


def test_paragraphs_split_on_blank_lines_and_lead_sentences_on_moses_rules(miner):
    text = (
        "Dr. Smith grew quinces in the U.S. in 1901. He sold them.\nLine two of the paragraph.\n\nSecond paragraph.\n"
    )
    text += "\n== A ==\nOne\nparagraph here.\n\n\n  \nAnother one.\n"
    parsed = miner.parse(text)
    assert parsed.lead == (  # "Dr." and "U.S." do not end a sentence (Moses non-breaking prefixes)
        "Dr. Smith grew quinces in the U.S. in 1901.",
        "He sold them.",
        "Line two of the paragraph.",
        "Second paragraph.",
    )
    assert [p.text for p in parsed.passages] == ["One paragraph here.", "Another one."]
    assert miner.parse("") == Parsed((), ())
    assert miner.parse("#REDIRECT [[Pear]]") == Parsed((), ())


def test_short_sentences_and_passages_are_not_candidates(nlp):
    miner = Miner(nlp, skip_sections=DEFAULT_SKIP_SECTIONS, min_sentence_tokens=3, min_passage_tokens=10)
    old = page(LEAD, ("Cultivation", CULTIVATION))
    short_passage = "Quince fruit, jelly, marmalade, southern Europe."  # 6 word tokens
    new = page(f"{LEAD} Quince jelly.", ("Cultivation", CULTIVATION), ("Uses", USES))
    pairs, tally = mine(miner, old, new)
    assert pairs == [] and tally.counts == {COUNTERS["no_sentence"]: 1}
    new = page(f"{LEAD} {JELLY}", ("Cultivation", CULTIVATION), ("Uses", short_passage))
    pairs, tally = mine(miner, old, new)
    assert pairs == [] and tally.counts == {COUNTERS["no_passage"]: 1}
    lenient = Miner(nlp, skip_sections=DEFAULT_SKIP_SECTIONS, min_passage_tokens=6)
    pairs, _ = mine(lenient, old, new)
    assert [(p.passage.text, p.score) for p in pairs] == [(short_passage, pytest.approx(6 / 7))]


def test_parse_is_cached_and_mine_tokenises_each_text_once(nlp):
    miner = Miner(nlp, skip_sections=DEFAULT_SKIP_SECTIONS)
    text = page(LEAD, ("Cultivation", CULTIVATION))
    first = miner.parse(text)
    assert miner.parse(text) is first
    assert miner.parse(text + "\n") == first and miner.parse(text + "\n") is not first
    seen: list[str] = []
    tokenizer = miner.tokenizer

    def counting(t: str):
        seen.append(t)
        return tokenizer(t)

    miner.tokenizer = counting
    other = "Growers graft pear orchards each spring onto rootstock of quince."
    old = page(LEAD, ("Cultivation", CULTIVATION))
    new = page(f"{LEAD} {JELLY} {other}", ("Cultivation", CULTIVATION), ("Uses", f"{USES}\n\n{CULTIVATION} More."))
    pairs = miner.mine(miner.parse(old), miner.parse(new), min_score=0.0)
    assert len(pairs) == 2 and all(p.candidates == 2 for p in pairs)
    assert sorted(seen) == sorted(set(seen)) and len(seen) == 4  # 2 sentences + 2 passages, once each


def _revisions(path) -> list[str]:
    root = ET.parse(path).getroot()
    return [el.text or "" for el in root.iter() if el.tag.rsplit("}", 1)[-1] == "text"]


@pytest.mark.shared_data
def test_real_histories_parse(shared_data, nlp):
    folder = shared_data / "mediawiki-history"
    files = sorted(folder.glob("*.xml"))
    if not files:
        pytest.skip(f"no histories in {folder}")
    miner = Miner(nlp, skip_sections=DEFAULT_SKIP_SECTIONS)
    tally = Tally()
    n = 0
    for path in files:
        parsed = [miner.parse(text) for text in _revisions(path)]
        n += len(parsed)
        for p in parsed:
            assert all(s and "[[" not in s and "{{" not in s and "<ref" not in s for s in p.lead)
            assert all(q.text and q.section for q in p.passages)
        for parent, child in zip(parsed, parsed[1:]):
            for pair in miner.mine(parent, child, min_score=LAMBDA, tally=tally):
                assert pair.score >= LAMBDA and pair.summary in child.lead and pair.passage in child.passages
    assert n > 0
    pear = {p.name: p for p in files}.get("article-pear-0.10.xml")
    if pear is None:
        pytest.skip("article-pear-0.10.xml missing")
    last = miner.parse(_revisions(pear)[-1])
    assert len(last.lead) >= 2
    assert last.lead[0].startswith("The pear is any of several tree and shrub species of genus Pyrus")
    sections = {q.section[0] for q in last.passages}
    assert {"Etymology", "Description", "History"} <= sections
    assert not sections & {"References", "External links", "See also", "Notes"}
