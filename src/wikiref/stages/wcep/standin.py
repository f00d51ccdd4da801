"""A STAND-IN Current Events Portal, source archive and CC-NEWS archive, built from the Wikipedia sample.

No portal page, news article or Common Crawl file is reachable offline, so the sample runs WCEP on data
in the exact input layouts, built from the articles of the sample dump and labelled STAND-IN everywhere:

* **Events.** Each article with enough body text gives up to ``EVENTS_PER_ARTICLE`` events, one per body
  section (first sections of all articles, then second sections, so one day's events are about different
  articles): summary = the first sentence(s) of the section (spaCy, up to ``MAX_SUMMARY_WORDS`` words),
  category = one of the portal's categories (seeded per article), story path = [article title] and, for
  about half of the events, [article title, section]; entities = the titles of sample articles that
  appear in the summary (as the editors' wiki links would). Events are dealt to consecutive days from
  :data:`START` (``EVENTS_PER_DAY`` a day). A seeded share has no source URL (the parser drops them).
* **Portal pages.** Days of December 2017 form a monthly HTML page in the ``table.vevent`` layout, the
  first days of January 2018 one in the ``div.vevent`` layout, every later day a daily wikitext page
  ``Portal:Current events/2018 January 11`` in a pages-articles dump (namespace 100), plus the month's
  overview page (not a day; counted by the parser). The last HTML day is also a wikitext page, so the
  parser's de-duplication of the two inputs runs.
* **Sources** (``sources.warc.gz``): one or two per event, a page made of the section's other paragraphs
  (then neighbouring sections) with a publication date in its ``<meta>``; a seeded share of the URLs is
  left out of the archive (a counted fetch failure).
* **CC-NEWS** (``ccnews/CC-NEWS-<date>.warc.gz``, one file per ``DAYS_PER_WARC`` days): per event a
  seeded number of related pages (other windows of the same article, published within a day of the
  event, some two days away: outside the classifier's window) and per day a few unrelated pages (other
  articles); WARC-Date = the day after publication, as a news crawler would fetch them.

Every page carries a visible STAND-IN notice in ``<header>`` (which the extractor drops) and every WARC
record ``WARC-Wikiref-Standin: true``. ``NOTICE.txt`` starts with ``STAND-IN``; ``MANIFEST.json`` lists files,
sha256 and counts. Same params + seed -> the same bytes.
"""

from __future__ import annotations

import bz2
import datetime as dt
import html
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from wikiref import layout
from wikiref.files import sha256_file, stable_id, write_bytes, write_json, write_text

NOTICE = "NOTICE.txt"
NOTE = (
    "STAND-IN: these Current Events Portal pages, source articles and CC-NEWS records are NOT real. "
    "`wikiref wcep standin` built them from Wikipedia articles of the offline sample (event summaries = "
    "first sentences of article sections, sources and news pages = other paragraphs of the same articles), "
    "in the real input layouts, so the WCEP builder runs offline. Results computed on them are NOT "
    "comparable to the paper's (text: Wikipedia, CC BY-SA)."
)
CATEGORIES = (
    "Armed conflicts and attacks",
    "Arts and culture",
    "Business and economy",
    "Disasters and accidents",
    "Health and environment",
    "International relations",
    "Law and crime",
    "Politics and elections",
    "Science and technology",
    "Sports",
)
START = dt.date(2017, 12, 22)  # December 2017: table.vevent; January 2018: div.vevent, then wikitext
HTML_DIV_UNTIL = dt.date(2018, 1, 10)  # last day on the div.vevent month page (also a wikitext page)
EVENTS_PER_ARTICLE = 2
EVENTS_PER_DAY = 3
MIN_SECTION_PARAGRAPHS = 2
MAX_SUMMARY_WORDS = 45
MIN_SUMMARY_WORDS = 6
MAX_ENTITIES = 4
NO_SOURCE_SHARE = 0.05  # events without a source URL
TWO_SOURCES_SHARE = 0.25
UNARCHIVED_SHARE = 0.05  # source URLs missing from the archive
SOURCE_TOKENS = 300
RELATED_MAX = 12  # related CC-NEWS pages per event: uniform in 0..RELATED_MAX
UNRELATED_PER_DAY = 4
DAYS_PER_WARC = 10
SOURCE_HOST = "news.standin.wikiref.invalid"
_MARKUP = re.compile(r"\[\[|\]\]|\{\{|\}\}|''|<[A-Za-z/]")  # what a portal line cannot hold as plain text
CCNEWS_HOSTS = ("wire.standin.wikiref.invalid", "daily.standin.wikiref.invalid", "times.standin.wikiref.invalid")


@dataclass(frozen=True)
class _Article:
    page_id: int
    title: str
    sections: tuple[tuple[str, tuple[str, ...]], ...]  # (section path "A > B", paragraphs)


def _fraction(*parts: object) -> float:
    return int(stable_id(*map(str, parts), length=12), 16) / float(16**12)


def _pick(seq, *parts: object):
    return seq[int(_fraction(*parts) * len(seq))]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "x"


def _words(text: str) -> int:
    return len(text.split())


def _window(paragraphs: list[str], target: int) -> list[str]:
    out, n = [], 0
    for p in paragraphs:
        if n >= target:
            break
        out.append(p)
        n += _words(p)
    return out


def _page(url: str, title: str, paragraphs: list[str], published: str, article: str) -> bytes:
    esc = html.escape
    body = "\n".join(f"<p>{esc(p)}</p>" for p in paragraphs)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{esc(title)}</title>\n"
        f'<meta property="article:published_time" content="{published}T08:00:00+00:00">\n'
        '<meta name="wikiref-standin" content="true">\n</head>\n<body>\n'
        f"<header><p>STAND-IN PAGE built by wikiref wcep standin from the Wikipedia article "
        f"&ldquo;{esc(article)}&rdquo;; not a news article.</p></header>\n"
        f"<article>\n<h1>{esc(title)}</h1>\n{body}\n</article>\n</body>\n</html>\n"
    ).encode()


def _read_articles(dump_path: Path, collect: Mapping, max_articles: int, stats: Counter) -> list[_Article]:
    from wikiref.wiki.dump import iter_pages
    from wikiref.wiki.statements import StatementConfig, parse_article

    cfg = StatementConfig.from_params(collect)
    out = []
    for page in iter_pages(dump_path, Counter()):
        stats["articles_read"] += 1
        art = parse_article(page.title, page.text, cfg, Counter())
        sections = tuple(
            (" > ".join(s.query[1:]) or art.title, tuple(p.strip() for p in s.paragraphs if p.strip()))
            for s in art.sections[1:]
            if not s.skipped
        )
        sections = tuple(s for s in sections if s[1])
        if sum(len(s[1]) >= MIN_SECTION_PARAGRAPHS for s in sections) == 0:
            stats["skipped:short_sections"] += 1
            continue
        out.append(_Article(page.page_id, art.title, sections))
        if max_articles and len(out) >= max_articles:
            break
    return out


def _entities(summary: str, titles: list[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    found = []
    for t in titles:
        m = re.search(rf"(?<!\w){re.escape(t)}(?!\w)", summary)
        if m:
            found.append((m.start(), t))
    found.sort()
    kept: list[str] = []
    end = -1
    for start, t in found:  # no overlapping links, as in wikitext
        if start > end and len(kept) < MAX_ENTITIES:
            kept.append(t)
            end = start + len(t)
    return tuple(kept), tuple(kept)


def _date(i: int) -> dt.date:
    return START + dt.timedelta(days=i)


def _summary(sents: list[str]) -> str:
    """The first sentence(s) of a section, up to ``MAX_SUMMARY_WORDS`` words (stopping at 12 or more)."""
    summary = ""
    for s in sents:
        s = " ".join(s.split())
        if summary and _words(summary) + _words(s) > MAX_SUMMARY_WORDS:
            break
        summary = f"{summary} {s}".strip()
        if _words(summary) >= 12:
            break
    return summary


def _event(a: _Article, i: int, sents: list[str], day: dt.date, titles: list[str], seed: int, stats: Counter):
    """The event of section ``i`` of article ``a`` on ``day``, or None (counted) when its summary is
    unusable or the portal parser would not read it back unchanged."""
    from wikiref.stages.wcep.events import Event, clean_text
    from wikiref.stages.wcep.portal_render import check_renderable

    summary = clean_text(_summary(sents))  # as the parser will read it back (empty brackets dropped...)
    bad = clean_text(summary) != summary or _MARKUP.search(summary)
    if not summary or bad or not MIN_SUMMARY_WORDS <= _words(summary) <= 2 * MAX_SUMMARY_WORDS:
        stats["skipped:no_summary"] += 1
        return None
    section = clean_text(a.sections[i][0].split(" > ")[-1])
    stories = (
        (a.title, section) if _fraction(seed, "substory", a.page_id, i) < 0.5 and section != a.title else (a.title,)
    )
    if _fraction(seed, "nosource", a.page_id, i) < NO_SOURCE_SHARE:
        urls: tuple[str, ...] = ()
    else:
        k = 2 if _fraction(seed, "two", a.page_id, i) < TWO_SOURCES_SHARE else 1
        urls = tuple(f"https://{SOURCE_HOST}/{day.isoformat()}/{_slug(a.title)}-{_slug(section)}-{j}" for j in range(k))
    ents, links = _entities(summary, titles)
    ev = Event(
        date=day.isoformat(),
        category=_pick(CATEGORIES, seed, "category", a.page_id),
        stories=stories,
        summary=summary,
        entities=ents,
        entity_links=links,
        urls=urls,
        origin="wikitext",
        location="",
    )
    try:
        check_renderable(ev)  # text the portal parser would not give back unchanged: not an event
    except ValueError:
        stats["skipped:not_renderable"] += 1
        return None
    return ev


def _events(articles: list[_Article], seed: int, nlp, stats: Counter) -> list[tuple]:
    """(event, article, section index) of every kept event, in day order."""
    from wikiref.text import split_sentences

    titles = sorted({a.title for a in articles}, key=lambda t: (-len(t), t))
    # The k-th eligible section of every article, then the (k+1)-th...: events of one day come from
    # different articles, so the classifier's same-date negatives are other topics, as on the portal.
    eligible = [
        [i for i, (_, paras) in enumerate(a.sections) if len(paras) >= MIN_SECTION_PARAGRAPHS][:EVENTS_PER_ARTICLE]
        for a in articles
    ]
    picks = [(a, secs[k]) for k in range(EVENTS_PER_ARTICLE) for a, secs in zip(articles, eligible) if k < len(secs)]
    firsts = [a.sections[i][1][0] for a, i in picks]
    plans = []
    for (a, i), sents in zip(picks, split_sentences(nlp, firsts, 64)):
        ev = _event(a, i, sents, _date(len(plans) // EVENTS_PER_DAY), titles, seed, stats)
        if ev is None:
            continue
        plans.append((ev, a, i))
        stats["events"] += 1
        stats["events_without_source"] += not ev.urls
    return plans


def _write_portal(out: Path, events: list, stats: Counter) -> dict[str, list]:
    """Two HTML months, then daily wikitext pages in a dump; returns the events by day."""
    from wikiref.stages.wcep.portal_render import render_day_wikitext, render_month_html

    by_day: dict[str, list] = {}
    for ev in events:
        by_day.setdefault(ev.date, []).append(ev)
    html_dir = out / layout.WCEP_STANDIN_HTML
    dec = [e for e in events if e.date < "2018-01-01"]
    jan = [e for e in events if "2018-01-01" <= e.date <= HTML_DIV_UNTIL.isoformat()]
    if dec:
        write_text(html_dir / "December_2017.html", render_month_html(2017, 12, dec, "table"))
    if jan:
        write_text(html_dir / "January_2018.html", render_month_html(2018, 1, jan, "div"))
    wikitext_days = sorted(d for d in by_day if d >= HTML_DIV_UNTIL.isoformat())
    stats["html_days"] = len({e.date for e in dec + jan})
    stats["wikitext_days"] = len(wikitext_days)
    pages = []
    for d in wikitext_days:
        day = dt.date.fromisoformat(d)
        title = f"Portal:Current events/{day.year} {day.strftime('%B')} {day.day}"
        pages.append((title, 100, render_day_wikitext(d, by_day[d])))
    if wikitext_days:
        first = dt.date.fromisoformat(wikitext_days[0])
        pages.append((f"Portal:Current events/{first.strftime('%B')} {first.year}", 100, "{{Current events month}}\n"))
    _write_dump(out / layout.WCEP_STANDIN_PORTAL_DUMP, pages)
    return by_day


def _event_pages(plans: list[tuple], seed: int, stats: Counter) -> tuple[list, list]:
    """(source pages, related CC-NEWS pages) of the events, each (url, title, paragraphs, day, article)."""
    sources, ccnews = [], []
    for ev, a, i in plans:
        section, paras = a.sections[i]
        others = [p for j, (_, ps) in enumerate(a.sections) if j != i for p in ps]
        for j, url in enumerate(ev.urls):
            if _fraction(seed, "unarchived", url) < UNARCHIVED_SHARE:
                stats["sources_unarchived"] += 1
                continue
            body = list(paras[1:]) + others if j == 0 else others[::-1] + list(paras[1:])
            page = _window(body, SOURCE_TOKENS)
            title = f"{a.title}: {section}" if j == 0 else f"{section} ({a.title})"
            sources.append((url, title, page, ev.date, a))
        # related CC-NEWS pages: other windows of the same article around the event's date
        n_related = int(_fraction(seed, "related", a.page_id, i) * (RELATED_MAX + 1))
        pool = list(paras) + others
        for k in range(n_related):
            offset = _pick((-1, 0, 0, 0, 1, 2, -2), seed, "offset", a.page_id, i, k)
            start = int(_fraction(seed, "start", a.page_id, i, k) * max(1, len(pool) - 1))
            page = _window(pool[start:] + pool[:start], SOURCE_TOKENS)
            day = dt.date.fromisoformat(ev.date) + dt.timedelta(days=offset)
            host = _pick(CCNEWS_HOSTS, seed, "host", a.page_id, i, k)
            url = f"https://{host}/{day.isoformat()}/{_slug(a.title)}-{_slug(section)}-report-{k}"
            ccnews.append((url, f"{a.title}: {pool[start].split('.')[0][:80]}", page, day.isoformat(), a))
            stats["ccnews_related"] += 1
            stats["ccnews_related_outside_window"] += abs(offset) > 1
    return sources, ccnews


def _unrelated_pages(articles: list[_Article], days: list[str], seed: int, stats: Counter) -> list:
    """A few CC-NEWS pages a day from other articles (not about that day's events)."""
    ccnews = []
    for d in days:
        for k in range(UNRELATED_PER_DAY):
            a = _pick(articles, seed, "unrelated", d, k)
            section, paras = _pick(a.sections, seed, "unrelated-section", d, k)
            host = _pick(CCNEWS_HOSTS, seed, "uhost", d, k)
            url = f"https://{host}/{d}/{_slug(a.title)}-{_slug(section)}-feature-{k}"
            ccnews.append((url, f"{section} ({a.title})", _window(list(paras), SOURCE_TOKENS), d, a))
            stats["ccnews_unrelated"] += 1
    return ccnews


def _write_archives(out: Path, origin: str, sources: list, ccnews: list, days: list[str], stats: Counter) -> None:
    """``sources.warc.gz`` and the CC-NEWS WARC files (one per ``DAYS_PER_WARC`` days from the first day)."""
    from wikiref.standin import Standin, write_standin_warc

    def standin_page(url, title, paras, published, a):
        return Standin(url, title, a.title, a.page_id, [], list(paras), sum(map(_words, paras)), 0)

    published = {}
    src_pages = []
    for url, title, paras, day, a in sorted(sources, key=lambda s: s[0]):
        src_pages.append(standin_page(url, title, paras, day, a))
        published[url] = day
    stats["source_pages"] = write_standin_warc(
        src_pages,
        out / layout.WCEP_STANDIN_SOURCES,
        origin,
        note=NOTE,
        render=lambda p: _page(p.url, p.title, p.paragraphs, published[p.url], p.article),
        software="wikiref wcep standin",
    )
    first_day = dt.date.fromisoformat(days[0]) if days else START
    groups: dict[int, list] = {}
    for item in ccnews:
        idx = max(0, (dt.date.fromisoformat(item[3]) - first_day).days) // DAYS_PER_WARC
        groups.setdefault(idx, []).append(item)
    for idx, items in sorted(groups.items()):
        stamp = (first_day + dt.timedelta(days=idx * DAYS_PER_WARC)).strftime("%Y%m%d")
        pages_ = []
        for url, title, paras, day, a in sorted(items, key=lambda s: s[0]):
            pages_.append(standin_page(url, title, paras, day, a))
            published[url] = day
        write_standin_warc(
            pages_,
            out / layout.WCEP_STANDIN_CCNEWS / f"CC-NEWS-{stamp}000000-{idx:05d}.warc.gz",
            origin,
            note=NOTE,
            render=lambda p: _page(p.url, p.title, p.paragraphs, published[p.url], p.article),
            software="wikiref wcep standin",
            warc_date=lambda p: f"{dt.date.fromisoformat(published[p.url]) + dt.timedelta(days=1)}T06:00:00Z",
        )


def build(
    dump_path: str | Path, out_dir: str | Path, *, seed: int, collect: Mapping, nlp, max_articles: int = 0
) -> dict:
    """Write the STAND-IN into ``out_dir`` (empty or a temporary folder the job swaps in) and return the
    manifest. ``collect``: the collect params (section handling of the dump reader); ``nlp``: the spaCy
    pipeline that cuts summaries into sentences."""
    out = Path(out_dir)
    stats: Counter = Counter()
    articles = _read_articles(Path(dump_path), collect, max_articles, stats)
    # events: (article, section index) in dump order, dealt to days
    plans = _events(articles, seed, nlp, stats)
    by_day = _write_portal(out, [ev for ev, _, _ in plans], stats)
    sources, ccnews = _event_pages(plans, seed, stats)
    days = sorted(by_day)
    ccnews += _unrelated_pages(articles, days, seed, stats)
    origin = f"the offline sample's Wikipedia dump ({Path(dump_path).name})"
    _write_archives(out, origin, sources, ccnews, days, stats)
    write_text(out / NOTICE, NOTE + "\n")
    manifest = {
        "standin": True,
        "note": NOTE,
        "seed": seed,
        "articles": len(articles),
        "days": len(days),
        "counts": dict(sorted(stats.items())),
        "files": {
            str(f.relative_to(out)): {"bytes": f.stat().st_size, "sha256": sha256_file(f)}
            for f in sorted(out.rglob("*"))
            if f.is_file()
        },
    }
    write_json(out / "MANIFEST.json", manifest)
    return manifest


def _write_dump(path: Path, pages: list[tuple[str, int, str]]) -> None:
    """A pages-articles dump (export-0.10) holding ``pages`` (title, namespace, wikitext), bz2; each page's
    one revision dated the day after its portal day."""
    from wikiref.wiki.dump import ExportPage, ExportRevision, export_xml

    out = []
    for n, (title, ns, text) in enumerate(pages, start=1):
        day = re.search(r"(\d{4}) (\w+) (\d+)$", title)
        stamp = "2019-01-01T00:00:00Z"
        if day:
            d = dt.datetime.strptime(" ".join(day.groups()), "%Y %B %d").date() + dt.timedelta(days=1)
            stamp = f"{d.isoformat()}T00:00:00Z"
        rev = ExportRevision(
            800000 + n, None, stamp, "wikiref-standin", "STAND-IN page built by wikiref wcep standin", text
        )
        out.append(ExportPage(900000 + n, title, ns, (rev,)))
    xml = export_xml(
        out, sitename="Wikipedia (STAND-IN)", generator="wikiref wcep standin", namespaces={0: "", 100: "Portal"}
    )
    # bz2 has no header timestamp: same pages, same bytes.
    write_bytes(path, bz2.compress(xml.encode("utf-8"), 9))
