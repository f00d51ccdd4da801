"""Psg2Sum's Table 4 as the paper prints it (Zhou, Wei & Zhou: R / P / F1 of ROUGE-1, -2 and -L, x100, ± the
half-width of the 95% interval) and the cell format both tables that fill it use: the psg2sum stage's
extractive rows and the abstractive stage's s2s / s2s+copy / PGN rows.
"""

from __future__ import annotations

from collections.abc import Mapping

METHODS = ("lead1", "textrank", "bert")


METRICS = ("rouge1", "rouge2", "rougeL")


FIELDS = ("recall", "precision", "f1")


# The rows of the paper's Table 4 as printed, x100: R, P and F1 of ROUGE-1, then -2, then -L, each score followed by
# the half-width of its 95% interval.
_PRINTED = """
s2s       36.31 0.66  35.24 0.71  33.35 0.60   18.08 0.66  17.95 0.68  16.78 0.60   31.57 0.66  30.64 0.70  29.00 0.60
s2s+copy  35.51 0.73  37.38 0.79  33.78 0.66   18.68 0.67  19.87 0.76  17.80 0.65   30.84 0.69  32.64 0.75  29.43 0.65
PGN       36.27 0.76  36.57 0.77  33.99 0.66   19.05 0.72  19.56 0.75  17.99 0.67   31.34 0.73  31.82 0.73  29.49 0.64
LEAD1     42.97 0.77  35.35 0.73  35.97 0.66   22.76 0.72  18.71 0.71  19.01 0.65   36.06 0.73  29.88 0.70  30.29 0.63
TextRank  39.95 0.77  33.56 0.73  33.74 0.64   20.01 0.75  16.95 0.71  16.92 0.65   33.29 0.73  28.13 0.69  28.18 0.62
NN-SE     43.76 0.80  35.11 0.74  36.21 0.67   23.19 0.75  19.14 0.73  19.40 0.68   36.59 0.74  29.61 0.73  30.40 0.63
"""


def _table4(printed: str) -> dict[str, dict[str, dict[str, tuple[float, float]]]]:
    """row -> metric -> field -> (score, ± half-width) from the printed rows."""
    out = {}
    for line in printed.strip().splitlines():
        row, *cells = line.split()
        vals = [float(c) for c in cells]
        if len(vals) != 2 * len(METRICS) * len(FIELDS):
            raise ValueError(f"Table 4 row {row}: {len(vals)} numbers")
        scores = iter(zip(vals[::2], vals[1::2]))  # (score, half-width), in the printed order
        out[row] = {metric: {f: next(scores) for f in FIELDS} for metric in METRICS}
    return out


PAPER_TABLE4: dict[str, dict[str, dict[str, tuple[float, float]]]] = _table4(_PRINTED)


ABSTRACTIVE = ("s2s", "s2s+copy", "PGN")  # not extractive: reproduced by the abstractive stage (its Table 4)


ABSTRACTIVE_NOTE = "(ours: results/tables/abstractive_psg2sum_table4)"


METHOD_LABELS = {"lead1": "LEAD1", "textrank": "TextRank", "bert": "BERT scorer (package; paper row: NN-SE)"}


PAPER_ROW = {"lead1": "LEAD1", "textrank": "TextRank", "bert": "NN-SE"}


# ---------------------------------------------------------------------------------------- table
SHORT = {"rouge1": "R-1", "rouge2": "R-2", "rougeL": "R-L"}


FIELD_SHORT = {"recall": "R", "precision": "P", "f1": "F"}


def cell(value: float, half: float) -> str:
    return f"{value:.2f} ± {half:.2f}"


def ours_cells(res: Mapping) -> dict[str, str]:
    out = {}
    for m in METRICS:
        for f in FIELDS:
            lo, hi = res[m][f"{f}_ci"]
            out[f"{SHORT[m]} {FIELD_SHORT[f]}"] = cell(float(res[m][f]), (float(hi) - float(lo)) / 2)
    return out


def paper_cells(row: str) -> dict[str, str]:
    p = PAPER_TABLE4[row]
    return {f"Paper {SHORT[m]} {FIELD_SHORT[f]}": cell(*p[m][f]) for m in METRICS for f in FIELDS}
