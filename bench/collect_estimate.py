"""Paper-scale estimate of collect (issue #18): wall time and disk for every part of an English Wikipedia dump on
N cores in M SLURM jobs, from rates measured here on the sample dump and on the loopback fetch benchmark.

    python bench/collect_estimate.py                                  # 64 cores in 8 jobs, measured rates
    python bench/collect_estimate.py --cores 256 --jobs 27 --fetch-workers 64
    python bench/collect_estimate.py --dumpstatus resources/enwiki/20190101/dumpstatus.json   # real part sizes
    python bench/collect_estimate.py --no-fetch-bench                 # skip the ~1 min loopback fetch run

What is measured (this run) and what is assumed (printed with "assumed": true, change with the flags):
  measured  CPU seconds of dump read + statement extraction per MB of XML, and of bz2 decompression, on the
            sample dump (the code `wikiref collect part` runs: mwxml + the token walker, statements only);
            XML/bz2 size ratio, kept statements and distinct cited URLs per MB of XML, the share of the
            busiest cited host (all real citations of the sample's 106 articles);
            the process pool's efficiency at --pool-workers processes (if > 1);
            the fetch scheduler's efficiency (URLs/s over its ideal: hosts / interval, bounded by workers /
            latency) and CPU seconds per URL, from `bench/fetch.py --quick` (loopback, the real fetch_phase);
            bytes per collected row in data/raw/*.parquet when a sample run left one (STAND-IN documents,
            built to WikiRef's mean length).
  assumed   the dump's bz2 size (--compressed-gb, unless --dumpstatus lists the real files), its number of
            parts (--parts) and articles (--articles), the cited web's latency per page (--latency-s), the
            HTML size per cached page (--html-kb), the share of URLs that fetch and extract (--ok-share).
The sample's articles are long, densely cited "A" articles, so statements, URLs and CPU per MB are upper
bounds for an average part. Output: one JSON object per line; `--markdown` adds the table written into
docs/design.md. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parents[1]


def measure_extraction(dump: str, repeat: int) -> dict:
    import bz2

    from wikiref.wiki.dump import iter_pages
    from wikiref.wiki.statements import StatementConfig, parse_article

    def cpu(fn):
        best, out = float("inf"), None
        for _ in range(max(1, repeat)):
            t0 = time.process_time()
            out = fn()
            best = min(best, time.process_time() - t0)
        return best, out

    def decompress():
        with bz2.open(dump, "rb") as fh:
            return sum(len(b) for b in iter(lambda: fh.read(1 << 20), b""))

    cfg = StatementConfig()

    def extract():
        stats, urls, pages = Counter(), [], 0
        for page in iter_pages(dump):
            article = parse_article(page.title, page.text, cfg, stats, statements_only=True)
            urls.extend(st.citation.url.strip() for st in article.statements if not st.drop)
            pages += 1
        return stats, urls, pages

    c_bz2, xml_bytes = cpu(decompress)
    c_all, (stats, urls, pages) = cpu(extract)
    distinct = sorted(set(urls))
    hosts = Counter((urlsplit(u).hostname or "") for u in distinct)
    return {
        "compressed_mb": os.path.getsize(dump) / 1e6,
        "xml_mb": xml_bytes / 1e6,
        "bz2_cpu_s": c_bz2,
        "pages": pages,
        "collect_parse_cpu_s": c_all,
        "statements_kept": stats["statements_kept"],
        "distinct_urls": len(distinct),
        "busiest_host_share": max(hosts.values()) / len(distinct) if distinct else 0.0,
        "busiest_host": hosts.most_common(1)[0][0] if hosts else "",
        "hosts": len(hosts),
    }


def pool_efficiency(dump: str, workers: int) -> float:
    """Wall-time speed-up of the part job's process pool over one process, per worker (pages already read)."""
    import multiprocessing

    sys.path.insert(0, str(REPO / "bench"))
    from collect import _pool_parse  # the same work function bench/collect.py times

    from wikiref.wiki.dump import iter_pages

    work = [(p.title, p.text) for p in iter_pages(dump)]
    t0 = time.perf_counter()
    for item in work:
        _pool_parse(item)
    one = time.perf_counter() - t0
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        pool.map(_pool_parse, work[:workers])  # start-up outside the timing
        t0 = time.perf_counter()
        list(pool.imap(_pool_parse, work, chunksize=max(1, len(work) // (8 * workers))))
        many = time.perf_counter() - t0
    return min(1.0, one / many / workers)


def fetch_efficiency() -> dict | None:
    """From `bench/fetch.py --quick` (the real fetch_phase on loopback): the host-aware scheduler's URLs/s over
    its ideal (hosts / interval, bounded by workers / latency) where the run was not CPU-bound (the ideal needs
    under half a core), and CPU seconds per URL (HTTP client + extraction, in the one fetching process)."""
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "fetch.py"), "--quick"], capture_output=True, text=True, timeout=900
    )
    rows = [json.loads(x) for x in proc.stdout.splitlines() if x.startswith("{")]
    rows = [x for x in rows if x.get("bench") == "fetch" and "host_aware" in x]
    if proc.returncode != 0 or not rows:
        print(f"bench/fetch.py --quick failed (exit {proc.returncode}): {proc.stderr[-2000:]}", file=sys.stderr)
        return None
    cpu_per_url = max(r["host_aware"]["cpu_s"] / r["urls"] for r in rows)
    free = [r for r in rows if r["ideal_urls_per_s"] * cpu_per_url < 0.5] or rows[:1]
    return {
        "scheduler_efficiency": min(1.0, min(r["host_aware"]["urls_per_s"] / r["ideal_urls_per_s"] for r in free)),
        "at_hosts": [r["hosts"] for r in free],
        "cpu_s_per_url": cpu_per_url,
        "rows": [
            {"hosts": r["hosts"], "urls_per_s": r["host_aware"]["urls_per_s"], "ideal": r["ideal_urls_per_s"]}
            for r in rows
        ],
    }


def dump_size_gb(dumpstatus: str | None, assumed_gb: float, parts: int, wiki: str, date: str):
    """(bz2 GB of the articles parts, number of parts, assumed?) from a downloaded dumpstatus.json if given."""
    if not dumpstatus:
        return assumed_gb, parts, True
    from wikiref.wiki import index

    status = json.loads(Path(dumpstatus).read_text(encoding="utf-8"))
    files = index.articles_files(status, wiki=wiki, date=date, multistream=False, where=dumpstatus)
    return sum(int(f.get("size", 0)) for f in files.values()) / 1e9, len(files), False


def raw_bytes_per_row() -> tuple[float | None, str]:
    import pyarrow.parquet as pq

    paths = sorted(glob.glob(str(REPO / "data" / "raw" / "*.parquet")))
    rows = sum(pq.ParquetFile(p).metadata.num_rows for p in paths)
    if not rows:
        return None, "no data/raw/*.parquet (run `make sample` first)"
    return sum(os.path.getsize(p) for p in paths) / rows, f"{len(paths)} sample part(s), STAND-IN documents"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dump", default=None, help="a .xml.bz2 part to measure on (default: the sample's dump)")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--cores", type=int, default=64, help="cores in all")
    ap.add_argument("--jobs", type=int, default=8, help="SLURM jobs running at once (cores are split evenly)")
    ap.add_argument("--dumpstatus", default=None, help="dumpstatus.json from `wikiref collect download --index-only`")
    ap.add_argument("--wiki", default="enwiki", help="with --dumpstatus")
    ap.add_argument("--date", default="20190101", help="with --dumpstatus")
    ap.add_argument("--compressed-gb", type=float, default=16.0, help="assumed bz2 size of the articles parts")
    ap.add_argument("--parts", type=int, default=27, help="assumed number of parts (the paper's dump: 27)")
    ap.add_argument("--pool-workers", type=int, default=2, help="measure the process pool at this size (1: skip)")
    ap.add_argument("--no-fetch-bench", action="store_true", help="do not run bench/fetch.py --quick")
    ap.add_argument("--fetch-workers", type=int, default=64, help="fetch threads per job (collect.fetch.workers)")
    ap.add_argument("--interval-s", type=float, default=1.0, help="collect.fetch.per_host_interval_s")
    ap.add_argument("--latency-s", type=float, default=1.0, help="assumed seconds per page of the cited web")
    ap.add_argument("--ok-share", type=float, default=0.6, help="assumed share of URLs that fetch and extract")
    ap.add_argument("--html-kb", type=float, default=20.0, help="assumed gzip'd HTML kB per cached page")
    ap.add_argument("--crawls", type=int, default=2, help="crawls asked per URL (commoncrawl backend)")
    ap.add_argument("--articles", type=float, default=6.7e6, help="assumed articles in the dump (issue #18)")
    ap.add_argument("--markdown", action="store_true", help="also print the table for docs/design.md")
    args = ap.parse_args()
    if args.jobs < 1 or args.cores < args.jobs:
        ap.error("need --cores >= --jobs >= 1")

    from wikiref.stages.sample import locate_gensim_dump

    dump = args.dump or str(locate_gensim_dump())
    m = measure_extraction(dump, args.repeat)
    eff_pool = pool_efficiency(dump, args.pool_workers) if args.pool_workers > 1 else 1.0
    fetch = None if args.no_fetch_bench else fetch_efficiency()
    eff_fetch = fetch["scheduler_efficiency"] if fetch else 1.0
    cpu_per_url = fetch["cpu_s_per_url"] if fetch else 0.0
    print(
        json.dumps(
            {
                "bench": "measured",
                **{k: round(v, 4) if isinstance(v, float) else v for k, v in m.items()},
                "pool_workers": args.pool_workers,
                "pool_efficiency": round(eff_pool, 3),
                "fetch": fetch,
            }
        ),
        flush=True,
    )

    gb, parts, assumed_size = dump_size_gb(args.dumpstatus, args.compressed_gb, args.parts, args.wiki, args.date)
    xml_mb = gb * 1e3 * m["xml_mb"] / m["compressed_mb"]
    cpu_per_xml_mb = m["collect_parse_cpu_s"] / m["xml_mb"]
    parse_cpu_h = xml_mb * cpu_per_xml_mb / 3600
    cores_per_job = args.cores // args.jobs
    part_cpu_s = parse_cpu_h * 3600 / parts
    part_wall_s = part_cpu_s / (cores_per_job * (eff_pool if cores_per_job > 1 else 1.0))
    parse_wall_h = math.ceil(parts / args.jobs) * part_wall_s / 3600

    statements = m["statements_kept"] / m["xml_mb"] * xml_mb
    urls = m["distinct_urls"] / m["xml_mb"] * xml_mb
    # Fetching: each job's threads at the cited web's latency, capped by the one fetching process's CPU (the
    # HTTP client and extraction hold the interpreter); or politeness: the busiest host alone takes (its URLs)
    # x (interval), whatever the parallelism (the per-host interval holds across jobs sharing the cache).
    per_job = args.fetch_workers / args.latency_s * eff_fetch
    if cpu_per_url:
        per_job = min(per_job, 1 / cpu_per_url)
    by_threads_h = urls / (args.jobs * per_job) / 3600
    by_host_h = urls * m["busiest_host_share"] * args.interval_s / 3600
    fetch_wall_h = max(by_threads_h, by_host_h)
    # commoncrawl: every URL is looked up in each crawl's index on one host (index.commoncrawl.org), then its
    # record read from another (data.commoncrawl.org); both hosts are held to the interval.
    cc_index_h = urls * args.crawls * args.interval_s / 3600
    # By articles instead of bytes: the sample's articles are long, so this is an upper bound.
    parse_cpu_h_articles = args.articles / (m["pages"] / m["collect_parse_cpu_s"]) / 3600

    row_bytes, row_origin = raw_bytes_per_row()
    disk = {
        "dump_gb": round(gb, 1),
        "fetch_cache_gb": round(urls * args.html_kb / 1e6, 1),
        "raw_parquet_gb": round(urls * args.ok_share * (statements / urls) * row_bytes / 1e9, 1) if row_bytes else None,
        "raw_bytes_per_row": round(row_bytes) if row_bytes else None,
        "raw_bytes_origin": row_origin,
    }
    estimate = {
        "bench": "estimate",
        "cores": args.cores,
        "jobs": args.jobs,
        "cores_per_job": cores_per_job,
        "parts": parts,
        "compressed_gb": round(gb, 1),
        "compressed_gb_assumed": assumed_size,
        "xml_gb": round(xml_mb / 1e3, 1),
        "parse_cpu_s_per_xml_mb": round(cpu_per_xml_mb, 3),
        "parse_vs_bz2": round(m["collect_parse_cpu_s"] / m["bz2_cpu_s"], 1),
        "parse_cpu_hours": round(parse_cpu_h, 1),
        "parse_wall_hours": round(parse_wall_h, 2),
        "statements_kept": round(statements),
        "distinct_urls": round(urls),
        "fetch_wall_hours": round(fetch_wall_h, 1),
        "fetch_bound": "busiest host x interval" if by_host_h >= by_threads_h else "threads x latency",
        "fetch_wall_hours_by_threads": round(by_threads_h, 1),
        "fetch_wall_hours_by_busiest_host": round(by_host_h, 1),
        "fetch_urls_per_s_per_job": round(per_job, 1),
        "parse_cpu_hours_by_articles": round(parse_cpu_h_articles, 1),
        "commoncrawl_index_hours": round(cc_index_h, 1),
        "assumed": {
            "latency_s": args.latency_s,
            "html_kb": args.html_kb,
            "ok_share": args.ok_share,
            "interval_s": args.interval_s,
            "fetch_workers_per_job": args.fetch_workers,
        },
        "disk": disk,
    }
    print(json.dumps(estimate), flush=True)
    if args.markdown:
        e = estimate
        print(
            f"""
| collect of {e["parts"]} parts, {e["compressed_gb"]} GB bz2{" (assumed)" if assumed_size else ""} ≈ {e["xml_gb"]} GB XML, {args.cores} cores in {args.jobs} jobs | figure |
|---|---|
| extraction, CPU (measured {e["parse_cpu_s_per_xml_mb"]} CPU s per XML MB, {e["parse_vs_bz2"]}x bz2) | {e["parse_cpu_hours"]} CPU hours |
| extraction, wall ({cores_per_job} cores per job, pool efficiency {eff_pool:.2f}) | {e["parse_wall_hours"]} h |
| kept statements / distinct cited URLs (sample rates per MB, upper bounds) | {e["statements_kept"]:,} / {e["distinct_urls"]:,} |
| fetch, wall: threads x latency ({args.jobs} jobs x {args.fetch_workers} threads, {args.latency_s} s assumed, scheduler efficiency {eff_fetch:.2f}, at most {1 / cpu_per_url if cpu_per_url else float("inf"):.0f} URL/s per job: {cpu_per_url * 1e3:.1f} ms CPU per URL) | {e["fetch_wall_hours_by_threads"]} h |
| fetch, wall: busiest host ({m["busiest_host_share"]:.1%} of URLs) x {args.interval_s} s interval | {e["fetch_wall_hours_by_busiest_host"]} h |
| extraction, CPU scaled by {args.articles:,.0f} articles instead of bytes (upper bound: long sample articles) | {e["parse_cpu_hours_by_articles"]} CPU hours |
| commoncrawl backend: {args.crawls} CDX lookups per URL on one index host at {args.interval_s} s | {e["commoncrawl_index_hours"]} h |
| disk: dump / fetch cache ({args.html_kb} kB per page assumed) / data/raw | {disk["dump_gb"]} / {disk["fetch_cache_gb"]} / {disk["raw_parquet_gb"]} GB |
"""
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
