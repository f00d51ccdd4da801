"""Benchmark: the WCEP stage's three heavy steps, each beside a fair baseline in the same run.

    python bench/wcep.py            # the three sections (< 5 min on 2 cores)
    python bench/wcep.py --quick    # smaller sizes (< 1 min)
    python bench/wcep.py --sections portal classifier

Input: the STAND-IN built from the sample dump by the stage's own jobs (``wcep.standin``, ``events``,
``sources``, ``ccnews``, with params.yaml's parameters, in a scratch folder): real Wikipedia sentences as
event summaries (categories, 1-2 level story paths, linked entities, 1-2 source URLs), source articles and
CC-NEWS candidate pages in the real input layouts. Nothing here is comparable to the paper's data; the
figures are throughputs, extrapolated to the paper's scale (10,200 events over the ~1,100 days of the
portal, 2016-08..2019-08; 2.39M candidate articles).

Sections (one JSON line each on stdout, human-readable lines on stderr):

``wcep_portal``
    The stand-in's events, re-dated and dealt to days (3, 9, 27 events a day; the portal averages ~9.3),
    rendered with ``events.render_day_wikitext`` (one daily page per day) and ``events.render_month_html``
    (one monthly page per 30 days, both layouts: ``div`` = div.vevent, ``table`` = table.vevent).
    Ours: ``parse_day_wikitext`` / ``parse_month_html``, events/s (best of --repeat passes). Baselines side
    by side: for HTML, the WCEP authors' approach (their ``step2_process_wcep_html.py``) written here with
    BeautifulSoup (``html.parser`` as they use it, and ``lxml``): ``table.vevent`` / ``div.vevent`` day
    blocks, date from the ``span.summary`` "(YYYY-MM-DD)", categories ``dl`` / ``div[role=heading]`` of the
    ``.description``, a ``li`` with a nested ``ul`` is a story (its own text), a leaf ``li`` an event
    (``rel=nofollow`` links = sources, removed from the text; ``/wiki/`` links = entities; leaves without a
    source are skipped, as our parser drops them); exit 1 if the events (date, category, stories, summary,
    entities, urls) of the two differ. For wikitext, the floor any parser pays:
    ``mwparserfromhell.parse(text).strip_code()`` of each page, ratio reported. Both parsers are also
    checked against the rendered events (round trip; exit 1 on a difference). Estimate: wall time for the
    paper's 10,200 events as ~1,100 daily pages or ~37 monthly pages on one core (page parsing only: the
    daily pages sit in the whole pages-articles dump, whose decompression ``bench/collect.py`` measures).

``wcep_classifier``
    The classifier trained by ``classifier.train`` on the stand-in's events and fetched sources; candidate
    days compressed so that ~9.3 events fall on a day (as on the portal; ~28 events in a +-1 day window)
    and the candidate pages copied (new URL and id) up to the paper's density (2.39M / 1,100 days).
    Ours: ``classifier.assign`` (bulk, per-day sparse products), articles/s and pairs/s at growing
    densities. Baseline side by side on the same candidates (a seeded subset): a per-pair loop a user
    would write: for each candidate, for each event within +-1 day, ``classifier.features`` (one
    ``vectorizer.transform`` of summary, title and body + entity matching), then one
    ``model.predict_proba`` over all rows, threshold and best event (ties: smallest event id). Exit 1 if a
    probability differs by more than 1e-9, a pair is scored by one side only, or an assignment differs.
    Estimate: hours for 2.39M candidates and 10,200 events, in total and per job for 1..16 shards.

``wcep_baselines``
    Clusters of WCEP-100 size built from the sample's real text (the collect parser's paragraphs of the
    dump's articles, spaCy sentences): 100 articles of up to 30 consecutive sentences (a tenth from the
    event's own article, the rest from other articles), reference = the first sentence(s) of that
    article (left out of the windows). Seconds per cluster of every method of ``baselines.METHODS``
    (tf-idf fitted on the sample's articles, as the evaluate job fits it on train; token caches emptied
    before each method: a cold start). Then ORACLE (MULTI) beside a straightforward greedy written here with
    ``rouge_score.rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True)`` on smaller clusters (10 articles,
    WCEP-10 size): exit 1 if any selection differs; speed ratio.

A last line ``{"bench": "wcep_summary", "ok": ...}``. Times are wall clock in one process (the steps are
single-threaded Python except scikit-learn's k-means and BLAS, which may use more cores); the machine may be
shared.
"""

from __future__ import annotations

import argparse
import calendar
import dataclasses
import json
import platform
import random
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from datetime import date, timedelta
from pathlib import Path

import numpy as np

from wikiref.benchmarks import best_of, stage_params
from wikiref.extractive import textrank

REPO = Path(__file__).resolve().parents[1]
PAPER_EVENTS = 10_200
PAPER_DAYS = 1_100  # daily portal pages 2016-08..2019-08
PAPER_MONTHS = 37
PAPER_CANDIDATES = 2_390_000
PAPER_TEST_CLUSTERS = 1_022
EVENT_FIELDS = ("date", "category", "stories", "summary", "entities", "urls")
TOL = 1e-9
START = date(2018, 1, 1)
_WS = re.compile(r"\s+")


def say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def emit(obj: dict) -> None:
    print(json.dumps(obj), flush=True)


# -- the stand-in, through the stage's own jobs ------------------------------------------------------


def build_standin(tmp: Path, articles: int) -> dict:
    """The stand-in portal, sources and CC-NEWS candidates (the stage's standin/events/sources/ccnews jobs)."""
    from pyarrow.parquet import read_table

    from wikiref import layout
    from wikiref.stages.sample import locate_gensim_dump
    from wikiref.stages.wcep import stage

    dump = tmp / "dump.xml.bz2"
    shutil.copyfile(locate_gensim_dump(), dump)
    p = stage_params("wcep", "standin")
    p["wcep"]["standin_articles"] = articles
    root = tmp / "standin"
    t0 = time.perf_counter()
    manifest = stage.standin(p, {"dump": dump}, {"dir": root})
    ep = stage_params("wcep", "events")
    ep["wcep"]["portal"].update(
        dump_paths=[str(root / layout.WCEP_STANDIN_PORTAL_DUMP)], html_paths=[str(root / layout.WCEP_STANDIN_HTML)]
    )
    stage.events(ep, {}, {"events": tmp / "events.parquet", "stats": tmp / "events.json"})
    sp = stage_params("wcep", "sources")
    sp["collect"]["fetch"]["cache_dir"] = str(tmp / "cache")
    sp["wcep"]["sources"]["warc_paths"] = [str(root / layout.WCEP_STANDIN_SOURCES)]
    stage.sources(sp, {"events": tmp / "events.parquet"}, {"sources": tmp / "sources.parquet", "stats": tmp / "s.json"})
    cp = stage_params("wcep", "ccnews")
    cp["wcep"]["ccnews"].update(paths=[str(root / layout.WCEP_STANDIN_CCNEWS)], shards=1)
    stage.ccnews(cp, {}, {"articles": tmp / "cc.parquet", "stats": tmp / "cc.json"}, shard=0)
    events = read_table(tmp / "events.parquet").to_pylist()
    src = {r["url"]: r for r in read_table(tmp / "sources.parquet").to_pylist()}
    records = []
    for e in events:  # the classifier's input, as the classify job builds it
        docs = [src[u] for u in e["urls"] if u in src and src[u]["ok"]]
        records.append(dict(e, sources=[{"url": d["url"], "title": d["title"], "text": d["text"]} for d in docs]))
    return {
        "events": events,
        "records": records,
        "candidates": read_table(tmp / "cc.parquet").to_pylist(),
        "articles": manifest["articles"],
        "seconds": time.perf_counter() - t0,
    }


# -- portal --------------------------------------------------------------------------------------------


def event_key(ev) -> tuple:
    """(date, category, stories, summary, entities, urls) of an Event, a row or a baseline's dict."""
    get = ev.get if isinstance(ev, dict) else lambda k: getattr(ev, k)
    return tuple(tuple(get(k)) if k in ("stories", "entities", "urls") else get(k) for k in EVENT_FIELDS)


def diff_events(ours, theirs, limit: int = 3) -> dict:
    """Compare two event lists (in order) on :data:`EVENT_FIELDS`: ``differing`` = positions whose keys
    differ plus the length difference; ``examples`` = the first differences (position, field, both values)."""
    a, b = [event_key(e) for e in ours], [event_key(e) for e in theirs]
    examples, differing = [], abs(len(a) - len(b))
    for i, (x, y) in enumerate(zip(a, b)):
        if x == y:
            continue
        differing += 1
        if len(examples) < limit:
            field = next(f for f, u, v in zip(EVENT_FIELDS, x, y) if u != v)
            k = EVENT_FIELDS.index(field)
            examples.append({"index": i, "field": field, "ours": x[k], "theirs": y[k]})
    if len(a) != len(b) and len(examples) < limit:
        examples.append({"index": min(len(a), len(b)), "field": "count", "ours": len(a), "theirs": len(b)})
    return {"compared": max(len(a), len(b)), "differing": differing, "examples": examples}


def _norm(text: str) -> str:
    return _WS.sub(" ", text).strip()


def _own_text(li) -> str:
    """A story bullet's text: the ``li`` without its nested lists."""
    parts = []
    for child in li.children:
        if getattr(child, "name", None) in ("ul", "ol"):
            continue
        parts.append(child.get_text() if getattr(child, "name", None) else str(child))
    return _norm("".join(parts))


def _bs4_bullets(li, day: str, category: str, stories: list[str], out: list[dict]) -> None:
    ul = li.find("ul")
    if ul is not None:  # a story: its own text, then its bullets
        text = _own_text(li)
        path = stories + [text] if text else stories
        for sub in ul.find_all("li", recursive=False):
            _bs4_bullets(sub, day, category, path, out)
        return
    urls, entities = [], []
    for a in li.find_all("a"):
        href = a.get("href") or ""
        if "nofollow" in (a.get("rel") or []):
            if href not in urls:
                urls.append(href)
            a.extract()  # a source link is not summary text
        elif href.startswith("/wiki/"):
            anchor = _norm(a.get_text())
            if anchor and anchor not in entities:
                entities.append(anchor)
    summary = _norm(li.get_text())
    if urls and summary:  # an event needs a source (the stage drops the others)
        out.append(
            {
                "date": day,
                "category": category,
                "stories": stories,
                "summary": summary,
                "entities": entities,
                "urls": urls,
            }
        )


def bs4_month_events(html: str, parser: str = "html.parser") -> list[dict]:
    """The events of a monthly portal page, the WCEP authors' way (BeautifulSoup), in our fields."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, parser)
    out: list[dict] = []
    for block in soup.find_all(["table", "div"], class_="vevent"):
        day = block.find("span", class_="summary").get_text().split("(")[1].split(")")[0].strip()
        desc = block.find(["td", "div"], class_="description")
        category = ""
        for el in desc.children:
            name = getattr(el, "name", None)
            if name == "dl" or (name == "div" and el.get("role") == "heading"):
                category = _norm(el.get_text())
            elif name == "ul":
                for li in el.find_all("li", recursive=False):
                    _bs4_bullets(li, day, category, [], out)
    return out


def event_pool(rows: list[dict]) -> list:
    """The stand-in's events as :class:`Event` objects, one per (category, stories, summary)."""
    from wikiref.stages.wcep.events import Event

    pool, seen = [], set()
    for r in rows:
        key = (r["category"], tuple(r["stories"]), r["summary"])
        if key in seen or not r["urls"]:
            continue
        seen.add(key)
        pool.append(
            Event(
                date=r["date"],
                category=r["category"],
                stories=tuple(r["stories"]),
                summary=r["summary"],
                entities=tuple(r["entities"]),
                entity_links=tuple(r["entity_links"]),
                urls=tuple(r["urls"]),
                origin="",
                location="",
            )
        )
    return pool


def deal(pool: list, day: date, k: int, per_day: int) -> list:
    """``per_day`` distinct pool events re-dated to ``day`` (the k-th day dealt), grouped by category and
    story as on the portal."""
    n = len(pool)
    chosen = [pool[(k * per_day + j) % n] for j in range(min(per_day, n))]
    chosen.sort(key=lambda e: (e.category, e.stories))
    return [dataclasses.replace(e, date=day.isoformat()) for e in chosen]


def wikitext_pages(pool: list, per_day: int, n_events: int) -> list[tuple[str, str, list]]:
    from wikiref.stages.wcep.portal_render import render_day_wikitext

    pages = []
    for k in range(max(1, round(n_events / per_day))):
        day = START + timedelta(days=k)
        evs = deal(pool, day, k, per_day)
        pages.append((day.isoformat(), render_day_wikitext(day.isoformat(), evs), evs))
    return pages


def month_pages(pool: list, per_day: int, n_events: int, days: int, layout: str) -> list[tuple[str, list]]:
    from wikiref.stages.wcep.portal_render import render_month_html

    pages, k = [], 0
    for m in range(max(1, round(n_events / (per_day * days)))):
        year, month = START.year + (START.month - 1 + m) // 12, (START.month - 1 + m) % 12 + 1
        evs = []
        for d in range(1, min(days, calendar.monthrange(year, month)[1]) + 1):
            evs += deal(pool, date(year, month, d), k, per_day)
            k += 1
        pages.append((render_month_html(year, month, evs, layout), evs))
    return pages


def bench_portal(pool: list, args) -> dict:
    import mwparserfromhell

    from wikiref.examples import Tally
    from wikiref.stages.wcep.portal_html import parse_month_html
    from wikiref.stages.wcep.portal_wikitext import parse_day_wikitext

    rows, ok = [], True
    # imports and first calls outside the timings
    (d, text, _), (html, _) = wikitext_pages(pool, 2, 2)[0], month_pages(pool, 2, 2, 1, "div")[0]
    parse_day_wikitext(text, date=d, location="warm-up", tally=Tally())
    parse_month_html(html, location="warm-up", tally=Tally())
    mwparserfromhell.parse(text).strip_code()
    for parser in args.bs4_parsers:
        bs4_month_events(html, parser)
    for per_day in args.per_day:
        pages = wikitext_pages(pool, per_day, args.portal_events)
        expected = [e for _, _, evs in pages for e in evs]

        def ours_wt(pages=pages):
            tally = Tally()
            return [e for d, text, _ in pages for e in parse_day_wikitext(text, date=d, location=d, tally=tally)]

        def floor(pages=pages):
            return [mwparserfromhell.parse(text).strip_code() for _, text, _ in pages]

        t_ours, got = best_of(ours_wt, args.repeat)
        t_floor, _ = best_of(floor, args.repeat)
        rt = diff_events(got, expected)
        ok &= rt["differing"] == 0
        n = len(expected)
        rows.append(
            {
                "layout": "wikitext",
                "events_per_day": per_day,
                "days_per_page": 1,
                "pages": len(pages),
                "events": n,
                "kb_per_page": round(sum(len(t.encode()) for _, t, _ in pages) / len(pages) / 1e3, 1),
                "ours_events_per_s": round(n / t_ours, 1),
                "ours_ms_per_page": round(1e3 * t_ours / len(pages), 3),
                "strip_code_events_per_s": round(n / t_floor, 1),
                "strip_code_ms_per_page": round(1e3 * t_floor / len(pages), 3),
                "ours_over_strip_code": round(t_ours / t_floor, 2),
                "roundtrip_differing": rt["differing"],
                **({"roundtrip_examples": rt["examples"]} if rt["differing"] else {}),
            }
        )
        say(
            f"[portal wikitext {per_day}/page] {n} events: ours {n / t_ours:.0f} events/s, "
            f"strip_code floor {n / t_floor:.0f} events/s (ours = {t_ours / t_floor:.2f}x the floor)"
        )
        for layout in ("div", "table"):
            pages = month_pages(pool, per_day, args.portal_events, args.days_per_month, layout)
            expected = [e for _, evs in pages for e in evs]

            def ours_html(pages=pages):
                tally = Tally()
                return [
                    e for i, (html, _) in enumerate(pages) for e in parse_month_html(html, location=str(i), tally=tally)
                ]

            t_ours, got = best_of(ours_html, args.repeat)
            n = len(expected)
            rt = diff_events(got, expected)
            row = {
                "layout": layout,
                "events_per_day": per_day,
                "days_per_page": args.days_per_month,
                "pages": len(pages),
                "events": n,
                "kb_per_page": round(sum(len(h.encode()) for h, _ in pages) / len(pages) / 1e3, 1),
                "ours_events_per_s": round(n / t_ours, 1),
                "ours_ms_per_page": round(1e3 * t_ours / len(pages), 3),
                "roundtrip_differing": rt["differing"],
                **({"roundtrip_examples": rt["examples"]} if rt["differing"] else {}),
            }
            ok &= rt["differing"] == 0
            for parser in args.bs4_parsers:

                def theirs(pages=pages, parser=parser):
                    return [e for html, _ in pages for e in bs4_month_events(html, parser)]

                t_bs4, base = best_of(theirs, args.repeat)
                d = diff_events(got, base)
                ok &= d["differing"] == 0
                tag = "bs4_" + parser.replace(".", "_")
                row.update(
                    {
                        f"{tag}_events_per_s": round(n / t_bs4, 1),
                        f"{tag}_ms_per_page": round(1e3 * t_bs4 / len(pages), 3),
                        f"{tag}_over_ours": round(t_bs4 / t_ours, 2),
                        f"{tag}_differing": d["differing"],
                        **({f"{tag}_examples": d["examples"]} if d["differing"] else {}),
                    }
                )
                say(
                    f"[portal {layout} {per_day}/day] {n} events: ours {n / t_ours:.0f} events/s, bs4 ({parser}) "
                    f"{n / t_bs4:.0f} events/s, {d['differing']} differing events"
                )
            rows.append(row)

    # paper scale: the size closest to the portal's mean events per day
    per_day = min(args.per_day, key=lambda k: abs(k - PAPER_EVENTS / PAPER_DAYS))
    est = {"events": PAPER_EVENTS, "days": PAPER_DAYS, "months": PAPER_MONTHS, "from_events_per_day": per_day}
    for r in rows:
        if r["events_per_day"] != per_day:
            continue
        lay = r["layout"]
        est[f"{lay}_ours_s"] = round(PAPER_EVENTS / r["ours_events_per_s"], 1)
        if lay == "wikitext":
            est["wikitext_strip_code_s"] = round(PAPER_EVENTS / r["strip_code_events_per_s"], 1)
        for parser in args.bs4_parsers if lay != "wikitext" else ():
            tag = "bs4_" + parser.replace(".", "_")
            est[f"{lay}_{tag}_s"] = round(PAPER_EVENTS / r[f"{tag}_events_per_s"], 1)
    est["note"] = (
        "page parsing on one core; reading the daily pages from a pages-articles dump means decompressing "
        "the whole dump (see bench/collect.py), which dominates"
    )
    differing = sum(r.get(k, 0) for r in rows for k in r if k.endswith("_differing"))
    return {
        "bench": "wcep_portal",
        "ok": ok,
        "pool_events": len(pool),
        "sizes": rows,
        "differing": differing,
        "paper_estimate": est,
    }


# -- classifier ----------------------------------------------------------------------------------------


def compress_days(records: list[dict], candidates: list[dict], factor: int) -> tuple[list[dict], list[dict]]:
    """Events and candidates with day d -> first + (d - first) // factor: ``factor`` times more events a day,
    candidates kept beside their events."""
    first = min(date.fromisoformat(r["date"]) for r in records)

    def f(iso: str) -> str:
        return (first + timedelta(days=(date.fromisoformat(iso) - first).days // factor)).isoformat()

    return [dict(r, date=f(r["date"])) for r in records], [dict(c, date=f(c["date"])) for c in candidates]


def copy_candidates(candidates: list[dict], copies: int) -> list[dict]:
    """The candidates and ``copies - 1`` copies of each (new id and URL, same text and date)."""
    out = list(candidates)
    for k in range(1, copies):
        out += [dict(c, article_id=f"{c['article_id']}~{k}", url=f"{c['url']}?copy={k}") for c in candidates]
    return out


def per_pair(model, events: list[dict], candidates: list[dict], window_days: int = 1) -> dict:
    """The straightforward scoring: ``{(article_id, event_id): probability}`` of every candidate with every
    event within ``window_days``, one ``features`` call per pair, one ``predict_proba`` over all rows.
    Same admission rules as ``assign``: parsable date, some text, URL not an event's source, first copy of
    an id."""
    from wikiref.stages.wcep.classifier import parse_day
    from wikiref.web.warc import normalise_url

    cited = {normalise_url(str(s.get("url") or "")) for e in events for s in e["sources"]} - {""}
    evs = sorted(events, key=lambda e: e["event_id"])
    days = [parse_day(e["date"], "event") for e in evs]
    keys, rows, seen = [], [], set()
    for c in candidates:
        aid = str(c.get("article_id") or "")
        try:
            day = parse_day(c.get("date"), "candidate")
        except ValueError:
            continue
        title, text = str(c.get("title") or ""), str(c.get("text") or "")
        if (not title.strip() and not text.strip()) or normalise_url(str(c.get("url") or "")) in cited or aid in seen:
            continue
        seen.add(aid)
        for e, d in zip(evs, days):
            if abs(day - d) <= window_days:
                rows.append(model.features(e["summary"], e.get("entities") or [], title, text))
                keys.append((aid, e["event_id"]))
    p = model.predict_proba(np.asarray(rows, dtype=np.float64)) if rows else np.zeros(0)
    return dict(zip(keys, p.tolist()))


def assignments_from(probs: dict, threshold: float) -> list[dict]:
    """Each article to its best event with p >= threshold (ties: smallest event id), sorted as ``assign``."""
    best: dict[str, tuple[float, str]] = {}
    for (aid, eid), p in probs.items():
        if p >= threshold and (aid not in best or p > best[aid][0] or (p == best[aid][0] and eid < best[aid][1])):
            best[aid] = (p, eid)
    rows = [{"article_id": a, "event_id": e, "probability": p} for a, (p, e) in best.items()]
    return sorted(rows, key=lambda r: (r["event_id"], r["article_id"]))


def compare_scores(bulk: dict, loop: dict, bulk_rows: list[dict], loop_rows: list[dict]) -> dict:
    """Pairs scored by one side only, the largest probability difference, differing assignments."""
    only = len(bulk.keys() ^ loop.keys())
    common = bulk.keys() & loop.keys()
    max_diff = max((abs(bulk[k] - loop[k]) for k in common), default=0.0)
    beyond = sum(abs(bulk[k] - loop[k]) > TOL for k in common)
    a = {(r["article_id"], r["event_id"]): r["probability"] for r in bulk_rows}
    b = {(r["article_id"], r["event_id"]): r["probability"] for r in loop_rows}
    assign_diff = len(a.keys() ^ b.keys()) + sum(abs(a[k] - b[k]) > TOL for k in a.keys() & b.keys())
    return {
        "pairs_compared": len(common),
        "pairs_one_side_only": only,
        "max_abs_probability_diff": max_diff,
        "probabilities_beyond_1e-9": beyond,
        "assignments_bulk": len(a),
        "assignments_loop": len(b),
        "assignments_differing": assign_diff,
    }


def bulk_probs(model, events, candidates, window_days) -> dict:
    from wikiref.stages.wcep.classifier import score_candidates

    out = {}
    for day in score_candidates(model, events, candidates, window_days=window_days):
        for r, aid in enumerate(day.article_ids):
            for j, eid in enumerate(day.event_ids):
                out[(aid, eid)] = float(day.probability[r, j])
    return out


def bench_classifier(data: dict, args) -> dict:
    from wikiref.examples import Tally
    from wikiref.stages.wcep import classifier as clf

    c = stage_params("wcep", "classify")["wcep"]["classifier"]
    threshold, window = float(c["threshold"]), int(c["window_days"])
    records = [r for r in data["records"] if r["sources"]]
    n_days = len({r["date"] for r in records})
    paper_per_day = PAPER_EVENTS / PAPER_DAYS
    factor = max(1, round(paper_per_day / (len(records) / n_days)))
    events, cands = compress_days(records, data["candidates"], factor)
    cand_days = len({x["date"] for x in cands})
    t0 = time.perf_counter()
    model, report = clf.train(
        events,
        negative_ratio=float(c["negative_ratio"]),
        heldout_fraction=float(c["heldout_fraction"]),
        seed=int(stage_params("wcep", "classify")["seed"]),
        threshold=threshold,
    )
    t_train = time.perf_counter() - t0
    per_window = []
    ev_days = Counter(e["date"] for e in events)
    for x in cands:
        d = date.fromisoformat(x["date"])
        per_window.append(sum(ev_days.get((d + timedelta(days=k)).isoformat(), 0) for k in range(-window, window + 1)))
    words = np.mean([len((x["title"] + " " + x["text"]).split()) for x in cands])
    text_bytes = np.mean([len((x["title"] + x["text"]).encode()) for x in cands])
    say(
        f"[classifier] {len(events)} events on {len({e['date'] for e in events})} days (x{factor} compressed), "
        f"{len(cands)} candidates on {cand_days} days, {np.mean(per_window):.1f} events per window; trained in {t_train:.1f} s"
    )

    # side by side on a seeded subset
    rng = random.Random(args.seed)
    subset = sorted(rng.sample(range(len(cands)), min(args.compare_candidates, len(cands))))
    sub = [cands[i] for i in subset]
    t_bulk, bulk_rows = best_of(
        lambda: clf.assign(model, events, sub, window_days=window, threshold=threshold), args.repeat
    )
    t_loop, loop = best_of(lambda: per_pair(model, events, sub, window), args.repeat)
    cmp = compare_scores(bulk_probs(model, events, sub, window), loop, bulk_rows, assignments_from(loop, threshold))
    n_pairs = len(loop)
    side = {
        "candidates": len(sub),
        "pairs": n_pairs,
        "ours_s": round(t_bulk, 4),
        "ours_articles_per_s": round(len(sub) / t_bulk, 1),
        "ours_pairs_per_s": round(n_pairs / t_bulk, 1),
        "per_pair_s": round(t_loop, 3),
        "per_pair_articles_per_s": round(len(sub) / t_loop, 1),
        "per_pair_pairs_per_s": round(n_pairs / t_loop, 1),
        "per_pair_over_ours": round(t_loop / t_bulk, 1),
        **cmp,
    }
    ok = not (cmp["pairs_one_side_only"] or cmp["probabilities_beyond_1e-9"] or cmp["assignments_differing"])
    say(
        f"[classifier] {len(sub)} candidates, {n_pairs} pairs: assign {len(sub) / t_bulk:.0f} articles/s, per-pair loop "
        f"{len(sub) / t_loop:.1f} articles/s ({t_loop / t_bulk:.0f}x); max |dp| {cmp['max_abs_probability_diff']:.2e}, "
        f"{cmp['assignments_differing']} differing assignments"
    )

    # ours at growing densities, up to the paper's candidates per day
    paper_cpd = PAPER_CANDIDATES / PAPER_DAYS
    full = max(1, round(paper_cpd / (len(cands) / cand_days)))
    densities = []
    for k in sorted({k for k in args.copies if k < full} | ({full} if args.paper_density else set()) or {1}):
        many = copy_candidates(cands, k)
        tally = Tally()
        t, rows_ = best_of(
            lambda many=many, tally=tally: clf.assign(
                model, events, many, window_days=window, threshold=threshold, tally=tally
            ),
            1,
        )
        pairs = tally.counts["pairs_scored"]
        densities.append(
            {
                "copies": k,
                "candidates": len(many),
                "candidates_per_day": round(len(many) / cand_days, 1),
                "pairs": pairs,
                "seconds": round(t, 3),
                "ours_articles_per_s": round(len(many) / t, 1),
                "ours_pairs_per_s": round(pairs / t, 1),
                "assigned": len(rows_),
            }
        )
        say(
            f"[classifier] x{k}: {len(many)} candidates ({len(many) / cand_days:.0f}/day): {len(many) / t:.0f} articles/s"
        )
        del many
    # seconds per candidate day = a + b * candidates per day, at the paper's density
    x = np.array([d["candidates_per_day"] for d in densities])
    y = np.array([d["seconds"] / cand_days for d in densities])
    b, a = np.polyfit(x, y, 1) if len(x) > 1 else (y[0] / x[0], 0.0)
    ours_s = PAPER_DAYS * (a + b * paper_cpd)
    paper_pairs = PAPER_CANDIDATES * (2 * window + 1) * paper_per_day
    loop_s = paper_pairs / side["per_pair_pairs_per_s"]
    shards = {
        str(n): {"ours_h": round(ours_s / n / 3600, 3), "per_pair_h": round(loop_s / n / 3600, 1)}
        for n in (1, 2, 4, 8, 16)
    }
    pos = report["pairs"]["positives"]
    est = {
        "candidates": PAPER_CANDIDATES,
        "events": PAPER_EVENTS,
        "days": PAPER_DAYS,
        "candidates_per_day": round(paper_cpd, 1),
        "events_per_window": round((2 * window + 1) * paper_per_day, 1),
        "pairs": round(paper_pairs),
        "ours_h": round(ours_s / 3600, 3),
        "per_pair_h": round(loop_s / 3600, 1),
        "per_job_for_shards": shards,
        "fit_seconds_per_day": {"a": round(float(a), 5), "b_per_candidate": float(f"{b:.4g}")},
        "candidate_text_gb": round(PAPER_CANDIDATES * text_bytes / 1e9, 2),
        "train_s_at_paper_events": round(t_train * PAPER_EVENTS / len(events), 1),
        "note": "the classify job holds every candidate in memory (candidate_text_gb: UTF-8 text at the stand-in's "
        "length, Python objects add more); the bench's pages are ~300 words, real news longer (vectorising is linear "
        "in text length); shards = the candidate days split over N jobs, same model",
    }
    return {
        "bench": "wcep_classifier",
        "ok": ok,
        "events": len(events),
        "days_compressed_by": factor,
        "events_per_day": round(len(events) / len({e["date"] for e in events}), 2),
        "candidates": len(cands),
        "candidates_words_mean": round(float(words), 1),
        "events_per_window_mean": round(float(np.mean(per_window)), 1),
        "train_s": round(t_train, 3),
        "train_pairs": report["pairs"]["positives"] + report["pairs"]["negatives"],
        "train_positives": pos,
        "heldout_at_threshold": report["heldout"]["at_threshold"] if report["heldout"] else None,
        "side_by_side": side,
        "densities": densities,
        "paper_estimate": est,
    }


# -- baselines -----------------------------------------------------------------------------------------


def sample_articles(min_sentences: int) -> list[tuple[str, list[str]]]:
    """(title, sentences) of the sample dump's articles: the collect parser's paragraphs (skipped
    sections left out), spaCy sentences (params.yaml's text section)."""
    from wikiref.config import load_params
    from wikiref.stages.sample import locate_gensim_dump
    from wikiref.text import from_params, split_sentences
    from wikiref.wiki.dump import iter_pages
    from wikiref.wiki.statements import StatementConfig, parse_article

    p = load_params(REPO / "params.yaml")
    cfg = StatementConfig.from_params(p["collect"])
    arts = []
    for page in iter_pages(locate_gensim_dump(), Counter()):
        a = parse_article(page.title, page.text, cfg, Counter())
        paras = [x.strip() for s in a.sections if not s.skipped for x in s.paragraphs if x.strip()]
        if paras:
            arts.append((a.title, paras))
    nlp = from_params(p["text"])
    flat = [x for _, paras in arts for x in paras]
    sents = iter(split_sentences(nlp, flat, 64))
    out = []
    for title, paras in arts:
        ss = [" ".join(s.split()) for _ in paras for s in next(sents)]
        ss = [s for s in ss if s]
        if len(ss) >= min_sentences:
            out.append((title, ss))
    return out


def make_cluster(cid: str, arts: list, topic: int, n_articles: int, per_article: int, rng: random.Random):
    """One cluster: reference = the topic article's first sentence(s) (<= 45 words), left out of its
    windows; a tenth of the articles are windows of the topic article, the rest of random others."""
    from wikiref.stages.wcep.baselines import Cluster

    title, sents = arts[topic]
    ref, words = [], 0
    for s in sents:
        if ref and words + len(s.split()) > 45:
            break
        ref.append(s)
        words += len(s.split())
        if words >= 12:
            break
    body = sents[len(ref) :]
    docs = []
    for k in range(n_articles):
        src = body if k < max(1, n_articles // 10) else arts[rng.randrange(len(arts))][1]
        start = rng.randrange(max(1, len(src) - per_article + 1))
        docs.append(src[start : start + per_article])
    return Cluster(
        cluster_id=cid, reference=ref, articles=docs, origins=["original"] + ["retrieved"] * (n_articles - 1)
    )


def reference_greedy(sentences: list[str], reference: str, scorer) -> list[int]:
    """ORACLE (MULTI) as a user would write it with rouge_score: every candidate union joined (cluster
    order) and scored from scratch; add the best (ties: earliest) while R1-F strictly improves."""
    chosen: list[int] = []
    best = 0.0
    while True:
        pick, pick_val = -1, best
        for i in range(len(sentences)):
            if i in chosen:
                continue
            union = " ".join(sentences[j] for j in sorted(chosen + [i]))
            val = scorer.score(reference, union)["rouge1"].fmeasure
            if val > pick_val:
                pick, pick_val = i, val
        if pick < 0:
            return sorted(chosen)
        chosen.append(pick)
        best = pick_val


def clear_token_caches() -> None:
    from wikiref.rouge import fast
    from wikiref.stages.wcep import evaluation

    evaluation._tokens.cache_clear()
    fast._TOKEN_CACHE.clear()
    if fast._STEMMER is not None:
        fast._STEMMER._cache.clear()


def bench_baselines(args) -> dict:
    from rouge_score import rouge_scorer

    from wikiref.stages.wcep import baselines as bl

    t0 = time.perf_counter()
    arts = sample_articles(min_sentences=4)
    t_text = time.perf_counter() - t0
    rng = random.Random(args.seed)
    idf = textrank.make_vectorizer().fit([" ".join(s) for _, s in arts])
    big = [
        make_cluster(f"wcep100-{i}", arts, rng.randrange(len(arts)), args.cluster_articles, 30, rng)
        for i in range(args.clusters)
    ]
    distinct = [len(bl.candidate_sentences(c)) for c in big]
    say(
        f"[baselines] {len(arts)} sample articles ({sum(len(s) for _, s in arts)} sentences, {t_text:.1f} s); "
        f"{len(big)} clusters of {args.cluster_articles} articles, {np.mean(distinct):.0f} distinct sentences each"
    )
    methods = {}
    for method in bl.METHODS:
        clear_token_caches()
        t = time.perf_counter()
        for c in big:
            bl.summarize(method, c, idf=idf, max_tokens=40, min_sentence_tokens=7, seed=args.seed)
        per = (time.perf_counter() - t) / len(big)
        methods[method] = {"s_per_cluster": round(per, 4), "paper_test_clusters_s": round(per * PAPER_TEST_CLUSTERS, 1)}
        say(f"[baselines] {method}: {per:.3f} s per cluster")

    # ORACLE (MULTI) beside the rouge-score greedy on smaller clusters
    scorer = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True)
    small = [
        make_cluster(f"wcep10-{i}", arts, rng.randrange(len(arts)), args.oracle_articles, 30, rng)
        for i in range(args.oracle_clusters)
    ]
    t_ours = t_ref = 0.0
    differing, examples = 0, []
    for c in small:
        clear_token_caches()
        t = time.perf_counter()
        ours = bl.summarize("oracle_multi", c)
        t_ours += time.perf_counter() - t
        sents = bl.candidate_sentences(c)  # the cluster's sentences, duplicates dropped, as the oracle sees them
        t = time.perf_counter()
        ref = [sents[i] for i in reference_greedy(sents, " ".join(c.reference), scorer)]
        t_ref += time.perf_counter() - t
        if ours != ref:
            differing += 1
            examples.append({"cluster": c.cluster_id, "ours": ours, "rouge_score": ref})
    oracle = {
        "clusters": len(small),
        "articles": args.oracle_articles,
        "sentences_mean": round(float(np.mean([len(bl.candidate_sentences(c)) for c in small])), 1),
        "ours_s_per_cluster": round(t_ours / len(small), 4),
        "rouge_score_s_per_cluster": round(t_ref / len(small), 3),
        "rouge_score_over_ours": round(t_ref / t_ours, 1),
        "differing": differing,
        **({"examples": examples[:2]} if examples else {}),
    }
    say(
        f"[baselines] oracle_multi vs rouge-score greedy on {len(small)} clusters of {args.oracle_articles} articles: "
        f"{t_ref / t_ours:.0f}x faster, {differing} differing selections"
    )
    return {
        "bench": "wcep_baselines",
        "ok": differing == 0,
        "clusters": len(big),
        "articles_per_cluster": args.cluster_articles,
        "sentences_per_article_max": 30,
        "sentences_per_cluster": round(float(np.mean([sum(len(a) for a in c.articles) for c in big])), 1),
        "distinct_sentences_per_cluster": round(float(np.mean(distinct)), 1),
        "reference_sentences_mean": round(float(np.mean([len(c.reference) for c in big])), 2),
        "sample_articles": len(arts),
        "idf": "fitted on the sample's articles (one document each)",
        "methods": methods,
        "note": f"paper_test_clusters_s = s_per_cluster x {PAPER_TEST_CLUSTERS} test clusters, all at "
        f"{args.cluster_articles} articles (WCEP-100's upper bound), cold token caches",
        "oracle_multi_vs_rouge_score": oracle,
    }


# -- main ------------------------------------------------------------------------------------------------

SECTIONS = ("portal", "classifier", "baselines")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="smaller sizes (< 1 min)")
    ap.add_argument("--sections", nargs="+", choices=SECTIONS, default=list(SECTIONS))
    ap.add_argument(
        "--standin-articles", type=int, default=None, help="sample articles of the stand-in (0 = all; quick: 40)"
    )
    ap.add_argument("--per-day", type=int, nargs="+", default=None, help="portal events per day (3 9 27; quick: 3 9)")
    ap.add_argument("--portal-events", type=int, default=None, help="events per portal size (1200; quick: 300)")
    ap.add_argument("--days-per-month", type=int, default=None, help="days on a monthly page (30; quick: 10)")
    ap.add_argument("--bs4-parsers", nargs="+", default=["html.parser", "lxml"], help="BeautifulSoup tree builders")
    ap.add_argument("--compare-candidates", type=int, default=None, help="candidates scored by both (300; quick: 60)")
    ap.add_argument("--copies", type=int, nargs="+", default=None, help="candidate copies timed (1 8; quick: 1 4)")
    ap.add_argument(
        "--paper-density",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="also time the copies that reach the paper's candidates per day (default: on; quick: off)",
    )
    ap.add_argument("--clusters", type=int, default=None, help="WCEP-100 clusters timed (5; quick: 1)")
    ap.add_argument("--cluster-articles", type=int, default=100)
    ap.add_argument("--oracle-clusters", type=int, default=None, help="clusters of the oracle comparison (5; quick: 2)")
    ap.add_argument("--oracle-articles", type=int, default=None, help="articles per oracle cluster (10; quick: 5)")
    ap.add_argument("--repeat", type=int, default=None, help="passes, the fastest counts (3; quick: 1)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    q = args.quick

    def default(name, full, quick):
        if getattr(args, name) is None:
            setattr(args, name, quick if q else full)

    default("standin_articles", 0, 40)
    default("per_day", [3, 9, 27], [3, 9])
    default("portal_events", 1200, 300)
    default("days_per_month", 30, 10)
    default("compare_candidates", 300, 60)
    default("copies", [1, 8], [1, 4])
    default("paper_density", True, False)
    default("clusters", 5, 1)
    default("oracle_clusters", 5, 2)
    default("oracle_articles", 10, 5)
    default("repeat", 3, 1)

    t_start = time.perf_counter()
    results = []
    with tempfile.TemporaryDirectory() as tmp_name:
        data = None
        if {"portal", "classifier"} & set(args.sections):
            data = build_standin(Path(tmp_name), args.standin_articles)
            emit(
                {
                    "bench": "wcep_input",
                    "standin_articles": data["articles"],
                    "events": len(data["events"]),
                    "events_with_fetched_sources": sum(1 for r in data["records"] if r["sources"]),
                    "candidates": len(data["candidates"]),
                    "standin_s": round(data["seconds"], 1),
                    "quick": q,
                    "python": platform.python_version(),
                    "machine": platform.machine(),
                }
            )
        if "portal" in args.sections:
            results.append(bench_portal(event_pool(data["events"]), args))
            emit(results[-1])
        if "classifier" in args.sections:
            results.append(bench_classifier(data, args))
            emit(results[-1])
    if "baselines" in args.sections:
        results.append(bench_baselines(args))
        emit(results[-1])
    ok = all(r["ok"] for r in results)
    emit(
        {
            "bench": "wcep_summary",
            "ok": ok,
            "failed": [r["bench"] for r in results if not r["ok"]],
            "seconds": round(time.perf_counter() - t_start, 1),
        }
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
