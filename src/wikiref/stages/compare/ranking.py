"""The findings: per benchmark and mode, the sources ranked by the benchmark's main score, and one sentence
each that says what the numbers show."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from wikiref.stages.compare.plan import (
    ABSTRACTIVE_MODE,
    MODE_LABELS,
    MODES,
    NONE,
    QMSUM_R2_CI,
    SOURCE_LABELS,
    duc_r2_ci,
)


def _mean(values: Sequence[float | None]) -> float | None:
    vals = [float(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return sum(vals) / len(vals) if len(vals) == len(values) and vals else None


def findings(rows: Sequence[Mapping], years: Sequence[int], setting: str | None) -> list[dict]:
    """Per benchmark and mode: the sources ranked by the benchmark's main score (DUC: mean R-2 recall over
    the years that mode was tested on; QMSum: R-2 F1), the best one and its margin over the runner-up and
    over the encoder-only row. A row missing one of those years is not ranked (no mean over fewer years);
    a statement is made only from numbers that exist."""
    out = []
    groups = [(mode, None, [r for r in rows if r["mode"] == mode]) for mode in MODES]
    models = dict.fromkeys(r["model"] for r in rows if r["mode"] == ABSTRACTIVE_MODE)
    groups += [(ABSTRACTIVE_MODE, m, [r for r in rows if r["model"] == m]) for m in models]
    for mode, model, mine in groups:
        tested = [y for y in years if any(r.get(f"DUC {y} R-2") is not None for r in mine)]
        benchmarks = []
        intervals: dict = {}
        if tested:
            benchmarks.append(
                (
                    "DUC",
                    "mean R-2 recall over " + "/".join(str(y) for y in tested),
                    lambda r, t=tested: _mean([r.get(f"DUC {y} R-2") for y in t]),
                )
            )
            if len(tested) == 1:  # one year: its interval applies to the ranked score (a mean has none here)
                intervals["DUC"] = lambda r, y=tested[0]: r.get(duc_r2_ci(y))
        if setting:
            benchmarks.append(("QMSum", f"R-2 F1 ({setting})", lambda r: r.get("QMSum R-2")))
        intervals["QMSum"] = lambda r: r.get(QMSUM_R2_CI)
        for bench, measure, key in benchmarks:
            cand = [(key(r), r) for r in mine if r["source"] != NONE and key(r) is not None]
            if not cand:
                continue
            cand.sort(key=lambda t: (-t[0], t[1]["Source"], t[1]["Budget"]))
            best_v, best = cand[0]
            item: dict[str, Any] = {
                "benchmark": bench,
                "mode": mode,
                **({"model": model} if model else {}),
                "measure": measure,
                "ranking": [{"source": r["source"], "budget": r["Budget"], "score": round(v, 4)} for v, r in cand],
                "best": {"source": best["source"], "budget": best["Budget"], "score": round(best_v, 4)},
            }
            if len(cand) > 1:
                item["margin_over_next"] = round(best_v - cand[1][0], 4)
                ci = intervals.get(bench, lambda r: None)(best)
                if ci:
                    item["best_ci95"] = [round(x, 4) for x in ci]
                    item["next_inside_ci95"] = bool(ci[0] <= cand[1][0] <= ci[1])
            none = [key(r) for r in mine if r["source"] == NONE and key(r) is not None]
            if none:
                item["margin_over_no_augmentation"] = round(best_v - none[0], 4)
            item["text"] = finding_text(item)
            out.append(item)
    order = {"DUC": 0, "QMSum": 1}
    modes = (*MODES, ABSTRACTIVE_MODE)
    return sorted(out, key=lambda f: (order[f["benchmark"]], modes.index(f["mode"]), f.get("model", "")))


def finding_text(item: Mapping) -> str:
    """One sentence that says what the numbers show (ties and negative margins said as such)."""
    best = item["best"]
    label = f"{SOURCE_LABELS.get(best['source'], best['source'])} ({best['budget']} budget)"
    model = f" {item['model']}" if item.get("model") else ""
    head = f"{item['benchmark']}, {MODE_LABELS[item['mode']]}{model}, {item['measure']}: "
    if len(item["ranking"]) == 1:
        text = head + f"only {label} was run ({best['score']:.2f})"
    elif item["margin_over_next"] <= 0:
        text = head + f"no single best source; {label} ties the next at {best['score']:.2f}"
    else:
        nxt = item["ranking"][1]
        text = head + (
            f"{label} scores highest ({best['score']:.2f}), {item['margin_over_next']:.2f} above "
            f"{SOURCE_LABELS.get(nxt['source'], nxt['source'])} ({nxt['budget']})"
        )
        if item.get("next_inside_ci95"):
            lo, hi = item["best_ci95"]
            text += f", inside its 95% bootstrap interval [{lo:.2f}, {hi:.2f}]: not a clear difference"
    if "margin_over_no_augmentation" in item:
        m = item["margin_over_no_augmentation"]
        text += (
            f"; {m:.2f} {'above' if m > 0 else 'below' if m < 0 else 'equal to'} the encoder without augmentation"
            if m
            else "; equal to the encoder without augmentation"
        )
    return text + "."
