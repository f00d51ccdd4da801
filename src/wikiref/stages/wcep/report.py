"""WCEP's tables and figures: Table 3 (sizes), Table 4 (per-cluster statistics), Table 5 (baselines, beside
the paper's numbers), Fig. 1 (coverage and density of Grusky et al.) and Fig. 2 (scores against the number
of added articles). Tables go through :func:`wikiref.tables.write_table` and figures carry the profile and,
when any input is a STAND-IN, the red STAND-IN line; every figure's numbers are written as ``<stem>.csv``
(first line: the STAND-IN label when it applies)."""

from __future__ import annotations

import math
import statistics as st
from collections.abc import Mapping, Sequence
from pathlib import Path

from wikiref.figures.wcep import METHOD_LABELS

SPLIT_COLUMNS = (("train", "TRAIN"), ("dev", "VAL"), ("test", "TEST"))
# The paper's Table 3 (train, val, test, total) and Table 4 (min, max, mean, median), as printed.
PAPER_TABLE3 = {
    "# clusters": ("8,158", "1,020", "1,022", "10,200"),
    "# articles (WCEP-total)": ("1.67m", "339k", "373k", "2.39m"),
    "# articles (WCEP-100)": ("494k", "78k", "78k", "650k"),
    "period start": ("2016-8-25", "2019-1-6", "2019-5-8", "-"),
    "period end": ("2019-1-5", "2019-5-7", "2019-8-20", "-"),
}
PAPER_TABLE4 = {
    "# articles (WCEP-total)": (1, 8411, 234.5, 78),
    "# articles (WCEP-100)": (1, 100, 63.7, 78),
    "# WCEP articles": (1, 5, 1.2, 1),
    "# summary words": (4, 141, 32, 29),
    "# summary sents": (1, 7, 1.4, 1),
}
# The paper's Table 5 (test set): F-score and recall of ROUGE-1 / 2 / L.
PAPER_TABLE5 = {
    "ORACLE (MULTI)": ((0.558, 0.29, 0.4), (0.645, 0.331, 0.458)),
    "ORACLE (SINGLE)": ((0.539, 0.283, 0.401), (0.58, 0.304, 0.431)),
    "LEAD ORACLE": ((0.329, 0.131, 0.233), (0.525, 0.217, 0.372)),
    "RANDOM LEAD": ((0.276, 0.091, 0.206), (0.281, 0.094, 0.211)),
    "RANDOM": ((0.181, 0.03, 0.128), (0.203, 0.034, 0.145)),
    "TEXTRANK": ((0.341, 0.131, 0.25), (0.387, 0.152, 0.287)),
    "CENTROID": ((0.341, 0.133, 0.251), (0.388, 0.154, 0.29)),
    "SUBMODULAR": ((0.344, 0.131, 0.25), (0.393, 0.15, 0.289)),
    "BERTREG": ((0.35, 0.135, 0.255), (0.407, 0.16, 0.301)),
}
PAPER_ROW = {"bert": "BERTREG"}
METRICS = ("rouge1", "rouge2", "rougeL")


def _words(text: str) -> int:
    return len(text.split())


def _csv(path: Path, df, standin: bool) -> None:
    """A figure's numbers, every row labelled in a ``Data`` column (``STAND-IN`` or ``real``, as the tables' CSVs)."""
    from wikiref.files import write_text
    from wikiref.tables import stand_in_rows

    write_text(path, stand_in_rows(df, {"standin": standin}).to_csv(index=False, lineterminator="\n"))


# --------------------------------------------------------------------------------------- tables 3, 4
def dataset_tables(
    total_rows: Sequence[Mapping],
    variant_rows: Mapping[int, Sequence[Mapping]],
    table3: str | Path,
    table4: str | Path,
    *,
    profile: Mapping,
) -> dict:
    """Write Tables 3 and 4 beside the paper's and return their content."""
    import pandas as pd

    from wikiref.tables import write_table

    def per_split(rows, fn):
        vals = {s: fn([r for r in rows if r["split"] == s]) for s, _ in SPLIT_COLUMNS}
        return vals

    def n_articles(rows):
        return sum(len(r["documents"]) for r in rows)

    records = []

    def add(measure, vals, total):
        paper = PAPER_TABLE3.get(measure, ("",) * 4)
        rec = {"Measure": measure, **{label: vals[s] for s, label in SPLIT_COLUMNS}, "TOTAL": total}
        rec.update({f"Paper {c}": p for c, p in zip(("TRAIN", "VAL", "TEST", "TOTAL"), paper)})
        records.append(rec)

    add("# clusters", per_split(total_rows, len), len(total_rows))
    add("# articles (WCEP-total)", per_split(total_rows, n_articles), n_articles(total_rows))
    for n, rows in sorted(variant_rows.items(), reverse=True):
        add(f"# articles (WCEP-{n})", per_split(rows, n_articles), n_articles(rows))

    def dates(rows, fn):
        ds = [_date(r) for r in rows]
        return fn(ds) if ds else ""

    add("period start", per_split(total_rows, lambda rs: dates(rs, min)), "-")
    add("period end", per_split(total_rows, lambda rs: dates(rs, max)), "-")
    df3 = pd.DataFrame(records).astype(str)
    write_table(
        df3,
        table3,
        title="WCEP Table 3: size overview (clusters and articles per split; chronological split)",
        profile=profile,
        notes="Paper columns: Gholipour Ghalandari et al. (2020), Table 3.",
    )

    def describe(values):
        return (min(values), max(values), round(st.mean(values), 1), st.median(values)) if values else (0, 0, 0.0, 0)

    rows4 = [("# articles (WCEP-total)", [len(r["documents"]) for r in total_rows])]
    for n, rows in sorted(variant_rows.items(), reverse=True):
        rows4.append((f"# articles (WCEP-{n})", [len(r["documents"]) for r in rows]))
    rows4.append(("# WCEP articles", [sum(d["origin"] == "original" for d in r["documents"]) for r in total_rows]))
    rows4.append(("# summary words", [sum(_words(s) for s in r["summary"]) for r in total_rows]))
    rows4.append(("# summary sents", [len(r["summary"]) for r in total_rows]))
    records4 = []
    for name, values in rows4:
        mn, mx, mean, med = describe(values)
        paper = PAPER_TABLE4.get(name, ("",) * 4)
        rec = {"Measure": name, "MIN": mn, "MAX": mx, "MEAN": float(mean), "MEDIAN": float(med)}
        rec.update({f"Paper {c}": str(p) for c, p in zip(("MIN", "MAX", "MEAN", "MEDIAN"), paper)})
        records4.append(rec)
    df4 = pd.DataFrame(records4)
    write_table(
        df4,
        table4,
        title="WCEP Table 4: statistics of individual clusters (articles, summary words = whitespace tokens, sentences)",
        profile=profile,
        notes="Paper columns: Gholipour Ghalandari et al. (2020), Table 4.",
        floatfmt=".1f",
    )
    return {"table3": df3.to_dict("records"), "table4": df4.to_dict("records")}


def _date(row: Mapping) -> str:
    import json

    meta = json.loads(row["meta"]) if isinstance(row["meta"], str) else row["meta"]
    return meta["date"]


# ------------------------------------------------------------------------------------------- fig. 1
def coverage_density_figure(variants: Mapping[str, Sequence[Mapping]], stem: str | Path, *, profile: Mapping) -> dict:
    """Fig. 1's numbers: coverage and density (Grusky et al. 2018) of every cluster, A = all its articles
    concatenated, S = its summary (:mod:`wikiref.stages.wcep.fragments`: lower-cased protocol tokens),
    written to ``<stem>.csv``; the report stage draws it
    (:func:`wikiref.figures.wcep.render_coverage_density`, one panel per variant), so a change of
    ``report.dpi`` redraws it without rebuilding the dataset. Returns the per-variant mean and median."""
    import pandas as pd

    from wikiref.stages.wcep.fragments import cluster_coverage_density

    points = []
    for name, rows in variants.items():
        for r in rows:
            cov, den = cluster_coverage_density(
                [" ".join(d["sentences"]) for d in r["documents"]], " ".join(r["summary"])
            )
            points.append({"variant": name, "id": r["id"], "coverage": cov, "density": den})
    df = pd.DataFrame(points, columns=["variant", "id", "coverage", "density"])
    stem = Path(stem)
    standin = bool(profile.get("standin"))
    _csv(stem.with_suffix(".csv"), df, standin)
    out = {}
    for name, g in df.groupby("variant", sort=False):
        out[name] = {
            "clusters": len(g),
            "coverage_mean": round(float(g["coverage"].mean()), 4),
            "coverage_median": round(float(g["coverage"].median()), 4),
            "density_mean": round(float(g["density"].mean()), 4),
            "density_median": round(float(g["density"].median()), 4),
        }
    return out


# ------------------------------------------------------------------------------------------ table 5
def _metric(scores: Mapping, metric: str, field: str) -> float:
    return float(scores[f"{metric}_{field}"])


def table5(
    results: Mapping[str, Mapping], stem: str | Path, *, profile: Mapping, n_test: int, variant: int
) -> list[dict]:
    """Table 5: per method ROUGE-1/2/L F1 and recall (x1, as the paper prints them) on the test split, the
    paper's numbers beside. ``results``: method -> :func:`wikiref.stages.wcep.evaluation.evaluate` output."""
    import pandas as pd

    from wikiref.tables import write_table

    records = []
    for method, res in results.items():
        label = METHOD_LABELS.get(method, method)
        rec: dict = {"Method": label}
        for field, tag in (("f1", "F"), ("recall", "R")):
            for m, short in zip(METRICS, ("R1", "R2", "RL")):
                rec[f"{short}-{tag}"] = round(_metric(res["means"], m, field), 3)
        paper = PAPER_TABLE5.get(PAPER_ROW.get(method, label))
        for i, tag in enumerate(("F", "R")):
            for j, short in enumerate(("R1", "R2", "RL")):
                rec[f"Paper {short}-{tag}"] = paper[i][j] if paper else math.nan
        records.append(rec)
    df = pd.DataFrame(records)
    name = f"WCEP-{variant}" if int(variant) else "WCEP-total"
    write_table(
        df,
        stem,
        title=f"WCEP Table 5: oracles and baselines on the {name} test split ({n_test} clusters; summaries <= 40 tokens except the oracles, lower-cased; ROUGE F1 and recall)",
        profile=profile,
        notes="Paper columns: Gholipour Ghalandari et al. (2020), Table 5 (test set). The package's BERT scorer takes BERTREG's row; TSR and SUBMODULAR+ABS are not reproduced.",
        floatfmt=".3f",
    )
    return df.to_dict("records")


# ------------------------------------------------------------------------------------------- fig. 2
def added_articles_figure(points: Sequence[Mapping], stem: str | Path, *, profile: Mapping, max_added: int) -> dict:
    """Fig. 2's numbers: ROUGE-1 and ROUGE-2 F1 of each method against the number of added (CC-NEWS)
    articles per cluster (originals always kept; -1 = all), written to ``<stem>.csv``; the report stage
    draws it (:func:`render_added_articles`)."""
    import pandas as pd

    df = pd.DataFrame(points)
    _csv(Path(stem).with_suffix(".csv"), df, bool(profile.get("standin")))
    return {"points": len(df), "max_added": int(max_added)}
