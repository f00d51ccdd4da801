"""The statement walker of :mod:`wikiref.wiki.statements`, run on mwparserfromhell's token stream.

Why this exists: ``mwparserfromhell.parse`` is two steps, the C tokenizer (about 12% of the
time on the sample dump) and the pure-Python *builder* that turns tokens into a node tree (about 70%).
The walker needs very little of that tree: the top-level nodes of the page, the name and four
parameters of the first template of each ``<ref>``, the text of links, the names of templates and tags.
So this module walks the tokens themselves and builds real nodes (with mwparserfromhell's own
:class:`~mwparserfromhell.parser.builder.Builder`, on just the tokens of that node) only where the
walker needs a node's API: headings, HTML entities, the few templates that print text, refs without a
template, and anything unusual (a name or attribute made of markup). Nothing here re-tokenizes or
re-interprets wikitext, so the result cannot drift from the parser's reading of the page.

The contract: :func:`parse_article_tokens` returns exactly what the node walker returns
(``statements.parse_article(..., method="nodes")``): the same sections, paragraphs, paragraph URLs,
statements, citations and counters, for every input. ``tests/test_collect_tokenwalk.py`` compares
the two on every page of the sample dump and on crafted edge cases, and the ``statements_tokens``
fuzz target compares them on generated wikitext.

Token facts relied on (mwparserfromhell 0.7, ``parser/builder.py``): every opening token has exactly
one closing token (``TagOpenOpen`` closes with ``TagCloseSelfclose`` or ``TagCloseClose``); the builder
makes one node per ``Text`` token (no merging); a node's children (``__children__``) are the node's
tokens in token order, so document order of nodes is token order; a node other than ``Text`` always
prints as non-blank markup.
"""

from __future__ import annotations

import dataclasses
import gc
import re
from bisect import bisect_left
from collections import Counter
from html.entities import name2codepoint
from itertools import accumulate, compress, count, repeat
from operator import is_

import mwparserfromhell
from mwparserfromhell.parser import Parser
from mwparserfromhell.parser import tokens as T
from mwparserfromhell.parser.builder import Builder

from wikiref.wiki import statements as S

_OPEN = (
    T.TemplateOpen,
    T.ArgumentOpen,
    T.WikilinkOpen,
    T.ExternalLinkOpen,
    T.HTMLEntityStart,
    T.HeadingStart,
    T.CommentStart,
    T.TagOpenOpen,
)
_CLOSE = (
    T.TemplateClose,
    T.ArgumentClose,
    T.WikilinkClose,
    T.ExternalLinkClose,
    T.HTMLEntityEnd,
    T.HeadingEnd,
    T.CommentEnd,
    T.TagCloseSelfclose,
    T.TagCloseClose,
)
_DELTA: dict[type, int] = {t: 1 for t in _OPEN} | {t: -1 for t in _CLOSE}
_TEXT = T.Text
_TAG_NAME_END = (T.TagAttrStart, T.TagCloseOpen, T.TagCloseSelfclose)
_PLAIN_ATTR_TOKENS = frozenset((T.TagAttrStart, T.TagAttrEquals, T.TagAttrQuote, T.Text))

# A template whose (normalised) name can be a short footnote: the page may yield statements without <ref>.
# Every "{{" is looked at (overlapping: "{{{{sfn" holds a template at each brace), its name runs to the
# first "|", "{" or "}"; a name that stops at "{" (a nested template or argument) or holds markup that
# strip_code would turn into text (an entity, comment, tag, link, '' style) counts as possible.
_TEMPLATE_NAME = re.compile(r"\{(?=\{([^|{}]*)(\{?))")
_MARKUP_IN_NAME = re.compile(r"[&<\[\]']")


def _tokenize(text: str) -> list:
    """The tokens ``mwparserfromhell.parse(text)`` builds its tree from (same tokenizer, same flags)."""
    return Parser()._tokenizer.tokenize(text, 0, False)


def strip_text(text: str) -> str:
    """``Wikicode.strip_code()`` of a Wikicode made of Text nodes only (``wikicode.py``: join, strip
    newlines, collapse runs of three newlines)."""
    stripped = text.strip("\n")
    while "\n\n\n" in stripped:
        stripped = stripped.replace("\n\n\n", "\n\n")
    return stripped


def may_yield_statements(text: str) -> bool:
    """False only when the page cannot yield a single statement or counter: no ``<ref`` anywhere and no
    template whose name could normalise to a short footnote (conservative: a name holding markup counts
    as possible). Such pages (stubs, lists, disambiguations) need no parse at all for collect."""
    low = text.lower()
    if "<ref" in low:
        return True
    for m in _TEMPLATE_NAME.finditer(low):
        raw = m.group(1)
        if m.group(2) or _MARKUP_IN_NAME.search(raw) or S.SHORT_FOOTNOTES.match(S.normalise_template_name(raw)):
            return True
    return False


class _Page:
    """One page's tokens with their types and nesting depth; nodes are built from token ranges."""

    def __init__(self, text: str):
        self.text = text
        self.toks = toks = _tokenize(text)
        self.types = types = list(map(type, toks))
        # depth[i]: nesting depth after token i (an opening token is at its own node's depth). The
        # per-token passes here run in C (map/compress), not in a Python loop.
        self.depth = list(accumulate(map(_DELTA.get, types, repeat(0))))

    def indices(self, kind: type) -> list[int]:
        """Indices of the tokens of one type."""
        return list(compress(count(), map(is_, self.types, repeat(kind))))

    def close(self, i: int) -> int:
        """Index of the token closing the node opened at ``i``."""
        return self.depth.index(self.depth[i] - 1, i + 1)

    def build(self, a: int, b: int):
        """The Wikicode mwparserfromhell builds from tokens ``[a, b)`` (the builder consumes a copy)."""
        return Builder().build(self.toks[a:b])

    def node(self, i: int):
        return self.build(i, self.close(i) + 1).nodes[0]

    def text_of(self, a: int, b: int) -> str | None:
        """The text of tokens ``[a, b)`` when they are all Text tokens (what ``str()`` of their Wikicode
        prints), else None."""
        types, toks = self.types, self.toks
        out = []
        for k in range(a, b):
            if types[k] is not _TEXT:
                return None
            out.append(toks[k]["text"])
        return "".join(out)

    def flat_text(self, a: int, b: int) -> str | None:
        """``str()`` of the Wikicode of tokens ``[a, b)`` when it is Text nodes and bare (bracketless)
        external links with a text URL, the shape of a citation template's ``url=`` value (the tokenizer
        makes a free URL an ExternalLink); for such a Wikicode ``strip_code()`` is ``strip_text(str())``
        as well (a bare link strips to its URL). Else None."""
        types, toks = self.types, self.toks
        out = []
        k = a
        while k < b:
            t = types[k]
            if t is _TEXT:
                out.append(toks[k]["text"])
                k += 1
            elif (
                t is T.ExternalLinkOpen
                and not toks[k].get("brackets")
                and k + 2 < b
                and types[k + 1] is _TEXT
                and types[k + 2] is T.ExternalLinkClose
            ):
                out.append(toks[k + 1]["text"])
                k += 3
            else:
                return None
        return "".join(out)

    def own_tokens(self, i: int, e: int, kinds: tuple) -> list[int]:
        """Indices of tokens of the given kinds that belong to the node ``[i, e]`` itself (not nested)."""
        d, depth, types = self.depth[i], self.depth, self.types
        out = []
        k = i + 1
        while k < e:
            t = types[k]
            if t in kinds and depth[k] == d:
                out.append(k)
                k += 1
            elif t in _DELTA and _DELTA[t] == 1:
                k = self.close(k) + 1
            else:
                k += 1
        return out


def _plain(s: str | None) -> bool:
    return s is not None


def _attr(attrs: list[tuple[str, str | None]], key: str) -> str:
    """``statements._ref_name`` / ``_ref_group`` on attribute pairs: the last attribute of that name
    (``Tag.get``), its value printed (``str(None)`` for a valueless one, as the node code does)."""
    values = [v for n, v in attrs if n == key]
    return str(values[-1]).strip().strip("\"'").strip() if values else ""


@dataclasses.dataclass
class _Ref:
    """What the walker reads from one ``<ref>`` tag, read off its tokens (or its node when unusual)."""

    index: int
    group: str
    name: str
    empty: bool  # self-closing, no contents, or blank contents: a reuse of a named ref
    contents: tuple[int, int] | None  # token range of the contents
    node: object = None  # the built Tag when its head was unusual


class _Definitions:
    """``statements.collect_ref_definitions`` for a token walker, built on the first lookup (a page without
    a reused ref never needs it): name -> the first ref of that name with contents, in token order (which
    is document order)."""

    def __init__(self, walker: _TokenWalker):
        self.walker = walker
        self.defs: dict[str, _Ref] | None = None

    def get(self, name: str):
        if self.defs is None:
            self.defs = {}
            for k in self.walker.ref_idx:
                ref = self.walker._ref(k)
                if ref.name and not ref.empty:
                    self.defs.setdefault(ref.name, ref)
        return self.defs.get(name)


class _TokenWalker(S._Walker):
    """:class:`statements._Walker` over tokens; node-level methods are reused for built nodes."""

    def __init__(self, title: str, cfg: S.StatementConfig, page: _Page, stats: Counter, keep_paragraphs: bool = True):
        self.page = page
        self.refs: dict[int, _Ref] = {}
        self.ref_cits: dict[int, S.Citation] = {}
        types, toks = page.types, page.toks
        self.ref_idx = []
        n_references = 0
        for k in page.indices(T.TagOpenOpen):
            name = self._tag_name(k)
            if name == "ref":
                self.ref_idx.append(k)
            elif name == "references":
                n_references += 1
        # Text tokens holding "<ref" outside comments (_count_refs_in re-parses such text). Every "<ref" of
        # the source that opens a ref or <references> tag is accounted for; only when some are left over can
        # a text token hold one.
        self.reftext_idx = []
        if page.text.lower().count("<ref") > len(self.ref_idx) + n_references:
            text_idx = page.indices(_TEXT)
            self.reftext_idx = [
                k for k in text_idx if "<ref" in toks[k]["text"].lower() and not (k and types[k - 1] is T.CommentStart)
            ]
        super().__init__(title, cfg, _Definitions(self), stats, keep_paragraphs=keep_paragraphs)

    # -- reading tokens -----------------------------------------------------------------------
    def _tag_name(self, k: int) -> str:
        """``str(tag.tag).strip().lower()`` for the tag opened at ``k``; "" when the name holds markup
        (such a name prints its markup, so it is never a tag name the walker tests for)."""
        types = self.page.types
        if types[k + 1] is _TEXT and types[k + 2] in _TAG_NAME_END:
            return self.page.toks[k + 1]["text"].strip().lower()
        end = self.page.own_tokens(k, self.page.close(k), _TAG_NAME_END)
        name = self.page.text_of(k + 1, end[0]) if end else None
        return name.strip().lower() if _plain(name) else ""

    def _tag_parts(self, k: int, e: int) -> tuple[int, int | None, int | None]:
        """(end of the tag name, TagCloseOpen index, TagOpenClose index) of the tag ``[k, e]``."""
        types, depth = self.page.types, self.page.depth
        if types[k + 1] is _TEXT:  # the usual shapes: <name attr="v"...>...</name>, <name .../>
            m = k + 2
            while types[m] in _PLAIN_ATTR_TOKENS:  # attributes made of text (a nested node ends the shortcut)
                m += 1
            if types[m] is T.TagCloseSelfclose:
                return k + 2, None, None
            if (
                types[m] is T.TagCloseOpen
                and types[e - 2] is T.TagOpenClose
                and types[e - 1] is _TEXT
                and depth[e - 2] == depth[k]
            ):
                return k + 2, m, e - 2
        own = self.page.own_tokens(k, e, (T.TagAttrStart, T.TagCloseOpen, T.TagOpenClose))
        name_end = next((m for m in own if types[m] is not T.TagOpenClose), e)
        close_open = next((m for m in own if types[m] is T.TagCloseOpen), None)
        open_close = next((m for m in own if types[m] is T.TagOpenClose), None)
        return name_end, close_open, open_close

    def _ref(self, k: int) -> _Ref:
        if k in self.refs:
            return self.refs[k]
        page = self.page
        e = page.close(k)
        name_end, close_open, open_close = self._tag_parts(k, e)
        attrs_end = close_open if close_open is not None else e
        attrs = self._attributes(name_end, attrs_end)
        if attrs is None:  # an attribute holding markup: read the built node, as the node walker does
            node = page.node(k)
            contents = node.contents
            ref = _Ref(
                k,
                S._ref_group(node),
                S._ref_name(node),
                node.self_closing or contents is None or not str(contents).strip(),
                None,
                node,
            )
        else:
            contents = (close_open + 1, open_close) if close_open is not None and open_close is not None else None
            self_closing = page.types[e] is T.TagCloseSelfclose
            if contents is None:
                blank = True
            else:
                text = page.text_of(*contents)
                blank = _plain(text) and not text.strip()
            ref = _Ref(
                k, _attr(attrs, "group"), _attr(attrs, "name"), self_closing or contents is None or blank, contents
            )
        self.refs[k] = ref
        return ref

    def _attributes(self, a: int, b: int) -> list[tuple[str, str | None]] | None:
        """The tag's attributes (name, value or None) from tokens ``[a, b)`` as the builder pairs them;
        None when a name or value holds anything but text."""
        page = self.page
        types, toks = page.types, page.toks
        out: list[tuple[str, str | None]] = []
        k = a
        while k < b:
            if types[k] is not T.TagAttrStart:
                return None
            k += 1
            parts: list[str] = []
            name: str | None = None
            while k < b and types[k] is not T.TagAttrStart:
                t = types[k]
                if t is _TEXT:
                    parts.append(toks[k]["text"])
                elif t is T.TagAttrEquals:
                    if name is not None:
                        return None
                    name, parts = "".join(parts), []
                elif t is not T.TagAttrQuote:
                    return None
                k += 1
            if name is None:
                name, value = "".join(parts), None
            else:
                value = "".join(parts)
            if not name:  # the builder then makes the value the name: leave that to the node code
                return None
            out.append((name, value))
        return out

    def citation_of(self, ref: _Ref) -> S.Citation:
        """``citation_from_ref(ref.contents)``, from the tokens of the first top-level template."""
        if ref.index in self.ref_cits:
            return dataclasses.replace(self.ref_cits[ref.index])
        if ref.node is not None:
            cit = S.citation_from_ref(ref.node.contents, self.alias_map)
        else:
            page = self.page
            a, b = ref.contents
            types = page.types
            k, tpl = a, None
            while k < b:  # first template among the contents' top-level nodes
                t = types[k]
                if t is T.TemplateOpen:
                    tpl = k
                    break
                k = page.close(k) + 1 if _DELTA.get(t) == 1 else k + 1
            cit = self._template_citation(tpl) if tpl is not None else self._link_citation(a, b)
            if cit is None:
                cit = S.citation_from_ref(page.build(a, b), self.alias_map)
        self.ref_cits[ref.index] = dataclasses.replace(cit)
        return cit

    def _link_citation(self, a: int, b: int) -> S.Citation | None:
        """``citation_from_ref`` of contents ``[a, b)`` holding no top-level template: the first external
        link at any depth (document order is token order), else plain text. None: read the nodes."""
        page = self.page
        types = page.types
        try:
            k = types.index(T.ExternalLinkOpen, a, b)
        except ValueError:
            return S.Citation(type="plain_text")
        e = page.close(k)
        seps = page.own_tokens(k, e, (T.ExternalLinkSeparator,))
        if len(seps) > 1:
            return None
        url = page.text_of(k + 1, seps[0] if seps else e)
        title = page.text_of(seps[0] + 1, e) if seps else ""
        if not (_plain(url) and _plain(title)):
            return None
        return S.Citation(type="bare_url", url=url.strip(), title=S.clean_text(strip_text(title)) if title else "")

    def _template_citation(self, k: int) -> S.Citation | None:
        """The citation of the template opened at ``k``; None when its name holds markup."""
        page = self.page
        e = page.close(k)
        own = page.own_tokens(k, e, (T.TemplateParamSeparator, T.TemplateParamEquals))
        types = page.types
        first = own[0] if own else e
        if own and types[first] is T.TemplateParamEquals:  # the tokenizer never emits this; be safe
            return None
        name = page.text_of(k + 1, first)
        if not _plain(name):
            return None
        name = S.normalise_template_name(strip_text(name) or name)
        # _params: {str(p.name).strip(): p.value}, the last duplicate winning. A name holding markup
        # prints its markup and can never equal one of the looked-up keys, so only text names count;
        # positional parameters are named "1", "2"..., never a key read here.
        values: dict[str, tuple[int, int]] = {}
        own.append(e)
        i = 0
        while i < len(own) - 1:  # own[i] is a separator
            j = i + 1
            if types[own[j]] is T.TemplateParamEquals:
                if types[own[j + 1]] is T.TemplateParamEquals:
                    return None  # two '=' tokens in one parameter: the builder's own pairing, via nodes
                key = page.text_of(own[i] + 1, own[j])
                if _plain(key):
                    values[key.strip()] = (own[j] + 1, own[j + 1])
                j += 1
            i = j

        def param(*names: str) -> str:
            for n in names:
                span = values.get(n)
                if span is not None:
                    raw = page.flat_text(*span)
                    if not _plain(raw):
                        return S._param({n: page.build(*span)}, n)
                    if "{{" in raw or "<!--" in raw or "[[" in raw:
                        return S.clean_text(strip_text(raw))
                    return S.clean_text(raw)
            return ""

        return S.Citation(
            type=self.alias_map.get(name, name),
            url=param("url", "URL"),
            title=param("title", "trans-title"),
            access_date=param("access-date", "accessdate", "access date"),
            archive_url=param("archive-url", "archiveurl"),
        )

    # -- the walk -----------------------------------------------------------------------------
    def ref_token(self, k: int) -> None:
        """``_Walker.ref`` for the ref opened at ``k``."""
        ref = self._ref(k)
        self.cite_ref(ref.group, ref.name, ref.empty, ref)

    def read_citation(self, body, name: str) -> S.Citation:
        """A token ref's citation from its tokens; a built node's (a fallback) as the node walker reads it."""
        return self.citation_of(body) if isinstance(body, _Ref) else super().read_citation(body, name)

    def count_refs_in_range(self, a: int, b: int) -> None:
        """``_Walker._count_refs_in`` for the node made of tokens ``[a, b]``: ref tags inside it plus refs
        in its text that the tokenizer left unparsed (``<gallery>`` contents...)."""
        n = bisect_left(self.ref_idx, b) - bisect_left(self.ref_idx, a + 1)
        lo, hi = bisect_left(self.reftext_idx, a + 1), bisect_left(self.reftext_idx, b)
        toks = self.page.toks
        for k in self.reftext_idx[lo:hi]:
            n += len(mwparserfromhell.parse(toks[k]["text"]).filter_tags(recursive=True, matches=S._is_ref))
        if n:
            self.stats["refs_outside_prose"] += n

    def walk_range(self, a: int, b: int) -> None:
        """``_Walker.walk`` over the nodes made of tokens ``[a, b)``."""
        page = self.page
        types, toks = page.types, page.toks
        k = a
        while k < b:
            t = types[k]
            if t is _TEXT:
                text = toks[k]["text"]
                if "\n" in text or self.in_group:
                    self.add_text(text)
                elif text:  # add_text's one-chunk case, inline (the most frequent node)
                    self.buffer.append(text)
                    self.para.append(text)
                k += 1
                continue
            if t is T.WikilinkOpen and types[k + 1] is _TEXT:
                # The common link shapes inline: [[Title]] and [[Title|text]] with text tokens only.
                if types[k + 2] is T.WikilinkClose:
                    title = toks[k + 1]["text"]
                    if S.prose_link(title):
                        self.add_text(strip_text(title))
                        k += 3
                        continue
                elif types[k + 2] is T.WikilinkSeparator and types[k + 3] is _TEXT and types[k + 4] is T.WikilinkClose:
                    title = toks[k + 1]["text"]
                    if S.prose_link(title):
                        self.add_text(strip_text(toks[k + 3]["text"]))
                        k += 5
                        continue
            e = page.close(k)
            if t is T.TagOpenOpen:
                self._tag(k, e)
            elif t is T.TemplateOpen:
                self._template(k, e)
            elif t is T.WikilinkOpen:
                self._wikilink(k, e)
            elif t is T.ExternalLinkOpen:
                self._external_link(k, e)
            elif t is T.HeadingStart:
                title = page.text_of(k + 1, e)
                if _plain(title):
                    self.open_section(toks[k]["level"], S.clean_text(strip_text(title)))
                else:
                    self.walk([page.node(k)])
            elif t is T.HTMLEntityStart:
                self.add_text(_entity(toks, types, k, e))
            # CommentStart, ArgumentOpen: no visible text
            k = e + 1

    def _tag(self, k: int, e: int) -> None:
        page = self.page
        tag = self._tag_name(k)
        if not tag:
            self.walk([page.node(k)])
            return
        if tag == "ref":
            self.ref_token(k)
            return
        if tag == "br":
            self.add_text(" ")
            return
        _, close_open, open_close = self._tag_parts(k, e)
        self_closing = page.types[e] is T.TagCloseSelfclose
        contents = (close_open + 1, open_close) if close_open is not None and open_close is not None else None
        if tag in S.INLINE_TAGS and contents is not None and not self_closing:
            self.walk_range(*contents)
        elif tag in S.BLOCK_TAGS:
            self.end_paragraph()
            if contents is not None:
                text = page.text_of(*contents)
                if not _plain(text) or text.strip():
                    if tag in ("li", "dt", "dd", "p") and not page.toks[k].get("wiki_markup"):
                        self.walk_range(*contents)
                        self.end_paragraph()
                    else:
                        self.count_refs_in_range(k, e)
        else:
            self.count_refs_in_range(k, e)

    def _name_end(self, k: int, e: int, sep: type) -> tuple[int, list[int] | None]:
        """(end of the name part, the node's own separators or None when not needed) of the template or
        link ``[k, e]``: a name that is one Text token ends at the next token."""
        types = self.page.types
        if types[k + 1] is _TEXT and (k + 2 == e or types[k + 2] is sep):
            return k + 2, None
        seps = self.page.own_tokens(k, e, (sep,))
        return (seps[0] if seps else e), seps

    def _template(self, k: int, e: int) -> None:
        page = self.page
        end, _ = self._name_end(k, e, T.TemplateParamSeparator)
        raw = page.text_of(k + 1, end)
        if not _plain(raw):
            self.walk([page.node(k)])
            return
        name = S.normalise_template_name(strip_text(raw) or raw)
        if S.SHORT_FOOTNOTES.match(name):
            self.citation(S.Citation(type=name), drop_if_none="")
            return
        self.count_refs_in_range(k, e)
        if S.template_may_print(name):
            self.add_text(S._template_text(page.node(k)))

    def _wikilink(self, k: int, e: int) -> None:
        page = self.page
        end, seps = self._name_end(k, e, T.WikilinkSeparator)
        if seps is None:
            seps = page.own_tokens(k, e, (T.WikilinkSeparator,)) if end < e else []
        title = page.text_of(k + 1, end)
        if len(seps) > 1 or not _plain(title):
            self.walk([page.node(k)])
            return
        if not S.prose_link(title):
            self.count_refs_in_range(k, e)
            return
        if seps:
            text = page.text_of(seps[0] + 1, e)
            self.add_text(strip_text(text) if _plain(text) else page.build(seps[0] + 1, e).strip_code())
        else:
            self.add_text(strip_text(title))

    def _external_link(self, k: int, e: int) -> None:
        page = self.page
        if not page.toks[k].get("brackets"):
            return
        seps = page.own_tokens(k, e, (T.ExternalLinkSeparator,))
        if len(seps) > 1:
            self.walk([page.node(k)])
            return
        if seps:
            text = page.text_of(seps[0] + 1, e)
            self.add_text(strip_text(text) if _plain(text) else page.build(seps[0] + 1, e).strip_code())


def _entity(toks: list, types: list, k: int, e: int) -> str:
    """``HTMLEntity.normalize()`` of the entity ``[k, e]``, paired as the builder's ``_handle_entity``."""
    if types[k + 1] is T.HTMLEntityNumeric:
        if types[k + 2] is T.HTMLEntityHex:
            return chr(int(toks[k + 3]["text"], 16))
        return chr(int(toks[k + 2]["text"]))
    return chr(name2codepoint[toks[k + 1]["text"]])


def parse_article_tokens(
    title: str, wikitext: str, cfg: S.StatementConfig, stats: Counter, keep_paragraphs: bool = True
) -> S.Article:
    """``statements.parse_article`` by walking tokens (see the module docstring); identical results.

    The cyclic garbage collector is paused for the page: tokens are acyclic dicts, thousands per page,
    and the collections their allocation triggers find nothing to free while walking all of them
    (measured: 5-13% of the time, and more when it resumed with the tokens still alive). Reference
    counting frees the tokens before the collector is resumed.
    """
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        page = _Page(wikitext)
        walker = _TokenWalker(title, cfg, page, stats, keep_paragraphs=keep_paragraphs)
        walker.walk_range(0, len(page.toks))
        walker.end_paragraph()
        article = S.Article(title=title, sections=walker.sections, statements=walker.statements)
        # Free the tokens while the collector is paused (break the walker <-> definitions cycle first):
        # resumed with them alive, its next run would walk every token once more for nothing.
        walker.defs = None
        del walker, page
    finally:
        if paused:
            gc.enable()
    return article
