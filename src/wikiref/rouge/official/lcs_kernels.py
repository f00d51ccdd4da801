"""The compiled kernels of :mod:`wikiref.rouge.official.lcs` (numba; imported on first use of the fast path).

Module-level functions so numba's on-disk cache (``cache=True``, in ``__pycache__``) finds them again in the next
process: the first run compiles (some seconds), later runs load the machine code.

Tokens are compared as small local ids: ``m_local`` gives each model token the index of its type among the model
summary's distinct unit tokens (``m_uniq``), ``p_local`` each peer token the same index, or -1 when the model has no
such token (it can never match). Per peer sentence, ``pm[u]`` holds the bit mask of the columns where type u occurs,
so a table row's match mask is one lookup.
"""

from __future__ import annotations

import numba as nb
import numpy as np

_jit = nb.njit(cache=True, nogil=True)
# typed constants: numba turns uint64 mixed with int64 into float64
u0 = np.uint64(0)
u1 = np.uint64(1)
u63 = np.uint64(63)


@_jit
def _bp_marks(a, n, pm, marks, base, drows, hp, hc):
    """Bit-parallel LCS of model sentence ``a`` (local ids) against a peer sentence of ``n`` tokens whose column
    masks are ``pm``; sets the marks of the script's walk at marks[base + i]. Rows of n + 1 bits in 64-bit words
    (bit n: the sentinel that closes D's last run)."""
    m = a.shape[0]
    nw = (n >> 6) + 1
    for w in range(nw):
        hp[w] = u0
    sw = n >> 6
    sb = u1 << np.uint64(n & 63)
    for i in range(m):
        ai = a[i]
        # Allison-Dix: X = M | H; H' = X & ((X - ((H << 1) | 1)) ^ X), word by word with carry and borrow
        carry = u1
        borrow = u0
        for w in range(nw):
            h = hp[w]
            x = pm[ai, w] | h
            y = (h << u1) | carry
            carry = h >> u63
            d = x - y - borrow
            borrow = u1 if (x < y or (x == y and borrow != u0)) else u0
            hc[w] = x & (d ^ x)
        # D_i = (H_{i-1} + 2^n) - H_i: bit j-1 set where c[i][j] - c[i-1][j] = 1 (see lcs.py's docstring)
        borrow = u0
        for w in range(nw):
            s = hp[w]
            if w == sw:
                s |= sb
            t = hc[w]
            drows[i, w] = s - t - borrow
            borrow = u1 if (s < t or (s == t and borrow != u0)) else u0
        for w in range(nw):
            hp[w] = hc[w]
    # markLCS: diagonal on a match, else up when D_i(j) = 0 (c[i-1][j] >= c[i][j-1]), else left
    i = m
    j = n
    while i > 0 and j > 0:
        q = j - 1
        wq = q >> 6
        bq = np.uint64(q & 63)
        if (pm[a[i - 1], wq] >> bq) & u1:
            i -= 1
            j -= 1
            marks[base + i] = 1
        elif (drows[i - 1, wq] >> bq) & u1:
            j -= 1
        else:
            i -= 1


@_jit
def _dp_marks(a, b, pm, f, marks, base, moves, c0, l0, c1, l1):
    """lcs_inner / wlcs_inner + markLCS cell by cell (f: the weight table), for ROUGE-W (and to cross-check the
    bit-parallel LCS). A row whose model token does not occur in the sentence, right after a row whose values never
    decrease, copies that row and goes "up" in every cell (c[i-1][j] >= c[i-1][j-1] = c[i][j-1]): such rows are
    not computed (moves[i - 1, 0] = 0 records it) and the walk goes straight up through them."""
    m = a.shape[0]
    n = b.shape[0]
    nw = (n >> 6) + 1
    pc, pl, cc, cl = c0, l0, c1, l1
    for j in range(n + 1):
        pc[j] = 0.0
        pl[j] = 0
    cc[0] = 0.0
    cl[0] = 0
    monotone = True  # the previous row never decreases along j (row 0 is all zeros)
    for i in range(1, m + 1):
        ai = a[i - 1]
        present = False
        for w in range(nw):
            if pm[ai, w] != u0:
                present = True
        if not present and monotone:
            moves[i - 1, 0] = 0
            continue
        moves[i - 1, 0] = 1
        for j in range(1, n + 1):
            if ai == b[j - 1]:
                k = pl[j - 1]
                cc[j] = pc[j - 1] + f[k + 1] - f[k]  # the script's order: (c + f(k+1)) - f(k)
                cl[j] = k + 1
                moves[i - 1, j] = 1
            elif pc[j] >= cc[j - 1]:
                cc[j] = pc[j]
                cl[j] = 0
                moves[i - 1, j] = 2
            else:
                cc[j] = cc[j - 1]
                cl[j] = 0
                moves[i - 1, j] = 3
        monotone = not present  # a row without matches is a running maximum
        pc, cc = cc, pc
        pl, cl = cl, pl
    i = m
    j = n
    while i > 0 and j > 0:
        if moves[i - 1, 0] == 0:
            i -= 1
            continue
        mv = moves[i - 1, j]
        if mv == 1:
            i -= 1
            j -= 1
            marks[base + i] = 1
        elif mv == 2:
            i -= 1
        else:
            j -= 1


@_jit
def union_marks(m_local, m_off, n_types, p_local, p_off, f, use_dp):
    """Hit marks of every model token (model sentences concatenated, m_off their bounds) against every peer
    sentence: bit-parallel, or with ``use_dp`` the cell-by-cell programme (ROUGE-W needs it)."""
    marks = np.zeros(m_local.shape[0], np.uint8)
    longest_m = 0
    for r in range(m_off.shape[0] - 1):
        longest_m = max(longest_m, m_off[r + 1] - m_off[r])
    longest_p = 0
    for k in range(p_off.shape[0] - 1):
        longest_p = max(longest_p, p_off[k + 1] - p_off[k])
    if longest_m == 0 or longest_p == 0:
        return marks
    nw = (longest_p >> 6) + 1
    pm = np.zeros((n_types, nw), np.uint64)
    drows = np.empty((0 if use_dp else longest_m, nw), np.uint64)
    hp = np.empty(nw, np.uint64)
    hc = np.empty(nw, np.uint64)
    moves = np.empty((longest_m if use_dp else 0, longest_p + 1), np.uint8)
    c0 = np.empty(longest_p + 1, np.float64)
    c1 = np.empty(longest_p + 1, np.float64)
    l0 = np.empty(longest_p + 1, np.int64)
    l1 = np.empty(longest_p + 1, np.int64)
    for k in range(p_off.shape[0] - 1):
        lo = p_off[k]
        n = p_off[k + 1] - lo
        if n == 0:
            continue
        shared = False
        for j in range(n):
            u = p_local[lo + j]
            if u >= 0:
                pm[u, j >> 6] |= u1 << np.uint64(j & 63)
                shared = True
        if shared:  # no common token: no match, no mark
            b = p_local[lo : lo + n]
            for r in range(m_off.shape[0] - 1):
                a = m_local[m_off[r] : m_off[r + 1]]
                if a.shape[0] == 0:
                    continue
                if use_dp:
                    _dp_marks(a, b, pm, f, marks, m_off[r], moves, c0, l0, c1, l1)
                else:
                    _bp_marks(a, n, pm, marks, m_off[r], drows, hp, hc)
            for j in range(n):  # clear the masks for the next sentence
                u = p_local[lo + j]
                if u >= 0:
                    pm[u, j >> 6] = u0
    return marks


@_jit
def local_ids(m_uniq, p_ids):
    """Each peer token's index in the sorted distinct model tokens, -1 when absent."""
    out = np.searchsorted(m_uniq, p_ids)
    for j in range(p_ids.shape[0]):
        k = out[j]
        if k >= m_uniq.shape[0] or m_uniq[k] != p_ids[j]:
            out[j] = -1
    return out


@_jit
def _lookup(keys, counts, tok):
    k = np.searchsorted(keys, tok)
    if k < keys.shape[0] and keys[k] == tok:
        return counts[k]
    return 0


@_jit
def pair_hit(m_local, m_off, m_uniq, m_keys, m_counts, p_ids, p_off, p_keys, p_counts, f, weighted):
    """lcs() / wlcs() for one (model, peer) pair: the union marks, then the clipped hits (each hit uses up one of
    the token's model and peer unigram counts; with a weight, each run of hits scores f(run length))."""
    p_local = local_ids(m_uniq, p_ids)
    marks = union_marks(m_local, m_off, m_uniq.shape[0], p_local, p_off, f, weighted)
    nu = m_uniq.shape[0]
    mc = np.empty(nu, np.int64)
    pcnt = np.empty(nu, np.int64)
    for u in range(nu):
        mc[u] = _lookup(m_keys, m_counts, m_uniq[u])
        pcnt[u] = _lookup(p_keys, p_counts, m_uniq[u])
    hit = 0.0
    for r in range(m_off.shape[0] - 1):
        lo = m_off[r]
        hi = m_off[r + 1]
        run = 0
        for j in range(lo, hi):
            u = m_local[j]
            if marks[j] == 1 and mc[u] > 0 and pcnt[u] > 0:
                if weighted:
                    run += 1
                    # the script's two flushing branches: the next mark is 0, or the sentence ends
                    if j + 1 == hi or marks[j + 1] == 0:
                        hit += f[run]
                        run = 0
                else:
                    hit += 1.0
                mc[u] -= 1
                pcnt[u] -= 1
    return hit
