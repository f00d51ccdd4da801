"""The Current Events Portal parser: daily wikitext pages of a dump and monthly HTML pages -> :class:`Event`.

WCEP (Gholipour Ghalandari et al., ACL 2020, §3) takes its summaries from the Wikipedia Current Events
Portal: every event is a *leaf* bullet (a bullet with no deeper child bullet) holding a short summary
with wiki links (the "entities" the paper matches in article titles and bodies) and external links to
its source articles. The bullets above a leaf are its *stories* ("Syrian civil war" > "Battle of X"),
the bold line above the list its *category* ("Armed conflicts and attacks").

Layouts read
------------
Daily wikitext pages (namespace Portal = 100 of a pages-articles dump, title
``Portal:Current events/2019 January 1``; :func:`parse_day_wikitext`, :func:`iter_dump_events`):

* the wrapper layout: ``{{Current events|year=2019|month=01|day=1|content= ... }}``; only the
  ``content`` parameter is read (bullets outside it are a counted drop);
* the header/footer layout (``{{Current events header|2017|05|5}}`` ... ``|}`` ``{{Current events
  footer}}``) and a wrapper without ``content`` (``{{Current events|...|top=yes}}`` followed by the
  items): the whole page is read;
* category lines ``'''Armed conflicts and attacks'''`` or ``;Armed conflicts and attacks``; bullets
  ``*``, ``**``... (a bullet deeper than its parent by more than one level hangs under the nearest
  shallower bullet); block tags spanning lines (``<div>...</div>``) are read through;
* text: comments, ``<ref>``, templates, file/category links removed, wiki links replaced by their
  anchor text (plus MediaWiki's link trail: ``[[bomb]]s`` -> anchor "bombs"), external links (bracketed,
  bare or autonumbered) removed from the text and kept as the sources, HTML entities decoded.

Monthly HTML pages (``Portal:Current_events/January_2019`` as served; :func:`parse_month_html`,
:func:`iter_html_events`):

* day blocks ``table.vevent`` (up to 2017) and ``div.vevent`` (2018 on), their bullets and category
  lines inside the ``.description`` element (so the edit/history navbar is never read);
* the date from ``.bday`` / ``.dtstart`` (ISO), else the ``(YYYY-MM-DD)`` of the ``.summary`` line,
  else the block id (``2019_January_1``);
* categories ``<p><b>..</b></p>``, ``<div role="heading">..</div>``, ``<dl><dt>..</dt></dl>``;
* in a bullet: links with ``rel=nofollow`` or class ``external`` are the sources (removed from the
  text), ``/wiki/`` links (and red links ``/w/index.php?title=``) the entities, ``sup.reference``,
  ``style``, ``noprint`` and ``display:none`` elements are not text.

Both layouts give the same :class:`Event` for the same content; :func:`render_day_wikitext` and
:func:`render_month_html` write pages in these layouts (the STAND-IN portal of the offline sample), and
parsing a rendered page gives the events back (origin and location aside). An event without source URL
can be written too: it is read back as a ``no_source_url`` drop, as on the real portal. Texts must be as
the parser leaves them (:func:`clean_text`, no wiki markup), else rendering raises ValueError
(:func:`check_renderable` checks one event).

Counters (``tally.counts``)
---------------------------
``files``, ``days`` (days parsed), ``leaves`` (leaf bullets of parsed days; every leaf ends as exactly
one of ``events`` or a leaf drop below), ``events`` (kept), ``pages:not_a_day`` (portal pages under the
prefix that are not a day, e.g. the monthly overviews), ``pages:other_title`` (pages of the namespace
outside the prefix), ``dump:<key>`` (the dump reader's own counts), ``days:whole_page`` (wikitext day
without a ``content`` wrapper), ``days:date_mismatch`` (the page's own date disagrees with the title /
block id; the title's / ``.bday`` date is kept), ``bullets:depth_jump``, ``bullets:empty_story`` (a
story bullet without text, skipped in the story path), ``bullets:story_with_source`` (a bullet with
children and source links: it is a story, its links are not an event's), ``lines:layout`` (table
markup / magic words of the old layout), ``html:invalid_utf8`` (bytes replaced by U+FFFD).

Drops (``tally.drop(reason, where)``)
-------------------------------------
Leaf drops: ``no_source_url``, ``empty_summary`` (no text left after cleaning), ``unbalanced_markup``
(the leaf or one of its stories still holds ``[[``, ``]]``, ``{{``, ``}}``, ``''``, a tag, or a ``[``
opening an unclosed external link), ``duplicate_event`` (same :attr:`Event.event_id` as an earlier event
of the same call), ``truncated_html`` (the last day block of an HTML file that does not end with
``</html>``: it may be cut).
Line and day drops: ``stray_line`` (text that is neither a bullet nor a category), ``malformed_bullet``
(``#``, ``:``, ``*:`` lines; ``<ol>`` lists), ``bullets_outside_wrapper``, ``unbalanced_template`` (a
``{{Current events`` wrapper that never closes: the day is skipped), ``bad_date`` (a day title or a day
block whose date is not a calendar date), ``day_without_date`` (an HTML day block with no date at all),
``empty_day`` (a day with no bullet, or a day block without ``.description``), ``broken_html`` (a file
lxml cannot parse, e.g. empty), ``no_day_blocks`` (an HTML file without any ``.vevent`` block).
A truncated or corrupt dump raises :class:`wikiref.wiki.dump.DumpError` naming file and place.
"""

from __future__ import annotations

import calendar
import html as html_lib
import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date as Date
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, quote, unquote, urlsplit

from wikiref.files import stable_id

if TYPE_CHECKING:
    from wikiref.examples import Tally

ORIGINS = ("wikitext", "html")
LAYOUTS = ("div", "table")
TITLE_PREFIX = "Portal:Current events/"

_MONTHS = {name: i for i, name in enumerate(calendar.month_name) if name}
_DAY_TITLE = re.compile(r"(\d{4}) ([A-Z][a-z]+) (\d{1,2})")
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}")
_ISO_IN_PARENS = re.compile(r"\((\d{4}-\d{2}-\d{2})\)")
_WS = re.compile(r"\s+")
_EMPTY_PARENS = re.compile(r"\(\s*(?:[,;/]\s*)*\)")
_LEFTOVER = re.compile(r"\[\[|\]\]|\{\{|\}\}|''|<\s*/?\s*[A-Za-z][^<>]*>")
_LINK_TRAIL = re.compile(r"[a-z]+")
_WRAPPER_TEXT = re.compile(r"\{\{\s*current[ _]events\s*\|", re.I)
_LAYOUT_LINE = re.compile(r"\|\}|\{\|.*|\|-.*|(?:__[A-Z]+__\s*)+")
_NON_LINK_NS = ("file:", "image:", "media:", "category:")
_DROPPED_TAGS = {"ref", "references", "style", "script", "gallery", "templatestyles"}
_BLOCK_TAGS = {"div", "center", "blockquote", "section"}
_HIDDEN_CLASSES = {"reference", "mw-ref", "noprint", "mw-editsection", "mw-cite-backlink", "sortkey"}
_HIDDEN_TAGS = {"style", "script", "link", "meta", "noscript"}


@dataclass(frozen=True)
class Event:
    date: str  # ISO "YYYY-MM-DD"
    category: str  # the bold category line it sits under, "" if none
    stories: tuple[str, ...]  # text of the parent bullets, outermost first
    summary: str  # plain text of the leaf bullet, source links removed, whitespace normalised
    entities: tuple[str, ...]  # anchor texts of the summary's wiki links, in order, deduplicated
    entity_links: tuple[str, ...]  # their normalised link targets (same order/length as entities)
    urls: tuple[str, ...]  # external (source) links of the leaf bullet, in order, deduplicated
    origin: str  # "wikitext" or "html"
    location: str  # "<file>:<page title or day id>:<n>" (n = index of the leaf bullet in that day)

    @property
    def event_id(self) -> str:
        return f"{self.date}-{stable_id(self.date, self.category, *self.stories, self.summary, length=12)}"

    def query(self) -> list[str]:
        return [q for q in (self.category, *self.stories) if q]


# ---------------------------------------------------------------- shared: text, targets, dates, events


def _ws(text: str) -> str:
    return _WS.sub(" ", text).strip()


def clean_text(text: str) -> str:
    """Text as the parser leaves it: whitespace normalised, the empty brackets that removed source links
    leave behind ("( )", "(, )") removed. Summaries, stories and categories given to the renderers must
    be fixed points of this function."""
    return _ws(_EMPTY_PARENS.sub(" ", _ws(text)))


_clean = clean_text


def _has_leftover_markup(text: str) -> bool:
    return _LEFTOVER.search(text) is not None


def normalise_target(target: str) -> str:
    """A link target as MediaWiki resolves it: fragment dropped, underscores -> spaces, first letter
    upper-case (``"syrian_civil war#2019"`` -> ``"Syrian civil war"``); "" for a same-page link."""
    text = _ws(target.split("#", 1)[0].replace("_", " ")).lstrip(":").strip()
    return text[:1].upper() + text[1:]


def _iso(year: int, month: int, day: int) -> str | None:
    try:
        return Date(year, month, day).isoformat()
    except ValueError:
        return None


def _day_name(text: str) -> tuple[bool, str | None]:
    """(looks like "2019 January 1", its ISO date or None when it is not a calendar date)."""
    m = _DAY_TITLE.fullmatch(_ws(text.replace("_", " ")))
    if not m or m.group(2) not in _MONTHS:
        return False, None
    return True, _iso(int(m.group(1)), _MONTHS[m.group(2)], int(m.group(3)))


def date_from_title(title: str) -> str | None:
    """``"Portal:Current events/2019 January 1"`` (or with underscores) -> ``"2019-01-01"``; None for any
    other title (the portal itself, the monthly overviews, subpages, impossible dates)."""
    name = title.replace("_", " ")
    if not name.startswith(TITLE_PREFIX):
        return None
    return _day_name(name[len(TITLE_PREFIX) :])[1]


def _check_iso(date: str, where: str) -> str:
    if not (isinstance(date, str) and _ISO.fullmatch(date)) or _iso(*map(int, date.split("-"))) is None:
        raise ValueError(f"{where}: date {date!r} is not an ISO calendar date (YYYY-MM-DD)")
    return date


@dataclass
class _Bullet:
    depth: int
    text: str
    entities: list[tuple[str, str]]
    urls: list[str]
    malformed: bool


@dataclass(frozen=True)
class _Category:
    text: str


@dataclass
class _Collector:
    """Text, entities (anchor, target) and source URLs gathered while walking one bullet."""

    parts: list[str] = field(default_factory=list)
    entities: list[tuple[str, str]] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)
    malformed: bool = False

    def entity(self, anchor: str, target: str) -> None:
        anchor, target = _ws(anchor), normalise_target(target)
        if anchor and target and all(a != anchor for a, _ in self.entities):
            self.entities.append((anchor, target))

    def url(self, url: str) -> None:
        url = url.strip()
        if url and url not in self.urls:
            self.urls.append(url)

    def bullet(self, depth: int) -> _Bullet:
        text = _clean("".join(self.parts))
        bad = self.malformed or _has_leftover_markup(text)
        return _Bullet(depth, text, list(self.entities), list(self.urls), bad)


@dataclass
class _Day:
    date: str
    origin: str
    location: str
    tally: Tally
    seen: set[str]
    final_drop: str | None = None  # set: leaves that would be kept are dropped with this reason


def _events_from_items(items: Sequence[_Bullet | _Category], day: _Day) -> list[Event]:
    events: list[Event] = []
    stack: list[_Bullet] = []
    category, n = "", 0
    for i, item in enumerate(items):
        if isinstance(item, _Category):
            category, stack = item.text, []
            continue
        while stack and stack[-1].depth >= item.depth:
            stack.pop()
        if item.depth > (stack[-1].depth if stack else 0) + 1:
            day.tally.counts["bullets:depth_jump"] += 1
        nxt = items[i + 1] if i + 1 < len(items) else None
        if isinstance(nxt, _Bullet) and nxt.depth > item.depth:
            _open_story(item, stack, day.tally)
            continue
        event = _leaf(item, stack, category, f"{day.location}:{n}", day)
        n += 1
        if event is not None:
            events.append(event)
    return events


def _open_story(item: _Bullet, stack: list[_Bullet], tally: Tally) -> None:
    if not item.text:
        tally.counts["bullets:empty_story"] += 1
    if item.urls:
        tally.counts["bullets:story_with_source"] += 1
    stack.append(item)


def _leaf(item: _Bullet, stack: Sequence[_Bullet], category: str, where: str, day: _Day) -> Event | None:
    tally = day.tally
    tally.counts["leaves"] += 1
    reason = None
    if item.malformed or any(b.malformed for b in stack):
        reason = "unbalanced_markup"
    elif not item.text:
        reason = "empty_summary"
    elif not item.urls:
        reason = "no_source_url"
    if reason:
        tally.drop(reason, where)
        return None
    event = Event(
        date=day.date,
        category=category,
        stories=tuple(b.text for b in stack if b.text),
        summary=item.text,
        entities=tuple(a for a, _ in item.entities),
        entity_links=tuple(t for _, t in item.entities),
        urls=tuple(item.urls),
        origin=day.origin,
        location=where,
    )
    if day.final_drop or event.event_id in day.seen:
        tally.drop(day.final_drop or "duplicate_event", where)
        return None
    day.seen.add(event.event_id)
    tally.counts["events"] += 1
    return event


# ---------------------------------------------------------------- wikitext


def _wt_walk(nodes: Sequence, col: _Collector) -> None:
    from mwparserfromhell import nodes as N

    prev = None
    for i, node in enumerate(nodes):
        if isinstance(node, N.Text):
            col.parts.append(node.value)
        elif isinstance(node, N.HTMLEntity):
            col.parts.append(node.normalize())
        elif isinstance(node, N.Wikilink):
            _wt_link(node, nodes[i + 1] if i + 1 < len(nodes) else None, col)
        elif isinstance(node, N.ExternalLink):
            if not node.brackets and isinstance(prev, N.Text) and prev.value.endswith("["):
                col.malformed = True  # "[http://x (Reuters)" never closed
            col.url(html_lib.unescape(str(node.url)))
        elif isinstance(node, N.Heading):
            _wt_walk(node.title.nodes, col)
        elif isinstance(node, N.Tag):
            _wt_tag(node, col)
        prev = node  # comments, templates, arguments: no text


def _wt_tag(node, col: _Collector) -> None:
    tag = str(node.tag).strip().lower()
    if tag in _DROPPED_TAGS or node.wiki_markup in ("*", "#", ":", ";"):
        return
    if tag == "br":
        col.parts.append(" ")
    elif tag == "nowiki":
        col.parts.append(html_lib.unescape(str(node.contents or "")))
    elif node.contents is not None:
        _wt_walk(node.contents.nodes, col)


def _wt_plain(wikicode) -> str:
    col = _Collector()
    _wt_walk(wikicode.nodes, col)
    return "".join(col.parts)


def _wt_link(node, following, col: _Collector) -> None:
    from mwparserfromhell import nodes as N

    title = _wt_plain(node.title)
    if title.strip().lower().startswith(_NON_LINK_NS):
        return  # an image or a category: not shown in the text
    anchor = _wt_plain(node.text) if node.text is not None else title.strip().lstrip(":")
    if not anchor.strip():
        anchor = title.strip().lstrip(":")  # an empty anchor ([[Foo|]]): the title is shown
    col.parts.append(anchor)
    if isinstance(following, N.Text):
        trail = _LINK_TRAIL.match(following.value)
        anchor += trail.group(0) if trail else ""
    col.entity(anchor, title)


def _wt_flat(nodes: Iterable) -> Iterator:
    """The nodes, with block tags spanning lines (``<div>\\n* ...\\n</div>``) replaced by their contents."""
    from mwparserfromhell import nodes as N

    for node in nodes:
        if (
            isinstance(node, N.Tag)
            and str(node.tag).strip().lower() in _BLOCK_TAGS
            and node.contents is not None
            and "\n" in str(node.contents)
        ):
            yield N.Text("\n")
            yield from _wt_flat(node.contents.nodes)
            yield N.Text("\n")
        else:
            yield node


def _wt_lines(nodes: Iterable) -> list[list]:
    from mwparserfromhell import nodes as N

    lines: list[list] = [[]]
    for node in _wt_flat(nodes):
        if not (isinstance(node, N.Text) and "\n" in node.value):
            lines[-1].append(node)
            continue
        first, *rest = node.value.split("\n")
        if first:
            lines[-1].append(N.Text(first))
        lines.extend([N.Text(piece)] if piece else [] for piece in rest)
    return lines


def _wt_markers(line: list) -> tuple[str, list]:
    from mwparserfromhell import nodes as N

    k = 0
    while k < len(line) and isinstance(line[k], N.Tag) and line[k].wiki_markup in ("*", "#", ":", ";"):
        k += 1
    return "".join(str(n.wiki_markup) for n in line[:k]), line[k:]


def _wt_bold_line(rest: list) -> bool:
    from mwparserfromhell import nodes as N

    shown = [n for n in rest if not isinstance(n, N.Comment) and not (isinstance(n, N.Text) and not n.value.strip())]
    return len(shown) == 1 and isinstance(shown[0], N.Tag) and str(shown[0].wiki_markup or "").startswith("'''")


def _wt_items(nodes: Iterable, location: str, tally: Tally) -> list[_Bullet | _Category]:
    items: list[_Bullet | _Category] = []
    for k, line in enumerate(_wt_lines(nodes), 1):
        markers, rest = _wt_markers(line)
        col = _Collector()
        _wt_walk(rest, col)
        where = f"{location}:line {k}"
        if markers and set(markers) == {"*"}:
            items.append(col.bullet(len(markers)))
        elif markers == ";" or (not markers and _wt_bold_line(rest)):
            text = _clean("".join(col.parts))
            if text:
                items.append(_Category(text))
        elif markers:
            tally.drop("malformed_bullet", where)
        else:
            _wt_other_line(_ws("".join(col.parts)), col, where, tally)
    return items


def _wt_other_line(text: str, col: _Collector, where: str, tally: Tally) -> None:
    if not text and not col.urls:
        return
    if _LAYOUT_LINE.fullmatch(text):
        tally.counts["lines:layout"] += 1
    else:
        tally.drop("stray_line", where)


def _wt_wrapper(code) -> tuple[object | None, list]:
    """(the content of the ``{{Current events|...|content=}}`` wrapper or None, the day templates)."""
    days = []
    for tpl in code.filter_templates(recursive=False):
        name = normalise_target(str(tpl.name))
        if name in ("Current events", "Current events header"):
            days.append(tpl)
            if name == "Current events" and tpl.has("content"):
                return tpl.get("content").value, days
    return None, days


def _wt_template_date(tpl) -> str | None:
    def param(*keys: str) -> str:
        for key in keys:
            if tpl.has(key):
                return _ws(str(tpl.get(key).value))
        return ""

    year, month, day = param("year", "1"), param("month", "2"), param("day", "3")
    month = str(_MONTHS.get(month, month))
    if not (year.isdigit() and month.isdigit() and day.isdigit()):
        return None
    return _iso(int(year), int(month), int(day))


def parse_day_wikitext(text: str, *, date: str, location: str, tally: Tally) -> list[Event]:
    """The events of one daily portal page (wikitext). ``location`` names the page (``"<file>:<title>"``);
    an event's location is ``"<location>:<n>"``, n the index of its leaf bullet in the day."""
    return _parse_day(text, date=date, location=location, tally=tally, seen=set())


def _parse_day(text: str, *, date: str, location: str, tally: Tally, seen: set[str]) -> list[Event]:
    import mwparserfromhell

    _check_iso(date, location)
    code = mwparserfromhell.parse(text)
    content, day_templates = _wt_wrapper(code)
    if content is None and any(_WRAPPER_TEXT.search(str(t)) for t in code.filter_text(recursive=False)):
        tally.drop("unbalanced_template", location)
        return []
    tally.counts["days"] += 1
    if any(_wt_template_date(t) not in (None, date) for t in day_templates):
        tally.counts["days:date_mismatch"] += 1
    if content is None:
        tally.counts["days:whole_page"] += 1
        nodes = code.nodes
    else:
        nodes = content.nodes
        _check_outside(code, location, tally)
    items = _wt_items(nodes, location, tally)
    if not any(isinstance(i, _Bullet) for i in items):
        tally.drop("empty_day", location)
        return []
    return _events_from_items(items, _Day(date, "wikitext", location, tally, seen))


def _check_outside(code, location: str, tally: Tally) -> None:
    from mwparserfromhell import nodes as N

    for node in code.nodes:
        if isinstance(node, N.Tag) and node.wiki_markup == "*":
            tally.drop("bullets_outside_wrapper", location)
            return


def _as_paths(paths) -> list[Path]:
    if isinstance(paths, (str, os.PathLike)):
        return [Path(paths)]
    return [Path(p) for p in paths]


def iter_dump_events(paths, tally: Tally, *, namespace: int = 100, title_prefix: str = TITLE_PREFIX) -> Iterator[Event]:
    """The events of every daily portal page in pages-articles dump files (read with
    :func:`wikiref.wiki.dump.iter_pages`; a truncated file raises its ``DumpError``)."""
    from wikiref.wiki.dump import iter_pages

    seen: set[str] = set()
    for path in _as_paths(paths):
        tally.counts["files"] += 1
        stats: Counter = Counter()
        try:
            for page in iter_pages(path, stats, namespaces=(namespace,)):
                yield from _dump_page(page, path, tally, seen, title_prefix)
        finally:
            for key, value in stats.items():
                tally.counts[f"dump:{key}"] += value


def _dump_page(page, path: Path, tally: Tally, seen: set[str], title_prefix: str) -> list[Event]:
    title = page.title.replace("_", " ")
    prefix = title_prefix.replace("_", " ")
    if not title.startswith(prefix):
        tally.counts["pages:other_title"] += 1
        return []
    is_day, date = _day_name(title[len(prefix) :])
    location = f"{path.name}:{page.title}"
    if not is_day:
        tally.counts["pages:not_a_day"] += 1
        return []
    if date is None:
        tally.drop("bad_date", location)
        return []
    return _parse_day(page.text, date=date, location=location, tally=tally, seen=seen)


# ---------------------------------------------------------------- HTML


def _classes(el) -> set[str]:
    return set((el.get("class") or "").split())


def _hidden(el) -> bool:
    if not isinstance(el.tag, str) or el.tag in _HIDDEN_TAGS or _classes(el) & _HIDDEN_CLASSES:
        return True
    return "display:none" in (el.get("style") or "").replace(" ", "").lower()


def _html_walk(el, col: _Collector) -> None:
    if el.text:
        col.parts.append(el.text)
    for child in el:
        if _hidden(child) or child.tag in ("ul", "ol"):
            pass
        elif child.tag == "br":
            col.parts.append(" ")
        elif child.tag == "a":
            _html_link(child, col)
        else:
            _html_walk(child, col)
        if child.tail:
            col.parts.append(child.tail)


def _html_link(a, col: _Collector) -> None:
    href = a.get("href") or ""
    if "nofollow" in (a.get("rel") or "").split() or "external" in _classes(a):
        col.url(href)
        return
    inner = _Collector()
    _html_walk(a, inner)
    anchor = "".join(inner.parts)
    col.parts.append(anchor)
    target = _wiki_target(href)
    if target and not target.lower().startswith(_NON_LINK_NS):
        col.entity(anchor, target)


def _wiki_target(href: str) -> str:
    parts = urlsplit(href)
    if parts.netloc not in ("", "en.wikipedia.org"):
        return ""
    if parts.path.startswith("/wiki/"):
        return unquote(parts.path[len("/wiki/") :])
    if parts.path == "/w/index.php":  # a red link
        return (parse_qs(parts.query).get("title") or [""])[0]
    return ""


def _html_text(el) -> str:
    col = _Collector()
    _html_walk(el, col)
    return _clean("".join(col.parts))


def _html_category(el) -> str | None:
    if el.tag == "div" and el.get("role") == "heading":
        return _html_text(el)
    if el.tag == "dl":
        dt = el.find("dt")
        return _html_text(dt) if dt is not None else None
    if el.tag == "p":
        bold = " ".join(_html_text(b) for b in el.findall("b"))
        text = _html_text(el)
        return text if text and text == _ws(bold) else None
    return None


def _sublists(li, tag: str = "ul") -> list:
    """The ``<ul>`` (``tag``) lists directly under bullet ``li`` (not inside a deeper bullet)."""
    out = []
    for ul in li.iterdescendants(tag):
        up = ul.getparent()
        while up is not li and up.tag not in ("li", "ul"):
            up = up.getparent()
        if up is li:
            out.append(ul)
    return out


def _html_list(ul, depth: int, items: list, where: str, tally: Tally) -> None:
    for child in ul:
        if not isinstance(child.tag, str):
            continue
        if child.tag == "li":
            col = _Collector()
            _html_walk(child, col)
            items.append(col.bullet(depth))
            for sub in _sublists(child):
                _html_list(sub, depth + 1, items, where, tally)
            for _ in _sublists(child, "ol"):
                tally.drop("malformed_bullet", where)
        elif child.tag == "ul":
            _html_list(child, depth + 1, items, where, tally)


def _html_items(description, where: str, tally: Tally) -> list[_Bullet | _Category]:
    items: list[_Bullet | _Category] = []
    if _ws(description.text or ""):
        tally.drop("stray_line", where)
    for child in description:
        if isinstance(child.tag, str) and not _hidden(child):
            _html_child(child, items, where, tally)
        if _ws(child.tail or ""):
            tally.drop("stray_line", where)
    return items


def _html_child(child, items: list, where: str, tally: Tally) -> None:
    category = _html_category(child)
    if category is not None:
        if category:
            items.append(_Category(category))
    elif child.tag == "ul":
        _html_list(child, 1, items, where, tally)
    elif child.tag == "ol":
        tally.drop("malformed_bullet", where)
    elif _html_text(child):
        tally.drop("stray_line", f"{where}:<{child.tag}>")


_CLASS_XPATH = "descendant::*[contains(concat(' ', normalize-space(@class), ' '), ' {} ')]"


def _by_class(el, name: str) -> list:
    return el.xpath(_CLASS_XPATH.format(name))


def _html_date(block, tally: Tally) -> tuple[str | None, bool]:
    """(the day's ISO date or None, whether some date text was there at all)."""
    found = []
    for el in _by_class(block, "bday") + _by_class(block, "dtstart"):
        found.append(_ws(el.text_content()))
    for el in _by_class(block, "summary"):
        found += _ISO_IN_PARENS.findall(el.text_content())
    iso = next((d for d in found if _ISO.fullmatch(d) and _iso(*map(int, d.split("-")))), None)
    is_day, from_id = _day_name(block.get("id") or "")
    if iso and from_id and iso != from_id:
        tally.counts["days:date_mismatch"] += 1
    return iso or from_id, bool(found) or is_day


def _decode(html: bytes | str, tally: Tally) -> bytes:
    if isinstance(html, str):
        return html.encode("utf-8")
    try:
        html.decode("utf-8")
    except UnicodeDecodeError:
        tally.counts["html:invalid_utf8"] += 1
    return html


def _looks_truncated(data: bytes) -> bool:
    head, tail = data[:4096].lower(), data.rstrip()[-16:].lower()
    return b"<html" in head and not tail.endswith(b"</html>")


def parse_month_html(html: bytes | str, *, location: str, tally: Tally) -> list[Event]:
    """The events of one monthly portal page as served (HTML, both day-block layouts). ``location`` names
    the file; an event's location is ``"<location>:<day id>:<n>"``."""
    return _parse_month(html, location=location, tally=tally, seen=set())


def _parse_month(html: bytes | str, *, location: str, tally: Tally, seen: set[str]) -> list[Event]:
    import lxml.html
    from lxml import etree

    data = _decode(html, tally)
    try:
        root = lxml.html.document_fromstring(data, parser=lxml.html.HTMLParser(encoding="utf-8"))
    except (etree.ParserError, etree.XMLSyntaxError, ValueError):
        tally.drop("broken_html", location)
        return []
    blocks = [
        b
        for b in _by_class(root, "vevent")
        if not b.xpath(_CLASS_XPATH.format("vevent").replace("descendant", "ancestor"))
    ]
    if not blocks:
        tally.drop("no_day_blocks", location)
        return []
    truncated = _looks_truncated(data)
    events: list[Event] = []
    for k, block in enumerate(blocks):
        final = "truncated_html" if truncated and k == len(blocks) - 1 else None
        events += _html_day(block, k, location, tally, seen, final)
    return events


def _html_day(block, k: int, location: str, tally: Tally, seen: set[str], final: str | None) -> list[Event]:
    date, had_date = _html_date(block, tally)
    day_id = block.get("id") or date or f"block {k}"
    where = f"{location}:{day_id}"
    if date is None:
        tally.drop("bad_date" if had_date else "day_without_date", where)
        return []
    tally.counts["days"] += 1
    descriptions = _by_class(block, "description")
    items = _html_items(descriptions[0], where, tally) if descriptions else []
    if not any(isinstance(i, _Bullet) for i in items):
        tally.drop("empty_day", where)
        return []
    return _events_from_items(items, _Day(date, "html", where, tally, seen, final))


def iter_html_events(paths, tally: Tally) -> Iterator[Event]:
    """The events of monthly portal pages saved as HTML files (read as bytes)."""
    seen: set[str] = set()
    for path in _as_paths(paths):
        tally.counts["files"] += 1
        yield from _parse_month(path.read_bytes(), location=path.name, tally=tally, seen=seen)


# ---------------------------------------------------------------- rendering (the STAND-IN portal)

_SAFE_URL = re.compile(r"https?://[A-Za-z0-9._~:/?#@!$&()*+,;=%-]+")
_UNLINKABLE = re.compile(r"[\[\]{}|<>#:&_'~]|^/|\s\s|^\s|\s$")
_WT_SPECIAL = re.compile(r"[\[\]{}|<>]|'(?=')|(?<=')'|~{3,}")  # links, templates, tags, bold/italic, signatures
_WT_ENTITY = re.compile(r"&(?=#?\w+;)")  # text that would read as an HTML entity
_WT_SCHEME = re.compile(r"(?<![A-Za-z])([A-Za-z]+):")  # "mailto:", "http:": the start of a bare link


def _char_refs(text: str) -> str:
    return "".join(f"&#{ord(c)};" for c in text)


def _wt_escape(text: str) -> str:
    """``text`` as wikitext that reads back as ``text`` (special characters as character references)."""
    from mwparserfromhell.definitions import URI_SCHEMES

    text = _WT_ENTITY.sub("&amp;", text)
    text = _WT_SPECIAL.sub(lambda m: _char_refs(m.group(0)), text)
    return _WT_SCHEME.sub(lambda m: m.group(1) + ("&#58;" if m.group(1).lower() in URI_SCHEMES else ":"), text)


def _check_event(event: Event, where: str) -> None:
    texts = [event.summary, *event.stories] + ([event.category] if event.category else [])
    for text in texts:
        if not text or _clean(text) != text or _has_leftover_markup(text):
            raise ValueError(f"{where}: {text!r} is empty, not normalised or holds wiki markup")
    if len(set(event.urls)) != len(event.urls):
        raise ValueError(f"{where}: the source URLs of an event must be distinct (has {event.urls!r})")
    for url in event.urls:
        if not _SAFE_URL.fullmatch(url):
            raise ValueError(f"{where}: URL {url!r} cannot be written as a source link")
    if len(event.entities) != len(event.entity_links) or len(set(event.entities)) != len(event.entities):
        raise ValueError(f"{where}: entities and entity_links must be parallel, entities distinct")
    for target in event.entity_links:
        if normalise_target(target) != target or re.search(r"[\[\]{}|<>#]", target) or ":" in target[:1]:
            raise ValueError(f"{where}: link target {target!r} is not a normalised page title")
        if target.lower().startswith(_NON_LINK_NS):
            raise ValueError(f"{where}: link target {target!r} is a file or category")


def check_renderable(event: Event) -> None:
    """Raise ValueError (saying why) unless the renderers can write ``event`` so that the parser reads it
    back unchanged: texts fixed points of :func:`clean_text` without wiki markup, normalised link targets,
    entities found in the summary in order, distinct writable URLs. For the STAND-IN builder: skip (and
    count) the events this rejects instead of failing a whole page."""
    where = f"event {event.date} {event.summary[:40]!r}"
    _check_event(event, where)
    _pieces(event, where)


def _pieces(event: Event, where: str) -> list[tuple[str, str | None]]:
    """The summary cut into (text, None) and (anchor, target) pieces, entities in order."""
    out: list[tuple[str, str | None]] = []
    pos = 0
    for anchor, target in zip(event.entities, event.entity_links, strict=True):
        if not anchor or _ws(anchor) != anchor:
            raise ValueError(f"{where}: entity {anchor!r} is empty or not whitespace-normalised")
        i = event.summary.find(anchor, pos)
        if i < 0:
            raise ValueError(f"{where}: entity {anchor!r} is not in the summary after position {pos}")
        out += [(event.summary[pos:i], None), (anchor, target)]
        pos = i + len(anchor)
    out.append((event.summary[pos:], None))
    return [(text, target) for text, target in out if text or target]


def _layout(events: Sequence[Event], where: str) -> Iterator[tuple[str, int, str, Event | None]]:
    """("category", 0, text, None) / ("story", depth, text, None) / ("leaf", depth, "", event) in order."""
    category, open_stories, seen = None, (), set()
    for i, event in enumerate(events):
        at = f"{where}: event {i}"
        _check_event(event, at)
        if event.event_id in seen:
            raise ValueError(f"{at}: duplicate event {event.event_id}")
        seen.add(event.event_id)
        if event.category != (category or ""):
            if not event.category:
                raise ValueError(f"{at}: events without a category must come before the categories of a day")
            category, open_stories = event.category, ()
            yield "category", 0, event.category, None
        keep = 0
        while keep < min(len(open_stories), len(event.stories)) and open_stories[keep] == event.stories[keep]:
            keep += 1
        for depth, story in enumerate(event.stories[keep:], keep + 1):
            yield "story", depth, story, None
        yield "leaf", len(event.stories) + 1, "", event
        open_stories = event.stories


def _linkable(text: str) -> bool:
    """Whether ``text`` can be written as ``[[text]]`` and read back as the same anchor."""
    return bool(text) and not _UNLINKABLE.search(text)


def _wt_link_markup(anchor: str, target: str) -> str:
    if _linkable(anchor) and normalise_target(anchor) == target:
        return f"[[{anchor}]]"
    return f"[[{_wt_amp(target)}|{_wt_escape(anchor)}]]"


def _source_label(url: str) -> str:
    host = urlsplit(url).netloc
    return f"({host.removeprefix('www.') or 'source'})"


def _wt_leaf(event: Event, where: str) -> str:
    out = []
    pieces = _pieces(event, where)
    for i, (text, target) in enumerate(pieces):
        if target is None:
            out.append(_wt_escape(text))
            continue
        out.append(_wt_link_markup(text, target))
        after = pieces[i + 1][0] if i + 1 < len(pieces) else ""
        if _LINK_TRAIL.match(after):
            out.append("<nowiki/>")  # no link trail: the next letters are not part of the anchor
    for url in event.urls:
        out.append(f" [{_wt_amp(url)} {_source_label(url)}]")
    return "".join(out)


def _wt_amp(text: str) -> str:
    """A URL or link target that would read back changed (``&amp;`` in it) with its ``&`` escaped."""
    return text.replace("&", "&amp;") if html_lib.unescape(text) != text else text


def render_day_wikitext(date: str, events: Sequence[Event]) -> str:
    """A daily portal page (the ``{{Current events|...|content=}}`` wrapper layout) holding ``events``
    in order; :func:`parse_day_wikitext` gives them back. Raises ValueError for events it cannot write."""
    _check_iso(date, "render_day_wikitext")
    for i, event in enumerate(events):
        if event.date != date:
            raise ValueError(f"render_day_wikitext: event {i} has date {event.date}, not {date}")
    year, month, day = map(int, date.split("-"))
    lines = [
        f"{{{{Current events|year={year}|month={month:02d}|day={day}|content=",
        "<!-- All news items below this line -->",
    ]
    for kind, depth, text, event in _layout(events, f"render_day_wikitext {date}"):
        if kind == "category":
            lines.append("'''" + _wt_escape(text).replace("'", "&#39;") + "'''")
        elif kind == "story":
            lines.append("*" * depth + " " + (f"[[{text}]]" if _linkable(text) else _wt_escape(text)))
        else:
            lines.append("*" * depth + " " + _wt_leaf(event, f"{date}: {event.summary[:40]!r}"))
    lines += ["<!-- All news items above this line -->}}", ""]
    return "\n".join(lines)


def _h(tag: str, parent=None, text: str | None = None, **attrs: str):
    from lxml import etree

    attrs = {k.rstrip("_").replace("_", "-"): v for k, v in attrs.items()}
    el = etree.Element(tag, attrs) if parent is None else etree.SubElement(parent, tag, attrs)
    el.text = text
    return el


def _append_text(el, text: str) -> None:
    if len(el):
        el[-1].tail = (el[-1].tail or "") + text
    else:
        el.text = (el.text or "") + text


def _wiki_href(target: str) -> str:
    return "/wiki/" + quote(target.replace(" ", "_"), safe="/:(),'!*;@$-.~")


def _html_leaf(li, event: Event, where: str) -> None:
    for text, target in _pieces(event, where):
        if target is None:
            _append_text(li, text)
        else:
            _h("a", li, text, href=_wiki_href(target), title=target)
    for url in event.urls:
        _append_text(li, " ")
        _h("a", li, _source_label(url), rel="nofollow", class_="external text", href=url)


def _html_story(li, text: str) -> None:
    if _linkable(text):
        _h("a", li, text, href=_wiki_href(text), title=text)
    else:
        li.text = text


def _html_bullets(description, events: Sequence[Event], layout: str, where: str) -> None:
    lists: list = []  # lists[d - 1]: the open <ul> of depth d (its last <li> is the open bullet)
    for kind, depth, text, event in _layout(events, where):
        if kind == "category":
            lists = []
            if layout == "div":
                _h("div", description, text, role="heading", style="margin-top:0.3em; font-weight:bold;")
            else:
                _h("dt", _h("dl", description), text)
            continue
        del lists[depth:]
        if len(lists) < depth:  # _layout never goes more than one level deeper
            lists.append(_h("ul", description if depth == 1 else lists[depth - 2][-1]))
        li = _h("li", lists[depth - 1])
        if kind == "story":
            _html_story(li, text)
        else:
            _html_leaf(li, event, where)


def _day_header(parent, iso: str, layout: str):
    d = Date.fromisoformat(iso)
    day_id = f"{d.year}_{calendar.month_name[d.month]}_{d.day}"
    label = f"{calendar.month_name[d.month]} {d.day}, {d.year}"
    weekday = calendar.day_name[d.weekday()]
    if layout == "div":
        block = _h("div", parent, role="region", aria_label=f"{calendar.month_name[d.month]} {d.day}", id=day_id)
        block.set("class", "current-events-main vevent")
        heading = _h("div", _h("div", block, class_="current-events-heading plainlinks"), role="heading")
        heading.set("class", "current-events-title")
        summary = _h("span", heading, label, class_="summary")
        hidden = _h("span", summary, " (", style="display:none")
        _h("span", hidden, iso, class_="bday dtstart published updated itvstart").tail = ")"
        hidden.tail = f" ({weekday})"
        _navbar(heading.getparent(), day_id, "ul")
        return _h("div", block, class_="current-events-content description")
    block = _h("table", parent, class_="vevent", id=day_id, style="width:100%; margin-bottom:0.5em;")
    head = _h("td", _h("tr", block))
    summary = _h("span", head, f"{label} (", class_="summary")
    _h("span", summary, iso, class_="bday dtstart published updated").tail = f") ({weekday})"
    _navbar(head, day_id, "span")
    return _h("td", _h("tr", block), class_="description")


def _navbar(parent, day_id: str, tag: str) -> None:
    """The edit/history/watch links of a day (external links outside ``.description``: never sources)."""
    bar = _h(tag, parent, class_="current-events-navbar editlink noprint")
    for action in ("edit", "history", "watch"):
        item = _h("li", bar) if tag == "ul" else bar
        href = f"https://en.wikipedia.org/w/index.php?title=Portal:Current_events/{day_id}&action={action}"
        _h("a", item, action, class_="external text", href=href).tail = " "


def render_month_html(year: int, month: int, events: Sequence[Event], layout: str) -> str:
    """A monthly portal page as served, days in date order (``layout``: "div" = the 2018+ ``div.vevent``
    blocks, "table" = the ``table.vevent`` blocks up to 2017); :func:`parse_month_html` gives the events
    back (in date order). Raises ValueError for events it cannot write."""
    from lxml import etree

    if layout not in LAYOUTS:
        raise ValueError(f"render_month_html: layout {layout!r} is not one of {LAYOUTS}")
    prefix = f"{year:04d}-{month:02d}-"
    for i, event in enumerate(events):
        _check_iso(event.date, f"render_month_html: event {i}")
        if not event.date.startswith(prefix):
            raise ValueError(f"render_month_html: event {i} has date {event.date}, not in {year}-{month:02d}")
    title = f"Portal:Current events/{calendar.month_name[month]} {year}"
    root = _h("html", lang="en")
    _h("meta", _h("head", root), charset="utf-8").addnext(_h("title", None, f"{title} - Wikipedia"))
    output = _h("div", _h("div", _h("body", root), id="mw-content-text"), class_="mw-parser-output")
    for iso in sorted({e.date for e in events}):
        day_events = [e for e in events if e.date == iso]
        _html_bullets(_day_header(output, iso, layout), day_events, layout, f"render_month_html {iso}")
    body = etree.tostring(root, method="html", encoding="unicode")
    return "<!DOCTYPE html>\n" + body + "\n"
