"""Averages and confidence intervals: the script's ``computeAverages`` / ``bootstrapResampling``, including
its random numbers (Perl >= 5.20's built-in drand48 seeded with ``srand(i)`` for bootstrap sample i), so the
``Average_R/P/F`` values and their intervals are reproduced exactly (``-c``, ``-r``, ``-t 0/1/2``)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass

from wikiref.rouge.official.counting import perl_fixed5
from wikiref.rouge.official.options import Options

_DRAND_A = 0x5DEECE66D
_DRAND_C = 0xB
_DRAND_MASK = (1 << 48) - 1


@functools.lru_cache(maxsize=16)
def perl_bootstrap_indices(n_instances: int, resamples: int):
    """``srand($i); int(rand(N))`` x N for i = 0..resamples-1, as Perl >= 5.20 computes them
    (its built-in drand48: x = seed << 16 | 0x330E; x = (a x + c) mod 2^48; rand = x / 2^48)."""
    import numpy as np

    seeds = np.arange(resamples, dtype=np.uint64)
    x = (seeds << np.uint64(16)) + np.uint64(0x330E)
    out = np.empty((resamples, n_instances), dtype=np.int64)
    a = np.uint64(_DRAND_A)
    c = np.uint64(_DRAND_C)
    mask = np.uint64(_DRAND_MASK)
    for j in range(n_instances):
        x = (x * a + c) & mask  # uint64 arithmetic wraps mod 2^64; the mask keeps it mod 2^48
        out[:, j] = np.floor((x.astype(np.float64) / 2.0**48) * n_instances).astype(np.int64)
    out = np.ascontiguousarray(out)
    out.setflags(write=False)  # cached: shared between calls
    return out


@functools.lru_cache(maxsize=16)
def _bootstrap_draws(n_instances: int, resamples: int):
    import numpy as np

    out = np.ascontiguousarray(perl_bootstrap_indices(n_instances, resamples).T)
    out.setflags(write=False)
    return out


def _perl_at(arr: list[float], i: int) -> float:
    if -len(arr) <= i < len(arr):
        return arr[i]
    return 0.0  # undef


@dataclass(frozen=True)
class Averages:
    r: str
    p: str
    f: str
    r_ci: tuple[str, str]
    p_ci: tuple[str, str]
    f_ci: tuple[str, str]
    m_cnt: float = 0.0
    p_cnt: float = 0.0
    h_cnt: float = 0.0


def compute_averages(scores: Mapping[str, tuple[float, float, float]], opts: Options) -> Averages:
    """``computeAverages``: the printed averages are the mean of the bootstrap sample means."""
    import numpy as np

    instances = sorted(scores)
    mode = opts.count_mode
    tot = [0.0, 0.0, 0.0]
    for i in instances:
        for k in range(3):
            tot[k] += scores[i][k]
    if mode == 2:
        return Averages("", "", "", ("", ""), ("", ""), ("", ""), tot[0], tot[1], tot[2])
    r = opts.resamples
    n = len(instances)
    if n == 0:
        samples = [np.zeros(r) for _ in range(3)]
    else:
        vals = np.array([scores[i] for i in instances], dtype=np.float64)
        draws = _bootstrap_draws(n, r)  # (draw j, sample i)
        sums = []
        for k in range(3):
            picked = np.ascontiguousarray(vals[:, k])[draws]
            # add the draws one at a time, in the script's order (no pairwise summation)
            acc = picked[0].copy()
            for j in range(1, n):
                acc += picked[j]
            sums.append(acc)
        if mode == 0:
            samples = [s / n for s in sums]
        else:
            alpha = opts.alpha
            with np.errstate(divide="ignore", invalid="ignore"):
                rr = np.where(sums[0] > 0, sums[2] / sums[0], 0.0)
                pp = np.where(sums[1] > 0, sums[2] / sums[1], 0.0)
                den = (1 - alpha) * pp + alpha * rr
                ff = np.where(den > 0, (rr * pp) / den, 0.0)
            samples = [rr, pp, ff]
    c = opts.confidence
    delta = r * ((100 - c) / 2.0) / 100.0
    ci_ua = int(r - delta - 1)
    ci_ub = ci_ua + 1
    ci_la = int(delta)
    ci_lb = ci_la + 1
    ci_r = r - delta - 1 - ci_ua
    out = []
    for s in samples:
        ranked_np = np.sort(s)
        total = float(np.cumsum(ranked_np)[-1])
        ranked = ranked_np.tolist()
        avg = perl_fixed5(total / len(ranked))
        lo = perl_fixed5(_perl_at(ranked, ci_la) + (_perl_at(ranked, ci_lb) - _perl_at(ranked, ci_la)) * ci_r)
        hi = perl_fixed5(_perl_at(ranked, ci_ua) + (_perl_at(ranked, ci_ub) - _perl_at(ranked, ci_ua)) * ci_r)
        out.append((avg, (lo, hi)))
    return Averages(out[0][0], out[1][0], out[2][0], out[0][1], out[1][1], out[2][1], tot[0], tot[1], tot[2])
