"""The Current Events Portal parser: daily wikitext pages of a dump and monthly HTML pages -> :class:`Event`.

WCEP (Gholipour Ghalandari et al., ACL 2020, §3) takes its summaries from the Wikipedia Current Events
Portal: every event is a *leaf* bullet (a bullet with no deeper child bullet) holding a short summary
with wiki links (the "entities" the paper matches in article titles and bodies) and external links to
its source articles. The bullets above a leaf are its *stories* ("Syrian civil war" > "Battle of X"),
the bold line above the list its *category* ("Armed conflicts and attacks").

This module holds the event record and what both parsers share (text cleaning, link targets, dates, the
bullets -> events step with its leaf drops); :mod:`~wikiref.stages.wcep.portal_wikitext` reads the daily
wikitext pages, :mod:`~wikiref.stages.wcep.portal_html` the monthly HTML pages and
:mod:`~wikiref.stages.wcep.portal_render` writes both layouts (the STAND-IN portal).

Layouts read
------------
Daily wikitext pages (namespace Portal = 100 of a pages-articles dump, title
``Portal:Current events/2019 January 1``; :func:`~wikiref.stages.wcep.portal_wikitext.parse_day_wikitext`, :func:`~wikiref.stages.wcep.portal_wikitext.iter_dump_events`):

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

Monthly HTML pages (``Portal:Current_events/January_2019`` as served; :func:`~wikiref.stages.wcep.portal_html.parse_month_html`,
:func:`~wikiref.stages.wcep.portal_html.iter_html_events`):

* day blocks ``table.vevent`` (up to 2017) and ``div.vevent`` (2018 on), their bullets and category
  lines inside the ``.description`` element (so the edit/history navbar is never read);
* the date from ``.bday`` / ``.dtstart`` (ISO), else the ``(YYYY-MM-DD)`` of the ``.summary`` line,
  else the block id (``2019_January_1``);
* categories ``<p><b>..</b></p>``, ``<div role="heading">..</div>``, ``<dl><dt>..</dt></dl>``;
* in a bullet: links with ``rel=nofollow`` or class ``external`` are the sources (removed from the
  text), ``/wiki/`` links (and red links ``/w/index.php?title=``) the entities, ``sup.reference``,
  ``style``, ``noprint`` and ``display:none`` elements are not text.

Both layouts give the same :class:`Event` for the same content; :func:`~wikiref.stages.wcep.portal_render.render_day_wikitext` and
:func:`~wikiref.stages.wcep.portal_render.render_month_html` write pages in these layouts (the STAND-IN portal of the offline sample), and
parsing a rendered page gives the events back (origin and location aside). An event without source URL
can be written too: it is read back as a ``no_source_url`` drop, as on the real portal. Texts must be as
the parser leaves them (:func:`clean_text`, no wiki markup), else rendering raises ValueError
(:func:`~wikiref.stages.wcep.portal_render.check_renderable` checks one event).

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
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date as Date
from pathlib import Path
from typing import TYPE_CHECKING

from wikiref.files import stable_id

if TYPE_CHECKING:
    from wikiref.examples import Tally

ORIGINS = ("wikitext", "html")
TITLE_PREFIX = "Portal:Current events/"

_MONTHS = {name: i for i, name in enumerate(calendar.month_name) if name}
_DAY_TITLE = re.compile(r"(\d{4}) ([A-Z][a-z]+) (\d{1,2})")
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}")
_WS = re.compile(r"\s+")
_EMPTY_PARENS = re.compile(r"\(\s*(?:[,;/]\s*)*\)")
_LEFTOVER = re.compile(r"\[\[|\]\]|\{\{|\}\}|''|<\s*/?\s*[A-Za-z][^<>]*>")
_LINK_TRAIL = re.compile(r"[a-z]+")
_NON_LINK_NS = ("file:", "image:", "media:", "category:")


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


def _as_paths(paths) -> list[Path]:
    if isinstance(paths, (str, os.PathLike)):
        return [Path(paths)]
    return [Path(p) for p in paths]
