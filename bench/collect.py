"""Benchmark of the collect step's parsing on the sample dump, beside plain bz2 decompression.

    python bench/collect.py                      # the gensim fragment (the offline sample's dump)
    python bench/collect.py --dump X.xml.bz2 --repeat 3 --warc resources/sample/warc/standin.warc.gz

Prints one JSON object per line:
  {"bench": "bz2_decompress", ...}   reading the .bz2 and decompressing it, nothing else
  {"bench": "dump_read", ...}        + XML parsing into pages (mwxml), namespace/redirect filtering
  {"bench": "mwparserfromhell", ...} + mwparserfromhell.parse of every article (the library alone)
  {"bench": "collect_parse", ...}    + the whole statement extraction (wikiref.stages.collect.statements)
  {"bench": "fetch_extract", ...}    (with --warc) WARC read + trafilatura extraction + language check
  {"bench": "summary", "parse_vs_bz2": R, ...}   the headline: collect_parse time / bz2 time
Each figure is the fastest of --repeat runs (the machine may be shared). No figure is asserted here;
tests never time anything.
"""

from __future__ import annotations

import argparse
import bz2
import json
import platform
from collections import Counter

from wikiref.benchmarks import best_of


def main() -> int:
    from wikiref.stages.collect.dump import iter_pages
    from wikiref.stages.collect.statements import StatementConfig, parse_article
    from wikiref.stages.sample import locate_gensim_dump

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dump", default=None, help="a .xml.bz2 dump part (default: the gensim fragment)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--warc", default=None, help="also time fetch (warc backend) + extraction of its records")
    ap.add_argument("--max-docs", type=int, default=500, help="documents timed with --warc")
    args = ap.parse_args()
    dump = args.dump or str(locate_gensim_dump())
    compressed = __import__("os").path.getsize(dump)

    def decompress():
        n = 0
        with bz2.open(dump, "rb") as fh:
            while block := fh.read(1 << 20):
                n += len(block)
        return n

    t_bz2, xml_bytes = best_of(decompress, args.repeat)
    mb = xml_bytes / 1e6
    env = {"python": platform.python_version(), "machine": platform.machine()}

    def emit(name, seconds, **extra):
        print(
            json.dumps(
                {
                    "bench": name,
                    "seconds": round(seconds, 3),
                    "xml_mb": round(mb, 2),
                    "xml_mb_per_s": round(mb / seconds, 2),
                    **extra,
                }
            ),
            flush=True,
        )

    emit("bz2_decompress", t_bz2, compressed_mb=round(compressed / 1e6, 2), dump=dump, **env)

    t_read, pages = best_of(lambda: list(iter_pages(dump)), args.repeat)
    emit("dump_read", t_read, articles=len(pages), pages_per_s=round(len(pages) / t_read, 1))

    import mwparserfromhell

    t_mwp, _ = best_of(lambda: [mwparserfromhell.parse(p.text) for p in pages], args.repeat)
    emit(
        "mwparserfromhell",
        t_read + t_mwp,
        articles=len(pages),
        pages_per_s=round(len(pages) / (t_read + t_mwp), 1),
        c_tokenizer=bool(mwparserfromhell.parser.use_c),
    )

    cfg = StatementConfig()

    def parse_all():
        stats = Counter()
        n = 0
        for page in iter_pages(dump):
            parse_article(page.title, page.text, cfg, stats)
            n += 1
        return n, stats

    t_parse, (n_articles, stats) = best_of(parse_all, args.repeat)
    emit(
        "collect_parse",
        t_parse,
        articles=n_articles,
        statements=stats["statements_total"],
        statements_kept=stats["statements_kept"],
        pages_per_s=round(n_articles / t_parse, 1),
        statements_per_s=round(stats["statements_total"] / t_parse, 1),
    )

    if args.warc:
        from wikiref.stages.collect.extract import ExtractConfig, extract_document
        from wikiref.stages.collect.fetch import FetchConfig, WarcBackend

        wb = WarcBackend(FetchConfig(backend="warc"), [args.warc])
        urls = sorted(wb.exact)[: args.max_docs]
        extract_document(wb.fetch(urls[0]).body)  # load the language model outside the timing

        def fetch_extract():
            ok = 0
            for u in urls:
                res = wb.fetch(u)
                ok += extract_document(res.body, u, ExtractConfig()).ok
            return ok

        t_fx, ok = best_of(fetch_extract, args.repeat)
        print(
            json.dumps(
                {
                    "bench": "fetch_extract",
                    "seconds": round(t_fx, 3),
                    "documents": len(urls),
                    "ok": ok,
                    "docs_per_s": round(len(urls) / t_fx, 1),
                }
            ),
            flush=True,
        )

    print(
        json.dumps(
            {
                "bench": "summary",
                "parse_vs_bz2": round(t_parse / t_bz2, 1),
                "read_vs_bz2": round(t_read / t_bz2, 1),
                "mwparserfromhell_share": round(t_mwp / t_parse, 2),
                "note": "collect_parse seconds / bz2 decompression seconds of the same file, same run",
            }
        ),
        flush=True,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
