"""Benchmark: the QmdsCnn BM25 retrieval (``wikiref.stages.qmdscnn.retrieval.ChunkIndex``, bm25s) beside
``rank_bm25.BM25Okapi`` (what one would otherwise write), on the same token lists, at growing corpus sizes.

    python bench/bm25.py                 # default: real chunks x1, x4, x16, x64 (< 5 min on 2 cores)
    python bench/bm25.py --quick         # x1, x4, x16, fewer queries (< 1 min)
    python bench/bm25.py --copies 1 4 16 64 256 --max-seconds 300

Corpus: the paragraphs of the real Wikipedia sample dump (the gensim fragment, parsed by the collect step
with params.yaml's collect section, skipped sections left out) and, when ../shared/data/cnn-stories exists,
the paragraphs of its 20 real CNN stories; each article's paragraphs are grouped into chunks of 1-4
consecutive paragraphs (seeded RNG), as the QmdsCnn builder does. Query of an article: its title (CNN: the
first highlight, as the stories carry no title); the article's own chunks are excluded; top 4.

Scale: the chunk set is replicated (copies x1, x4, ...). In copy c > 0 each token occurrence is, with
probability --perturb (seeded), replaced by ``token~c`` (at least one per non-empty chunk, so every copy of
a chunk is a distinct document). Queries are not perturbed: a copy's article is queried with the original
title (its own copy excluded), so it also finds the other copies of its topic. Common words stay shared,
so posting lists grow linearly with the corpus, as they would with more real articles on the same topics.

For each size, stdout gets one JSON line ``{"bench": "bm25_size", ...}``: index time, queries/s, index
bytes per chunk, peak RSS while indexing (and tracemalloc peaks on sizes up to --tracemalloc-max-chunks),
and the comparison: top-4 lists identical or not per query, differences classified as
  high_df     a query term is in more than half of the chunks: Robertson idf < 0, floored to 0 by bm25s,
              replaced by epsilon * average idf by rank_bm25
  zero_score  rank_bm25's list holds chunks without any (positive-idf) query term; we never return them
  near_tie    the lists differ only where scores agree to 1e-9 relative (summation order)
  unexplained anything else (exit 1)
and the score check: ours == rank_bm25 / (k1 + 1) to 1e-9 relative for every chunk (for queries with a
high-df term: after removing those terms from rank_bm25's query), exit 1 otherwise. Then one
``{"bench": "bm25_estimate", ...}`` line (linear fits in N of index time and per-query time, RAM per chunk,
extrapolated to 1M chunks and to the paper's scale) and a ``{"bench": "bm25_summary", ...}`` line.
Human-readable lines go to stderr. Times are wall clock on one core (bm25s and numpy run these steps
single-threaded); the machine may be shared.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import gc
import json
import os
import platform
import random
import re
import sys
import time
import tracemalloc
from collections import Counter
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("WIKIREF_SHARED_DATA", REPO.parent / "shared" / "data"))
K = 4  # chunks retrieved per query
PAPER_QUERIES = 287_113 + 13_368 + 11_490  # QmdsCnn train/val/test examples (Pasunuru et al. 2021, Table 1)
PAPER_DOC_TOKENS = 355  # their average document length in tokens, stop words included (Table 1, train)
REL = 1e-9
WORD = re.compile(r"\w+")


def say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def emit(obj: dict) -> None:
    print(json.dumps(obj), flush=True)


# -- memory -------------------------------------------------------------------------------------------


def _status_kb(field: str) -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def _trim() -> None:
    """Free what was released back to the OS, so RSS deltas of the next step are not hidden by reuse."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


class PeakRss:
    """Peak RSS growth (bytes) over a block: VmHWM reset via /proc/self/clear_refs (Linux), else None."""

    def __enter__(self):
        _trim()
        try:
            Path("/proc/self/clear_refs").write_text("5")
            self.start = _status_kb("VmRSS")
        except OSError:
            self.start = None
        self.bytes = None
        return self

    def __exit__(self, *exc):
        hwm, now = _status_kb("VmHWM"), _status_kb("VmRSS")
        self.retained = None
        if self.start is not None and hwm is not None:
            self.bytes = (hwm - self.start) * 1024
            self.retained = (now - self.start) * 1024
        return False


def traced(fn) -> tuple[int, int]:
    """(peak, live) bytes traced by tracemalloc (numpy arrays included) while ``fn()`` runs and held by its
    result afterwards; the result is dropped."""
    _trim()
    tracemalloc.start()
    out = fn()
    gc.collect()
    live, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del out
    _trim()
    return peak, live


def mb(n: int | float | None) -> float | None:
    return None if n is None else round(n / 1e6, 1)


# -- corpus -------------------------------------------------------------------------------------------


def wiki_articles(params_path: Path) -> list[tuple[str, list[str]]]:
    """(title, paragraphs) of the articles of the gensim sample dump, as the collect step parses them."""
    from wikiref.config import load_params
    from wikiref.stages.sample import locate_gensim_dump
    from wikiref.wiki.dump import iter_pages
    from wikiref.wiki.statements import StatementConfig, parse_article

    cfg = StatementConfig.from_params(load_params(params_path)["collect"])
    out = []
    for page in iter_pages(locate_gensim_dump(), Counter()):
        article = parse_article(page.title, page.text, cfg, Counter())
        paras = [p for s in article.sections if not s.skipped for p in s.paragraphs if p.strip()]
        if paras:
            out.append((page.title, paras))
    return out


def cnn_articles(folder: Path) -> list[tuple[str, list[str]]]:
    """(first highlight, paragraphs) of each .story file: paragraphs = non-empty lines before the first
    @highlight."""
    out = []
    for path in sorted(folder.glob("*.story")):
        body, _, rest = path.read_text(encoding="utf-8").partition("@highlight")
        paras = [line.strip() for line in body.splitlines() if line.strip()]
        highlights = [line.strip() for line in rest.splitlines() if line.strip() and line.strip() != "@highlight"]
        if paras:
            out.append((highlights[0] if highlights else path.stem, paras))
    return out


def chunk_paragraphs(paras: list[str], rng: random.Random) -> list[str]:
    """Consecutive paragraphs grouped into chunks of 1-4 (uniform), as the QmdsCnn builder does."""
    chunks, i = [], 0
    while i < len(paras):
        n = rng.randint(1, 4)
        chunks.append("\n\n".join(paras[i : i + n]))
        i += n
    return chunks


class Corpus:
    """The real chunks (copy 0) and their perturbed copies, built on demand; chunks of one article are
    contiguous, articles in order, copies one after the other."""

    def __init__(self, chunk_tokens, chunk_article, query_tokens, perturb: float, seed: int, long_articles=()):
        self.long_articles = list(long_articles)  # articles whose query is long (CNN: first highlight)
        self.base = chunk_tokens
        self.base_article = np.asarray(chunk_article, dtype=np.int64)
        self.base_queries = query_tokens
        self.n_articles = len(query_tokens)
        self.perturb, self.seed = perturb, seed
        self.tokens: list[list[str]] = list(chunk_tokens)
        self.queries: list[list[str]] = list(query_tokens)
        self.copies = 1
        lens = np.array([len(t) for t in chunk_tokens], dtype=np.int64)
        self._lens, self._offsets = lens, np.concatenate([[0], np.cumsum(lens)])
        starts = np.searchsorted(self.base_article, np.arange(self.n_articles), side="left")
        ends = np.searchsorted(self.base_article, np.arange(self.n_articles), side="right")
        self._span = np.stack([starts, ends], axis=1)  # chunk range of each article in copy 0

    def _copy(self, c: int) -> list[list[str]]:
        rng = np.random.default_rng([self.seed, c])
        sfx = f"~{c}"
        lens, offsets = self._lens, self._offsets
        pos = np.flatnonzero(rng.random(int(offsets[-1])) < self.perturb)
        hit = np.zeros(len(lens), dtype=bool)
        hit[np.searchsorted(offsets, pos, side="right") - 1] = True
        missing = np.flatnonzero(~hit & (lens > 0))  # at least one perturbed token per non-empty chunk
        forced = offsets[missing] + (rng.random(len(missing)) * lens[missing]).astype(np.int64)
        pos = np.sort(np.concatenate([pos, forced]))
        owner = np.searchsorted(offsets, pos, side="right") - 1
        toks = [list(t) for t in self.base]
        for p, ch in zip(pos.tolist(), owner.tolist()):
            lst = toks[ch]
            j = p - int(offsets[ch])
            lst[j] = lst[j] + sfx
        return toks

    def grow(self, copies: int) -> None:
        while self.copies < copies:
            self.tokens.extend(self._copy(self.copies))
            self.queries.extend(self.base_queries)
            self.copies += 1

    def size(self, copies: int) -> int:
        return copies * len(self.base)

    def groups(self, copies: int) -> np.ndarray:
        return np.concatenate([self.base_article + c * self.n_articles for c in range(copies)])

    def span(self, group: int) -> tuple[int, int]:
        c, a = divmod(group, self.n_articles)
        s, e = self._span[a]
        return int(s + c * len(self.base)), int(e + c * len(self.base))


# -- ranking and comparison ---------------------------------------------------------------------------


def top_k(scores: np.ndarray, k: int, own: tuple[int, int], positive_only: bool) -> list[int]:
    """Best ``k`` chunks outside ``own`` (a chunk range), score desc then index asc."""
    cand = scores > 0 if positive_only else np.ones(len(scores), dtype=bool)
    cand[own[0] : own[1]] = False
    idx = np.flatnonzero(cand)
    if len(idx) > k:
        kth = np.partition(scores[idx], len(idx) - k)[len(idx) - k]
        idx = idx[scores[idx] >= kth]
    return idx[np.lexsort((idx, -scores[idx]))[:k]].tolist()


def close(a: float, b: float) -> bool:
    return abs(a - b) <= REL * max(abs(a), abs(b))


def classify(ours: list[int], R: np.ndarray, R_adj: np.ndarray, own: tuple[int, int]) -> set[str]:
    """Why rank_bm25's top-k (on scores ``R``) differs from ours; ``R_adj`` = rank_bm25's scores without the
    query's high-df terms. Empty set: no difference."""
    r1 = top_k(R, K, own, False)  # rank_bm25 as a user would run it
    if r1 == ours:
        return set()
    causes = set()
    if any(R[c] != R_adj[c] for c in r1):  # its list is scored with (epsilon idf) high-df terms
        causes.add("high_df")
    if any(R_adj[c] <= 0 for c in r1):  # chunks without a positive-idf query term, which we never return
        causes.add("zero_score")
    r3 = top_k(R_adj, K, own, True)  # what is left: rank_bm25 without both
    if r3 != ours:
        if len(r3) == len(ours) and all(a == b or close(R_adj[a], R_adj[b]) for a, b in zip(ours, r3)):
            causes.add("near_tie")
        else:
            causes.add("unexplained")
    return causes


# -- one corpus size ----------------------------------------------------------------------------------


def run_size(corpus: Corpus, copies: int, args, state: dict) -> dict:
    import rank_bm25

    from wikiref.stages.qmdscnn.retrieval import ChunkIndex

    k1, b = args.k1, args.b
    n = corpus.size(copies)
    tokens = corpus.tokens[:n]
    groups = corpus.groups(copies)
    n_queries_all = copies * corpus.n_articles
    rng = random.Random(args.seed * 1000 + copies)
    qids = rng.sample(range(n_queries_all), min(args.queries, n_queries_all))  # random order
    n_compare = min(args.compare_queries, len(qids))  # rank_bm25 runs the first ones
    rec: dict = {
        "bench": "bm25_size",
        "copies": copies,
        "chunks": n,
        "articles": n_queries_all,
        "tokens_per_chunk": round(sum(map(len, tokens)) / n, 1),
        "queries_timed": len(qids),
        "queries_for_rank_bm25": n_compare,
        "query_tokens_mean": round(sum(len(corpus.queries[q]) for q in qids) / len(qids), 2),
    }

    # ours
    with PeakRss() as rss:
        t0 = time.perf_counter()
        index = ChunkIndex(tokens, groups, k1=k1, b=b)
        t_index = time.perf_counter() - t0
    t_q = float("inf")
    for _ in range(max(args.repeat, 1)):  # best of --repeat passes (the machine may be shared)
        t0 = time.perf_counter()
        ours = [[h.chunk for h in index.top(corpus.queries[q], K, exclude_group=q)] for q in qids]
        t_q = min(t_q, time.perf_counter() - t0)
    # the CNN queries alone (first highlights: longer, closer to the paper's ~14-token titles)
    long_ids = [c * corpus.n_articles + a for c in range(copies) for a in corpus.long_articles][: args.queries]
    if long_ids:
        t_long = float("inf")
        for _ in range(max(args.repeat, 1)):
            t0 = time.perf_counter()
            for q in long_ids:
                index.top(corpus.queries[q], K, exclude_group=q)
            t_long = min(t_long, time.perf_counter() - t0)
        rec.update(
            long_queries_timed=len(long_ids),
            long_query_tokens_mean=round(sum(len(corpus.queries[q]) for q in long_ids) / len(long_ids), 2),
            ours_ms_per_long_query=round(1e3 * t_long / len(long_ids), 4),
        )
    nnz = len(index.bm25.scores["data"])
    rec.update(
        vocabulary=len(index.bm25.vocab_dict),
        nonzeros=nnz,
        ours_index_s=round(t_index, 3),
        ours_queries_per_s=round(len(qids) / t_q, 1),
        ours_ms_per_query=round(1e3 * t_q / len(qids), 4),
        ours_index_bytes=index.nbytes(),
        ours_bytes_per_chunk=round(index.nbytes() / n, 1),
        ours_bytes_per_nonzero=round(index.nbytes() / nnz, 2),
        ours_index_peak_rss_mb=mb(rss.bytes),
        ours_index_rss_retained_mb=mb(rss.retained),
    )
    if n <= args.tracemalloc_max_chunks:
        peak, live = traced(lambda: ChunkIndex(tokens, groups, k1=k1, b=b))
        rec.update(ours_tracemalloc_peak_mb=mb(peak), ours_tracemalloc_live_mb=mb(live))
    say(
        f"[x{copies}] {n} chunks, {len(qids)} queries | ours: index {t_index:.2f} s, "
        f"{len(qids) / t_q:.0f} queries/s, {index.nbytes() / n:.0f} B/chunk, peak RSS +{mb(rss.bytes)} MB"
    )

    # rank_bm25, within the time cap
    prev = state.get("rank_bm25")
    predicted = prev[1] * n / prev[0] if prev else 0.0
    rec.update(rank_bm25_skipped=None, rank_bm25_incomplete=False)
    if args.no_rank_bm25:
        rec["rank_bm25_skipped"] = "--no-rank-bm25"
    elif state.get("rank_bm25_stop"):
        rec["rank_bm25_skipped"] = "a smaller size already hit --max-seconds"
    elif predicted > args.max_seconds:
        rec["rank_bm25_skipped"] = f"predicted {predicted:.0f} s (linear in N) > --max-seconds {args.max_seconds:g}"
    if rec["rank_bm25_skipped"]:
        say(f"[x{copies}] rank_bm25 skipped: {rec['rank_bm25_skipped']}")
        del index
        return rec

    start = time.perf_counter()
    with PeakRss() as rss:
        t0 = time.perf_counter()
        bm = rank_bm25.BM25Okapi(tokens, k1=k1, b=b)
        t_rindex = time.perf_counter() - t0
    ref_scores, t_rq = [], 0.0
    for q in qids[:n_compare]:
        if time.perf_counter() - start > args.max_seconds:
            rec["rank_bm25_incomplete"] = True
            state["rank_bm25_stop"] = True
            break
        t0 = time.perf_counter()
        R = bm.get_scores(corpus.queries[q])
        top_k(R, K, corpus.span(q), False)
        t_rq += time.perf_counter() - t0
        ref_scores.append(R)
    done = len(ref_scores)
    state["rank_bm25"] = (n, time.perf_counter() - start)
    rec.update(
        rank_bm25_index_s=round(t_rindex, 3),
        rank_bm25_queries_per_s=round(done / t_rq, 2) if done else None,
        rank_bm25_ms_per_query=round(1e3 * t_rq / done, 3) if done else None,
        rank_bm25_index_peak_rss_mb=mb(rss.bytes),
        rank_bm25_index_rss_retained_mb=mb(rss.retained),
        rank_bm25_queries_compared=done,
    )
    if n <= args.tracemalloc_max_chunks:
        peak, live = traced(lambda: rank_bm25.BM25Okapi(tokens, k1=k1, b=b))
        rec.update(rank_bm25_tracemalloc_peak_mb=mb(peak), rank_bm25_tracemalloc_live_mb=mb(live))

    # comparison (untimed): document frequencies of the query terms, then per query
    qterms = {t for q in qids[:done] for t in corpus.queries[q]}
    df: Counter = Counter()
    for d in bm.doc_freqs:
        df.update(qterms.intersection(d))
    causes: Counter = Counter()
    identical = differing = score_bad = score_bad_high = high_queries = 0
    examples = []
    for q, R, top in zip(qids, ref_scores, ours):
        qt = corpus.queries[q]
        high = {t for t in qt if 2 * df[t] > n}
        high_queries += bool(high)
        R_adj = bm.get_scores([t for t in qt if t not in high]) if high else R
        S = index.scores(qt)
        if not np.allclose(S, R_adj / (k1 + 1), rtol=REL, atol=0.0):
            if high:
                score_bad_high += 1
            else:
                score_bad += 1
        why = classify(top, R, R_adj, corpus.span(q))
        if not why:
            identical += 1
            continue
        differing += 1
        causes.update(why)
        if len(examples) < 3 or "unexplained" in why:
            examples.append({"query": qt, "ours": top, "rank_bm25": top_k(R, K, corpus.span(q), False)})
    rec.update(
        top4_identical=identical,
        top4_differing=differing,
        causes={c: causes[c] for c in ("high_df", "zero_score", "near_tie", "unexplained")},
        queries_with_high_df_term=high_queries,
        score_mismatch=score_bad,
        score_mismatch_high_df_adjusted=score_bad_high,
        examples=examples[:5],
        query_speedup=round((t_rq / done) / (t_q / len(qids)), 1) if done else None,
    )
    say(
        f"[x{copies}] rank_bm25: index {t_rindex:.2f} s, {rec['rank_bm25_queries_per_s']} queries/s, "
        f"peak RSS +{mb(rss.bytes)} MB{' (stopped at --max-seconds)' if rec['rank_bm25_incomplete'] else ''}"
        f" | top-4 identical {identical}/{done}, differing {differing} {dict(causes)}, "
        f"score mismatches {score_bad}+{score_bad_high}"
    )
    del bm, index, ref_scores
    return rec


# -- extrapolation ------------------------------------------------------------------------------------


def linear_fit(xs, ys) -> tuple[float, float]:
    """(a, b) of y = a + b x by least squares; through the origin from a single point."""
    if len(xs) == 1:
        return 0.0, ys[0] / xs[0]
    b, a = np.polyfit(np.asarray(xs, float), np.asarray(ys, float), 1)
    return float(a), float(b)


def estimate(rows: list[dict], extra: dict, targets: dict[str, float]) -> dict:
    xs = [r["chunks"] for r in rows]
    a_i, b_i = linear_fit(xs, [r["ours_index_s"] for r in rows])
    a_q, b_q = linear_fit(xs, [r["ours_ms_per_query"] / 1e3 for r in rows])
    long_rows = [r for r in rows if "ours_ms_per_long_query" in r]
    if long_rows:
        a_l, b_l = linear_fit([r["chunks"] for r in long_rows], [r["ours_ms_per_long_query"] / 1e3 for r in long_rows])
    big = rows[-1]
    traced_big = next((r for r in reversed(rows) if "ours_tracemalloc_live_mb" in r), None)
    out: dict = {
        "bench": "bm25_estimate",
        "basis": (
            "ours: least-squares fits over the measured sizes, index_s = a + b*N and s_per_query = a + b*N "
            f"(N = chunks, {len(rows)} sizes, {min(xs)}..{max(xs)}); one core; per-query time for this "
            f"bench's queries (mean {np.mean([r['query_tokens_mean'] for r in rows]):.1f} tokens after "
            "stop words; *_long_query*: the CNN first-highlight queries alone, "
            f"{np.mean([r['long_query_tokens_mean'] for r in long_rows]) if long_rows else 0:.1f} tokens); RAM per chunk: index arrays (ChunkIndex.nbytes) and peak RSS growth while indexing at the "
            "largest size, live objects after indexing (tracemalloc) at the largest traced size"
        ),
        "ours_index_fit": {"a_s": round(a_i, 4), "b_s_per_chunk": b_i},
        "ours_query_fit": {"a_s": round(a_q, 6), "b_s_per_chunk": b_q},
        "ours_long_query_fit": {"a_s": round(a_l, 6), "b_s_per_chunk": b_l} if long_rows else None,
        "largest_size_measured": max(xs),
        "ours_index_bytes_per_chunk": big["ours_bytes_per_chunk"],
        "ours_index_bytes_per_nonzero": big["ours_bytes_per_nonzero"],
        "ours_peak_rss_bytes_per_chunk": round(big["ours_index_peak_rss_mb"] * 1e6 / big["chunks"], 1)
        if big["ours_index_peak_rss_mb"] is not None
        else None,
        "ours_live_bytes_per_chunk": round(traced_big["ours_tracemalloc_live_mb"] * 1e6 / traced_big["chunks"], 1)
        if traced_big
        else None,
        **extra,
    }
    ran = [r for r in rows if r.get("rank_bm25_ms_per_query")]
    if ran:
        ra_i, rb_i = linear_fit([r["chunks"] for r in ran], [r["rank_bm25_index_s"] for r in ran])
        ra_q, rb_q = linear_fit([r["chunks"] for r in ran], [r["rank_bm25_ms_per_query"] / 1e3 for r in ran])
        out["rank_bm25_query_fit"] = {"a_s": round(ra_q, 6), "b_s_per_chunk": rb_q, "sizes": len(ran)}
        rss = ran[-1].get("rank_bm25_index_peak_rss_mb")
        out["rank_bm25_peak_rss_bytes_per_chunk"] = round(rss * 1e6 / ran[-1]["chunks"], 1) if rss else None
    for name, n_chunks in targets.items():
        t_index = a_i + b_i * n_chunks
        t_query = a_q + b_q * n_chunks
        est = {
            "chunks": int(n_chunks),
            "queries": PAPER_QUERIES,
            "ours_index_s": round(t_index, 1),
            "ours_ms_per_query": round(1e3 * t_query, 3),
            "extrapolation_factor": round(n_chunks / max(xs), 1),
            "ours_all_queries_h": round(PAPER_QUERIES * t_query / 3600, 2),
            "ours_total_h": round((t_index + PAPER_QUERIES * t_query) / 3600, 2),
            "ours_index_gb": round(big["ours_bytes_per_chunk"] * n_chunks / 1e9, 2),
            "ours_index_live_gb": round(out["ours_live_bytes_per_chunk"] * n_chunks / 1e9, 2)
            if out["ours_live_bytes_per_chunk"]
            else None,
            "ours_index_peak_gb": round(out["ours_peak_rss_bytes_per_chunk"] * n_chunks / 1e9, 2)
            if out["ours_peak_rss_bytes_per_chunk"]
            else None,
            "token_lists_gb": round(extra["token_lists_bytes_per_chunk"] * n_chunks / 1e9, 2)
            if extra.get("token_lists_bytes_per_chunk")
            else None,
            "tokenize_h": round(n_chunks / extra["tokenize_chunks_per_s"] / 3600, 2),
        }
        if long_rows:
            t_long = a_l + b_l * n_chunks
            est["ours_ms_per_long_query"] = round(1e3 * t_long, 3)
            est["ours_total_h_long_queries"] = round((t_index + PAPER_QUERIES * t_long) / 3600, 2)
        if extra.get("cnn_unique_terms_per_chunk"):
            # nonzeros per CNN chunk (real stories) instead of this corpus' chunks
            per_chunk = extra["cnn_unique_terms_per_chunk"] * big["ours_bytes_per_nonzero"]
            est["ours_index_gb_cnn_chunk_length"] = round(per_chunk * n_chunks / 1e9, 2)
        if ran:
            rt_query = ra_q + rb_q * n_chunks
            est["rank_bm25_index_s"] = round(ra_i + rb_i * n_chunks, 1)
            est["rank_bm25_ms_per_query"] = round(1e3 * rt_query, 1)
            est["rank_bm25_total_h"] = round((ra_i + rb_i * n_chunks + PAPER_QUERIES * rt_query) / 3600, 1)
            if out.get("rank_bm25_peak_rss_bytes_per_chunk"):
                est["rank_bm25_index_peak_gb"] = round(out["rank_bm25_peak_rss_bytes_per_chunk"] * n_chunks / 1e9, 2)
        out[name] = est
    return out


# -- main ---------------------------------------------------------------------------------------------


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--quick", action="store_true", help="small run (< 1 min): --copies 1 4 16, fewer queries, 15 s cap"
    )
    ap.add_argument("--copies", type=int, nargs="+", default=None, help="corpus sizes as copies (default: 1 4 16 64)")
    ap.add_argument("--queries", type=int, default=None, help="queries of ours per size (default: 1000; quick: 300)")
    ap.add_argument(
        "--compare-queries",
        type=int,
        default=None,
        help="of those, the ones also run by rank_bm25 and compared (default: 150; quick: 60)",
    )
    ap.add_argument(
        "--max-seconds",
        type=float,
        default=None,
        help="rank_bm25 time cap per size, index + queries (default: 90; quick: 15)",
    )
    ap.add_argument("--repeat", type=int, default=3, help="passes of our queries, the fastest counts")
    ap.add_argument("--no-rank-bm25", action="store_true", help="time ours only")
    ap.add_argument("--perturb", type=float, default=0.1, help="token perturbation rate of the copies")
    ap.add_argument(
        "--tracemalloc-max-chunks",
        type=int,
        default=None,
        help="tracemalloc pass up to this size (60000; quick: 20000)",
    )
    ap.add_argument("--k1", type=float, default=1.5)
    ap.add_argument("--b", type=float, default=0.75)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--params", type=Path, default=REPO / "params.yaml", help="for the collect section")
    ap.add_argument("--cnn", type=Path, default=SHARED / "cnn-stories", help="folder of .story files (if present)")
    ap.add_argument("--paper-chunks", type=float, default=1.2e6, help="chunks at the paper's scale (estimate)")
    args = ap.parse_args(argv)
    copies = args.copies or ([1, 4, 16] if args.quick else [1, 4, 16, 64])
    args.queries = args.queries or (300 if args.quick else 1000)
    args.compare_queries = args.compare_queries or (60 if args.quick else 150)
    if args.tracemalloc_max_chunks is None:
        args.tracemalloc_max_chunks = 20_000 if args.quick else 60_000
    args.max_seconds = args.max_seconds or (15.0 if args.quick else 90.0)
    if sorted(set(copies)) != copies or copies[0] < 1:
        ap.error("--copies: increasing positive integers")

    from wikiref.stages.qmdscnn.retrieval import tokenize

    t_start = time.perf_counter()
    t0 = time.perf_counter()
    articles = wiki_articles(args.params)
    n_wiki = len(articles)
    t_parse = time.perf_counter() - t0
    cnn_present = args.cnn.is_dir()
    if cnn_present:
        articles += cnn_articles(args.cnn)
    else:
        say(f"no CNN stories at {args.cnn}: Wikipedia chunks only")
    rng = random.Random(args.seed)
    texts, owner = [], []
    for a, (_, paras) in enumerate(articles):
        for chunk in chunk_paragraphs(paras, rng):
            texts.append(chunk)
            owner.append(a)
    t0 = time.perf_counter()
    chunk_tokens = tokenize(texts)
    t_tok = time.perf_counter() - t0
    query_tokens = tokenize([title for title, _ in articles])
    n_cnn_chunks = sum(1 for o in owner if o >= n_wiki)
    cnn_paras = [len(p) for _, p in articles[n_wiki:]]
    info = {
        "bench": "bm25_corpus",
        "wiki_articles": n_wiki,
        "cnn_stories": len(articles) - n_wiki,
        "cnn_present": cnn_present,
        "chunks": len(texts),
        "cnn_chunks": n_cnn_chunks,
        "paragraphs": sum(len(p) for _, p in articles),
        "words_per_chunk_with_stop_words": round(np.mean([len(WORD.findall(t)) for t in texts]), 1),
        "tokens_per_chunk": round(np.mean([len(t) for t in chunk_tokens]), 1),
        "queries": "wiki: article title; cnn: first highlight; own article's chunks excluded; top 4",
        "copies": copies,
        "perturbation": f"copy c>0: each token occurrence -> token~c with probability {args.perturb} "
        "(>= 1 per non-empty chunk); queries: the original titles, own copy's chunks excluded",
        "parse_s": round(t_parse, 2),
        "tokenize_s": round(t_tok, 3),
        "tokenize_chunks_per_s": round(len(texts) / t_tok, 1),
        "k1": args.k1,
        "b": args.b,
        "python": platform.python_version(),
        "machine": platform.machine(),
    }
    emit(info)
    say(
        f"corpus: {n_wiki} Wikipedia articles + {info['cnn_stories']} CNN stories, {len(texts)} chunks "
        f"({info['tokens_per_chunk']} tokens/chunk after stop words), tokenized at {info['tokenize_chunks_per_s']:.0f}"
        " chunks/s"
    )

    # imports and first-call set-up of both libraries outside the measurements
    import rank_bm25

    from wikiref.stages.qmdscnn.retrieval import ChunkIndex

    ChunkIndex([["warm", "up"], ["up"]], [0, 1]).top(["up"], K, exclude_group=0)
    rank_bm25.BM25Okapi([["warm", "up"], ["up"]]).get_scores(["up"])

    corpus = Corpus(chunk_tokens, owner, query_tokens, args.perturb, args.seed, range(n_wiki, len(articles)))
    rows, state, token_rss = [], {}, None
    for c in copies:
        before = len(corpus.tokens)
        with PeakRss() as rss:
            corpus.grow(c)
        if len(corpus.tokens) > before and rss.bytes is not None:
            token_rss = rss.bytes / (len(corpus.tokens) - before)  # the copies' token lists, per chunk
        rows.append(run_size(corpus, c, args, state))
        emit(rows[-1])
        _trim()

    extra = {
        "tokenize_chunks_per_s": info["tokenize_chunks_per_s"],
        "token_lists_bytes_per_chunk": round(token_rss, 1) if token_rss else None,
        "paper_queries": PAPER_QUERIES,
        "paper_doc_tokens_with_stop_words": PAPER_DOC_TOKENS,
        "bench_words_per_chunk_with_stop_words": info["words_per_chunk_with_stop_words"],
    }
    targets = {"at_1M_chunks": 1e6, "at_paper_scale": args.paper_chunks}
    if n_cnn_chunks:
        cnn_ix = [i for i, o in enumerate(owner) if o >= n_wiki]
        extra["cnn_unique_terms_per_chunk"] = round(np.mean([len(set(chunk_tokens[i])) for i in cnn_ix]), 1)
        extra["cnn_paragraphs_per_story"] = round(float(np.mean(cnn_paras)), 1)
        # 1-4 paragraphs per chunk (mean 2.5) over the paper's ~312k articles
        implied = PAPER_QUERIES * float(np.mean(cnn_paras)) / 2.5
        targets["at_paper_articles_x_cnn_chunks_per_story"] = implied
        extra["chunks_per_story_1_4_paragraphs"] = round(float(np.mean(cnn_paras)) / 2.5, 1)
    est = estimate(rows, extra, targets)
    emit(est)
    for name in targets:
        e = est[name]
        say(
            f"estimate {name}: {e['chunks']:,} chunks, {e['queries']:,} queries -> ours {e['ours_total_h']} h "
            f"on one core (index {e['ours_index_s']} s, {e['ours_ms_per_query']} ms/query), index arrays "
            f"{e['ours_index_gb']} GB (all live objects incl. vocabulary {e['ours_index_live_gb']} GB), build peak +{e['ours_index_peak_gb']} GB, token lists {e['token_lists_gb']} GB"
            + (f"; with long queries {e['ours_total_h_long_queries']} h" if "ours_total_h_long_queries" in e else "")
            + (f"; rank_bm25 {e['rank_bm25_total_h']} h" if "rank_bm25_total_h" in e else "")
        )

    compared = [r for r in rows if r.get("rank_bm25_queries_compared")]
    unexplained = sum(r["causes"]["unexplained"] for r in compared)
    mismatches = sum(r["score_mismatch"] + r["score_mismatch_high_df_adjusted"] for r in compared)
    ok = bool(compared) and not unexplained and not mismatches
    emit(
        {
            "bench": "bm25_summary",
            "ok": ok,
            "sizes": len(rows),
            "sizes_compared": len(compared),
            "queries_compared": sum(r["rank_bm25_queries_compared"] for r in compared),
            "top4_identical": sum(r["top4_identical"] for r in compared),
            "top4_differing": sum(r["top4_differing"] for r in compared),
            "unexplained": unexplained,
            "score_mismatch": mismatches,
            "seconds": round(time.perf_counter() - t_start, 1),
        }
    )
    if args.no_rank_bm25:
        return 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
