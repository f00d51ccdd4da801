"""Benchmark: wikiref.rouge.oracle.greedy_oracle vs the straightforward rouge-score greedy, on one core.

Both run on the same examples (real web documents by default: ../shared/data/wikicite-sample,
optionally also data/oracle|split|curated parquet files given with --parquet). For each metric
the script prints one JSON line with examples/s of each, the speed ratio and the number of
examples whose selections (indices or score) differ - which must be 0.

    python bench/oracle.py                                  # the 25 real WikiCite documents
    python bench/oracle.py --parquet data/oracle/train.parquet --repeat 3

The fast path is timed twice: ``cold`` (its token/stem caches emptied first, as at the start of a
run) and ``warm`` (caches filled, as in the middle of a long run). Speed figures are wall-clock
on whatever else the machine is doing; the ratio is the figure to quote.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("WIKIREF_SHARED_DATA", REPO.parent / "shared" / "data"))


def load_examples(args) -> list[tuple[list[str], str, str]]:
    """(sentences, reference, source) triples."""
    out = []
    cloze = SHARED / "wikicite-sample" / "cloze.jsonl"
    if not args.no_shared and cloze.exists():
        for line in cloze.read_text(encoding="utf-8").splitlines():
            if line.strip():
                ex = json.loads(line)
                out.append((list(ex["document"]), ex["cloze"], "wikicite"))
    for p in args.parquet:
        import pyarrow.parquet as pq

        t = pq.read_table(p, columns=["doc_sentences", "statement"])
        for d, s in zip(t.column("doc_sentences").to_pylist(), t.column("statement").to_pylist()):
            out.append((list(d), s, Path(p).name))
        if args.limit:
            out = out[: args.limit]
    return out


def clear_caches() -> None:
    from wikiref.rouge import fast

    fast._TOKEN_CACHE.clear()
    if fast._STEMMER is not None:
        fast._STEMMER._cache.clear()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--parquet", nargs="*", default=[], help="extra inputs with doc_sentences + statement columns")
    ap.add_argument("--no-shared", action="store_true", help="do not use ../shared/data/wikicite-sample")
    ap.add_argument("--limit", type=int, default=0, help="at most this many examples (0 = all)")
    ap.add_argument("--repeat", type=int, default=5, help="warm passes of the fast path (default: %(default)s)")
    ap.add_argument(
        "--metrics",
        nargs="+",
        default=["rouge2_f1:none", "rouge2_recall:5", "rougeL_f1:none"],
        help="metric:max_sentences pairs (default: oracle labels, curation filter (c), ROUGE-L)",
    )
    args = ap.parse_args(argv)

    from rouge_score import rouge_scorer

    from wikiref.rouge.oracle import greedy_oracle, greedy_oracle_reference

    examples = load_examples(args)
    if not examples:
        print(json.dumps({"error": "no input examples (shared data absent and no --parquet)"}))
        return 1
    n = len(examples)
    n_sents = sum(len(s) for s, _, _ in examples)
    sources = sorted({src for _, _, src in examples})
    for spec in args.metrics:
        metric, _, ms = spec.partition(":")
        max_sentences = None if ms in ("", "none") else int(ms)
        scorer = rouge_scorer.RougeScorer([metric.split("_")[0]], use_stemmer=True)

        t0 = time.perf_counter()
        naive = [
            greedy_oracle_reference(s, r, metric=metric, max_sentences=max_sentences, scorer=scorer)
            for s, r, _ in examples
        ]
        t_naive = time.perf_counter() - t0

        clear_caches()
        t0 = time.perf_counter()
        fast = [greedy_oracle(s, r, metric=metric, max_sentences=max_sentences) for s, r, _ in examples]
        t_cold = time.perf_counter() - t0
        t_warm = float("inf")
        for _ in range(max(args.repeat, 1)):
            t0 = time.perf_counter()
            again = [greedy_oracle(s, r, metric=metric, max_sentences=max_sentences) for s, r, _ in examples]
            t_warm = min(t_warm, time.perf_counter() - t0)
            assert again == fast

        differing = sum(1 for a, b in zip(fast, naive) if a != b)
        print(
            json.dumps(
                {
                    "bench": "oracle",
                    "metric": metric,
                    "max_sentences": max_sentences,
                    "examples": n,
                    "sentences": n_sents,
                    "sources": sources,
                    "rouge_score_greedy_examples_per_s": round(n / t_naive, 2),
                    "fast_greedy_cold_examples_per_s": round(n / t_cold, 2),
                    "fast_greedy_warm_examples_per_s": round(n / t_warm, 2),
                    "speedup_cold": round(t_naive / t_cold, 1),
                    "speedup_warm": round(t_naive / t_warm, 1),
                    "differing_selections": differing,
                    "python": sys.version.split()[0],
                }
            ),
            flush=True,
        )
        if differing:
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
