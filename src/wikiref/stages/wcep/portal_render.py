"""Writing portal pages (the STAND-IN portal of the offline sample): :class:`~wikiref.stages.wcep.events.Event`
-> a daily wikitext page (:func:`render_day_wikitext`) or a monthly HTML page (:func:`render_month_html`).

Parsing a rendered page (:mod:`~wikiref.stages.wcep.portal_wikitext`, :mod:`~wikiref.stages.wcep.portal_html`)
gives the events back (origin and location aside); texts must be as the parser leaves them
(:func:`~wikiref.stages.wcep.events.clean_text`, no wiki markup), else rendering raises ValueError
(:func:`check_renderable` checks one event).
"""

from __future__ import annotations

import calendar
import html as html_lib
import re
from collections.abc import Iterator, Sequence
from datetime import date as Date
from urllib.parse import quote, urlsplit

from wikiref.stages.wcep.events import (
    _LINK_TRAIL,
    _NON_LINK_NS,
    Event,
    _check_iso,
    _clean,
    _has_leftover_markup,
    _ws,
    normalise_target,
)

LAYOUTS = ("div", "table")
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
