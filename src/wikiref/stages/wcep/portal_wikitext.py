"""The daily portal pages (wikitext, from a pages-articles dump) -> :class:`~wikiref.stages.wcep.events.Event`.

The layouts read, counters and drops are described in :mod:`wikiref.stages.wcep.events`; this module walks
the page's wikitext (mwparserfromhell) into bullets and category lines.
"""

from __future__ import annotations

import html as html_lib
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from wikiref.stages.wcep.events import (
    _LINK_TRAIL,
    _MONTHS,
    _NON_LINK_NS,
    TITLE_PREFIX,
    Event,
    _as_paths,
    _Bullet,
    _Category,
    _check_iso,
    _clean,
    _Collector,
    _Day,
    _day_name,
    _events_from_items,
    _iso,
    _ws,
    normalise_target,
)

if TYPE_CHECKING:
    from wikiref.examples import Tally

_WRAPPER_TEXT = re.compile(r"\{\{\s*current[ _]events\s*\|", re.I)
_LAYOUT_LINE = re.compile(r"\|\}|\{\|.*|\|-.*|(?:__[A-Z]+__\s*)+")
_DROPPED_TAGS = {"ref", "references", "style", "script", "gallery", "templatestyles"}
_BLOCK_TAGS = {"div", "center", "blockquote", "section"}


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
