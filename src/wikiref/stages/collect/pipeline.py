"""The collect stage: one dump part -> raw examples, resumably (:func:`run_part`, ``wikiref collect part``),
and the per-part stats summed into the stage metrics (:func:`merge`, ``wikiref collect merge``).

Three phases, each checkpointed in a work folder next to the output (``.<part>.work/``):

1. **parse**: pages are read in dump order and parsed in chunks of ``resume.pages_per_chunk``
   articles; each finished chunk is one ``cand-NNNNNN.parquet`` (kept statements) + its
   ``.json`` counters, written atomically (json first, parquet last = the chunk's done mark).
   On a rerun finished chunks are skipped without parsing their wikitext.
2. **fetch + extract**: the unique URLs of all candidates, sorted, in batches of
   ``resume.urls_per_batch``; each finished batch is one ``docs-NNNNNN.parquet``. Every URL is
   fetched once per part (dedupe) and, for the network backends, once ever (persistent cache):
   a batch cut short by a kill is redone from the cache.
3. **join**: candidates x documents -> ``<part>.parquet`` sorted by ``id`` + ``<part>.stats.json``;
   then the work folder is removed.

The work folder carries a fingerprint of the params and the dump file; a mismatch discards it.
Chunk and batch boundaries depend only on the params and the input, and the output is sorted, so
a run killed at any moment and run again writes exactly the bytes of an uninterrupted run.

Test hook: ``WIKIREF_COLLECT_KILL_AFTER=N`` SIGKILLs the process at its N-th checkpoint event
(each article parsed, URL fetched, file written), so tests can kill it at chosen moments.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from wikiref import layout
from wikiref.files import read_json, stable_id, write_json, write_parquet
from wikiref.schemas import RAW
from wikiref.stages.collect.schedule import host_of, interleave_by_host, run_by_host
from wikiref.web.extract import ExtractConfig, extract_document
from wikiref.web.fetch import FetchConfig, LiveBackend, make_fetcher
from wikiref.wiki.dump import default_part_path, iter_pages, resolve_part
from wikiref.wiki.statements import StatementConfig, kept_statements, parse_article

log = logging.getLogger(__name__)

CAND_SCHEMA = pa.schema(
    [
        ("page_id", pa.int64()),
        ("article", pa.string()),
        ("query", pa.list_(pa.string())),
        ("statement", pa.string()),
        ("statement_index", pa.int32()),
        ("url", pa.string()),
        ("citation_type", pa.string()),
        ("citation_title", pa.string()),
        ("access_date", pa.string()),
        ("archive_url", pa.string()),
    ]
)
DOC_SCHEMA = pa.schema(
    [
        ("url", pa.string()),
        ("ok", pa.bool_()),
        ("reason", pa.string()),
        ("doc_title", pa.string()),
        ("doc_text", pa.string()),
        ("final_url", pa.string()),
        ("fetch_source", pa.string()),
        ("doc_standin", pa.bool_()),
    ]
)


class CollectError(ValueError):
    """Bad input to a collect job (e.g. per-part stats that do not match collect.dump.parts)."""


class _Killer:
    """Test hook: SIGKILL this process at the N-th checkpoint event (WIKIREF_COLLECT_KILL_AFTER)."""

    def __init__(self):
        raw = os.environ.get("WIKIREF_COLLECT_KILL_AFTER", "")
        self.after = int(raw) if raw.strip().isdigit() else 0
        self.events = 0

    def tick(self) -> None:
        self.events += 1
        if self.after and self.events >= self.after:
            os.kill(os.getpid(), signal.SIGKILL)


@dataclass(frozen=True)
class CollectSettings:
    statements: StatementConfig
    fetch: FetchConfig
    extract: ExtractConfig
    max_pages: int = 0
    parse_workers: int = 1
    pages_per_chunk: int = 500
    urls_per_batch: int = 200

    @classmethod
    def from_params(cls, collect: Mapping) -> CollectSettings:
        resume = collect.get("resume", {})
        return cls(
            statements=StatementConfig.from_params(collect),
            fetch=FetchConfig.from_params(collect["fetch"]),
            extract=ExtractConfig.from_params(collect.get("extract", {})),
            max_pages=int(collect["dump"].get("max_pages", 0) or 0),
            parse_workers=parse_workers(collect["dump"].get("parse_workers", 1)),
            pages_per_chunk=int(resume.get("pages_per_chunk", 500)),
            urls_per_batch=int(resume.get("urls_per_batch", 200)),
        )


def parse_workers(value) -> int:
    """``collect.dump.parse_workers``: a number of processes, or 0 for every CPU this job may use (its
    affinity mask: the cores Snakemake, SLURM or taskset gave it)."""
    n = int(value if value is not None else 1)
    if n > 0:
        return n
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # no affinity masks (macOS)
        return max(1, os.cpu_count() or 1)


# How fetch_phase cuts URLs into batches; a work folder written with another layout is not resumed.
FETCH_ORDER = "host-round-robin/1"


def _fingerprint(collect: Mapping, dump_path: Path) -> dict:
    st = dump_path.stat()
    return {
        "fetch_order": FETCH_ORDER,
        "params": json.loads(json.dumps(collect, sort_keys=True)),
        "dump": {"path": str(dump_path.resolve()), "bytes": st.st_size, "mtime_ns": st.st_mtime_ns},
    }


def _prepare_work_dir(work: Path, fingerprint: dict) -> None:
    fp_path = work / "FINGERPRINT.json"
    if work.exists():
        try:
            same = read_json(fp_path) == fingerprint
        except (OSError, ValueError):
            same = False
        if same:
            log.info("resuming from %s", work)
            return
        log.info("discarding stale work folder %s (params or dump changed)", work)
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    write_json(fp_path, fingerprint)


def _chunk_done(work: Path, k: int) -> bool:
    return (work / f"cand-{k:06d}.json").exists() and (work / f"cand-{k:06d}.parquet").exists()


def _candidate_rows(page, article) -> list[dict]:
    rows = []
    for st in kept_statements(article):
        c = st.citation
        rows.append(
            {
                "page_id": page.page_id,
                "article": page.title,
                "query": list(st.query),
                "statement": st.text,
                "statement_index": st.index,
                "url": c.url.strip(),
                "citation_type": c.type,
                "citation_title": c.title,
                "access_date": c.access_date,
                "archive_url": c.archive_url,
            }
        )
    return rows


_WORKER_CFG: StatementConfig | None = None


def _init_worker(cfg: StatementConfig) -> None:
    global _WORKER_CFG
    _WORKER_CFG = cfg


def _parse_page(page) -> tuple[list[dict], Counter]:
    stats: Counter = Counter()
    article = parse_article(page.title, page.text, _WORKER_CFG, stats, statements_only=True)
    return _candidate_rows(page, article), stats


class _ChunkWriter:
    """Parses the pages of one chunk (by a process pool when ``dump.parse_workers`` > 1, results in page
    order) and writes its ``cand-NNNNNN.json`` / ``.parquet`` files to ``work``."""

    def __init__(self, work: Path, s: CollectSettings, killer: _Killer, readers: list):
        self.work, self.s, self.killer, self.readers = work, s, killer, readers
        self.pool = None
        self.t0 = time.monotonic()

    def _results(self, pending: list):
        s = self.s
        if s.parse_workers > 1 and len(pending) > 1:
            if self.pool is None:
                import multiprocessing

                self.pool = multiprocessing.get_context("spawn").Pool(
                    s.parse_workers, initializer=_init_worker, initargs=(s.statements,)
                )
            return self.pool.imap(_parse_page, pending, chunksize=max(1, len(pending) // (4 * s.parse_workers)))
        return map(_parse_page, pending)

    def write(self, pending: list, k: int, articles: int) -> None:
        """Chunk ``k`` holding ``pending``; ``articles``: pages read so far (for the log)."""
        rows: list[dict] = []
        chunk_stats: Counter = Counter()
        for page_rows, page_stats in self._results(pending):
            rows.extend(page_rows)
            chunk_stats.update(page_stats)
            self.killer.tick()
        write_json(self.work / f"cand-{k:06d}.json", {"articles": len(pending), "counters": dict(chunk_stats)})
        self.killer.tick()
        write_parquet(self.work / f"cand-{k:06d}.parquet", pa.Table.from_pylist(rows, schema=CAND_SCHEMA))
        self.killer.tick()
        mb = self.readers[0].count / 1e6 if self.readers else 0.0
        log.info(
            "parse: chunk %d done (%d articles so far, %.1f MB XML, %.2f MB/s)",
            k,
            articles,
            mb,
            mb / max(time.monotonic() - self.t0, 1e-9),
        )

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()
            self.pool.join()


def parse_phase(dump_path: Path, work: Path, s: CollectSettings, killer: _Killer) -> tuple[Counter, Counter]:
    """Returns (dump-level counters, statement-level counters summed over chunks).

    With ``dump.parse_workers`` > 1 the wikitext of each chunk is parsed by a process pool
    (results in page order, so the output does not depend on the number of workers).
    """
    dump_stats: Counter = Counter()
    k, articles = 0, 0
    pending: list = []  # pages of the current chunk
    readers: list = []
    writer = _ChunkWriter(work, s, killer, readers)
    _init_worker(s.statements)

    def flush() -> None:
        nonlocal pending, k
        writer.write(pending, k, articles)
        pending, k = [], k + 1

    try:
        skipping = _chunk_done(work, 0)
        in_chunk = 0
        for page in iter_pages(dump_path, dump_stats, counter=readers):
            if s.max_pages and articles >= s.max_pages:
                # Stop reading: this page is counted as skipped and the rest of the part is not read.
                dump_stats["page_skipped:max_pages"] += 1
                break
            articles += 1
            in_chunk += 1
            if not skipping:
                pending.append(page)
            if in_chunk == s.pages_per_chunk:
                if skipping:
                    k += 1
                else:
                    flush()
                in_chunk = 0
                skipping = _chunk_done(work, k)
        if in_chunk:
            if skipping:
                k += 1
            else:
                flush()
    finally:
        writer.close()
    dump_stats["articles"] = articles
    dump_stats["xml_bytes"] = readers[0].count if readers else 0
    return dump_stats, _chunk_counters(work, k, articles)


def _chunk_counters(work: Path, chunks: int, articles: int) -> Counter:
    """The statement-level counters of every chunk (those parsed now and in earlier runs), summed; the
    chunks must hold the ``articles`` pages read."""
    total: Counter = Counter()
    n_articles = 0
    for i in range(chunks):
        meta = read_json(work / f"cand-{i:06d}.json")
        total.update(meta["counters"])
        n_articles += meta["articles"]
    if n_articles != articles:
        raise RuntimeError(
            f"work folder {work} is inconsistent ({n_articles} articles in chunks, {articles} read); "
            "delete it and run again"
        )
    return total


def _fetch_one(fetcher, s: CollectSettings, url: str, access_date: str, archive_url: str, title: str) -> dict:
    res = fetcher.fetch(url, access_date=access_date, archive_url=archive_url)
    row = {
        "url": url,
        "ok": False,
        "reason": "",
        "doc_title": "",
        "doc_text": "",
        "final_url": res.final_url,
        "fetch_source": res.source,
        "doc_standin": bool(res.standin),
    }
    if not res.ok:
        row["reason"] = f"fetch:{res.reason}"
        return row
    ex = extract_document(res.body, url=res.final_url or url, cfg=s.extract, fallback_title=title)
    if not ex.ok:
        row["reason"] = f"extract:{ex.reason}"
        return row
    row.update(ok=True, doc_title=ex.title, doc_text=ex.text)
    return row


def _fetch_batch(fetcher, s: CollectSettings, batch: list[str], urls: Mapping, killer: _Killer) -> list[dict]:
    """The rows of ``batch``, in batch order. Live backend: the host-aware scheduler
    (:mod:`.schedule`) gives ``collect.fetch.workers`` threads the URLs of hosts that are ready, one
    request per host in flight, the per-host limiter still guarding every request. Other backends: the
    same pool without host constraints (wayback and commoncrawl ask their archive, not the cited host;
    warc reads local files on one worker)."""
    workers = 1 if s.fetch.backend == "warc" else max(1, s.fetch.workers)
    backend = getattr(fetcher, "backend", None)
    if isinstance(backend, LiveBackend):
        hosts, limiter = [host_of(u) for u in batch], backend.limiter
        timing = {"ready_at": limiter.ready_at, "clock": limiter.clock, "sleep": limiter.sleep}
    else:
        hosts, timing = [None] * len(batch), {}

    def job(u: str) -> dict:
        acc, arch, title = urls[u]
        return _fetch_one(fetcher, s, u, acc, arch, title)

    rows: list[dict | None] = [None] * len(batch)
    for i, row in run_by_host(batch, job, hosts=hosts, workers=workers, **timing):
        rows[i] = row
        killer.tick()
    return rows


def fetch_phase(cands: pa.Table, work: Path, s: CollectSettings, killer: _Killer, fetcher=None) -> pa.Table:
    """Fetch + extract the unique URLs of ``cands``, in host round-robin order (``interleave_by_host``), in
    batches of ``resume.urls_per_batch`` (:func:`_fetch_batch`); each finished batch is one
    ``docs-NNNNNN.parquet`` in ``work``, skipped on a rerun. ``fetcher``: a ready fetcher (tests and ``bench/fetch.py`` inject one with a stand-in
    resolver); by default :func:`make_fetcher` of ``collect.fetch``, made when a batch needs it."""
    # First citation of each URL (in id-independent, deterministic order) supplies access-date etc.
    urls: dict[str, tuple[str, str, str]] = {}
    for url, acc, arch, title in zip(
        cands.column("url").to_pylist(),
        cands.column("access_date").to_pylist(),
        cands.column("archive_url").to_pylist(),
        cands.column("citation_title").to_pylist(),
    ):
        urls.setdefault(url, (acc, arch, title))
    ordered = interleave_by_host(list(urls))  # batches hold many hosts (FETCH_ORDER in the fingerprint)
    batches = [ordered[i : i + s.urls_per_batch] for i in range(0, len(ordered), s.urls_per_batch)]
    tables = []
    t0 = time.monotonic()
    done_urls = 0
    for b, batch in enumerate(batches):
        path = work / f"docs-{b:06d}.parquet"
        if not path.exists():
            if fetcher is None:
                fetcher = make_fetcher(s.fetch)
            rows = _fetch_batch(fetcher, s, batch, urls, killer)
            write_parquet(path, pa.Table.from_pylist(rows, schema=DOC_SCHEMA))
            killer.tick()
        done_urls += len(batch)
        tables.append(pq.read_table(path, schema=DOC_SCHEMA))
        log.info(
            "fetch: batch %d/%d done (%d/%d URLs, %.1f URL/s)%s",
            b + 1,
            len(batches),
            done_urls,
            len(ordered),
            done_urls / max(time.monotonic() - t0, 1e-9),
            f" [backend reads {fetcher.fetched}, cache hits {fetcher.cache_hits}]" if fetcher else "",
        )
    if not tables:
        return DOC_SCHEMA.empty_table()
    return pa.concat_tables(tables)


def _reasons(counter: Mapping[str, int], prefix: str) -> dict:
    return {k[len(prefix) :]: v for k, v in sorted(counter.items()) if k.startswith(prefix)}


def run_part(
    params: Mapping,
    inputs: Mapping,
    outputs: Mapping,
    *,
    part: str,
    work_dir: str | os.PathLike | None = None,
    keep_work: bool = False,
) -> dict:
    """The part job: collect dump part ``part``.

    ``params`` holds the ``collect`` section; ``inputs["dump"]`` (optional) is the part's dump file,
    by default found in ``collect.dump.dir`` (``<part>``, ``<part>.bz2``, ``<part>.xml.bz2``...);
    ``outputs["raw"]`` / ``outputs["stats"]`` are ``data/raw/<part>.parquet`` / ``.stats.json``.
    Checkpoints go to ``work_dir`` (default ``.<part>.work`` next to the output), removed on success
    unless ``keep_work``. Returns the stats (also written)."""
    collect = params["collect"]
    s = CollectSettings.from_params(collect)
    out_path, stats_path = Path(outputs["raw"]), Path(outputs["stats"])
    dump_path = Path(inputs["dump"]) if inputs.get("dump") else resolve_part(collect["dump"]["dir"], part)
    work = Path(work_dir) if work_dir else out_path.parent / f".{part}.work"
    killer = _Killer()
    _prepare_work_dir(work, _fingerprint(collect, dump_path))
    if s.extract.language:  # load the language model (~2 s of lzma) while the dump is being parsed
        import threading

        from wikiref.web.extract import language_identifier

        threading.Thread(target=language_identifier, daemon=True).start()

    dump_stats, st = parse_phase(dump_path, work, s, killer)
    chunks = sorted(work.glob("cand-*.parquet"))
    cands = (
        pa.concat_tables([pq.read_table(p, schema=CAND_SCHEMA) for p in chunks])
        if chunks
        else CAND_SCHEMA.empty_table()
    )
    log.info(
        "parse: %d articles, %d statements, %d kept", dump_stats["articles"], st["statements_total"], cands.num_rows
    )

    docs = fetch_phase(cands, work, s, killer)
    rows, ex_dropped = _raw_rows(cands, docs, part)
    doc_rows = docs.to_pylist()
    stats = _part_stats(part, dump_path, dump_stats, st, doc_rows, cands.num_rows, rows, ex_dropped)
    check_accounting(stats)
    write_parquet(out_path, pa.Table.from_pylist(rows, schema=RAW))
    killer.tick()
    write_json(stats_path, stats)
    killer.tick()
    if not keep_work:
        shutil.rmtree(work, ignore_errors=True)
    log.info(
        "collect %s: %d raw examples from %d articles (%d statements kept, %d unique URLs, %d documents)",
        part,
        len(rows),
        dump_stats["articles"],
        st["statements_kept"],
        len(doc_rows),
        stats["urls"]["documents_ok"],
    )
    return stats


def _raw_rows(cands: pa.Table, docs: pa.Table, part: str) -> tuple[list[dict], Counter]:
    """(the :data:`wikiref.schemas.RAW` rows of the candidates whose document was fetched and extracted,
    sorted by id; the other candidates counted by the document's failure reason)."""
    by_url = {r["url"]: r for r in docs.to_pylist()}
    rows, ex_dropped = [], Counter()
    for c in cands.to_pylist():
        d = by_url[c["url"]]
        if not d["ok"]:
            ex_dropped[d["reason"]] += 1
            continue
        rows.append(
            {
                "id": stable_id(str(c["page_id"]), c["article"], *c["query"], str(c["statement_index"]), c["url"]),
                "article": c["article"],
                "query": c["query"],
                "statement": c["statement"],
                "url": c["url"],
                "citation_type": c["citation_type"],
                "doc_title": d["doc_title"],
                "doc_text": d["doc_text"],
                "page_id": c["page_id"],
                "part": part,
                "statement_index": c["statement_index"],
                "citation_title": c["citation_title"],
                "access_date": c["access_date"],
                "final_url": d["final_url"],
                "fetch_source": d["fetch_source"],
                "doc_standin": d["doc_standin"],
            }
        )
    rows.sort(key=lambda r: r["id"])
    if len({r["id"] for r in rows}) != len(rows):
        raise RuntimeError("duplicate example ids (same article, section, statement index and URL twice)")
    return rows, ex_dropped


def _part_stats(
    part: str, dump_path: Path, dump_stats: Mapping, st: Mapping, doc_rows: list, candidates: int, rows, ex_dropped
) -> dict:
    """The part's stats: every page, statement, URL and candidate either kept or dropped with a reason."""
    url_reasons = Counter(d["reason"] for d in doc_rows if not d["ok"])
    return {
        "part": part,
        "dump": {
            "file": dump_path.name,
            "xml_bytes": dump_stats["xml_bytes"],
            "pages_read": dump_stats["pages_read"],
            "articles": dump_stats["articles"],
            "pages_skipped": _reasons(dump_stats, "page_skipped:"),
        },
        "citations": {
            "first_of_statement": st["citations_first"],
            "not_first_in_group": st["citations_not_first"],
            "named_refs_reused": st["named_ref_reused"],
            "refs_outside_prose": st["refs_outside_prose"],
            "empty_refs": st["empty_ref"],
            "first_by_type": _reasons(st, "first_citation_type:"),
        },
        "statements": {
            "total": st["statements_total"],
            "kept": st["statements_kept"],
            "kept_by_type": _reasons(st, "kept_citation_type:"),
            "dropped": _reasons(st, "statement_dropped:"),
        },
        "urls": {
            "unique": len(doc_rows),
            "documents_ok": sum(1 for d in doc_rows if d["ok"]),
            "standin": sum(1 for d in doc_rows if d["ok"] and d["doc_standin"]),
            "dropped": dict(sorted(url_reasons.items())),
        },
        "examples": {
            "candidates": candidates,
            "written": len(rows),
            "by_type": dict(sorted(Counter(r["citation_type"] for r in rows).items())),
            "standin_documents": sum(1 for r in rows if r["doc_standin"]),
            "dropped": dict(sorted(ex_dropped.items())),
        },
    }


def check_accounting(stats: Mapping) -> None:
    """Every item read is either kept or dropped with a reason (raises if the books do not balance)."""
    d, c, s, u, e = stats["dump"], stats["citations"], stats["statements"], stats["urls"], stats["examples"]
    problems = []
    if d["pages_read"] != d["articles"] + sum(d["pages_skipped"].values()):
        problems.append("pages")
    if s["total"] != s["kept"] + sum(s["dropped"].values()):
        problems.append("statements")
    if s["total"] != c["first_of_statement"]:
        problems.append("citations vs statements")
    if s["kept"] != e["candidates"]:
        problems.append("kept statements vs candidates")
    if e["candidates"] != e["written"] + sum(e["dropped"].values()):
        problems.append("examples")
    if u["unique"] != u["documents_ok"] + sum(u["dropped"].values()):
        problems.append("urls")
    if problems:
        raise RuntimeError(f"collect stats do not balance ({', '.join(problems)}): {json.dumps(stats)[:2000]}")


def merge_stats(parts: Iterable[Mapping]) -> dict:
    """Sum per-part stats (nested counters) into one, keeping the per-part figures too."""
    parts = list(parts)

    def add(acc: dict, new: Mapping) -> None:
        for k, v in new.items():
            if isinstance(v, Mapping):
                add(acc.setdefault(k, {}), v)
            elif isinstance(v, bool) or not isinstance(v, (int, float)):
                continue
            else:
                acc[k] = acc.get(k, 0) + v

    total: dict = {}
    for p in parts:
        add(total, {k: v for k, v in p.items() if k != "part"})
    total.get("dump", {}).pop("file", None)
    standin_docs = total.get("examples", {}).get("standin_documents", 0)
    return {
        "parts": [p["part"] for p in parts],
        # derived from the data: examples whose cited page is a STAND-IN (the sample's WARC marks them)
        "standin": bool(standin_docs),
        "standin_examples": standin_docs,
        "total": total,
        "per_part": {
            p["part"]: {
                "articles": p["dump"]["articles"],
                "statements_kept": p["statements"]["kept"],
                "examples": p["examples"]["written"],
            }
            for p in parts
        },
    }


def merge(params: Mapping, inputs: Mapping, outputs: Mapping) -> dict:
    """The merge job: ``inputs["stats"]`` (the per-part stats files, one per part of
    ``collect.dump.parts``) summed into ``outputs["metrics"]`` (results/metrics/collect.json), after
    checking that the summed books balance. Returns the merged stats."""
    parts = [read_json(p) for p in inputs["stats"]]
    names = [p["part"] for p in parts]
    expected = list(params["collect"]["dump"]["parts"])
    if sorted(names) != sorted(expected):
        raise CollectError(f"the stats files cover parts {names}, collect.dump.parts lists {expected}")
    merged = merge_stats(parts)
    check_accounting(merged["total"])
    write_json(outputs["metrics"], merged)
    return merged


def part_inputs(config: Mapping, part: str) -> list[str]:
    """The files the job of dump part ``part`` reads (its Snakemake inputs): the dump part (with
    ``collect.dump.download`` on, the file rule ``collect_download`` writes) and, for the warc backend, the
    archives. Files of the offline sample are outputs of rule ``sample`` (its dump fragment and WARC)."""
    from wikiref.wiki.index import downloaded_part

    collect = config["collect"]
    if layout.dump_download(config) is not None:
        dump = downloaded_part(config, part)
    else:
        dump = default_part_path(collect["dump"]["dir"].rstrip("/"), part)
    files = {dump}
    if collect["fetch"]["backend"] == "warc":
        files |= set(collect["fetch"].get("warc_paths", []))
    return sorted(files)
