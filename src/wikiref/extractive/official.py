"""Official ROUGE-1.5.5 scores with 95% intervals of one-reference examples (R / P / F1 of ROUGE-1, -2 and -L,
x100), through :mod:`wikiref.rouge.official`; shared by the stages that score single-reference test sets
(psg2sum, qmsum, abstractive). :data:`ROUGE_FLAGS`: ROUGE-1.5.5's defaults plus ``-n 2 -m -c 95 -r 1000``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

MEASURE_OF = {"rouge1": "ROUGE-1", "rouge2": "ROUGE-2", "rougeL": "ROUGE-L"}


ROUGE_FLAGS = "-n 2 -m -c 95 -r 1000"


# -------------------------------------------------------------------------------------- scoring
def score(
    summaries: Mapping[str, Sequence[str]],
    references: Mapping[str, Sequence[str]],
    *,
    flags: str = ROUGE_FLAGS,
) -> dict:
    """Official ROUGE-1.5.5 scores (x100) of ``summaries`` against ``references`` (one reference per example;
    every reference id needs a summary, [] allowed): ``{"rouge1": {"recall", "recall_ci": [lo, hi],
    "precision", "precision_ci", "f1", "f1_ci"}, "rouge2": ..., "rougeL": ...}``."""
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
    return out
