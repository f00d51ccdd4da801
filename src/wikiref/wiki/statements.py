"""Wikitext -> sections -> paragraphs -> cited statements (DESIGN §3.1, journal §II-A-1).

The parse is mwparserfromhell's; this module only walks its node tree:

* The section hierarchy comes from headings: the query of a statement is
  ``[article title, level-2 heading, level-3 heading, ...]``.
* A *statement* is the prose from the previous citation (or the start of the paragraph) up to a
  ``<ref>``. Consecutive refs (only whitespace or punctuation between them) belong to one
  statement and only the first counts (the paper keeps the first citation only).
* A reused ref (``<ref name="x"/>``) is resolved to its definition anywhere on the page
  (including list-defined references inside ``{{reflist|refs=...}}``).
* The first citation's type is the name of the first template in the ref, normalised (case,
  spaces, underscores, ``Template:`` prefix) and mapped through the alias table. Short-footnote
  templates (``{{sfn}}``, ``{{harvnb}}``...) in running prose also end a statement (they are
  citations, of books mostly) and are counted as their own type.
* Statement text is plain text: templates, refs, comments, tables, files/categories and
  bold/italic markup are removed; links keep their visible text.

Everything that is read but not kept is counted by reason in a :class:`collections.Counter`, so the
stats file of a shard explains every drop. The functions here are pure (wikitext in, data out).
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import mwparserfromhell
from mwparserfromhell.nodes import ExternalLink, Heading, HTMLEntity, Tag, Template, Text, Wikilink

# Canonical citation types and their common aliases (template redirects on English Wikipedia).
DEFAULT_ALIASES: dict[str, list[str]] = {
    "cite web": [
        "web cite",
        "cite website",
        "cite webpage",
        "cite web page",
        "cite url",
        "citeweb",
        "cite-web",
        "web reference",
        "web citation",
        "cite blog",
        "cite online",
    ],
    "cite news": [
        "cite newspaper",
        "citenews",
        "cite-news",
        "cite news article",
        "cite article",
        "news cite",
        "cite n",
    ],
    "cite press release": ["cite press", "cite pr", "cite press-release", "press release", "cite press statement"],
}

DEFAULT_SKIP_SECTIONS = (
    "references",
    "notes",
    "footnotes",
    "citations",
    "sources",
    "bibliography",
    "external links",
    "further reading",
    "see also",
    "notes and references",
    "references and notes",
    "works cited",
    "general references",
    "external link",
    "reference",
    "note",
)

# Templates that stand for a citation in running prose (short footnotes); they end a statement.
SHORT_FOOTNOTES = re.compile(r"^(sfnp?|sfnm|harvnb|harvp|harv|harvtxt|harvcoltxt|harvard citation( no brackets)?|rp)$")
# Inline formatting tags whose contents are prose: walked into.
INLINE_TAGS = frozenset(
    "b i u s em strong span small big sup sub del ins cite abbr q code tt font blockquote div center poem "
    "var kbd samp mark bdi bdo".split()
)
# Block tags that end a paragraph.
BLOCK_TAGS = frozenset("li dt dd table tr td th p ul ol dl hr".split())
# Namespaces of links that are not prose (files, categories, interwiki).
NON_PROSE_LINK = re.compile(r"^\s*:?\s*(file|image|media|category|[a-z]{2,3}(-[a-z]+)?)\s*:", re.IGNORECASE)
KEEP_LINK_NS = re.compile(r"^\s*:?\s*(wikt|wiktionary|s|wikisource|w|wikipedia|wp)\s*:", re.IGNORECASE)
GROUP_PUNCT = re.compile(r"^[\s,;:.\u2013\u2014-]*$")
WS = re.compile(r"\s+")
PARA_BREAK = re.compile(r"\n[ \t]*\n")
# Wiki syntax left in a statement means the parser met unbalanced markup there.
MARKUP_RESIDUE = re.compile(r"\{\{|\}\}|\[\[|\]\]|\{\||\|\}|</?ref\b", re.IGNORECASE)
SPACE_BEFORE_PUNCT = re.compile(r"\s+([,.;:!?%)\]])")


@dataclass
class Citation:
    type: str  # normalised, alias-mapped template name ("cite web"), or bare_url / plain_text
    url: str = ""
    title: str = ""
    access_date: str = ""
    archive_url: str = ""
    ref_name: str = ""


@dataclass
class Statement:
    index: int  # running index of the statement within the article (every ref group counts)
    section_index: int
    paragraph_index: int  # within the section
    query: tuple[str, ...]
    text: str
    citation: Citation | None
    drop: str = ""  # empty when kept, else the reason


@dataclass
class Section:
    index: int
    query: tuple[str, ...]
    paragraphs: list[str] = field(default_factory=list)
    # URLs cited by any ref (first or not) in each paragraph, to keep stand-ins away from them.
    paragraph_urls: list[set[str]] = field(default_factory=list)
    skipped: bool = False


@dataclass
class Article:
    title: str
    sections: list[Section]
    statements: list[Statement]


@dataclass(frozen=True)
class StatementConfig:
    citation_types: tuple[str, ...] = ("cite web", "cite news", "cite press release")
    aliases: Mapping[str, Sequence[str]] = field(default_factory=lambda: DEFAULT_ALIASES)
    skip_sections: tuple[str, ...] = DEFAULT_SKIP_SECTIONS
    min_statement_chars: int = 10

    @classmethod
    def from_params(cls, collect: Mapping) -> StatementConfig:
        st = collect.get("statements", {})
        return cls(
            citation_types=tuple(normalise_template_name(t) for t in collect["citation_types"]),
            aliases={normalise_template_name(k): tuple(v) for k, v in st.get("aliases", DEFAULT_ALIASES).items()},
            skip_sections=tuple(s.lower() for s in st.get("skip_sections", DEFAULT_SKIP_SECTIONS)),
            min_statement_chars=int(st.get("min_statement_chars", 10)),
        )

    def alias_map(self) -> dict[str, str]:
        out = {t: t for t in self.citation_types}
        for canonical, names in self.aliases.items():
            for n in names:
                out[normalise_template_name(n)] = canonical
        return out


@functools.lru_cache(maxsize=8192)
def normalise_template_name(name: str) -> str:
    """``Cite_Web``, ``cite  web``, ``Template:cite web`` -> ``cite web`` (cached: a page names the same
    few templates over and over)."""
    name = WS.sub(" ", str(name).replace("_", " ")).strip().lower()
    if name.startswith("template:"):
        name = name[len("template:") :].strip()
    return name


# mwparserfromhell decodes a character reference such as &#xD800; into a lone surrogate, which no UTF-8
# writer (Parquet, JSON, spaCy's string store) accepts: it becomes U+FFFD, as a browser shows it.
SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """Collapse whitespace and fix spaces left before punctuation by removed markup; a lone surrogate
    (from a character reference) becomes U+FFFD."""
    if not text.isascii():
        text = SURROGATE.sub("\ufffd", text)
    # str.split() splits on exactly the characters \s matches (checked over every code point in
    # tests/test_collect_tokenwalk.py), so this is WS.sub(" ", text).strip(), about 3x faster.
    text = " ".join(text.split())
    text = SPACE_BEFORE_PUNCT.sub(r"\1", text)
    return text.replace("( ", "(")


def _params(tpl: Template) -> dict[str, object]:
    """Template parameters by stripped name (one pass; the last duplicate wins, as in MediaWiki)."""
    return {str(p.name).strip(): p.value for p in tpl.params}


def _param(params: Mapping[str, object], *names: str) -> str:
    for n in names:
        value = params.get(n)
        if value is not None:
            raw = str(value)
            return clean_text(value.strip_code() if ("{{" in raw or "<!--" in raw or "[[" in raw) else raw)
    return ""


def _ref_name(tag: Tag) -> str:
    if tag.has("name"):
        return str(tag.get("name").value).strip().strip("\"'").strip()
    return ""


def _ref_group(tag: Tag) -> str:
    if tag.has("group"):
        return str(tag.get("group").value).strip().strip("\"'").strip()
    return ""


def citation_from_ref(contents: mwparserfromhell.wikicode.Wikicode, alias_map: Mapping[str, str]) -> Citation:
    """The citation a ref's contents hold: its first template (type, url, title, access-date)."""
    templates = contents.filter_templates(recursive=False)
    if templates:
        tpl = templates[0]
        name = normalise_template_name(tpl.name.strip_code() or str(tpl.name))
        params = _params(tpl)
        return Citation(
            type=alias_map.get(name, name),
            url=_param(params, "url", "URL"),
            title=_param(params, "title", "trans-title"),
            access_date=_param(params, "access-date", "accessdate", "access date"),
            archive_url=_param(params, "archive-url", "archiveurl"),
        )
    links = contents.filter_external_links(recursive=True)
    if links:
        link = links[0]
        return Citation(
            type="bare_url", url=str(link.url).strip(), title=clean_text(link.title.strip_code()) if link.title else ""
        )
    return Citation(type="plain_text")


def collect_ref_definitions(code: mwparserfromhell.wikicode.Wikicode) -> dict[str, Tag]:
    """name -> the first ref with that name and non-empty contents, anywhere on the page."""
    defs: dict[str, Tag] = {}
    for tag in code.filter_tags(recursive=True, matches=_is_ref):
        name = _ref_name(tag)
        if name and not tag.self_closing and tag.contents is not None and str(tag.contents).strip():
            defs.setdefault(name, tag)
    return defs


def valid_url(url: str) -> bool:
    if not url or len(url.split()) > 1:  # whitespace inside the stripped URL
        return False
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc) and "{" not in url and "[" not in url


# Templates whose first positional parameter is printed as prose.
FIRST_PARAM_TEMPLATES = frozenset(
    "nowrap nobr small big smaller larger abbr em strong keypress var mvar math nbsp".split() + ["nowrap begin"]
)


def template_may_print(name: str) -> bool:
    """Whether :func:`_template_text` can print anything for a template of this normalised name."""
    return (
        name in FIRST_PARAM_TEMPLATES
        or name in ("lang", "convert", "cvt", "ndash", "–", "mdash", "—")
        or name.startswith("lang-")
    )


def prose_link(title: str) -> bool:
    """Whether a wikilink to ``title`` is prose a reader sees: not a file, category or interlanguage link
    (sister projects such as Wiktionary are prose)."""
    return not NON_PROSE_LINK.match(title) or bool(KEEP_LINK_NS.match(title))


def inline_text(node) -> str | None:
    """The text a reader sees of a link or entity node: a prose wikilink's label (its title when it has none), a
    bracketed external link's title, an entity's character; ``""`` for a link that shows no prose; None for
    every other kind of node."""
    if isinstance(node, Wikilink):
        if not prose_link(str(node.title)):
            return ""
        return node.text.strip_code() if node.text is not None else node.title.strip_code()
    if isinstance(node, ExternalLink):
        return node.title.strip_code() if node.brackets and node.title is not None else ""
    if isinstance(node, HTMLEntity):
        return node.normalize()
    return None


def _template_text(tpl: Template) -> str:
    """Visible text of the few templates that print prose words; every other template is removed.

    Wikipedia has tens of thousands of templates and rendering them needs MediaWiki itself; these
    are the frequent inline ones whose omission would leave holes in a sentence.
    """
    name = normalise_template_name(tpl.name.strip_code() or str(tpl.name))
    pos = [p for p in tpl.params if not p.showkey]
    if name in FIRST_PARAM_TEMPLATES:
        return pos[0].value.strip_code() if pos else ""
    if name == "lang" and len(pos) >= 2:
        return pos[1].value.strip_code()
    if name.startswith("lang-") and pos:
        return pos[0].value.strip_code()
    if name in ("convert", "cvt") and len(pos) >= 2:
        value, unit = pos[0].value.strip_code().strip(), pos[1].value.strip_code().strip()
        if len(pos) >= 3 and unit in ("to", "-", "and", "or", "by", "x", "+/-", "–"):
            return f"{value} {unit} {pos[2].value.strip_code().strip()} " + (
                pos[3].value.strip_code().strip() if len(pos) >= 4 else ""
            )
        return f"{value} {unit}"
    if name in ("ndash", "–"):
        return "–"
    if name in ("mdash", "—"):
        return "—"
    return ""


class _Walker:
    """One pass over a page's top-level nodes (descending into inline formatting only)."""

    def __init__(
        self, title: str, cfg: StatementConfig, defs: Mapping[str, Tag], stats: Counter, keep_paragraphs: bool = True
    ):
        # keep_paragraphs=False: paragraphs are only counted (statements keep their paragraph_index);
        # their text and URLs are not built (collect needs statements only).
        self.keep_paragraphs = keep_paragraphs
        self.cfg = cfg
        self.alias_map = cfg.alias_map()
        self.keep_types = set(cfg.citation_types)
        self.defs = defs
        self.stats = stats
        self.title = title
        self.heading_stack: list[tuple[int, str]] = []
        self.sections: list[Section] = [Section(0, (title,))]
        self.statements: list[Statement] = []
        self.buffer: list[str] = []  # text since the previous citation / paragraph start
        self.para: list[str] = []  # text of the current paragraph (refs excluded)
        self.para_urls: set[str] = set()
        self.para_statements: list[Statement] = []
        self.in_group = False  # the previous non-blank node was a citation
        self.cit_cache: dict[str, Citation] = {}  # named ref -> its citation (reused refs parse once)

    # -- paragraphs and sections -------------------------------------------------------------
    @property
    def section(self) -> Section:
        return self.sections[-1]

    def end_paragraph(self) -> None:
        if self.keep_paragraphs:
            text = clean_text("".join(self.para))
            visible = bool(text)
        else:  # clean_text(x) is empty exactly when x is all whitespace
            text, visible = "", bool("".join(self.para).strip())
        # A paragraph with text, or citations with no prose around them (a list of refs).
        if visible or self.para_statements:
            sec = self.section
            sec.paragraphs.append(text)
            sec.paragraph_urls.append(self.para_urls)
            for st in self.para_statements:
                st.paragraph_index = len(sec.paragraphs) - 1
        self.buffer, self.para, self.para_urls, self.para_statements = [], [], set(), []
        self.in_group = False

    def heading(self, node: Heading) -> None:
        self.open_section(node.level, clean_text(node.title.strip_code()))

    def open_section(self, level: int, text: str) -> None:
        """A heading of this level and (clean) text ends the paragraph and opens a section."""
        self.end_paragraph()
        while self.heading_stack and self.heading_stack[-1][0] >= level:
            self.heading_stack.pop()
        self.heading_stack.append((level, text))
        query = (self.title,) + tuple(t for _, t in self.heading_stack)
        skipped = any(t.lower() in self.cfg.skip_sections for _, t in self.heading_stack)
        self.sections.append(Section(len(self.sections), query, skipped=skipped))

    # -- text -------------------------------------------------------------------------------
    def add_text(self, text: str) -> None:
        if not text:
            return
        for i, chunk in enumerate(PARA_BREAK.split(text) if "\n" in text else (text,)):
            if i:
                self.end_paragraph()
            if not chunk:
                continue
            if self.in_group and GROUP_PUNCT.match(chunk):
                # Between two refs of one group (or punctuation after the group): nothing starts.
                self.para.append(chunk)
                continue
            self.buffer.append(chunk)
            self.para.append(chunk)
            if chunk.strip():
                self.in_group = False

    # -- citations --------------------------------------------------------------------------
    def citation(self, citation: Citation | None, drop_if_none: str = "") -> None:
        if citation is not None and citation.url:
            self.para_urls.add(citation.url.strip())
        if self.in_group:
            self.stats["citations_not_first"] += 1
            return
        self.in_group = True
        self.stats["citations_first"] += 1
        text = clean_text("".join(self.buffer)).lstrip(",;:.)]–—- ").strip()
        self.buffer = []
        st = Statement(
            index=len(self.statements),
            section_index=self.section.index,
            paragraph_index=-1,
            query=self.section.query,
            text=text,
            citation=citation,
        )
        if citation is not None:
            self.stats[f"first_citation_type:{citation.type}"] += 1
        if self.section.skipped:
            st.drop = "in_skipped_section"
        elif citation is None:
            st.drop = drop_if_none
        elif not text:
            st.drop = "empty_statement"
        elif MARKUP_RESIDUE.search(text):
            st.drop = "unbalanced_markup"
        elif len(text) < self.cfg.min_statement_chars:
            st.drop = "short_statement"
        elif citation.type not in self.keep_types:
            st.drop = "citation_type_not_kept"
        elif not citation.url:
            st.drop = "citation_without_url"
        elif not valid_url(citation.url):
            st.drop = "citation_bad_url"
        self.statements.append(st)
        self.para_statements.append(st)

    def ref(self, tag: Tag) -> None:
        empty = tag.self_closing or tag.contents is None or not str(tag.contents).strip()
        self.cite_ref(_ref_group(tag), _ref_name(tag), empty, tag)

    def cite_ref(self, group: str, name: str, empty: bool, own) -> None:
        """The rules of one ref, from what it holds: its group, name, whether it is empty (a reuse of a named
        ref, resolved to the first definition of that name on the page) and the ref itself."""
        if group:
            # <ref group="note">: an explanatory footnote, not a source; it still ends the statement.
            self.citation(None, drop_if_none="note_ref")
            return
        body = own
        if empty:
            if not name:
                self.stats["empty_ref"] += 1
                return
            body = self.defs.get(name)
            if body is None:
                self.citation(None, drop_if_none="unresolved_named_ref")
                return
            self.stats["named_ref_reused"] += 1
        if self.in_group and not self.keep_paragraphs:
            self.citation(None)  # not the first of its group: only counted (its URL is a paragraph's)
            return
        cit = self.read_citation(body, name)
        cit.ref_name = name
        self.citation(cit)

    def read_citation(self, body, name: str) -> Citation:
        """The citation a ref's contents hold (a definition's is read once per page)."""
        is_def = bool(name) and body is self.defs.get(name)
        if is_def and name in self.cit_cache:
            return dataclasses.replace(self.cit_cache[name])
        cit = citation_from_ref(body.contents, self.alias_map)
        if is_def:
            self.cit_cache[name] = dataclasses.replace(cit)
        return cit

    # -- the walk ---------------------------------------------------------------------------
    def walk(self, nodes: Iterable) -> None:
        for node in nodes:
            if isinstance(node, Text):
                self.add_text(node.value)
            elif isinstance(node, Tag):
                tag = str(node.tag).strip().lower()
                if tag == "ref":
                    self.ref(node)
                elif tag == "br":
                    self.add_text(" ")
                elif tag in INLINE_TAGS and node.contents is not None and not node.self_closing:
                    self.walk(node.contents.nodes)
                elif tag in BLOCK_TAGS:
                    self.end_paragraph()
                    if node.contents is not None and str(node.contents).strip():
                        if tag in ("li", "dt", "dd", "p") and not node.wiki_markup:
                            self.walk(node.contents.nodes)
                            self.end_paragraph()
                        else:  # tables and other blocks are not prose
                            self._count_refs_in(node)
                else:  # gallery, math, nowiki, pre, references, ...: not prose
                    self._count_refs_in(node)
            elif isinstance(node, Heading):
                self.heading(node)
            elif isinstance(node, Template):
                name = normalise_template_name(node.name.strip_code() or str(node.name))
                if SHORT_FOOTNOTES.match(name):
                    self.citation(Citation(type=name), drop_if_none="")
                else:
                    self._count_refs_in(node)
                    self.add_text(_template_text(node))
            elif isinstance(node, Wikilink) and not prose_link(str(node.title)):
                self._count_refs_in(node)
            elif text := inline_text(node):
                self.add_text(text)
            # Comment, Argument and anything unknown: no visible text

    def _count_refs_in(self, node) -> None:
        """Refs inside templates, tables, galleries...: not statements of the prose, but counted."""
        if "<ref" not in str(node).lower():  # cheap test first: most templates hold no ref
            return
        n = 0
        for child in node.__children__():
            n += len(child.filter_tags(recursive=True, matches=_is_ref))
            # Extension tags such as <gallery> keep their contents as unparsed text.
            for text in child.filter_text(recursive=True):
                if "<ref" in text.value.lower():
                    n += len(mwparserfromhell.parse(text.value).filter_tags(recursive=True, matches=_is_ref))
        if n:
            self.stats["refs_outside_prose"] += n


def _is_ref(node) -> bool:
    return str(node.tag).strip().lower() == "ref"


METHODS = ("tokens", "nodes")


def parse_article(
    title: str,
    wikitext: str,
    cfg: StatementConfig,
    stats: Counter | None = None,
    method: str = "tokens",
    statements_only: bool = False,
) -> Article:
    """Sections, paragraphs and every statement (kept or with its drop reason) of one article.

    ``method="nodes"`` walks mwparserfromhell's node tree (the reference); ``"tokens"`` (default) walks
    its token stream (:mod:`wikiref.wiki.tokenwalk`, same results, about 4x faster).
    ``statements_only``: the article has no sections (paragraph texts are not built) and a page that
    cannot yield a statement is not parsed at all; statements and counters are the same. All that
    collect needs.
    """
    stats = stats if stats is not None else Counter()
    if method not in METHODS:
        raise ValueError(f"unknown parse method {method!r} (one of {', '.join(METHODS)})")
    from wikiref.wiki import tokenwalk

    if statements_only and not tokenwalk.may_yield_statements(wikitext):
        return Article(title=title, sections=[], statements=[])
    if method == "tokens":
        article = tokenwalk.parse_article_tokens(title, wikitext, cfg, stats, keep_paragraphs=not statements_only)
    else:
        code = mwparserfromhell.parse(wikitext)
        defs = collect_ref_definitions(code)
        walker = _Walker(title, cfg, defs, stats, keep_paragraphs=not statements_only)
        walker.walk(code.nodes)
        walker.end_paragraph()
        article = Article(title=title, sections=walker.sections, statements=walker.statements)
    statements = article.statements
    if statements_only:
        article = Article(title=title, sections=[], statements=statements)
    if statements:
        stats["statements_total"] += len(statements)
        kept = [st.citation.type for st in statements if not st.drop]
        if kept:
            stats["statements_kept"] += len(kept)
            stats.update("kept_citation_type:" + t for t in kept)
        if len(kept) < len(statements):
            stats.update("statement_dropped:" + st.drop for st in statements if st.drop)
    return article


def kept_statements(article: Article) -> Iterator[Statement]:
    return (st for st in article.statements if not st.drop)
