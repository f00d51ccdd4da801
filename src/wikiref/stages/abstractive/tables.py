"""The abstractive stage's tables, each beside the paper's numbers (x100; ours "x ± h", h = half the 95%
interval of the official scorer).

* :func:`psg2sum_table4`: every row of Psg2Sum Table 4 (Zhou, Wei & Zhou): s2s, s2s+copy, PGN from the runs
  of :data:`PSG2SUM_RUNS`, LEAD1, TextRank and the BERT scorer (NN-SE's row) from the psg2sum baselines job's
  metrics; R / P / F of ROUGE-1/2/L. The paper's rows are :data:`wikiref.papers.psg2sum.PAPER_TABLE4`.
* :func:`qmds_table`: QmdsCnnIr Table 3 (QmdsCnn) / Table 4 (QmdsIr): the HEROSumm ablation (runs
  ``<dataset>-<variant>``, :data:`HS_VARIANTS`), ROUGE-1/2/L F1 on the dataset's test split.
* :func:`duc_table5`: QmdsCnnIr Table 5 (a) DUC 2006 and (b) DUC 2007: model (baseline, HS-Joint) x training
  data (runs ``<data>-<model>``, :data:`DUC_DATA`), R-1 / R-2 / R-L / R-SU4 recall with 250 words.

A run that the profile does not have shows "(not run)" and empty cells. Each table's STAND-IN flag comes from
the metrics it reads (:func:`wikiref.tables.write_table` labels every row and the caption).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

# Psg2Sum Table 4's abstractive rows -> the run reproducing each.
PSG2SUM_RUNS = {"s2s": "psg2sum-s2s", "s2s+copy": "psg2sum-s2s-copy", "PGN": "psg2sum-pgn"}
# HEROSumm ablation rows of QmdsCnnIr Tables 2-4: run-name suffix -> the paper's row label.
HS_VARIANTS = {
    "baseline": "Liu and Lapata (2019)",
    "hierarchical": "HS w/ Hierarchical Encodings",
    "ordering": "HS w/ Ordering Component",
    "query": "HS w/ Query Encoding",
    "joint": "HS-Joint Model",
}
QMDS_DATASETS = {"qmdscnn": ("QmdsCnn", "Table 3"), "qmdsir": ("QmdsIr", "Table 4")}

# QmdsCnnIr (Pasunuru et al., AAAI 2021) Table 3 (QmdsCnn) and Table 4 (QmdsIr), R-L (F1, test set).
PAPER_QMDS = {
    "qmdscnn": {
        "baseline": (36.31, 15.40, 33.38),
        "hierarchical": (37.88, 16.36, 35.23),
        "ordering": (36.95, 14.95, 34.34),
        "query": (36.96, 16.05, 34.37),
        "joint": (37.09, 16.33, 34.45),
    },
    "qmdsir": {
        "baseline": (43.60, 21.88, 39.40),
        "hierarchical": (43.37, 21.64, 39.21),
        "ordering": (39.37, 18.79, 35.61),
        "query": (44.11, 22.62, 39.93),
        "joint": (45.53, 23.44, 41.15),
    },
}

# QmdsCnnIr Table 5 (a) DUC 2006 and (b) DUC 2007 (trained on each dataset, no fine-tuning), R-L,
# R-SU4 recall, 250 words. Part (c) (fine-tuned on DUC 2006, tested on 2007) is not reproduced here.
DUC_MODELS = {"baseline": "Baseline", "joint": "HS-Joint"}
DUC_DATA = {"wikisum": "WikiSum", "qmdsir": "QmdsIr", "qmdscnn": "QmdsCnn", "qmdscnnir": "QmdsCnnIr"}
NO_SOURCE = {"wikisum": "no WikiSum source in this package"}
PAPER_TABLE5 = {
    ("baseline", "wikisum"): {2006: (24.00, 4.28, 22.72, 8.16), 2007: (23.42, 4.41, 22.17, 8.05)},
    ("baseline", "qmdsir"): {2006: (29.65, 3.83, 27.93, 9.63), 2007: (29.35, 3.75, 27.45, 9.55)},
    ("baseline", "qmdscnn"): {2006: (30.45, 6.13, 28.61, 10.39), 2007: (31.72, 7.07, 29.69, 11.34)},
    ("baseline", "qmdscnnir"): {2006: (30.57, 6.17, 28.88, 10.57), 2007: (32.33, 6.98, 30.50, 11.63)},
    ("joint", "wikisum"): {2006: (22.96, 4.09, 21.76, 7.89), 2007: (22.91, 4.45, 21.74, 7.92)},
    ("joint", "qmdsir"): {2006: (30.17, 4.01, 28.31, 9.79), 2007: (29.74, 3.74, 27.83, 9.71)},
    ("joint", "qmdscnn"): {2006: (31.14, 6.28, 29.28, 10.90), 2007: (34.14, 7.60, 32.08, 12.50)},
    ("joint", "qmdscnnir"): {2006: (30.83, 6.18, 29.17, 10.91), 2007: (33.13, 7.37, 31.05, 12.04)},
}
DUC_MEASURES = ("ROUGE-1", "ROUGE-2", "ROUGE-L", "ROUGE-SU4")
QMDS_METRICS = ("rouge1", "rouge2", "rougeL")
_SHORT = {"rouge1": "R-1", "rouge2": "R-2", "rougeL": "R-L"}

# Every run name a table looks for.
TABLE_RUNS = tuple(
    dict.fromkeys(
        [*PSG2SUM_RUNS.values()]
        + [f"{d}-{v}" for d in QMDS_DATASETS for v in HS_VARIANTS]
        + [f"{d}-{m}" for m in DUC_MODELS for d in DUC_DATA if d not in NO_SOURCE]
    )
)


def _cell(value: float, lo: float, hi: float) -> str:
    return f"{float(value):.2f} ± {(float(hi) - float(lo)) / 2:.2f}"


def _write(rows: list[dict], stem, *, title: str, notes: str, profile: Mapping, standin: bool | None) -> dict:
    """Write one table; ``standin``: derived from the runs it shows (None when none ran: the profile labels
    its rows, which then hold only the paper's numbers)."""
    import pandas as pd

    from wikiref.tables import write_table

    df = pd.DataFrame(rows)
    write_table(df, stem, title=title, profile=profile, notes=notes, standin=standin)
    flag = bool(profile.get("standin")) if standin is None else bool(standin)
    labelled = df.assign(Data="STAND-IN" if flag else "real")  # as write_table labels the rows
    return {"standin": flag, "rows": labelled.to_dict("records")}


# ------------------------------------------------------------------------------------- Psg2Sum Table 4
def psg2sum_table4(
    runs: Mapping[str, Mapping], baselines: Mapping | None, stem: str | Path, *, profile: Mapping
) -> dict:
    """Psg2Sum Table 4, every row: ours (the runs of :data:`PSG2SUM_RUNS` on the psg2sum test split; the
    extractive rows from ``baselines``, the psg2sum baselines job's metrics) beside the paper's."""
    from wikiref.extractive.official import ROUGE_FLAGS
    from wikiref.papers import psg2sum as bl

    ours_cols = [f"{_SHORT[m]} {f[0].upper()}" for m in bl.METRICS for f in bl.FIELDS]
    rows, standins, n_test, flags = [], [], set(), set()  # the shown runs' STAND-IN flags
    for paper_row, run in PSG2SUM_RUNS.items():
        m = runs.get(run)
        test = (m or {}).get("test", {}).get("psg2sum") or {}
        ok = bool(test.get("scores"))
        rec = {"Method": f"{paper_row} (run {run})" + ("" if ok else " (not run)")}
        rec.update(bl.ours_cells(test["scores"]) if ok else dict.fromkeys(ours_cols, ""))
        rec["Paper row"] = paper_row
        rec.update(bl.paper_cells(paper_row))
        rows.append(rec)
        if m:
            standins.append(bool(m["standin"]))
        if ok:
            n_test.add(test["examples"])
            flags.add(test["flags"])
    results = (baselines or {}).get("results") or {}
    for method in bl.METHODS:
        ok = method in results
        rec = {"Method": bl.METHOD_LABELS[method] + ("" if ok else " (not run)")}
        rec.update(bl.ours_cells(results[method]) if ok else dict.fromkeys(ours_cols, ""))
        rec["Paper row"] = bl.PAPER_ROW[method]
        rec.update(bl.paper_cells(bl.PAPER_ROW[method]))
        rows.append(rec)
    if baselines:
        standins.append(bool(baselines.get("standin")))
        n_test.add(baselines.get("test_examples"))
        flags.add(baselines.get("rouge_flags"))
    n = ", ".join(str(x) for x in sorted(x for x in n_test if x is not None)) or "no"
    return _write(
        rows,
        stem,
        title=(
            f"Psg2Sum Table 4: abstractive and extractive systems on the test split ({n} passages; official ROUGE-1.5.5 "
            f"{' / '.join(sorted(f for f in flags if f)) or ROUGE_FLAGS}, recall / precision / F1 x100 ± half "
            "the 95% interval)"
        ),
        notes=(
            "Paper columns: Zhou, Wei & Zhou, Psg2Sum Table 4. s2s / s2s+copy / PGN: the package's seq2seq models "
            "(Psg2Sum appendix B: bidirectional GRU encoder, GRU decoder, Bahdanau attention; + copying; + coverage), "
            "trained by the abstractive stage on the psg2sum train split, passage only, beam search; the test "
            "examples may be a seeded subset (abstractive.max_eval_examples). LEAD1, TextRank and the BERT scorer "
            "(NN-SE's row) come from the psg2sum baselines job (results/tables/psg2sum_table4_baselines has their "
            "notes). A row marked (not run) is not in this profile."
        ),
        profile=profile,
        standin=any(standins) if standins else None,
    )


# ------------------------------------------------------------------------------ QmdsCnn / QmdsIr tables
def qmds_table(dataset: str, runs: Mapping[str, Mapping], stem: str | Path, *, profile: Mapping) -> dict:
    """QmdsCnnIr Table 3 (``qmdscnn``) or Table 4 (``qmdsir``): the runs ``<dataset>-<variant>`` of
    :data:`HS_VARIANTS`, ROUGE-1/2/L F1 on the dataset's test split, beside :data:`PAPER_QMDS`."""
    name, table = QMDS_DATASETS[dataset]
    rows, standins, n_test, flags = [], [], set(), set()  # the shown runs' STAND-IN flags
    for variant, label in HS_VARIANTS.items():
        run = f"{dataset}-{variant}"
        m = runs.get(run)
        test = (m or {}).get("test", {}).get(dataset) or {}
        ok = bool(test.get("scores"))
        rec = {"Model": label, "Run": run + ("" if ok else " (not run)")}
        for metric in QMDS_METRICS:
            s = test["scores"][metric] if ok else None
            rec[_SHORT[metric]] = _cell(s["f1"], *s["f1_ci"]) if ok else ""
        for metric, value in zip(QMDS_METRICS, PAPER_QMDS[dataset][variant]):
            rec[f"Paper {_SHORT[metric]}"] = f"{value:.2f}"
        rows.append(rec)
        if m:
            standins.append(bool(m["standin"]))
        if ok:
            n_test.add(test["examples"])
            flags.add(test["flags"])
    n = ", ".join(str(x) for x in sorted(n_test)) or "no"
    return _write(
        rows,
        stem,
        title=(
            f"{name} ({table} of QmdsCnnIr): HEROSumm ablation on the test split ({n} examples; official ROUGE-1.5.5 "
            f"{' / '.join(sorted(flags)) or '(none run)'}, F1 x100 ± half the 95% interval)"
        ),
        notes=(
            f"Paper columns: Pasunuru et al. (AAAI 2021) {table}, {name} test set, R-1 / R-2 / R-L F1. Rows: the "
            "hierarchical transformer of Liu & Lapata (2019) (query prepended to the first document) and HEROSumm's "
            "components (hierarchical encodings = the decoder attends to local + global layers; ordering = the "
            "self-ordering component; query encoding = a query layer between local and global layers); HS-Joint on "
            "this dataset = hierarchical encodings + query encoder (§6.1). The test examples may be a seeded "
            "subset (abstractive.max_eval_examples). A row marked (not run) is not in this profile."
        ),
        profile=profile,
        standin=any(standins) if standins else None,
    )


# ------------------------------------------------------------------------------------- DUC Table 5
def duc_table5(runs: Mapping[str, Mapping], years: Sequence[int], stem: str | Path, *, profile: Mapping) -> dict:
    """QmdsCnnIr Table 5 (a)/(b): model x training data (runs ``<data>-<model>``), per DUC year of ``years``
    R-1 / R-2 / R-L / R-SU4 recall beside :data:`PAPER_TABLE5` (empty for a year the paper does not have)."""
    rows, standins, flags, topics = [], [], set(), {}  # the shown runs' STAND-IN flags
    for model, model_label in DUC_MODELS.items():
        for data, data_label in DUC_DATA.items():
            run = f"{data}-{model}"
            m = runs.get(run)
            duc = (m or {}).get("duc") or {}
            ran = all(str(y) in duc for y in years) and bool(years)
            note = f" (not run: {NO_SOURCE[data]})" if data in NO_SOURCE else ("" if ran else " (not run)")
            rec = {"Model": model_label, "Dataset": data_label, "Run": ("" if data in NO_SOURCE else run) + note}
            for y in years:
                d = duc.get(str(y))
                for k, measure in enumerate(DUC_MEASURES):
                    col = f"{y} {measure.replace('ROUGE-', 'R-')}"
                    s = (d or {}).get("scores", {}).get(measure)
                    rec[col] = _cell(s["recall"], *s["recall_ci"]) if s else ""
                    paper = PAPER_TABLE5[model, data].get(int(y))
                    rec[f"Paper {col}"] = f"{paper[k]:.2f}" if paper else ""
                if d:
                    flags.add(d["flags"])
                    topics[str(y)] = d["topics"]
            rows.append(rec)
            if m and duc:
                standins.append(bool(m["standin"]))
    n = ", ".join(f"{y}: {t} topics" for y, t in sorted(topics.items())) or "no run"
    return _write(
        rows,
        stem,
        title=(
            f"QmdsCnnIr Table 5: DUC transfer, trained on each dataset, no fine-tuning ({n}; official ROUGE-1.5.5 "
            f"{' / '.join(sorted(flags)) or '(none run)'}, recall x100 ± half the 95% interval, 250 words)"
        ),
        notes=(
            "Paper columns: Pasunuru et al. (AAAI 2021) Table 5 (a) DUC 2006 and (b) DUC 2007 (a year the paper "
            "does not have is left empty); part (c), fine-tuning on DUC 2006, is not reproduced. Summaries are "
            "decoded with abstractive.duc.decode, cut to duc.summary_words words, scored with duc.rouge_flags "
            "without -x (so ROUGE-L is computed). DUC documents and the query are cut as the run's model was "
            "trained (max_documents, max_doc_length), not A.3's 25 x 800 test inputs. WikiSum is not a source of "
            "this package; QmdsCnnIr = trained on QmdsCnn + QmdsIr. A row marked (not run) is not in this profile."
        ),
        profile=profile,
        standin=any(standins) if standins else None,
    )
