"""Official ROUGE-1.5.5 scores with 95% intervals of one-reference examples (R / P / F1 of ROUGE-1, -2 and -L,
x100), through :mod:`wikiref.rouge.official`; shared by the stages that score single-reference test sets
(psg2sum, qmsum, abstractive). :data:`ROUGE_FLAGS`: ROUGE-1.5.5's defaults plus ``-n 2 -m -c 95 -r 1000``.
:func:`paired_difference`: two systems compared on the same examples (paired bootstrap of their per-example scores).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

MEASURE_OF = {"rouge1": "ROUGE-1", "rouge2": "ROUGE-2", "rougeL": "ROUGE-L"}


ROUGE_FLAGS = "-n 2 -m -c 95 -r 1000"


# -------------------------------------------------------------------------------------- scoring
def score(
    summaries: Mapping[str, Sequence[str]],
    references: Mapping[str, Sequence[str]],
    *,
    flags: str = ROUGE_FLAGS,
    per_example: bool = False,
) -> dict:
    """Official ROUGE-1.5.5 scores (x100) of ``summaries`` against ``references`` (one reference per example;
    every reference id needs a summary, [] allowed): ``{"rouge1": {"recall", "recall_ci": [lo, hi],
    "precision", "precision_ci", "f1", "f1_ci"}, "rouge2": ..., "rougeL": ...}``. ``per_example``: each
    measure also gets ``f1_by_example`` (``{id: F1 x100}``, the per-evaluation values ROUGE-1.5.5 resamples; its
    ``f1`` is the mean of the resamples' means, within rounding of their plain mean)."""
    from wikiref.rouge import official

    opts = official.Options.from_flags(flags)
    missing_measures = [m for m in MEASURE_OF.values() if m not in opts.measures()]
    if missing_measures:
        raise ValueError(f"ROUGE flags {flags!r} do not compute {missing_measures} (need -n 2 and no -x)")
    if not references:
        raise ValueError("no reference to score against")
    ids = sorted(references)
    missing = [i for i in ids if i not in summaries]
    if missing:
        raise ValueError(f"{len(missing)} examples without a summary (first: {missing[:3]})")
    items = [(i, [str(s) for s in summaries[i]], [[str(s) for s in references[i]]]) for i in ids]
    res = official.evaluate_summaries(items, opts)

    def x100(v) -> float:
        return round(float(v) * 100, 3)

    out: dict = {}
    for metric, measure in MEASURE_OF.items():
        av = res[measure].averages
        out[metric] = {
            "recall": x100(av.r),
            "recall_ci": [x100(v) for v in av.r_ci],
            "precision": x100(av.p),
            "precision_ci": [x100(v) for v in av.p_ci],
            "f1": x100(av.f),
            "f1_ci": [x100(v) for v in av.f_ci],
        }
        if per_example:
            out[metric]["f1_by_example"] = {
                k.rsplit(".", 1)[0]: float(v.f) * 100 for k, v in res[measure].per_eval.items()
            }
    return out


def paired_difference(
    system: Mapping[str, float], baseline: Mapping[str, float], *, resamples: int = 10000, seed: int = 0
) -> dict:
    """``system`` against ``baseline`` on the same examples (``{id: score}``, the same ids): the mean per-example
    difference, its 95% percentile interval over ``resamples`` bootstrap resamples of the examples (paired: one
    draw of ids for both systems), and the one-sided p that the system is not better (the share of resamples whose
    mean difference is <= 0). Paired, so the examples' own difficulty, shared by both systems, drops out: a
    narrower test than asking whether one system's score lies outside the other's own interval."""
    if sorted(system) != sorted(baseline):
        missing = sorted(set(system) ^ set(baseline))
        raise ValueError(f"paired comparison needs the same examples; {len(missing)} differ (first: {missing[:3]})")
    if not system:
        raise ValueError("paired comparison of no examples")
    ids = sorted(system)
    d = np.array([system[i] - baseline[i] for i in ids], dtype=float)
    idx = np.random.default_rng(seed).integers(0, d.size, size=(int(resamples), d.size))
    boot = d[idx].mean(axis=1)
    lo, hi = np.percentile(boot, [2.5, 97.5])
    return {
        "difference": float(d.mean()),
        "ci": [float(lo), float(hi)],
        "p": float((boot <= 0).mean()),
        "n": int(d.size),
    }


def scaled(paired: Mapping, factor: float) -> dict:
    """A :func:`paired_difference` result with its difference and interval multiplied by ``factor`` (x 100: ROUGE
    fractions as the tables print them), rounded to 4 decimals."""
    ci = [round(factor * v, 4) for v in paired["ci"]]
    return {**paired, "difference": round(factor * paired["difference"], 4), "ci": ci}


def paired_text(paired: Mapping, *, ci: bool = False) -> str:
    """A :func:`paired_difference` result as one table cell: ``+0.87 (p 0.003)``, with ``ci``
    ``+0.87 (+0.30 to +1.45, p 0.003)``."""
    interval = f"{paired['ci'][0]:+.2f} to {paired['ci'][1]:+.2f}, " if ci else ""
    return f"{paired['difference']:+.2f} ({interval}p {paired['p']:.3f})"
