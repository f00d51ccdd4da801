"""Tables VIII-IX and Figs. 4-6 of the journal (§VI) from ``results/metrics/ablations.json``.

Pure functions: the ablations structure (:func:`wikiref.stages.ablations.collect`) in, DataFrames and
figure panels (:mod:`wikiref.figures`) out. Scores: WikiRef = test ROUGE F1 x 100 (threshold
tuned on dev), DUC = ROUGE recall x 100 on the held-out test year (official ROUGE-1.5.5 scoring).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from wikiref.figures import BLUE, GREEN, ORANGE, PURPLE, RED, HLine, Panel, Series

TABLE8_STEM = "table8_pooling"
TABLE9_STEM = "table9_subnetworks"
FIG4_STEM = "fig4_duc_train_size"
FIG5_STEM = "fig5_wikiref_size"
FIG6_STEM = "fig6_wikiref_quality"
ARCH = {"cls": "BERT", "max": "BERT+MAX", "mean": "BERT+MEAN", "attention": "BERT+ATT", "query": "Q-BERT"}


def _duc_label(ab: Mapping) -> str:
    return f"DUC {ab['test_year']}" + (" stand-in" if ab.get("duc_standin") else "")


def table8(ab: Mapping) -> pd.DataFrame:
    """Rows: the pooling methods in params order; WikiRef R-2/R-L F1, DUC R-2/R-SU4 recall."""
    year = ab["test_year"]
    rows = [
        {
            "Model": r["label"],
            "WikiRef R-2": round(r["wikiref"]["rouge2"], 2),
            "WikiRef R-L": round(r["wikiref"]["rougeL"], 2),
            f"DUC {year} R-2": round(r["duc"]["ROUGE-2"], 2),
            f"DUC {year} R-SU4": round(r["duc"]["ROUGE-SU4"], 2),
        }
        for r in ab["pooling"]["rows"]
    ]
    return pd.DataFrame(rows, columns=["Model", "WikiRef R-2", "WikiRef R-L", f"DUC {year} R-2", f"DUC {year} R-SU4"])


def table9(ab: Mapping) -> pd.DataFrame:
    """Rows: the subnetwork identification methods in params order; DUC R-1/R-2/R-SU4 recall."""
    rows = []
    for r in ab["subnetwork"]["rows"]:
        frac = (r.get("subnet") or {}).get("masked_trainable_fraction")
        rows.append(
            {
                "Method": r["method_label"],
                "Init": r["init_label"],
                "R-1": round(r["duc"]["ROUGE-1"], 2),
                "R-2": round(r["duc"]["ROUGE-2"], 2),
                "R-SU4": round(r["duc"]["ROUGE-SU4"], 2),
                "Trainable share of encoder layers": round(float(frac), 3) if frac is not None else 1.0,
            }
        )
    return pd.DataFrame(rows, columns=["Method", "Init", "R-1", "R-2", "R-SU4", "Trainable share of encoder layers"])


# --------------------------------------------------------------------------- figures


def fig4(ab: Mapping) -> tuple[list[Panel], pd.DataFrame]:
    """DUC test ROUGE-2 vs the percentage of the training years' clusters, with and without DA;
    dashed lines: one training year only (no DA) and the DA model applied without fine-tuning."""
    arch = ARCH.get(ab["base_pooling"], ab["base_pooling"])
    curves = ab["duc_size"]["curves"]
    da, bert = curves.get("da", []), curves.get("bert", [])
    years = "+".join(str(y) for y in ab["train_years"])
    series = []
    if da:
        series.append(Series(f"{arch} + DA", [p["percent"] for p in da], [p["duc"]["ROUGE-2"] for p in da], RED))
    if bert:
        series.append(
            Series(
                f"{arch} (no DA)", [p["percent"] for p in bert], [p["duc"]["ROUGE-2"] for p in bert], BLUE, marker="s"
            )
        )
    hlines = []
    styles = [(GREEN, ":"), (ORANGE, "-."), (PURPLE, (0, (5, 2, 1, 2)))]
    k = 0
    for name, line in ab["duc_size"]["lines"].items():
        if name == "DA pre-trained":
            hlines.append(HLine("DA pre-trained, no fine-tuning", line["duc"]["ROUGE-2"], RED, "--"))
        else:
            color, style = styles[k % len(styles)]
            k += 1
            hlines.append(HLine(f"DUC {name}, no DA", line["duc"]["ROUGE-2"], color, style))
    xs = sorted({p["percent"] for p in da + bert})
    panel = Panel(
        ylabel=f"ROUGE-2 ({_duc_label(ab)})",
        xlabel=f"DUC {years} training data used (% of clusters)",
        series=series,
        hlines=hlines,
        xticks=xs,
        xticklabels=[f"{x:g}" for x in xs],
    )

    def row(series: str, percent, point: Mapping) -> dict:
        duc = point["duc"]
        return {
            "series": series,
            "percent": percent,
            "rouge2": duc["ROUGE-2"],
            "rouge_su4": duc["ROUGE-SU4"],
            "train_clusters": point.get("train_clusters"),
        }

    rows = [row("da", p["percent"], p) for p in da]
    rows += [row("no_da", p["percent"], p) for p in bert]
    rows += [row(f"line: {n}", None, v) for n, v in ab["duc_size"]["lines"].items()]
    return [panel], pd.DataFrame(rows, columns=["series", "percent", "rouge2", "rouge_su4", "train_clusters"])


def _rouge2_panels(
    ab: Mapping,
    pts: Sequence[Mapping],
    xs: list,
    xlabel: str,
    xticklabels: list[str],
    color: str,
    note: str = "",
    full: Mapping | None = None,
) -> list[Panel]:
    """Figs. 5 and 6: ROUGE-2 of the points on WikiRef test (top) and, fine-tuned with DA, on the DUC test
    year (bottom); ``note`` ends the series label; ``full``: the full-data result, a dashed red line."""
    arch = ARCH.get(ab["base_pooling"], ab["base_pooling"])
    panels = []
    for ylabel, da, rouge2 in (
        ("ROUGE-2 (WikiRef test)", "", lambda m: m["wikiref"]["rouge2"]),
        (f"ROUGE-2 ({_duc_label(ab)})", " + DA", lambda m: m["duc"]["ROUGE-2"]),
    ):
        panels.append(
            Panel(
                ylabel=ylabel,
                xlabel=xlabel,
                xticks=xs,
                xticklabels=xticklabels,
                series=[Series(f"{arch}{da}{note}", xs, [rouge2(p) for p in pts], color)],
                hlines=[HLine("full data", rouge2(full), RED, "--")] if full else [],
            )
        )
    return panels


def fig5(ab: Mapping) -> tuple[list[Panel], pd.DataFrame]:
    """ROUGE-2 vs the share of the WikiRef training pool: WikiRef test (top), DUC test year (bottom)."""
    pts = sorted(ab["data_size"]["points"], key=lambda p: p["fraction"])
    xs = [100 * p["fraction"] for p in pts]
    pool = (ab.get("budget") or {}).get("train_pool")
    xlabel = "WikiRef training data used (%" + (f" of {pool} examples)" if pool else ")")
    panels = _rouge2_panels(ab, pts, xs, xlabel, [f"{x:g}" for x in xs], RED)
    df = pd.DataFrame(
        [
            {
                "fraction": p["fraction"],
                "train_examples": p["wikiref"]["train_examples"],
                "wikiref_rouge2": p["wikiref"]["rouge2"],
                "wikiref_rougeL": p["wikiref"]["rougeL"],
                "duc_rouge2": p["duc"]["ROUGE-2"],
                "duc_rouge_su4": p["duc"]["ROUGE-SU4"],
            }
            for p in pts
        ]
    )
    return panels, df


def fig6(ab: Mapping) -> tuple[list[Panel], pd.DataFrame]:
    """ROUGE-2 of the overlapping quality slices (Poor ... Excellent), full-data line dashed red."""
    q = ab["quality"]
    pts = sorted(q["points"], key=lambda p: p["start"])
    xs = list(range(len(pts)))
    names = [p["name"] for p in pts]
    full = q.get("full")
    xlabel = f"WikiRef slice by oracle score ({100 * q['window']:g}% of the data each)"
    panels = _rouge2_panels(ab, pts, xs, xlabel, names, BLUE, note=" (half of the data)", full=full)
    rows = [
        {
            "slice": p["name"],
            "start": p["start"],
            "train_examples": p["wikiref"]["train_examples"],
            "oracle_score_min": (p["wikiref"].get("oracle_score_range") or [None, None])[0],
            "oracle_score_max": (p["wikiref"].get("oracle_score_range") or [None, None])[1],
            "wikiref_rouge2": p["wikiref"]["rouge2"],
            "duc_rouge2": p["duc"]["ROUGE-2"],
        }
        for p in pts
    ]
    if full:
        rows.append(
            {
                "slice": "full",
                "start": 0.0,
                "train_examples": full["wikiref"]["train_examples"],
                "oracle_score_min": None,
                "oracle_score_max": None,
                "wikiref_rouge2": full["wikiref"]["rouge2"],
                "duc_rouge2": full["duc"]["ROUGE-2"],
            }
        )
    return panels, pd.DataFrame(rows)


FIGURES: dict[str, dict[str, Any]] = {
    FIG4_STEM: {
        "build": fig4,
        "key": "Fig. 4",
        "title": "Fig. 4: ROUGE-2 on DUC {year} with various amounts of DUC training data, with and without "
        "WikiRef augmentation (DA)",
    },
    FIG5_STEM: {
        "build": fig5,
        "key": "Fig. 5",
        "title": "Fig. 5: ROUGE-2 with various amounts of WikiRef training data used as augmentation data",
    },
    FIG6_STEM: {
        "build": fig6,
        "key": "Fig. 6",
        "title": "Fig. 6: ROUGE-2 with half of the WikiRef training data of different quality",
    },
}
TABLES: dict[str, dict[str, Any]] = {
    TABLE8_STEM: {
        "build": table8,
        "key": "Table VIII",
        "title": "Table VIII: Effectiveness of different pooling methods to get sentence representations",
    },
    TABLE9_STEM: {
        "build": table9,
        "key": "Table IX",
        "title": "Table IX: Performance of different subnetwork identification methods (DUC {year})",
    },
}
