"""The monthly portal pages as served (HTML, ``table.vevent`` and ``div.vevent`` day blocks) ->
:class:`~wikiref.stages.wcep.events.Event`.

The layouts read, counters and drops are described in :mod:`wikiref.stages.wcep.events`; this module walks
the day blocks (lxml) into bullets and category lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, unquote, urlsplit

from wikiref.stages.wcep import events as ev
from wikiref.stages.wcep.events import Event

if TYPE_CHECKING:
    from wikiref.examples import Tally

_ISO_IN_PARENS = re.compile(r"\((\d{4}-\d{2}-\d{2})\)")
_HIDDEN_CLASSES = {"reference", "mw-ref", "noprint", "mw-editsection", "mw-cite-backlink", "sortkey"}
_HIDDEN_TAGS = {"style", "script", "link", "meta", "noscript"}


def _classes(el) -> set[str]:
    return set((el.get("class") or "").split())


def _hidden(el) -> bool:
    if not isinstance(el.tag, str) or el.tag in _HIDDEN_TAGS or _classes(el) & _HIDDEN_CLASSES:
        return True
    return "display:none" in (el.get("style") or "").replace(" ", "").lower()


def _html_walk(el, col: ev._Collector) -> None:
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


def _html_link(a, col: ev._Collector) -> None:
    href = a.get("href") or ""
    if "nofollow" in (a.get("rel") or "").split() or "external" in _classes(a):
        col.url(href)
        return
    inner = ev._Collector()
    _html_walk(a, inner)
    anchor = "".join(inner.parts)
    col.parts.append(anchor)
    target = _wiki_target(href)
    if target and not target.lower().startswith(ev._NON_LINK_NS):
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
    col = ev._Collector()
    _html_walk(el, col)
    return ev._clean("".join(col.parts))


def _html_category(el) -> str | None:
    if el.tag == "div" and el.get("role") == "heading":
        return _html_text(el)
    if el.tag == "dl":
        dt = el.find("dt")
        return _html_text(dt) if dt is not None else None
    if el.tag == "p":
        bold = " ".join(_html_text(b) for b in el.findall("b"))
        text = _html_text(el)
        return text if text and text == ev._ws(bold) else None
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
            col = ev._Collector()
            _html_walk(child, col)
            items.append(col.bullet(depth))
            for sub in _sublists(child):
                _html_list(sub, depth + 1, items, where, tally)
            for _ in _sublists(child, "ol"):
                tally.drop("malformed_bullet", where)
        elif child.tag == "ul":
            _html_list(child, depth + 1, items, where, tally)


def _html_items(description, where: str, tally: Tally) -> list[ev._Bullet | ev._Category]:
    items: list[ev._Bullet | ev._Category] = []
    if ev._ws(description.text or ""):
        tally.drop("stray_line", where)
    for child in description:
        if isinstance(child.tag, str) and not _hidden(child):
            _html_child(child, items, where, tally)
        if ev._ws(child.tail or ""):
            tally.drop("stray_line", where)
    return items


def _html_child(child, items: list, where: str, tally: Tally) -> None:
    category = _html_category(child)
    if category is not None:
        if category:
            items.append(ev._Category(category))
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
        found.append(ev._ws(el.text_content()))
    for el in _by_class(block, "summary"):
        found += _ISO_IN_PARENS.findall(el.text_content())
    iso = next((d for d in found if ev._ISO.fullmatch(d) and ev._iso(*map(int, d.split("-")))), None)
    is_day, from_id = ev._day_name(block.get("id") or "")
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
    if not any(isinstance(i, ev._Bullet) for i in items):
        tally.drop("empty_day", where)
        return []
    return ev._events_from_items(items, ev._Day(date, "html", where, tally, seen, final))


def iter_html_events(paths, tally: Tally) -> Iterator[Event]:
    """The events of monthly portal pages saved as HTML files (read as bytes)."""
    seen: set[str] = set()
    for path in ev._as_paths(paths):
        tally.counts["files"] += 1
        yield from _parse_month(path.read_bytes(), location=path.name, tally=tally, seen=seen)
