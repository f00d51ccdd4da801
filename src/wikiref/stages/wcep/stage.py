"""The WCEP stage's jobs (Gholipour Ghalandari et al., ACL 2020).

* :func:`standin` (``wcep.standin``): the sample dump -> the STAND-IN portal, source archive and CC-NEWS
  archive (:mod:`wikiref.stages.wcep.standin`);
* :func:`events`: daily wikitext pages of dump files + monthly HTML pages -> one table of events
  (:mod:`wikiref.stages.wcep.events`), de-duplicated across the two inputs, every skip counted;
* :func:`sources`: every event's source URLs through a fetch backend and the fetch cache, extracted with the
  collect extractor (title, text, publication date when the page has one);
* :func:`ccnews` (one job per shard): CC-NEWS WARC files -> candidate articles (:mod:`~.ccnews`);
* :func:`classify`: the article-summary classifier trained on the events' own sources, its held-out
  precision/recall, and the assignment of candidates to events (:mod:`~.classifier`);
* :func:`build`: sentences, chronological split, WCEP-total / WCEP-<n> -> the common example files,
  Tables 3-4 and Fig. 1 (coverage/density);
* :func:`supervised`: the package's BERT extractive scorer trained on the train split (regression on each
  sentence's ROUGE-1 F1, as BERTREG), its test summaries;
* :func:`evaluate`: the §5 protocol, oracles and baselines -> Table 5 beside the paper's, Fig. 2.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

log = logging.getLogger(__name__)

SOURCE = "wcep"
NOTICE_FILE = "NOTICE.txt"


class WcepError(RuntimeError):
    """A WCEP input that cannot be used as a whole (no portal input, no event, a split left empty...)."""


# ------------------------------------------------------------------------------------------ helpers
def is_standin_path(path: str | Path) -> bool:
    """``path`` lies in a folder (or is one) whose ``NOTICE.txt`` starts with STAND-IN (up to 3 levels up)."""
    p = Path(path).resolve()
    for folder in [p, *list(p.parents)[:3]]:
        notice = folder / NOTICE_FILE
        if notice.is_file():
            return notice.read_text(encoding="utf-8", errors="replace").lstrip().startswith("STAND-IN")
    return False


def expand_paths(paths: Sequence[str], patterns: Sequence[str]) -> list[Path]:
    """Files named in ``paths``: a file as is, a folder -> its files matching ``patterns`` (sorted)."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            out.extend(sorted({f for pat in patterns for f in p.glob(pat) if f.is_file()}))
        elif p.is_file():
            out.append(p)
        else:
            raise FileNotFoundError(f"{p}: no such file or folder")
    return out


def _profile(params: Mapping, standin: bool) -> dict:
    return dict(params.get("profile", {"name": "?", "description": ""}), standin=standin)


def _rows(path, columns: list[str] | None = None) -> list[dict]:
    import pyarrow.parquet as pq

    return pq.read_table(str(path), columns=columns).to_pylist()


def _tally():
    from wikiref.examples import Tally

    return Tally()


# -------------------------------------------------------------------------------------------- standin
def standin(params: Mapping, inputs: Mapping, outputs: Mapping) -> dict:
    """The standin job: ``inputs["dump"]`` (the sample's dump) -> ``outputs["dir"]`` (replaced as a whole).
    Params: seed, text, collect, wcep."""
    from wikiref.files import atomic_dir
    from wikiref.stages.wcep import standin as builder
    from wikiref.text import from_params

    dump = Path(inputs["dump"])
    if not dump.is_file():
        raise FileNotFoundError(f"{dump}: the sample dump is missing (run `wikiref sample` first)")
    nlp = from_params(params["text"])
    with atomic_dir(outputs["dir"]) as tmp:
        return builder.build(
            dump,
            tmp,
            seed=int(params["seed"]),
            collect=params["collect"],
            nlp=nlp,
            max_articles=int(params["wcep"]["standin_articles"]),
        )


# --------------------------------------------------------------------------------------------- events
def events(params: Mapping, inputs: Mapping, outputs: Mapping) -> dict:
    """The events job. ``inputs``: ``dump_paths`` (pages-articles files with the daily portal pages) and
    ``html_paths`` (monthly HTML pages, files or folders); default ``wcep.portal``. ``outputs``: ``events``
    (parquet, :data:`wikiref.schemas.WCEP_EVENTS`, sorted by date and event id) and ``stats`` (JSON).
    An event found in both inputs (same date and summary) is kept once (``dropped:duplicate_event``);
    events outside ``wcep.portal.period`` are counted (``dropped:outside_period``)."""
    import pyarrow as pa

    from wikiref.files import write_json, write_parquet
    from wikiref.schemas import WCEP_EVENTS
    from wikiref.stages.wcep.portal_html import iter_html_events
    from wikiref.stages.wcep.portal_wikitext import iter_dump_events

    portal = params["wcep"]["portal"]
    dump_paths = [Path(p) for p in inputs.get("dump_paths", portal["dump_paths"])]
    html_files = expand_paths(inputs.get("html_paths", portal["html_paths"]), ("*.html", "*.htm"))
    if not dump_paths and not html_files:
        raise WcepError("no portal input: set wcep.portal.dump_paths and/or wcep.portal.html_paths")
    for p in dump_paths:
        if not p.is_file():
            raise FileNotFoundError(f"{p}: portal dump file not found (wcep.portal.dump_paths)")
    tally = _tally()
    first, last = portal["period"]
    seen: dict[tuple[str, str], dict] = {}
    t0 = time.perf_counter()

    def admit(ev, standin: bool) -> None:
        if (first and ev.date < first) or (last and ev.date > last):
            tally.drop("outside_period", ev.location)
            return
        key = (ev.date, " ".join(ev.summary.lower().split()))
        if key in seen:
            tally.drop("duplicate_event", ev.location)
            return
        seen[key] = {
            "event_id": ev.event_id,
            "date": ev.date,
            "category": ev.category,
            "stories": list(ev.stories),
            "summary": ev.summary,
            "entities": list(ev.entities),
            "entity_links": list(ev.entity_links),
            "urls": list(ev.urls),
            "origin": ev.origin,
            "location": ev.location,
            "standin": standin,
        }

    for path in dump_paths:
        standin_flag = is_standin_path(path)
        for ev in iter_dump_events(
            [path], tally, namespace=int(portal["namespace"]), title_prefix=portal["title_prefix"]
        ):
            admit(ev, standin_flag)
    for path in html_files:
        standin_flag = is_standin_path(path)
        for ev in iter_html_events([path], tally):
            admit(ev, standin_flag)
    rows = sorted(seen.values(), key=lambda r: (r["date"], r["event_id"]))
    ids = Counter(r["event_id"] for r in rows)
    if any(n > 1 for n in ids.values()):  # same date/category/stories/summary under another spelling
        raise WcepError(f"event ids collide: {[k for k, n in ids.items() if n > 1][:5]}")
    write_parquet(outputs["events"], pa.Table.from_pylist(rows, schema=WCEP_EVENTS))
    tally.counts["events_kept"] = len(rows)
    stats = {
        **tally.to_json(),
        "events": len(rows),
        "days": len({r["date"] for r in rows}),
        "inputs": {"dump": [str(p) for p in dump_paths], "html": [str(p) for p in html_files]},
        "standin": any(r["standin"] for r in rows),
        "seconds": round(time.perf_counter() - t0, 3),
    }
    write_json(outputs["stats"], stats)
    log.info("wcep events: %d events over %d days", len(rows), stats["days"])
    return stats


# -------------------------------------------------------------------------------------------- sources
def sources(params: Mapping, inputs: Mapping, outputs: Mapping) -> dict:
    """The sources job: every source URL of the events, fetched through ``wcep.sources.backend`` (the
    ``collect.fetch`` cache and HTTP settings; ``wayback`` first in the paper profile, as the paper
    archived every source) and extracted with the collect extractor. ``inputs``: ``events``, optional
    ``warc_paths`` (default ``wcep.sources.warc_paths``). ``outputs``: ``sources`` (parquet
    :data:`wikiref.schemas.WCEP_SOURCES`, one row per URL, failures included with their reason) and
    ``stats``. Counts: ``fetch:<reason>``, ``extract:<reason>``, ``ok``."""
    import pyarrow as pa

    from wikiref.files import write_json, write_parquet
    from wikiref.schemas import WCEP_SOURCES
    from wikiref.stages.wcep.ccnews import page_date
    from wikiref.web.extract import ExtractConfig, extract_document
    from wikiref.web.fetch import fetcher_for

    urls = sorted({u for r in _rows(inputs["events"], ["urls"]) for u in r["urls"]})
    warc_paths = inputs.get("warc_paths", params["wcep"]["sources"]["warc_paths"])
    fetcher = fetcher_for(params["collect"]["fetch"], params["wcep"]["sources"]["backend"], warc_paths)
    cfg = ExtractConfig.from_params(params["collect"]["extract"])
    counts: Counter = Counter()
    rows = []
    t0 = time.perf_counter()
    for n, url in enumerate(urls, start=1):
        row = {"url": url, "ok": False, "reason": "", "title": "", "text": "", "date": "", "date_origin": ""}
        row.update({"fetch_source": "", "final_url": "", "standin": False})
        if fetcher is None:
            row["reason"] = "fetch:backend_none"
        else:
            res = fetcher.fetch(url)
            row.update(fetch_source=res.source, final_url=res.final_url, standin=bool(res.standin))
            if not res.ok:
                row["reason"] = f"fetch:{res.reason or 'failed'}"
            else:
                doc = extract_document(res.body, res.final_url or url, cfg)
                if not doc.ok:
                    row["reason"] = f"extract:{doc.reason}"
                else:
                    date = page_date(res.body, res.final_url or url)
                    row.update(
                        ok=True, title=doc.title, text=doc.text, date=date, date_origin="published" if date else ""
                    )
        counts[row["reason"] or "ok"] += 1
        rows.append(row)
        if n % 500 == 0:
            log.info("wcep sources: %d/%d URLs (%s)", n, len(urls), dict(counts))
    write_parquet(outputs["sources"], pa.Table.from_pylist(rows, schema=WCEP_SOURCES))
    stats = {
        "counts": dict(sorted(counts.items())),
        "urls": len(urls),
        "ok": counts["ok"],
        "backend": params["wcep"]["sources"]["backend"],
        "standin": any(r["standin"] for r in rows),
        "seconds": round(time.perf_counter() - t0, 3),
    }
    write_json(outputs["stats"], stats)
    return stats


# --------------------------------------------------------------------------------------------- ccnews
def ccnews_files(params: Mapping, shard: int, paths: Sequence[str] | None = None) -> list[Path]:
    """The CC-NEWS files of one shard: every file of ``wcep.ccnews.paths`` (folders: ``*.warc.gz``,
    ``*.warc``) in sorted order, dealt round-robin over ``wcep.ccnews.shards``."""
    c = params["wcep"]["ccnews"]
    files = sorted(set(expand_paths(paths if paths is not None else c["paths"], ("*.warc.gz", "*.warc"))))
    return files[int(shard) :: int(c["shards"])]


def ccnews(params: Mapping, inputs: Mapping, outputs: Mapping, *, shard: int) -> dict:
    """The ccnews job of one shard: its WARC files -> ``outputs["articles"]`` (parquet
    :data:`wikiref.schemas.WCEP_CANDIDATES`, sorted by article id) + ``outputs["stats"]``."""
    import pyarrow as pa

    from wikiref.files import write_json, write_parquet
    from wikiref.schemas import WCEP_CANDIDATES
    from wikiref.stages.wcep.ccnews import iter_articles
    from wikiref.web.extract import ExtractConfig

    files = ccnews_files(params, shard, inputs.get("paths"))
    tally = _tally()
    cfg = ExtractConfig.from_params(params["collect"]["extract"])
    t0 = time.perf_counter()
    rows = {}
    for art in iter_articles(files, tally, extract_cfg=cfg):
        rows.setdefault(art.article_id, {k: getattr(art, k) for k in WCEP_CANDIDATES.names})
    table = pa.Table.from_pylist([rows[k] for k in sorted(rows)], schema=WCEP_CANDIDATES)
    write_parquet(outputs["articles"], table)
    stats = {
        **tally.to_json(),
        "shard": int(shard),
        "files": [str(f) for f in files],
        "articles": len(rows),
        "standin": any(r["standin"] for r in rows.values()),
        "seconds": round(time.perf_counter() - t0, 3),
    }
    write_json(outputs["stats"], stats)
    return stats


# ------------------------------------------------------------------------------------------- classify
def _event_records(events_path, sources_path) -> tuple[list[dict], dict[str, dict]]:
    """Events with their fetched sources (the classifier's input), and the source rows by URL."""

    src = {r["url"]: r for r in _rows(sources_path)}
    out = []
    for e in _rows(events_path):
        docs = [src[u] for u in e["urls"] if u in src and src[u]["ok"]]
        out.append(dict(e, sources=[{"url": d["url"], "title": d["title"], "text": d["text"]} for d in docs]))
    return out, src


def _read_candidates(paths: Sequence[str], only: set[str] | None = None) -> list[dict]:
    """Candidate rows of every shard, sorted by article id (the same URL in two shards' files: first
    kept); ``only``: just these article ids (the build reads the texts of assigned articles only)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    rows: dict[str, dict] = {}
    for p in paths:
        table = pq.read_table(str(p))
        if only is not None:
            table = table.filter(pc.is_in(table.column("article_id"), value_set=_string_array(sorted(only))))
        for r in table.to_pylist():
            rows.setdefault(r["article_id"], r)
    return [rows[k] for k in sorted(rows)]


def _string_array(values: list[str]):
    import pyarrow as pa

    return pa.array(values, type=pa.string())


def classify(params: Mapping, inputs: Mapping, outputs: Mapping) -> dict:
    """The classify job. ``inputs``: ``events``, ``sources``, ``ccnews`` (every shard's candidates).
    ``outputs``: ``model`` (JSON), ``assignments`` (parquet :data:`wikiref.schemas.WCEP_ASSIGNMENTS`) and
    ``metrics`` (JSON: training pairs and ratio, held-out precision/recall beside the paper's 90% / 74%,
    candidates scored and assigned, window and single-assignment counts)."""
    import pyarrow as pa

    from wikiref.files import write_json, write_parquet
    from wikiref.schemas import WCEP_ASSIGNMENTS
    from wikiref.stages.wcep import classifier as clf
    from wikiref.tables import STANDIN_NOTE

    c = params["wcep"]["classifier"]
    evs, _ = _event_records(inputs["events"], inputs["sources"])
    trainable = [e for e in evs if e["sources"]]
    if not trainable:
        raise WcepError("no event has a fetched source article: nothing to train the classifier on")
    t0 = time.perf_counter()
    model, report = clf.train(
        trainable,
        negative_ratio=float(c["negative_ratio"]),
        heldout_fraction=float(c["heldout_fraction"]),
        seed=int(params["seed"]),
        threshold=float(c["threshold"]),
    )
    train_s = time.perf_counter() - t0
    cands = _read_candidates(inputs["ccnews"])
    tally = _tally()
    t1 = time.perf_counter()
    rows = clf.assign(
        model, trainable, cands, window_days=int(c["window_days"]), threshold=float(c["threshold"]), tally=tally
    )
    assign_s = time.perf_counter() - t1
    write_json(outputs["model"], model.to_json())
    write_parquet(outputs["assignments"], pa.Table.from_pylist(rows, schema=WCEP_ASSIGNMENTS))
    cand_standin = any(r["standin"] for r in cands)
    standin_flag = cand_standin or any(e["standin"] for e in evs)
    metrics = {
        "standin": standin_flag,
        **({"label": STANDIN_NOTE} if standin_flag else {}),
        "events": len(evs),
        "events_with_sources": len(trainable),
        "training": report,
        "paper_heldout": {"precision": 0.90, "recall": 0.74},
        "candidates": len(cands),
        "assigned": len(rows),
        "assignment_counts": tally.to_json()["counts"],
        "window_days": int(c["window_days"]),
        "threshold": float(c["threshold"]),
        "seconds": {"train": round(train_s, 3), "assign": round(assign_s, 3)},
        "candidates_per_second": round(len(cands) / assign_s, 1) if assign_s > 0 else None,
    }
    write_json(outputs["metrics"], metrics)
    return metrics


# ---------------------------------------------------------------------------------------------- build
def chronological_split(dates: Sequence[str], dev: float, test: float) -> dict[str, str]:
    """date -> split: whole dates, the latest ones to test until it holds ``test`` of the events, the next
    ones to dev until ``dev``, the rest to train (so no date is in two splits and dev/test follow train
    in time, as in the paper). Each split gets at least one date when there are three or more."""
    counts = Counter(dates)
    days = sorted(counts)
    if len(days) < 3:
        raise WcepError(f"a chronological split needs events on 3 or more dates, got {len(days)}")
    total = sum(counts.values())
    out: dict[str, str] = {}
    i = len(days) - 1
    for split, share in (("test", test), ("dev", dev)):
        n = 0
        while i >= 2 - (split == "dev") and (n == 0 or n + counts[days[i]] <= share * total + 1e-9):
            out[days[i]] = split
            n += counts[days[i]]
            i -= 1
            if n >= share * total:
                break
    for d in days[: i + 1]:
        out[d] = "train"
    return out


def truncate_cluster(n_original: int, retrieved_ids: Sequence[str], limit: int, seed: int, event_id: str) -> list[str]:
    """WCEP-<limit>: every original article kept; added articles sampled (seeded per event) to fill the
    cluster up to ``limit``. The sample is a prefix of one permutation per event, so WCEP-10 is inside
    WCEP-100 and Fig. 2's "k added articles" are nested too. Returns the kept retrieved ids in their
    original order."""
    order = added_order(retrieved_ids, seed, event_id)
    keep = set(order[: max(0, limit - n_original)])
    return [r for r in retrieved_ids if r in keep]


def added_order(retrieved_ids: Sequence[str], seed: int, event_id: str) -> list[str]:
    """The seeded permutation of an event's added articles (truncation and Fig. 2 take prefixes of it)."""
    order = sorted(retrieved_ids)
    random.Random(f"{seed}:wcep-truncate:{event_id}").shuffle(order)
    return order


def _example_row(e: Mapping, split: str, documents: list, summary: list, standin: bool, meta: Mapping) -> dict:
    """One WCEP event as a common-schema example: query = [category, *story path]."""
    from wikiref import examples as ex

    return ex.example(
        SOURCE,
        e["event_id"],
        split=split,
        query=[q for q in [e["category"], *e["stories"]] if q] or [e["summary"]],
        documents=documents,
        summary=summary,
        query_origin="portal_story",
        standin=standin,
        input_file=e["location"],
        meta=meta,
    )


def _with_sources(evs: Sequence[dict], tally) -> list[dict]:
    """The events that have a source URL and a fetched source article (the others counted as drops)."""
    kept = []
    for e in evs:
        if not e["urls"]:
            tally.drop("no_source_url", e["location"])  # the parser drops these; counted if a table has one
            continue
        if not e["sources"]:
            tally.drop("no_source_article", e["location"])
            continue
        kept.append(e)
    if not kept:
        raise WcepError("no event has a source article")
    return kept


def _all_sentences(params: Mapping, kept: Sequence[dict], assigned: Mapping, cands: Mapping) -> dict[str, list]:
    """Sentences of every text once (sources ``u:<url>``, added articles ``c:<id>``, summaries
    ``s:<event id>``), in one spaCy pass."""
    from wikiref.text import from_params, split_sentences

    nlp = from_params(params["text"])
    texts: dict[str, str] = {}
    for e in kept:
        texts.setdefault(f"s:{e['event_id']}", e["summary"])
        for s in e["sources"]:
            texts.setdefault(f"u:{s['url']}", s["text"])
        for a in assigned.get(e["event_id"], []):
            texts.setdefault(f"c:{a['article_id']}", cands[a["article_id"]]["text"])
    keys = sorted(texts)
    return dict(zip(keys, split_sentences(nlp, (texts[k] for k in keys), 64)))


def _original_documents(e: Mapping, sentences: Mapping) -> list[dict]:
    """The event's source articles with sentences, as ``original`` documents."""
    from wikiref import examples as ex
    from wikiref.files import stable_id

    docs = []
    for s in e["sources"]:
        sents = sentences[f"u:{s['url']}"]
        if sents:
            docs.append(
                ex.document(f"u{stable_id(s['url'])}", sents, title=s["title"], url=s["url"], origin="original")
            )
    return docs


def _retrieved_documents(added: Sequence[Mapping], cands: Mapping, sentences: Mapping, tally) -> list[dict]:
    """The assigned CC-NEWS articles with sentences (most probable first), as ``retrieved`` documents."""
    from wikiref import examples as ex

    retrieved = []
    for a in added:
        c = cands[a["article_id"]]
        sents = sentences[f"c:{a['article_id']}"]
        if not sents:
            tally.counts["added_without_sentences"] += 1
            continue
        retrieved.append(
            ex.document(
                a["article_id"], sents, title=c["title"], url=c["url"], origin="retrieved", score=a["probability"]
            )
        )
    return retrieved


def _cluster_rows(params: Mapping, kept: Sequence[dict], data: Mapping, sentences: Mapping, tally) -> tuple:
    """(WCEP-total rows, {n: WCEP-<n> rows}) of the events that keep a source sentence and a summary.
    ``data``: ``assigned`` (event id -> assignments), ``cands`` (article id -> candidate), ``src_rows``
    (URL -> source row), ``split_of`` (date -> split)."""
    w, seed = params["wcep"], int(params["seed"])
    assigned, cands, src_rows, split_of = data["assigned"], data["cands"], data["src_rows"], data["split_of"]
    total_rows, variant_rows = [], {int(n): [] for n in w["truncate"]}
    for e in kept:
        docs = _original_documents(e, sentences)
        if not docs:
            tally.drop("no_source_sentences", e["location"])
            continue
        summary = sentences[f"s:{e['event_id']}"]
        if not summary:
            tally.drop("empty_summary", e["location"])
            continue
        added = sorted(assigned.get(e["event_id"], []), key=lambda a: (-a["probability"], a["article_id"]))
        retrieved = _retrieved_documents(added, cands, sentences, tally)
        standin_flag = bool(e["standin"]) or any(src_rows[s["url"]]["standin"] for s in e["sources"])
        standin_flag = standin_flag or any(cands[a["article_id"]]["standin"] for a in added)
        meta = {
            "date": e["date"],
            "category": e["category"],
            "stories": e["stories"],
            "entities": e["entities"],
            "urls": e["urls"],
            "portal": e["origin"],
            "added_order": added_order([d["id"] for d in retrieved], seed, e["event_id"]),
        }

        split = split_of[e["date"]]
        total_rows.append(_example_row(e, split, docs + retrieved, summary, standin_flag, meta))
        for n in variant_rows:
            keep = set(truncate_cluster(len(docs), [d["id"] for d in retrieved], n, seed, e["event_id"]))
            kept_docs = docs + [d for d in retrieved if d["id"] in keep]
            variant_rows[n].append(_example_row(e, split, kept_docs, summary, standin_flag, meta))
        tally.counts[f"kept:{split_of[e['date']]}"] += 1
    return total_rows, variant_rows


def _main_rows(w: Mapping, total_rows: list, variant_rows: Mapping) -> list:
    """The rows of ``wcep.source_variant`` (WCEP-<n>, 0 = WCEP-total), every split non-empty."""
    from wikiref import examples as ex

    if not total_rows:
        raise WcepError("no WCEP example survived")
    n_src = int(w["source_variant"])
    if n_src and n_src not in variant_rows:
        raise WcepError(f"wcep.source_variant {n_src} is not in wcep.truncate {w['truncate']}")
    main_rows = variant_rows[n_src] if n_src else total_rows
    for s in ex.SPLITS:
        if not any(r["split"] == s for r in main_rows):
            raise WcepError(f"split {s} is empty (events on too few dates?)")
    return main_rows


def build(params: Mapping, inputs: Mapping, outputs: Mapping) -> dict:
    """The build job. ``inputs``: ``events``, ``sources``, ``ccnews`` (shards), ``assignments``, ``stats``
    (the events/sources/ccnews stats and classifier metrics, folded into the build metrics). ``outputs``:
    ``splits`` (split -> the WCEP-<source_variant> common example files), ``total`` (split -> WCEP-total
    files), ``table3``, ``table4`` (stems), ``fig1`` (stem) and ``metrics``."""
    from wikiref import examples as ex
    from wikiref.files import read_json, write_json
    from wikiref.stages.wcep import report as rep

    w = params["wcep"]
    t0 = time.perf_counter()
    evs, src_rows = _event_records(inputs["events"], inputs["sources"])
    assigned: dict[str, list[dict]] = {}
    for a in _rows(inputs["assignments"]):
        assigned.setdefault(a["event_id"], []).append(a)
    wanted = {a["article_id"] for rows_ in assigned.values() for a in rows_}
    cands = {r["article_id"]: r for r in _read_candidates(inputs["ccnews"], only=wanted)}
    tally = _tally()
    tally.counts["events_read"] = len(evs)
    kept = _with_sources(evs, tally)
    split_of = chronological_split([e["date"] for e in kept], float(w["split"]["dev"]), float(w["split"]["test"]))
    sentences = _all_sentences(params, kept, assigned, cands)
    data = {"assigned": assigned, "cands": cands, "src_rows": src_rows, "split_of": split_of}
    total_rows, variant_rows = _cluster_rows(params, kept, data, sentences, tally)
    main_rows = _main_rows(w, total_rows, variant_rows)
    n_src = int(w["source_variant"])
    standin_flag = any(r["standin"] for r in total_rows)
    profile = _profile(params, standin_flag)
    ex.write_splits(total_rows, outputs["total"])
    sizes = ex.write_splits(main_rows, outputs["splits"])
    tables = rep.dataset_tables(total_rows, variant_rows, outputs["table3"], outputs["table4"], profile=profile)
    fig1 = rep.coverage_density_figure(
        {"WCEP-total": total_rows, **{f"WCEP-{n}": rows for n, rows in variant_rows.items()}},
        outputs["fig1"],
        profile=profile,
    )
    upstream = {Path(p).name: read_json(p) for p in inputs.get("stats", [])}
    from wikiref.tables import STANDIN_NOTE

    metrics = {
        "source": SOURCE,
        "standin": standin_flag,
        **({"label": STANDIN_NOTE} if standin_flag else {}),
        "variant": f"WCEP-{n_src}" if n_src else "WCEP-total",
        "sizes": sizes,
        "counts": dict(sorted(tally.counts.items())),
        "drop_locations": tally.to_json()["locations"],
        "table3": tables["table3"],
        "table4": tables["table4"],
        "coverage_density": fig1,
        "upstream": {
            k: {kk: v.get(kk) for kk in ("counts", "events", "urls", "ok", "articles", "standin")}
            for k, v in upstream.items()
        },
        "seconds": round(time.perf_counter() - t0, 3),
    }
    write_json(outputs["metrics"], metrics)
    return metrics


# ----------------------------------------------------------------------------------------- evaluation
def clusters_from_rows(rows: Sequence[Mapping], added: int | None = None):
    """Baseline clusters from common-schema rows: references = the summary sentences, articles = the
    documents' sentences (originals first). ``added`` keeps only the first ``added`` retrieved articles
    of the event's seeded permutation (Fig. 2; None = all)."""
    from wikiref.stages.wcep.baselines import Cluster

    out = []
    for r in rows:
        docs = list(r["documents"])
        if added is not None:
            meta = json.loads(r["meta"]) if isinstance(r["meta"], str) else r["meta"]
            keep = set(meta["added_order"][: max(0, added)])
            docs = [d for d in docs if d["origin"] == "original" or d["id"] in keep]
        out.append(
            Cluster(
                cluster_id=r["id"],
                reference=list(r["summary"]),
                articles=[list(d["sentences"]) for d in docs],
                origins=[d["origin"] for d in docs],
            )
        )
    return out


def fit_idf(rows: Sequence[Mapping]):
    """The tf-idf weighting of the baselines, fitted on the training split's articles (one document per
    article), with the baselines' settings (lower-cased unigrams, English stop words removed)."""
    from wikiref.extractive.textrank import make_vectorizer

    docs = [" ".join(d["sentences"]) for r in rows for d in r["documents"]]
    if not docs:
        return None  # the baselines then fit tf-idf on each cluster
    return make_vectorizer().fit(docs)


def _tune(e: Mapping, dev: list, idf, common: Mapping) -> dict[str, dict]:
    """Each tunable baseline's setting (TextRank / Centroid redundancy, SUBMODULAR diversity) that scores
    best on ``tune_clusters`` random dev clusters, with the dev ROUGE-1 F1 of every grid point."""
    from wikiref.stages.wcep import baselines as bl

    tuned: dict[str, dict] = {}
    for method, key, grid in (
        ("textrank", "redundancy", e["redundancy_grid"]),
        ("centroid", "redundancy", e["redundancy_grid"]),
        ("submodular", "diversity", e["diversity_grid"]),
    ):
        best, scores = bl.tune(
            method,
            dev,
            grid=[float(v) for v in grid],
            max_clusters=int(e["tune_clusters"]),
            seed=common["seed"],
            idf=idf,
            max_tokens=common["max_tokens"],
            min_sentence_tokens=common["min_sentence_tokens"],
        )
        tuned[method] = {key: best, "dev_rouge1_f1": {str(k): round(v, 5) for k, v in scores.items()}}
    return tuned


def _fig2_points(e: Mapping, total_test: Sequence[Mapping], max_added: int, tuned: Mapping, idf, common) -> list:
    """Fig. 2's points: each ``fig2_methods`` baseline's scores on the WCEP-total test clusters cut to
    the first k added articles (k < 0: all of them), for every k of ``added_articles``."""
    from wikiref.stages.wcep import baselines as bl
    from wikiref.stages.wcep.evaluation import evaluate as score_summaries

    fig2_points = []
    for k in e["added_articles"]:
        k_eff = max_added if int(k) < 0 else int(k)
        clusters = clusters_from_rows(total_test, added=k_eff)
        refs = {c.cluster_id: c.reference for c in clusters}
        for method in e["fig2_methods"]:
            kw = {kk: v for kk, v in tuned.get(method, {}).items() if kk in ("redundancy", "diversity")}
            summ = {c.cluster_id: bl.summarize(method, c, idf=idf, **common, **kw) for c in clusters}
            sc = score_summaries(summ, refs, max_tokens=common["max_tokens"], n_boot=1, seed=common["seed"])
            fig2_points.append({"added": int(k), "added_articles": k_eff, "method": method, **sc["means"]})
    return fig2_points


def evaluate(params: Mapping, inputs: Mapping, outputs: Mapping) -> dict:
    """The evaluate job. ``inputs``: ``splits`` (split -> WCEP-<source_variant> files), ``total`` (split ->
    WCEP-total files), optional ``supervised`` (the BERT scorer's test summaries JSON). ``outputs``:
    ``table5`` (stem), ``fig2`` (stem), ``metrics``. Hyper-parameters (redundancy thresholds, SUBMODULAR
    diversity) are tuned on ``tune_clusters`` random dev clusters, then every method runs on test."""
    from wikiref import examples as ex
    from wikiref.files import read_json, write_json
    from wikiref.stages.wcep import baselines as bl
    from wikiref.stages.wcep import report as rep
    from wikiref.stages.wcep.evaluation import evaluate as score_summaries

    w, e = params["wcep"], params["wcep"]["evaluation"]
    seed = int(params["seed"])
    t0 = time.perf_counter()
    rows = {s: ex.split_rows(ex.read(inputs["splits"][s]))[s] for s in ex.SPLITS}
    standin_flag = any(r["standin"] for s in rows for r in rows[s])
    idf = fit_idf(rows["train"])
    dev = clusters_from_rows(rows["dev"])
    test = clusters_from_rows(rows["test"])
    common = {"max_tokens": int(e["max_tokens"]), "min_sentence_tokens": int(e["min_sentence_tokens"]), "seed": seed}
    n_boot = max(1, int(e["bootstrap"]))
    tuned = _tune(e, dev, idf, common)
    references = {c.cluster_id: c.reference for c in test}
    results: dict[str, dict] = {}
    timings: dict[str, float] = {}
    for method in bl.METHODS:
        kw = {k: v for k, v in tuned.get(method, {}).items() if k in ("redundancy", "diversity")}
        t = time.perf_counter()
        summaries = {c.cluster_id: bl.summarize(method, c, idf=idf, **common, **kw) for c in test}
        timings[method] = (time.perf_counter() - t) / max(1, len(test))
        results[method] = score_summaries(
            summaries, references, max_tokens=common["max_tokens"], n_boot=n_boot, seed=seed
        )
    sup = inputs.get("supervised")
    if sup and Path(sup).is_file():
        s = read_json(sup)
        if s.get("enabled", True):
            results["bert"] = score_summaries(
                s["summaries"], references, max_tokens=common["max_tokens"], n_boot=n_boot, seed=seed
            )
            tuned["bert"] = {"redundancy": s.get("redundancy"), "variant": s.get("variant")}
    # Fig. 2: scores against the number of added articles (WCEP-total test clusters, nested samples)
    total_test = ex.split_rows(ex.read(inputs["total"]["test"]))["test"]
    max_added = max((sum(d["origin"] == "retrieved" for d in r["documents"]) for r in total_test), default=0)
    fig2_points = _fig2_points(e, total_test, max_added, tuned, idf, common)
    profile = _profile(params, standin_flag)
    table = rep.table5(results, outputs["table5"], profile=profile, n_test=len(test), variant=w["source_variant"])
    fig = rep.added_articles_figure(fig2_points, outputs["fig2"], profile=profile, max_added=max_added)
    from wikiref.tables import STANDIN_NOTE

    metrics = {
        "standin": standin_flag,
        **({"label": STANDIN_NOTE} if standin_flag else {}),
        "variant": f"WCEP-{w['source_variant']}" if int(w["source_variant"]) else "WCEP-total",
        "test_clusters": len(test),
        "dev_clusters": len(dev),
        "tuned": tuned,
        "results": {m: {"mean": r["means"], "ci95": r["ci95"]} for m, r in results.items()},
        "rouge": "rouge-score semantics (stemmed), ROUGE-L = rougeL; F1 on the summary as produced, recall on its first max_tokens tokens",
        "table5": table,
        "fig2": fig,
        "seconds_per_cluster": {m: round(v, 4) for m, v in timings.items()},
        "seconds": round(time.perf_counter() - t0, 3),
    }
    write_json(outputs["metrics"], metrics)
    return metrics


# ----------------------------------------------------------------------------------------- supervised
def supervised(params: Mapping, inputs: Mapping, outputs: Mapping) -> dict:
    """The supervised job: the package's BERT extractive scorer (``model`` section; ``wcep.supervised.pooling``,
    regression head) trained on the train split of WCEP-<source_variant> to predict each sentence's ROUGE-1
    F1 against the summary (the paper's BERTREG target), with ``pretrain``'s optimiser settings and
    ``wcep.supervised.epochs``; the redundancy threshold of the ranked selection is tuned on dev (mean
    ROUGE-1 F1, as the other baselines); the test summaries go to ``outputs["summaries"]`` (JSON) and the
    weights to ``outputs["model_dir"]``."""
    from wikiref import examples as ex
    from wikiref.files import write_json
    from wikiref.tables import STANDIN_NOTE

    w, sup = params["wcep"], params["wcep"]["supervised"]
    if not sup["enabled"]:
        out = {"enabled": False, "summaries": {}, "note": "wcep.supervised.enabled is false"}
        Path(outputs["model_dir"]).mkdir(parents=True, exist_ok=True)
        write_json(outputs["summaries"], out)
        return out
    from wikiref.stages.wcep import supervised as sv

    rows = {s: ex.split_rows(ex.read(inputs["splits"][s]))[s] for s in ex.SPLITS}
    result = sv.train_and_summarize(params, rows, outputs["model_dir"])
    standin_flag = any(r["standin"] for s in rows for r in rows[s])
    out = {
        "enabled": True,
        "standin": standin_flag,
        **({"label": STANDIN_NOTE} if standin_flag else {}),
        "variant": f"WCEP-{w['source_variant']}" if int(w["source_variant"]) else "WCEP-total",
        **result,
    }
    write_json(outputs["summaries"], out)
    return out
