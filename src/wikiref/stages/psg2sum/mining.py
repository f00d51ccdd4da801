"""Psg2Sum mining of one edit: (parent, child) revision -> (added lead sentence, added body passage) pairs.

The paper (Psg2Sum §2.1): strip the wikitext with mwparserfromhell; split the lead section into sentences
with the Moses sentence splitter (the python port by mediacloud, ``sentence-splitter`` on PyPI); tokenise
with the spaCy tokenizer; find the sentences and passages added between two adjacent revisions with
Python's difflib; pair each added lead sentence s_i with the added passage p_j of highest overlap rate

    score(p_j, s_i) = |{w : w in s_i', w in p_j'}| / |s_i'|

(' = stop words removed) and drop the pair when that score is below λ (0.6 in the paper).

Choices made here (the paper leaves them open):

* **Set, not multiset.** s_i' and p_j' are the *sets* of distinct content words, for the denominator as
  well as for the numerator: score = |set(s') ∩ set(p')| / |set(s')|. The numerator of the formula is a
  set, and with the same reading for |s_i'| a sentence all of whose words occur in the passage scores 1.0
  even when it repeats a word (a multiset denominator would cap it below 1).
* **Content words.** Tokens of ``nlp.tokenizer`` (the project's pipeline, tokenizer only), lower-cased;
  whitespace tokens, punctuation and tokens without a letter or digit (symbols such as ``$``, ``+``) are
  dropped, and so are spaCy's stop words (``nlp.Defaults.stop_words``, compared lower-cased).
  ``min_sentence_tokens`` / ``min_passage_tokens`` count *word tokens* (non-space tokens with a letter
  or digit, stop words included); shorter added sentences and passages are not considered.
* **Diffs.** Lead sentences are diffed as strings, passages by their text only (a renamed heading does
  not make its paragraphs "added"). A replaced element counts as added, as difflib reports it; a moved
  paragraph is a deletion plus an insertion for difflib and so counts as added too (as in the paper).
* **Best passage.** The highest score wins; on a tie the earliest passage of the child revision.
  A pair is kept when score >= λ ("less than λ is discarded").

Parse rules (:meth:`Miner.parse`, one walk over mwparserfromhell's top-level nodes):

* Sections: the lead is the text before the first heading; a heading opens a section whose path is the
  tuple of the open headings' titles (level-aware: ``== A ==`` then ``=== B ===`` is ``("A", "B")``). A
  section whose title, or an ancestor's, is in ``skip_sections`` (case-insensitive) is ignored.
* Paragraphs are split on blank lines; a single line break joins lines (as MediaWiki renders them).
  Whitespace is collapsed and spaces left before punctuation by removed markup are fixed.
* Removed entirely: templates (``{{...}}``, infoboxes and inline ones alike: mwparserfromhell's
  ``strip_code`` drops them too), ``<ref>`` and every other non-prose tag (``<references/>``,
  ``<gallery>``, ``<math>``, ``<pre>``, ``<ul>``/``<ol>``...), tables (``{| ... |}``), comments, file /
  image / category / interlanguage links, bare URLs, template arguments and magic words
  (``__NOTOC__``).
* List lines are removed: a line that starts with ``*``, ``#``, ``;`` or ``:`` (bullets, numbered items,
  definitions, indented hatnotes, ``#REDIRECT``) is dropped up to its line break; a list line and a
  horizontal rule (``----``) also end the paragraph around them.
* Kept as their visible text: wikilinks (label, else target), bracketed external links with a title
  (the title), bold / italic and inline HTML formatting (``<b>``, ``<span>``, ``<sup>``, ``<blockquote>``
  ...), HTML entities (decoded); ``<br>`` is a space.
* A paragraph in which wiki markup is left over (``{{``, ``]]``, ``{|``... from unbalanced markup the
  parser could not read) is dropped; empty parentheses left by removed templates are removed.
* The lead's paragraphs are split into sentences one paragraph at a time (a sentence never spans a
  blank line); body paragraphs are the passages, in page order.

Speed: :meth:`Miner.parse` keeps the last ``parse_cache`` results in an LRU keyed by a 128-bit BLAKE2b
digest of the wikitext (in a history walk the child of one edit is the parent of the next, and reverts
bring back a recent revision, so most revisions are parsed once), and the sentence split of a lead
paragraph is cached the same way (the lead changes far less often than the body). Inside one
:meth:`Miner.mine` call the tokenisation of every sentence and passage is done once.

Counters (``tally.counts``, one reason per edit for the first two):

* ``dropped:edit_without_added_sentence`` - no added lead sentence (of at least ``min_sentence_tokens``);
* ``dropped:edit_without_added_passage`` - added lead sentences but no added passage (of at least
  ``min_passage_tokens``);
* ``dropped:sentence_below_threshold`` - an added lead sentence whose best passage scores below λ;
* ``pairs_kept`` - pairs returned.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import mwparserfromhell
from mwparserfromhell.nodes import Heading, Tag, Text
from sentence_splitter import SentenceSplitter

from wikiref.wiki.statements import (
    DEFAULT_SKIP_SECTIONS,
    INLINE_TAGS,
    MARKUP_RESIDUE,
    PARA_BREAK,
    clean_text,
    inline_text,
)

__all__ = [
    "COUNTERS",
    "DEFAULT_SKIP_SECTIONS",
    "Miner",
    "Pair",
    "Parsed",
    "Passage",
]

# The counter names of Miner.mine (see the module docstring).
COUNTERS = {
    "no_sentence": "dropped:edit_without_added_sentence",
    "no_passage": "dropped:edit_without_added_passage",
    "below_threshold": "dropped:sentence_below_threshold",
    "kept": "pairs_kept",
}

LIST_MARKUP = frozenset("*#;:")
# Tags whose contents are prose besides the inline formatting of collect.statements.
PROSE_TAGS = INLINE_TAGS | {"nowiki"}
MAGIC_WORD = re.compile(r"__[A-Z]+__")
EMPTY_PARENS = re.compile(r"[(\[]\s*[,;:]?\s*[)\]]")
OPEN_PAREN_PUNCT = re.compile(r"\(\s*[,;:]\s*")
BOLD_ITALIC_RESIDUE = re.compile(r"''+")


@dataclass(frozen=True)
class Passage:
    text: str  # plain text of a body paragraph
    section: tuple[str, ...]  # heading path, e.g. ("History", "Early years")


@dataclass(frozen=True)
class Parsed:
    lead: tuple[str, ...]  # lead-section sentences (plain text)
    passages: tuple[Passage, ...]  # body paragraphs in order (skip_sections excluded)


@dataclass(frozen=True)
class Pair:
    summary: str  # the added lead sentence
    passage: Passage  # the chosen added passage
    score: float  # its overlap rate
    candidates: int  # added passages considered


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class _LRU:
    """A small least-recently-used map (bytes key -> value)."""

    def __init__(self, maxsize: int):
        self.maxsize = maxsize
        self.data: OrderedDict = OrderedDict()

    def get(self, key):
        value = self.data.get(key)
        if value is not None:
            self.data.move_to_end(key)
        return value

    def put(self, key, value) -> None:
        if self.maxsize <= 0:
            return
        self.data[key] = value
        self.data.move_to_end(key)
        while len(self.data) > self.maxsize:
            self.data.popitem(last=False)


def _clean(text: str) -> str:
    text = MAGIC_WORD.sub(" ", text)
    text = BOLD_ITALIC_RESIDUE.sub("", text)
    text = clean_text(text)
    text = OPEN_PAREN_PUNCT.sub("(", text)
    text = EMPTY_PARENS.sub("", text)
    return clean_text(text)


class _Walker:
    """One pass over a page's top-level nodes -> [(section path or None for the lead, paragraph)]."""

    def __init__(self, skip: frozenset[str]):
        self.skip = skip
        self.headings: list[tuple[int, str]] = []
        self.section: tuple[str, ...] | None = None  # None: the lead
        self.skipped = False
        self.in_list_line = False
        self.buffer: list[str] = []
        self.paragraphs: list[tuple[tuple[str, ...] | None, str]] = []

    def end_paragraph(self) -> None:
        if self.buffer:
            text = _clean("".join(self.buffer))
            self.buffer = []
            if text and not self.skipped and not MARKUP_RESIDUE.search(text):
                self.paragraphs.append((self.section, text))

    def add_text(self, text: str) -> None:
        if self.in_list_line:
            cut = text.find("\n")
            if cut < 0:
                return
            self.in_list_line = False
            text = text[cut:]  # keep the line break: a blank line right after still ends a paragraph
        for i, chunk in enumerate(PARA_BREAK.split(text)):
            if i:
                self.end_paragraph()
            if chunk:
                self.buffer.append(chunk)

    def heading(self, node: Heading) -> None:
        self.end_paragraph()
        self.in_list_line = False
        title = _clean(node.title.strip_code())
        while self.headings and self.headings[-1][0] >= node.level:
            self.headings.pop()
        self.headings.append((node.level, title))
        self.section = tuple(t for _, t in self.headings)
        self.skipped = any(t.lower() in self.skip for t in self.section)

    def walk(self, nodes: Iterable, top: bool = True) -> None:
        for node in nodes:
            if isinstance(node, Text):
                self.add_text(node.value)
            elif isinstance(node, Heading):
                self.heading(node)
            elif self.in_list_line:
                continue  # everything on a list line is dropped
            elif isinstance(node, Tag):
                markup = node.wiki_markup
                tag = str(node.tag).strip().lower()
                if top and markup and str(markup) in LIST_MARKUP:
                    self.end_paragraph()
                    self.in_list_line = True
                elif tag == "br":
                    self.add_text(" ")
                elif tag in PROSE_TAGS:
                    if node.contents is not None and not node.self_closing:
                        self.walk(node.contents.nodes, top=False)
                elif tag == "p":  # an HTML paragraph: its own paragraph
                    self.end_paragraph()
                    if node.contents is not None and not node.self_closing:
                        self.walk(node.contents.nodes, top=False)
                    self.end_paragraph()
                elif tag in ("table", "hr", "ul", "ol", "dl", "li", "dt", "dd", "pre", "gallery"):
                    self.end_paragraph()  # blocks: not prose, and they end the paragraph around them
                # ref, references, math, source... and anything else: no prose
            elif text := inline_text(node):  # links and entities
                self.add_text(text)
            # Template, Comment, Argument and anything unknown: removed


class Miner:
    """Parses revisions and mines the (added lead sentence, added passage) pairs of one edit.

    ``nlp`` is the project's spaCy pipeline (:func:`wikiref.text.load_nlp` / ``from_params``); only its
    tokenizer and stop-word list are used.
    """

    def __init__(
        self,
        nlp,
        *,
        skip_sections: Sequence[str],
        min_sentence_tokens: int = 3,
        min_passage_tokens: int = 10,
        parse_cache: int = 16,
        split_cache: int = 256,
    ):
        self.nlp = nlp
        self.tokenizer = nlp.tokenizer
        self.stop_words = frozenset(w.lower() for w in nlp.Defaults.stop_words)
        self.skip_sections = frozenset(s.strip().lower() for s in skip_sections)
        self.min_sentence_tokens = int(min_sentence_tokens)
        self.min_passage_tokens = int(min_passage_tokens)
        self.splitter = SentenceSplitter(language="en")
        self._parsed = _LRU(parse_cache)
        self._split = _LRU(split_cache)

    # -- parsing ------------------------------------------------------------------------------
    def parse(self, wikitext: str) -> Parsed:
        """Lead sentences and body passages of one revision's wikitext (rules: module docstring)."""
        wikitext = wikitext or ""
        key = _digest(wikitext)
        cached = self._parsed.get(key)
        if cached is not None:
            return cached
        walker = _Walker(self.skip_sections)
        walker.walk(mwparserfromhell.parse(wikitext).nodes)
        walker.end_paragraph()
        lead: list[str] = []
        passages: list[Passage] = []
        for section, text in walker.paragraphs:
            if section is None:
                lead.extend(self.sentences(text))
            else:
                passages.append(Passage(text, section))
        parsed = Parsed(tuple(lead), tuple(passages))
        self._parsed.put(key, parsed)
        return parsed

    def sentences(self, paragraph: str) -> tuple[str, ...]:
        """The Moses splitter's sentences of one paragraph (stripped, empty ones dropped; cached)."""
        key = _digest(paragraph)
        cached = self._split.get(key)
        if cached is None:
            cached = tuple(s for s in (t.strip() for t in self.splitter.split(paragraph)) if s)
            self._split.put(key, cached)
        return cached

    # -- diff and overlap -----------------------------------------------------------------------
    @staticmethod
    def added(old: Sequence[str], new: Sequence[str]) -> list[int]:
        """Indices of ``new`` that difflib reports inserted or replaced (``autojunk=False``)."""
        matcher = difflib.SequenceMatcher(None, list(old), list(new), autojunk=False)
        out: list[int] = []
        for op, _i1, _i2, j1, j2 in matcher.get_opcodes():
            if op in ("insert", "replace"):
                out.extend(range(j1, j2))
        return out

    def _words(self, text: str) -> tuple[int, frozenset[str]]:
        """(word tokens, the set of content words) of ``text``."""
        n = 0
        content = set()
        for tok in self.tokenizer(text):
            if tok.is_space or tok.is_punct:
                continue
            word = tok.text.lower()
            if not any(ch.isalnum() for ch in word):
                continue
            n += 1
            if word not in self.stop_words:
                content.add(word)
        return n, frozenset(content)

    @staticmethod
    def _score(sentence_words: frozenset[str], passage_words: frozenset[str]) -> float:
        if not sentence_words:
            return 0.0
        return len(sentence_words & passage_words) / len(sentence_words)

    def overlap(self, sentence: str, passage: str) -> float:
        """score(p, s) = |set(s') ∩ set(p')| / |set(s')| (0.0 when s has no content word)."""
        return self._score(self._words(sentence)[1], self._words(passage)[1])

    # -- mining -----------------------------------------------------------------------------------
    def mine(self, parent: Parsed, child: Parsed, *, min_score: float, tally=None) -> list[Pair]:
        """Every added lead sentence of ``child`` paired with its best added passage, kept when the
        overlap rate is >= ``min_score``."""
        counts = tally.counts if tally is not None else None
        words: dict[str, tuple[int, frozenset[str]]] = {}

        def analysed(text: str) -> tuple[int, frozenset[str]]:
            got = words.get(text)
            if got is None:
                got = words[text] = self._words(text)
            return got

        sentences = [
            child.lead[i]
            for i in self.added(parent.lead, child.lead)
            if analysed(child.lead[i])[0] >= self.min_sentence_tokens
        ]
        if not sentences:
            if counts is not None:
                counts[COUNTERS["no_sentence"]] += 1
            return []
        passages = [
            child.passages[j]
            for j in self.added([p.text for p in parent.passages], [p.text for p in child.passages])
            if analysed(child.passages[j].text)[0] >= self.min_passage_tokens
        ]
        if not passages:
            if counts is not None:
                counts[COUNTERS["no_passage"]] += 1
            return []
        pairs: list[Pair] = []
        for sentence in sentences:
            s_words = analysed(sentence)[1]
            best, best_score = passages[0], -1.0
            for passage in passages:
                score = self._score(s_words, analysed(passage.text)[1])
                if score > best_score:  # strict: ties keep the earliest passage
                    best, best_score = passage, score
            if best_score >= min_score:
                pairs.append(Pair(sentence, best, best_score, len(passages)))
                if counts is not None:
                    counts[COUNTERS["kept"]] += 1
            elif counts is not None:
                counts[COUNTERS["below_threshold"]] += 1
        return pairs
