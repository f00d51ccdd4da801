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
METHOD_LABELS = {
    "oracle_multi": "ORACLE (MULTI)",
    "oracle_single": "ORACLE (SINGLE)",
    "lead_oracle": "LEAD ORACLE",
    "random_lead": "RANDOM LEAD",
    "random": "RANDOM",
    "textrank": "TEXTRANK",
    "centroid": "CENTROID",
    "submodular": "SUBMODULAR",
    "bert": "BERT scorer (package; paper row: BERTREG)",
}
PAPER_ROW = {"bert": "BERTREG"}
METRICS = ("rouge1", "rouge2", "rougeL")


def _words(text: str) -> int:
    return len(text.split())


def _csv(path: Path, df, standin: bool) -> None:
    """A figure's numbers; every row labelled STAND-IN (a ``Data`` column, as the tables' CSVs) when it is."""
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
        label_rows=True,
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
        label_rows=True,
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
    written to ``<stem>.csv``; the report stage draws it (:func:`render_coverage_density`, one panel per
    variant), so a change of ``report.dpi`` redraws it without rebuilding the dataset. Returns the
    per-variant mean and median."""
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


def _read_csv(path: str | Path):
    """A figure CSV written by :func:`_csv`: its numbers and whether its rows say STAND-IN."""
    import pandas as pd

    df = pd.read_csv(path)
    standin = "Data" in df.columns and bool((df["Data"] == "STAND-IN").any())
    return df.drop(columns=["Data"], errors="ignore"), standin


def render_coverage_density(csv: str | Path, stem: str | Path, *, profile: Mapping, dpi: int = 150) -> list[Path]:
    """Draw Fig. 1 from its CSV (:func:`coverage_density_figure`): ``<stem>.png`` and ``<stem>.svg``.
    STAND-IN when the CSV says so or the profile does."""
    df, standin = _read_csv(csv)
    stem = Path(stem)
    _scatter(df, stem, profile={**profile, "standin": bool(standin or profile.get("standin"))}, dpi=dpi)
    return [stem.with_suffix(".png"), stem.with_suffix(".svg")]


def _scatter(df, stem: Path, *, profile: Mapping, dpi: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from wikiref.files import atomic_path
    from wikiref.stages.report.figures import STANDIN_COLOR

    names = list(dict.fromkeys(df["variant"]))
    rc = {"font.size": 8, "svg.hashsalt": "wikiref", "svg.fonttype": "path"}
    with plt.rc_context(rc):
        fig, axes = plt.subplots(1, len(names), figsize=(2.2 * len(names), 2.6), sharey=True, squeeze=False)
        for ax, name in zip(axes[0], names):
            g = df[df["variant"] == name]
            ax.scatter(g["coverage"], g["density"], s=6, alpha=0.6, color="#1f77b4", linewidths=0)
            ax.set_title(name, fontsize=8)
            ax.set_xlabel("Coverage")
            ax.set_xlim(-0.02, 1.02)
            ax.set_yscale("symlog", linthresh=1.0)
        axes[0][0].set_ylabel("Density")
        fig.suptitle("WCEP Fig. 1: coverage and density per cluster", fontsize=8, fontweight="bold")
        foot = f"profile: {profile.get('name', '?')}; A = all articles of a cluster, S = its summary"
        fig.text(0.5, 0.01, foot, ha="center", va="bottom", fontsize=6, color="#555555")
        if profile.get("standin"):
            fig.text(
                0.5,
                0.06,
                "STAND-IN DATA: not comparable to the paper",
                ha="center",
                fontsize=7,
                color=STANDIN_COLOR,
                fontweight="bold",
            )
        fig.subplots_adjust(bottom=0.3, top=0.82, wspace=0.1)
        stem.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(stem.with_suffix(".png")) as tmp:
            fig.savefig(tmp, format="png", dpi=dpi, metadata={"Software": None})
        with atomic_path(stem.with_suffix(".svg")) as tmp:
            fig.savefig(tmp, format="svg", metadata={"Date": None, "Creator": None})
        plt.close(fig)


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
        label_rows=True,
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


def render_added_articles(csv: str | Path, stem: str | Path, *, profile: Mapping, dpi: int = 150) -> list[Path]:
    """Draw Fig. 2 from its CSV (:func:`added_articles_figure`; -1 added = all, drawn at the largest count):
    ``<stem>.png`` and ``<stem>.svg``."""
    from wikiref.stages.report import figures as F

    df, standin = _read_csv(csv)
    standin = bool(standin or profile.get("standin"))
    stem = Path(stem)
    colors = [F.RED, F.BLUE, F.GREEN, F.ORANGE, F.PURPLE, F.GREY]
    panels = []
    for metric, label in (("rouge1_f1", "ROUGE-1 F1"), ("rouge2_f1", "ROUGE-2 F1")):
        series = []
        for i, (method, g) in enumerate(df.groupby("method", sort=False)):
            g = g.sort_values("added_articles")
            series.append(
                F.Series(
                    METHOD_LABELS.get(method, method),
                    list(g["added_articles"]),
                    list(g[metric]),
                    color=colors[i % len(colors)],
                )
            )
        xs = sorted(set(df["added_articles"]))
        labels = [("all" if any((df["added_articles"] == x) & (df["added"] < 0)) else str(x)) for x in xs]
        panels.append(
            F.Panel(
                ylabel=label, xlabel="additional articles per cluster", series=series, xticks=xs, xticklabels=labels
            )
        )
    F.render(
        panels,
        stem,
        title="WCEP Fig. 2: scores against the number of additional (CC-NEWS) articles",
        provenance=f"profile: {profile.get('name', '?')}; WCEP-total test clusters, added articles sampled (nested, seeded)",
        standin=standin,
        dpi=dpi,
    )
    return [stem.with_suffix(".png"), stem.with_suffix(".svg")]


# The figures the report stage draws from this stage's CSVs: figure name -> (title, renderer).
RENDERERS = {
    "wcep_fig1_coverage_density": ("WCEP Fig. 1: coverage and density per cluster", render_coverage_density),
    "wcep_fig2_added_articles": (
        "WCEP Fig. 2: scores against the number of additional (CC-NEWS) articles",
        render_added_articles,
    ),
}
