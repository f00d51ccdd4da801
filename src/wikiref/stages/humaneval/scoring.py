"""Filled rating sheets -> the papers' tables, beside the published numbers.

Every table is computed from the raters' answers un-blinded with the study's key (which hidden system was
A and which B on each item): means per bin or system (Tables III, VII), win / tie / loss judgments per
criterion (QmdsCnnIr Table 6), label counts (Psg2Sum Table 3, WCEP §3.3). Agreement is Krippendorff's
alpha from the ``krippendorff`` package (ordinal for the 1-3 scales, nominal for labels), over the items
(units) and raters (coders); None with fewer than two raters. Significance is the paired bootstrap test
QmdsCnnIr cites (Noreen 1989; Efron & Tibshirani 1994), in the form of Berg-Kirkpatrick et al. (2012):
resample the items with replacement B times, p = the share of resamples whose difference exceeds twice
the observed one. No package ships this test for per-item judgments (scipy's bootstrap gives intervals),
so it is written here in a few lines of numpy. With no ratings every value cell says "awaiting ratings".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from wikiref.stages.humaneval.studies import STUDIES

AWAITING = "awaiting ratings"


def alpha(matrix: Sequence[Sequence[float]], level: str) -> float | None:
    """Krippendorff's alpha of a raters x units matrix (NaN = no rating); None when it is undefined (fewer
    than two raters, or fewer than two distinct values among the pairable ratings)."""
    import krippendorff

    data = np.asarray(matrix, dtype=float)
    if data.ndim != 2 or data.shape[0] < 2:
        return None
    pairable = data[:, (~np.isnan(data)).sum(axis=0) >= 2]
    if pairable.size == 0 or len(np.unique(pairable[~np.isnan(pairable)])) < 2:
        return None
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))


def paired_bootstrap(first: Sequence[float], second: Sequence[float], resamples: int, seed: int) -> float | None:
    """One-sided p that the better of two systems is better, from per-item scores (paired): the share of
    ``resamples`` resamples of the items whose mean difference exceeds twice the observed one. None without
    items; 1.0 when the observed difference is 0."""
    a, b = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    if a.size == 0:
        return None
    d = b - a
    delta = float(d.mean())
    if delta == 0:
        return 1.0
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, d.size, size=(int(resamples), d.size))
    boot = d[idx].mean(axis=1) * np.sign(delta)
    return float((boot > 2 * abs(delta)).sum() / int(resamples))


def _fmt(x, digits: int = 2):
    return AWAITING if x is None else round(float(x), digits)


class Judgments:
    """The un-blinded answers of one study: (item, rater, question, system) -> value."""

    def __init__(self, sample: Mapping, key: Mapping, ratings: Sequence) -> None:
        self.sample, self.key, self.raters = sample, key, [r.rater for r in ratings]
        self.questions = {q["id"]: q for q in sample["questions"]}
        self.rows: list[tuple[str, str, str, str, str]] = []
        for r in ratings:
            for iid, ans in r.answers.items():
                systems = key[iid].get("systems", {})
                for qid, value in ans.items():
                    q = self.questions[qid]
                    base = qid.rsplit("_", 1)[0] if q.get("system") else qid
                    system = systems.get(q["system"], "") if q.get("system") else ""
                    if value in ("A", "B") and systems:
                        value = systems[value]  # a head-to-head answer names the hidden system
                    self.rows.append((iid, r.rater, base, system, value))

    def values(self, question: str, *, items=None, system: str = "") -> list[str]:
        return [v for i, _, q, s, v in self.rows if q == question and s == system and (items is None or i in items)]

    def per_item(self, question: str, items, system: str = "") -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for i, _, q, s, v in self.rows:
            if q == question and s == system and i in items:
                out.setdefault(i, []).append(v)
        return out

    def alpha(self, question: str, items, level: str, systems: Sequence[str] = ("",), domain=None) -> float | None:
        """Alpha over the units (item, system) of ``items`` and every rater."""
        units = [(i, s) for i in sorted(items) for s in systems]
        codes = {v: n for n, v in enumerate(domain or [])}
        cell = {(i, r, s): v for i, r, q, s, v in self.rows if q == question}
        matrix = [
            [
                (float(cell[i, r, s]) if level == "ordinal" else float(codes.setdefault(cell[i, r, s], len(codes))))
                if (i, r, s) in cell
                else np.nan
                for i, s in units
            ]
            for r in self.raters
        ]
        return alpha(matrix, level)


def _items_of(key: Mapping, stratum: str) -> set[str]:
    return {i for i, k in key.items() if stratum in k.get("strata", [k["stratum"]])}


def _mean(values: Sequence[str]) -> float | None:
    return float(np.mean([float(v) for v in values])) if values else None


# --------------------------------------------------------------------------------------------- tables
def wikiref_table3(j: Judgments, cfg: Mapping, opts: Mapping):
    from wikiref.stages.humaneval.sampling import bin_label

    paper = STUDIES["wikiref_table3"].paper_numbers
    rows, metrics = [], {"alpha": {}, "bins": {}}
    all_items = set(j.key)
    for lo, hi in cfg["bins"]:
        label = bin_label(lo, hi)
        items = _items_of(j.key, label)
        p = paper.get((round(100 * lo), round(100 * hi)), (None, None))
        rel, sal = _mean(j.values("relatedness", items=items)), _mean(j.values("salience", items=items))
        metrics["bins"][label] = {"relatedness": rel, "salience": sal, "items": len(items)}
        rows.append(
            {
                "Oracle interval": label,
                "Relatedness": _fmt(rel),
                "Salience": _fmt(sal),
                "Relatedness (paper)": "" if p[0] is None else p[0],
                "Salience (paper)": "" if p[1] is None else p[1],
                "Items": len(items),
            }
        )
    for q in ("relatedness", "salience"):
        metrics["alpha"][q] = j.alpha(q, all_items, "ordinal")
    return rows, metrics


def wikiref_table7(j: Judgments, cfg: Mapping, opts: Mapping):
    systems = list(cfg["systems"])
    paper = list(STUDIES["wikiref_table7"].paper_numbers.items())
    items = set(j.key)
    metrics: dict = {"alpha": {}, "p": {}, "systems": {}}
    means = {s: {q: _mean(j.values(q, system=s)) for q in ("relatedness", "redundancy")} for s in systems}
    for q in ("relatedness", "redundancy"):
        per = {s: j.per_item(q, items, system=s) for s in systems}
        both = sorted(set(per[systems[0]]) & set(per[systems[1]]))
        a = [np.mean([float(v) for v in per[systems[0]][i]]) for i in both]
        b = [np.mean([float(v) for v in per[systems[1]][i]]) for i in both]
        metrics["p"][q] = paired_bootstrap(a, b, opts["bootstrap"], opts["seed"])
        metrics["alpha"][q] = j.alpha(q, items, "ordinal", systems=systems)
    rows = []
    for n, s in enumerate(systems):
        metrics["systems"][s] = means[s]
        rows.append(
            {
                "System": s,
                "Relatedness": _fmt(means[s]["relatedness"]),
                "Redundancy": _fmt(means[s]["redundancy"]),
                "p relatedness (vs first)": "" if n == 0 else _fmt(metrics["p"]["relatedness"], 4),
                "p redundancy (vs first)": "" if n == 0 else _fmt(metrics["p"]["redundancy"], 4),
                "Paper row": paper[n][0],
                "Relatedness (paper)": paper[n][1][0],
                "Redundancy (paper)": paper[n][1][1],
            }
        )
    return rows, metrics


def qmdscnnir_table6(j: Judgments, cfg: Mapping, opts: Mapping):
    first, second = list(cfg["systems"])
    paper = STUDIES["qmdscnnir_table6"].paper_numbers
    rows, metrics = [], {"alpha": {}, "p": {}, "counts": {}}
    for year in cfg["years"]:
        items = _items_of(j.key, str(year))
        for q in STUDIES["qmdscnnir_table6"].questions:
            vals = j.values(q.id, items=items)
            counts = [vals.count(first), vals.count(second), vals.count("=")]
            per = j.per_item(q.id, items)
            # per item: wins of `second` minus wins of `first` (a judge's vote is +1 / -1 / 0)
            score = {i: [1.0 if v == second else -1.0 if v == first else 0.0 for v in vs] for i, vs in per.items()}
            p = paired_bootstrap(
                [0.0] * len(score), [float(np.sum(v)) for v in score.values()], opts["bootstrap"], opts["seed"]
            )
            al = j.alpha(q.id, items, "nominal", domain=[first, second, "="])
            tag = f"{year}/{q.id}"
            metrics["counts"][tag], metrics["p"][tag], metrics["alpha"][tag] = counts, p, al
            pp = paper.get(int(year), {}).get(q.id, ("", "", ""))
            none = not vals
            rows.append(
                {
                    "Year": year,
                    "Criterion": q.id,
                    first: AWAITING if none else counts[0],
                    second: AWAITING if none else counts[1],
                    "=": AWAITING if none else counts[2],
                    "p (bootstrap)": _fmt(p, 4) if not none else AWAITING,
                    "alpha": "" if al is None else round(al, 3),
                    "Paper WIKI": pp[0],
                    "Paper CB": pp[1],
                    "Paper =": pp[2],
                }
            )
    return rows, metrics


def psg2sum_table3(j: Judgments, cfg: Mapping, opts: Mapping):
    paper = STUDIES["psg2sum_table3"].paper_numbers
    rows, metrics = [], {"alpha": {}, "thresholds": {}}
    for lam in sorted(float(x) for x in cfg["thresholds"]):
        items = _items_of(j.key, f"{lam:g}")
        vals = j.values("quality", items=items)
        good, unsup = vals.count("good"), vals.count("unsupported")
        pg = paper.get(lam, ("", ""))
        al = j.alpha("quality", items, "nominal", domain=["good", "unsupported"])
        metrics["thresholds"][f"{lam:g}"] = {"good": good, "unsupported": unsup, "items": len(items)}
        metrics["alpha"][f"{lam:g}"] = al
        rows.append(
            {
                "Threshold λ": lam,
                "Good": good if vals else AWAITING,
                "Good (%)": _fmt(100 * good / len(vals), 1) if vals else AWAITING,
                "Unsupported": unsup if vals else AWAITING,
                "Items": len(items),
                "Judgments": len(vals),
                "alpha": "" if al is None else round(al, 3),
                "Paper Good (of 50)": pg[0],
                "Paper Good (%)": "" if pg[0] == "" else round(100 * pg[0] / 50, 1),
                "Paper Unsupported": pg[1],
            }
        )
    return rows, metrics


def wcep_ccnews(j: Judgments, cfg: Mapping, opts: Mapping):
    paper = STUDIES["wcep_ccnews"].paper_numbers
    vals = j.values("relation")
    labels = ("on-topic", "related", "unrelated")
    share = {lb: (100 * vals.count(lb) / len(vals) if vals else None) for lb in labels}
    al = j.alpha("relation", set(j.key), "nominal", domain=list(labels))
    row = {f"{lb} (%)": _fmt(share[lb], 1) for lb in labels}
    row.update({"Articles": len(j.key), "Judgments": len(vals), "alpha": "" if al is None else round(al, 3)})
    row.update({f"Paper {lb} (%)": paper[lb] for lb in labels})
    return [row], {"share": share, "alpha": {"relation": al}}


TABLES = {
    "wikiref_table3": wikiref_table3,
    "wikiref_table7": wikiref_table7,
    "qmdscnnir_table6": qmdscnnir_table6,
    "psg2sum_table3": psg2sum_table3,
    "wcep_ccnews": wcep_ccnews,
}
