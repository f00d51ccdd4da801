"""ROUGE-L (union LCS) and ROUGE-W (weighted LCS): the hit marks of ``lcs_inner`` / ``wlcs_inner`` + ``markLCS``
and the clipped hit counts of ``lcs()`` / ``wlcs()``, exactly as ROUGE-1.5.5.pl computes them.

Two paths with the same results:

* the reference (:func:`mark_reference`, :func:`pair_hits_reference`): the script's dynamic programme written out
  in Python, table cell by table cell. Kept for the parity tests; select it with ``REFERENCE = True`` (module flag)
  or ``reference=True``.
* the fast path (default): compiled kernels (numba) over integer token ids, one call per (reference summary, peer
  summary) pair. ROUGE-L uses a bit-parallel LCS (Allison & Dix 1986: one machine-word operation per 64 table
  cells of a row); ROUGE-W keeps the script's cell-by-cell programme (its float scores admit no bit-parallel
  form), compiled.

The script's tie-breaking. ``markLCS`` walks back from the bottom-right cell: on a match it goes diagonally (and marks
the model position), else *up* when ``c[i-1][j] >= c[i][j-1]``, else left. For plain LCS the bit-parallel rows give
that decision without the table: a non-matching cell holds ``max(up, left)``, so "up" is exactly "``c[i][j] ==
c[i-1][j]``", i.e. the vertical difference ``D_i(j) = c[i][j] - c[i-1][j]`` is 0. With ``H_i`` the row's
horizontal-increase bits (bit j-1 set when ``c[i][j] - c[i][j-1] = 1``), Allison-Dix's update keeps, in each run of
columns ending at a bit of ``H_{i-1}``, the lowest bit of ``M | H_{i-1}`` (``M``: the columns matching model token
i); the vertical difference is 1 from that kept bit up to (not including) the run's ``H_{i-1}`` bit, and from a new
bit in the open last run to the end of the row. That is the integer ``(H_{i-1} + 2^n) - H_i`` (the ``2^n`` closes
the last run), so one subtraction per row gives every ``D_i`` bit the walk needs.

numba is imported on first use; when it cannot be imported the reference path is used (same results, slower).
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Sequence

# True: compute every ROUGE-L / ROUGE-W hit with the pure-Python reference (for parity tests and debugging).
REFERENCE = False


def wlcs_weight(r, w: float) -> float:
    """``wlcsWeight``: ``r ** w`` as Perl computes it (an integral weight and count stay integers, like pp_pow's
    integer branch; anything else is C's pow)."""
    if float(w).is_integer() and isinstance(r, int):
        return float(r ** int(w))
    return float(r) ** w


def weight_table(weight: float | None, longest: int) -> list[float]:
    """f(k) for k = 0..longest + 1: what a run of k consecutive matches is worth (k for LCS, k ** weight for WLCS)."""
    if weight is None:
        return [float(k) for k in range(longest + 2)]
    return [wlcs_weight(k, weight) for k in range(longest + 2)]


# --------------------------------------------------------------------------------------------
# Reference: the script's tables, cell by cell
# --------------------------------------------------------------------------------------------


def _mark_path(moves: list[list[int]], m: int, n: int, mask: list[int]) -> None:
    """markLCS: walk the moves back from (m, n) and mark the model positions of the diagonal steps."""
    i, j = m, n
    while i and j:
        mv = moves[i - 1][j]
        if mv == 1:
            i -= 1
            j -= 1
            mask[i] = 1
        elif mv == 2:
            i -= 1
        else:
            j -= 1


def mark_reference(model: Sequence, peer: Sequence, mask: list[int], weight: float | None = None) -> None:
    """lcs_inner + markLCS: mark the model positions of one LCS (the script's tie-breaking); with ``weight``,
    wlcs_inner: a match extending a run of k matches gains f(k + 1) - f(k), f(k) = k ** weight."""
    m, n = len(model), len(peer)
    if m == 0 or n == 0:
        return
    # f[k]: what a run of k matches is worth (k, or k ** weight)
    f = range(n + 2) if weight is None else [wlcs_weight(k, weight) for k in range(n + 2)]
    # moves: 1 = diagonal, 2 = up, 3 = left (row-major lists)
    prev_c = [0] * (n + 1)
    prev_l = [0] * (n + 1)
    moves = []
    for i in range(1, m + 1):
        cur_c = [0] * (n + 1)
        cur_l = [0] * (n + 1)
        row = [0] * (n + 1)
        mi = model[i - 1]
        for j in range(1, n + 1):
            if mi == peer[j - 1]:
                k = prev_l[j - 1]
                cur_c[j] = prev_c[j - 1] + f[k + 1] - f[k]
                row[j] = 1
                cur_l[j] = k + 1
            elif prev_c[j] >= cur_c[j - 1]:
                cur_c[j] = prev_c[j]
                row[j] = 2
            else:
                cur_c[j] = cur_c[j - 1]
                row[j] = 3
        moves.append(row)
        prev_c, prev_l = cur_c, cur_l
    _mark_path(moves, m, n, mask)


def union_marks_reference(model_units: Sequence[Sequence], peer_units: Sequence[Sequence], weight=None):
    """The hit mask of every model sentence: the union of its LCS (or WLCS) marks against each peer sentence."""
    out = []
    for mu in model_units:
        mask = [0] * len(mu)
        for pu in peer_units:
            mark_reference(mu, pu, mask, weight)
        out.append(mask)
    return out


def clipped_hits_reference(model_units, marks, model_uni: Counter, peer_uni: Counter, weight=None):
    """lcs() / wlcs(): count the marked model tokens while both unigram counts last (each hit uses one up); with a
    weight, every run of consecutive hits scores f(run length) (the script's two flushing branches)."""
    hit = 0 if weight is None else 0.0
    for mu, mask in zip(model_units, marks):
        run = 0
        for j, tok in enumerate(mu):
            if mask[j] == 1 and model_uni.get((tok,), 0) > 0 and peer_uni.get((tok,), 0) > 0:
                if weight is None:
                    hit += 1
                else:
                    run += 1
                    if j + 1 < len(mu) and mask[j + 1] == 0:  # noqa: SIM114 - the script's two branches
                        hit += wlcs_weight(run, weight)
                        run = 0
                    elif j + 1 == len(mu):
                        hit += wlcs_weight(run, weight)
                        run = 0
                model_uni[(tok,)] -= 1
                peer_uni[(tok,)] -= 1
    return hit


def lcs_base(model_units, weight=None):
    """The model side of lcs() / wlcs(): the number of model tokens, or the sum of f(sentence length)."""
    if weight is None:
        return sum(len(mu) for mu in model_units)
    base = 0.0
    for mu in model_units:
        base += wlcs_weight(len(mu), weight)
    return base


def pair_hits_reference(model, peer, weight=None):
    """(hit, base) of one model summary against one peer summary (both :class:`~.text.Summary`), pure Python."""
    marks = union_marks_reference(model.unit_terms, peer.unit_terms, weight)
    # unigram counts keyed by 1-tuples, as counting.ngram_counts(terms, 1) keys them
    mu = Counter(zip(model.terms))
    pu = Counter(zip(peer.terms))  # the script renews the peer unigram counts per reference
    return clipped_hits_reference(model.unit_terms, marks, mu, pu, weight), lcs_base(model.unit_terms, weight)


# --------------------------------------------------------------------------------------------
# Fast path: compiled kernels over token ids
# --------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _kernels():
    try:
        from wikiref.rouge.official import lcs_kernels
    except ImportError:  # no numba: the reference path gives the same results
        return None
    return lcs_kernels


def fast_available() -> bool:
    """Whether the compiled kernels can be used (numba importable)."""
    return _kernels() is not None


def _flatten(units: Sequence[Sequence[int]]):
    import numpy as np

    off = np.zeros(len(units) + 1, dtype=np.int64)
    off[1:] = np.cumsum([len(u) for u in units])
    flat = np.fromiter((t for u in units for t in u), dtype=np.int64, count=int(off[-1]))
    return flat, off


def union_marks(model_units: Sequence[Sequence], peer_units: Sequence[Sequence], weight=None, *, bit_parallel=True):
    """:func:`union_marks_reference` computed by the kernels (tokens: any hashables; they are interned to ints
    here). ``bit_parallel=False`` runs the cell-by-cell kernel for plain LCS too (to cross-check the two)."""
    kernels = _kernels()
    if kernels is None:
        raise RuntimeError("numba is not installed: only the reference path (union_marks_reference) is available")
    import numpy as np

    table: dict = {}
    intern = lambda units: [[table.setdefault(t, len(table)) for t in u] for u in units]  # noqa: E731
    m_ids, m_off = _flatten(intern(model_units))
    p_ids, p_off = _flatten(intern(peer_units))
    m_uniq, m_local = np.unique(m_ids, return_inverse=True)
    longest = max([len(u) for u in (*model_units, *peer_units)], default=0)
    f = np.array(weight_table(weight, longest), dtype=np.float64)
    p_local = kernels.local_ids(m_uniq, p_ids)
    use_dp = weight is not None or not bit_parallel
    flat = kernels.union_marks(m_local.astype(np.int64), m_off, len(m_uniq), p_local, p_off, f, use_dp)
    return [flat[m_off[r] : m_off[r + 1]].tolist() for r in range(len(model_units))]


class _PairData:
    """What the kernels need of one summary: unit token ids (flat + sentence bounds), the distinct unit tokens with
    each position's index among them, and the unigram counts of its terms (sorted ids + counts)."""

    __slots__ = ("ids", "off", "local", "uniq", "keys", "counts", "longest")

    def __init__(self, summary):
        import numpy as np

        self.ids, self.off = summary.unit_ids, summary.unit_off
        self.uniq, self.local = np.unique(self.ids, return_inverse=True)
        self.local = self.local.astype(np.int64, copy=False)
        self.keys, self.counts = np.unique(summary.term_ids, return_counts=True)
        self.counts = self.counts.astype(np.int64, copy=False)
        self.longest = int(np.diff(self.off).max()) if len(self.off) > 1 else 0


def _pair_data(summary) -> _PairData:
    try:
        return summary._cache["lcs-data"]
    except KeyError:
        data = summary._cache["lcs-data"] = _PairData(summary)
        return data


@functools.lru_cache(maxsize=64)
def _f_array(weight, longest: int):
    import numpy as np

    out = np.array(weight_table(weight, longest), dtype=np.float64)
    out.setflags(write=False)
    return out


def pair_hits(model, peer, weight: float | None = None, *, reference: bool | None = None):
    """(hit, base) of lcs() (``weight`` None) or wlcs() for one model summary against one peer summary.

    A pure function of the pair (the script renews both unigram counts per pair), so it is cached on the model
    summary: NIST's jackknife lists score the same pair several times. ``reference``: None follows
    :data:`REFERENCE`."""
    use_ref = REFERENCE if reference is None else reference
    kernels = None if use_ref else _kernels()
    if kernels is None:
        return pair_hits_reference(model, peer, weight)
    key = ("lcs-hit", weight, id(peer))
    cached = model._cache.get(key)
    if cached is not None and cached[0] is peer:
        return cached[1]
    md, pd = _pair_data(model), _pair_data(peer)
    base = model._cache.get(("lcs-base", weight))
    if base is None:
        base = model._cache[("lcs-base", weight)] = lcs_base(model.unit_terms, weight)
    f = _f_array(weight, max(md.longest, pd.longest))
    hit = kernels.pair_hit(
        md.local, md.off, md.uniq, md.keys, md.counts, pd.ids, pd.off, pd.keys, pd.counts, f, weight is not None
    )
    out = (int(hit) if weight is None else hit, base)
    model._cache[key] = (peer, out)  # keeps the peer alive, so its id cannot be reused while cached
    return out
