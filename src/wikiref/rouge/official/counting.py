"""Counting and per-evaluation scores: n-grams and skip-bigrams (clipped hits, vectorised with numpy when the
term ids fit), union-LCS / weighted LCS (the script's tie-breaking), R / P / F of one peer against its references
(``-f A`` pooled or ``-f B`` best reference, 5-decimal rounding before F, ``-p`` alpha), batched over several
peers, and the one-evaluation Python API (:func:`score`, :func:`score_detailed`, :class:`Scorer`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from wikiref.rouge.official import lcs
from wikiref.rouge.official.options import Options, RougeError, make_options
from wikiref.rouge.official.text import Summary, _Vocab, prepare, units_from_sentences


def ngram_counts(terms: Sequence[str], n: int) -> tuple[Counter, int]:
    if len(terms) < n:
        return Counter(), 0
    grams = Counter(zip(*(terms[i:] for i in range(n))))
    return grams, len(terms) - n + 1


def skip_bigram_counts(terms: Sequence[str], skip: int, unigrams: bool) -> tuple[Counter, int]:
    """createSkipBigram: pairs (i, j) with j - i - 1 <= skip (all when skip < 0); with -u also the
    unigram of every token except the last (the script's loop runs i < $#tokens)."""
    g: Counter = Counter()
    n = len(terms)
    if n < 2:
        return g, 0
    max_gap = n - 1 if skip < 0 else min(n - 1, skip + 1)
    count = 0
    if unigrams:
        g.update(zip(terms[:-1]))  # 1-tuples; Counter counts in C
        count += n - 1
    for k in range(1, max_gap + 1):
        g.update(zip(terms, terms[k:]))
        count += n - k
    return g, count


def _clipped_hits(model: Counter, peer: Counter) -> int:
    common = model.keys() & peer.keys()
    return sum([min(model[g], peer[g]) for g in common])


class _Grams:
    """Counted grams of one summary: sorted unique packed keys + counts (numpy), or a Counter."""

    __slots__ = ("keys", "counts", "counter", "total")

    def __init__(self, keys, counts, counter, total):
        self.keys, self.counts, self.counter, self.total = keys, counts, counter, total


def _pack_bits(summaries: Sequence[Summary]) -> int:
    """Bits per term id when grams are packed into one int64: enough for the largest id of these summaries (the
    summaries compared with each other must use the same width)."""
    top = 1
    for s in summaries:
        top = max(top, _cached(s, "max-id", lambda s=s: int(s.term_ids.max()) if len(s.term_ids) else 0))
    return top.bit_length()


def _ngram_grams(s: Summary, n: int, bits: int) -> _Grams:
    import numpy as np

    if n * bits > 63:  # does not fit one int64 (huge -n or vocabulary): Counters
        counter, total = ngram_counts(s.terms, n)
        return _Grams(None, None, counter, total)
    a = s.term_ids
    total = max(0, len(a) - n + 1)
    keys = a[:total].copy()
    for k in range(1, n):
        keys = (keys << bits) | a[k : k + total]
    uk, uc = np.unique(keys, return_counts=True)
    return _Grams(uk, uc, None, total)


def _skip_grams(s: Summary, skip: int, unigrams: bool, bits: int) -> _Grams:
    import numpy as np

    if 2 * bits > 63:
        counter, total = skip_bigram_counts(s.terms, skip, unigrams)
        return _Grams(None, None, counter, total)
    a = s.term_ids
    n = len(a)
    parts = []
    total = 0
    if n >= 2:
        if unigrams:
            parts.append(a[:-1] << bits)  # (id, 0): ids start at 1, so no bigram packs to this
            total += n - 1
        max_gap = n - 1 if skip < 0 else min(n - 1, skip + 1)
        for k in range(1, max_gap + 1):
            parts.append((a[:-k] << bits) | a[k:])
            total += n - k
    keys = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    uk, uc = np.unique(keys, return_counts=True)
    return _Grams(uk, uc, None, total)


def _grams_hits(model: _Grams, peer: _Grams) -> int:
    import numpy as np

    if model.keys is None:  # both counted with Counters (same packing width, same decision)
        return _clipped_hits(model.counter, peer.counter)
    mk, pk = model.keys, peer.keys
    if not len(mk) or not len(pk):
        return 0
    idx = mk.searchsorted(pk)  # both sorted and unique
    np.minimum(idx, len(mk) - 1, out=idx)
    found = mk[idx] == pk
    return int(np.minimum(model.counts[idx[found]], peer.counts[found]).sum())


def _gram_kind(measure: str, opts: Options, bits: int):
    """(cache key, counting function) of an n-gram or skip-bigram measure, None for LCS measures."""
    if measure.startswith("ROUGE-S"):
        unigrams = measure.startswith("ROUGE-SU")
        skip = opts.skip if opts.skip is not None else -1
        return ("S", skip, unigrams, bits), lambda s: _skip_grams(s, skip, unigrams, bits)
    if measure.startswith("ROUGE-") and measure[6:].isdigit():
        n = int(measure[6:])
        return ("N", n, bits), lambda s: _ngram_grams(s, n, bits)
    return None


def perl_fixed5(x: float) -> str:
    """Perl's sprintf("%7.5f", x): how the script rounds every score it prints and averages."""
    return format(x, "7.5f")


@dataclass(frozen=True)
class EvalScore:
    """One (peer, references) score as the script keeps it: counts and the R/P/F strings."""

    model_count: float
    hit: float
    peer_count: float
    r: str
    p: str
    f: str

    def as_dict(self) -> dict:
        return {"R": float(self.r), "P": float(self.p), "F": float(self.f)}


def _finish(model_count, hit, peer_count, alpha: float, inverse: float | None = None) -> EvalScore:
    def ratio(num, den):
        if den == 0:
            return perl_fixed5(0)
        x = num / den
        if inverse is not None:
            x = x ** (1 / inverse)
        return perl_fixed5(x)

    r = ratio(hit, model_count)
    p = ratio(hit, peer_count)
    rf, pf = float(r), float(p)
    if (1 - alpha) * pf + alpha * rf > 0:  # noqa: SIM108 - as the script computes F
        f = perl_fixed5((pf * rf) / ((1 - alpha) * pf + alpha * rf))
    else:
        f = perl_fixed5(0)
    return EvalScore(model_count, hit, peer_count, r, p, f)


def _combine(per_model: list[tuple], formula: str):
    """Sum (formula A, or anything but B) or take the best-recall reference (B, first wins)."""
    total_hit = total_count = total_peer = 0
    if formula == "B":
        best = -1.0
        for hit, count, peer, rec in per_model:
            if rec > best:
                best = rec
                total_hit, total_count, total_peer = hit, count, peer
    else:
        for hit, count, peer, _ in per_model:
            total_hit += hit
            total_count += count
            total_peer += peer
    return total_hit, total_count, total_peer


def _round5(x: float) -> float:
    return float(format(x, "07.5f"))


def _cached(summary: Summary, key, fn):
    try:
        return summary._cache[key]
    except KeyError:
        val = summary._cache[key] = fn()
        return val


def score_measure(measure: str, peer: Summary, models: Sequence[Summary], opts: Options) -> EvalScore:
    """One measure (``ROUGE-2``, ``ROUGE-L``, ``ROUGE-SU4``, ``ROUGE-W-1.2``...) for one evaluation."""
    kind = _gram_kind(measure, opts, _pack_bits([peer, *models]))
    if kind is not None:
        key, make = kind
        pg = _cached(peer, key, lambda: make(peer))
        pc = pg.total
        per_model = []
        for m in models:
            mg = _cached(m, key, lambda m=m: make(m))
            mc = mg.total
            hit = _grams_hits(mg, pg)
            per_model.append((hit, mc, pc, _round5(hit / mc) if mc else 0.0))
        return _finish(*_reorder(_combine(per_model, opts.formula)), opts.alpha)
    if measure == "ROUGE-L" or measure.startswith("ROUGE-W"):
        weighted = measure.startswith("ROUGE-W")
        w = opts.wlcs if weighted else None
        pcount = len(peer.terms)  # the peer's unigram count ("_cn_")
        per_model = []
        for m in models:
            hit, base = lcs.pair_hits(m, peer, w)
            if weighted:
                if not base:
                    raise RougeError(
                        "ROUGE-W of a reference without tokens: ROUGE-1.5.5.pl dies here "
                        "('Illegal division by zero' in wlcs); drop -w or the empty reference"
                    )
                score = (hit / base) ** (1 / w)
                # computeWLCSScore weights the (already weighted) base and the peer length again.
                per_model.append((hit, lcs.wlcs_weight(base, w), lcs.wlcs_weight(pcount, w), score))
            else:
                per_model.append((hit, base, pcount, hit / base if base else 0.0))
        if weighted:
            hit, count, pc = _combine(per_model, opts.formula)
            return _finish(count, hit, pc, opts.alpha, inverse=opts.wlcs)
        return _finish(*_reorder(_combine(per_model, opts.formula)), opts.alpha)
    raise RougeError(f"unknown measure {measure!r}")


def _hits_vs_peers(model: _Grams, peers: Sequence[_Grams], peer_keys, peer_counts, ends):
    """Clipped hits of one model against several peers (their keys concatenated), or None."""
    import numpy as np

    if model.keys is None:
        return None
    mk = model.keys
    if not len(mk) or not len(peer_keys):
        return np.zeros(len(peers), dtype=np.int64)
    idx = mk.searchsorted(peer_keys)
    np.minimum(idx, len(mk) - 1, out=idx)
    mins = np.where(mk[idx] == peer_keys, np.minimum(model.counts[idx], peer_counts), 0)
    csum = np.concatenate([np.zeros(1, dtype=np.int64), np.cumsum(mins)])
    return csum[ends] - csum[ends - np.array([len(g.keys) for g in peers], dtype=np.int64)]


def _batch_hits(models: Sequence[Summary], peers: Sequence[Summary], key: tuple, mg, pg):
    """Clipped hits of every peer against every model: (n_peers, n_models) int array, or None when
    some summary is counted with Counters. A model's hits against a given set of peers are cached
    (NIST's jackknife lists score the same peers against the same references several times)."""
    import numpy as np

    if any(g.keys is None for g in (*mg, *pg)):
        return None
    sig = (key, tuple(id(p) for p in peers))
    pk = pc = ends = None
    cols = []
    for m, g in zip(models, mg):
        col = m._cache.get(sig)
        if col is None:
            if pk is None:
                pk = np.concatenate([x.keys for x in pg])
                pc = np.concatenate([x.counts for x in pg])
                ends = np.cumsum([len(x.keys) for x in pg]).astype(np.int64)
            col = _hits_vs_peers(g, pg, pk, pc, ends)
            m._cache[sig] = col
        cols.append(col)
    return np.stack(cols, axis=1) if cols else np.zeros((len(peers), 0), dtype=np.int64)


def score_measure_batch(
    measure: str, peers: Sequence[Summary], models: Sequence[Summary], opts: Options
) -> list[EvalScore]:
    """:func:`score_measure` for several peers against the same references."""
    kind = _gram_kind(measure, opts, _pack_bits([*peers, *models]))
    if kind is None:
        return [score_measure(measure, p, models, opts) for p in peers]
    key, make = kind
    mg = [_cached(m, key, lambda m=m: make(m)) for m in models]
    pg = [_cached(p, key, lambda p=p: make(p)) for p in peers]
    hits = _batch_hits(models, peers, key, mg, pg)
    if hits is None:
        return [score_measure(measure, p, models, opts) for p in peers]
    out = []
    for pi, p in enumerate(pg):
        pc = p.total
        per_model = []
        for mi, m in enumerate(mg):
            hit = int(hits[pi, mi])
            mc = m.total
            per_model.append((hit, mc, pc, _round5(hit / mc) if mc else 0.0))
        out.append(_finish(*_reorder(_combine(per_model, opts.formula)), opts.alpha))
    return out


def _reorder(t):
    hit, count, peer = t
    return count, hit, peer


def score(
    peer: Sequence[str],
    models: Sequence[Sequence[str]],
    *,
    flags: str | Sequence[str] | None = None,
    data_dir: str | None = None,
    **options,
) -> dict[str, dict[str, float]]:
    """Score one peer summary against its references, like one ``<EVAL>`` of ROUGE-1.5.5.pl.

    ``peer``: the peer's sentences; ``models``: each reference's sentences. Options are the
    script's flags, either as ``flags="-n 2 -m ..."`` or keywords (``n``, ``stem``, ``stopwords``,
    ``skip``, ``skip_unigrams``, ``lcs``, ``wlcs``, ``length``, ``bytes``, ``formula``, ``alpha``);
    keywords override flags. Returns ``{measure: {"R", "P", "F"}}`` with the values the script
    prints for this evaluation (5 decimals).
    """
    opts = make_options(flags, **options)
    detail = score_detailed(peer, models, opts, data_dir=data_dir)
    return {k: v.as_dict() for k, v in detail.items()}


def score_detailed(
    peer: Sequence[str],
    models: Sequence[Sequence[str]],
    opts: Options,
    data_dir: str | None = None,
    vocab: _Vocab | None = None,
) -> dict[str, EvalScore]:
    vocab = vocab or _Vocab(opts, data_dir)
    p = prepare(units_from_sentences(peer), opts, vocab)
    ms = [prepare(units_from_sentences(m), opts, vocab) for m in models]
    return {meas: score_measure(meas, p, ms, opts) for meas in opts.measures()}


class Scorer:
    """Reusable scorer for many peers against the same references (prepared once).

    >>> s = Scorer(references, flags=DUC_FLAGS); s(peer_sentences)["ROUGE-2"]["R"]
    """

    def __init__(
        self,
        models: Sequence[Sequence[str]],
        *,
        flags: str | Sequence[str] | None = None,
        data_dir: str | None = None,
        **options,
    ):
        self.opts = make_options(flags, **options)
        self.vocab = _Vocab(self.opts, data_dir)
        self.models = [prepare(units_from_sentences(m), self.opts, self.vocab) for m in models]

    def __call__(self, peer: Sequence[str]) -> dict[str, dict[str, float]]:
        p = prepare(units_from_sentences(peer), self.opts, self.vocab)
        return {meas: score_measure(meas, p, self.models, self.opts).as_dict() for meas in self.opts.measures()}
