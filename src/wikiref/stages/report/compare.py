"""Reproduced numbers beside the paper's (journal Tables I, II, IV, VI, VIII, IX and Figs. 4-6).

The paper's numbers live in ``paper_numbers.yaml`` next to this module, transcribed from
``wikiref-journal-qbert.txt`` with the source table of each. The reproduced numbers are read from
the tables the pipeline wrote (the ``.csv`` beside every ``.md``/``.tex``): a table matches a paper
table when its rows carry the paper's row labels (the ``key`` columns below) and its columns the
paper's column labels, so every step that names its rows like the paper is compared without extra
code. Only cells present on both sides are listed (the rows the current profile can produce).

Figs. 4-6 print no values, so their stated findings are checked instead (:func:`claim_checks`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import pandas as pd

PAPER_NUMBERS = Path(__file__).with_name("paper_numbers.yaml")


def _table6_label(rec: Mapping[str, Any]) -> str:
    """Table VI repeats DA PRE-TRAINED / BERT + DA under classification and regression pre-training; the
    fine-tuning step's ``Group`` column ("regression pre-training (reg_qbert)") tells which."""
    group = str(rec.get("Group") or "")
    m = re.match(r"(classification|regression) pre-training", group)
    return f"{rec['System']} ({m.group(1)})" if m else str(rec["System"])


@dataclass(frozen=True)
class TableSpec:
    paper: str  # key in paper_numbers.yaml
    stems: tuple[str, ...]  # reproduced table files (results/tables/<stem>.csv) that may hold its rows
    key: tuple[str, ...]  # columns whose values, joined by " | ", form the row label (and are not numbers)
    label: Callable[[Mapping[str, Any]], str] | None = None  # row label from the record, instead of `key`
    extra_keys: tuple[str, ...] = field(default=())  # further label columns (not numbers)


# Which reproduced tables hold which paper table's rows.
TABLE_SPECS: tuple[TableSpec, ...] = (
    TableSpec("table1", ("table1_wikiref_splits",), ("Statistic",)),
    TableSpec("table2", ("table2_wikiref_percentiles",), ("Statistic",)),
    TableSpec("table4", ("table4_wikiref",), ("System", "Supervision")),
    TableSpec(
        "table6", ("table6_duc_baselines", "table6_duc"), ("System",), label=_table6_label, extra_keys=("Group",)
    ),
    TableSpec("table8", ("table8_pooling",), ("Model",)),
    TableSpec("table9", ("table9_subnetworks",), ("Method", "Init")),
)

COMPARISON_COLUMNS = ["Paper table", "Row", "Column", "Paper", "Reproduced", "Difference"]


@lru_cache(maxsize=1)
def paper_numbers() -> dict:
    import yaml

    with open(PAPER_NUMBERS, encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def norm(label: Any) -> str:
    """Labels compare case-insensitively with whitespace collapsed ("Q-Bert" == "Q-BERT")."""
    return re.sub(r"\s+", " ", str(label)).strip().upper()


def _number(v: Any) -> float | None:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def table_cells(
    df: pd.DataFrame, key: Sequence[str], label=None, extra_keys: Sequence[str] = ()
) -> dict[str, dict[str, float]]:
    """``{row label: {column: value}}`` of a reproduced table (numeric cells only)."""
    missing = [k for k in key if k not in df.columns]
    if missing:
        raise ValueError(f"table lacks the key columns {missing} (has {list(df.columns)})")
    skip = set(key) | set(extra_keys)
    out: dict[str, dict[str, float]] = {}
    for rec in df.to_dict("records"):
        row = label(rec) if label is not None else " | ".join(str(rec[k]) for k in key)
        cells = {str(c): x for c, v in rec.items() if c not in skip and (x := _number(v)) is not None}
        out.setdefault(row, {}).update(cells)
    return out


def compare_table(paper: Mapping, spec: TableSpec, reproduced: Mapping[str, Mapping[str, float]]) -> list[dict]:
    """Rows of the comparison for one paper table, in the paper's row and column order."""
    entry = paper["tables"][spec.paper]
    rows_by_norm = {norm(k): v for k, v in reproduced.items()}
    out = []
    for row_label, cols in entry["rows"].items():
        got = rows_by_norm.get(norm(row_label))
        if got is None:
            continue
        got_cols = {norm(c): v for c, v in got.items()}
        for col, value in cols.items():
            r = got_cols.get(norm(col))
            if r is None:
                continue
            # Integers stay integers (counts, the paper's integral percentiles); the rest 2 decimals.
            paper_v = int(value) if isinstance(value, int) else float(value)
            repro_v = int(r) if isinstance(value, int) and float(r).is_integer() else float(r)
            diff = repro_v - paper_v
            diff = round(diff, 2) if isinstance(diff, float) else diff
            out.append(
                {
                    "Paper table": entry["source"].split(" (")[0],
                    "Row": row_label,
                    "Column": str(col),
                    "Paper": paper_v,
                    "Reproduced": repro_v,
                    "Difference": diff,
                }
            )
    return out


def comparison(
    tables_dir: str | Path, specs: Iterable[TableSpec] = TABLE_SPECS, paper: Mapping | None = None
) -> tuple[pd.DataFrame, list[str]]:
    """The comparison frame over every reproduced table found in ``tables_dir``, and the stems used."""
    paper = paper or paper_numbers()
    rows: list[dict] = []
    used: list[str] = []
    for spec in specs:
        cells: dict[str, dict[str, float]] = {}
        for stem in spec.stems:
            path = Path(tables_dir) / f"{stem}.csv"
            if path.exists():
                for label, c in table_cells(pd.read_csv(path), spec.key, spec.label, spec.extra_keys).items():
                    cells.setdefault(label, {}).update(c)
                used.append(stem)
        rows.extend(compare_table(paper, spec, cells))
    return pd.DataFrame(rows, columns=COMPARISON_COLUMNS, dtype=object), used


# --------------------------------------------------------------------------- Figs. 4-6 (findings)


def _r2(point: Mapping | None, where: str = "duc") -> float | None:
    if not point:
        return None
    return _number((point.get(where) or {}).get("ROUGE-2" if where == "duc" else "rouge2"))


def claim_checks(ablations: Mapping | None, paper: Mapping | None = None) -> pd.DataFrame:
    """Each finding the paper states about Figs. 4-6 and Tables VIII-IX, checked on the reproduced
    ablation results (``results/metrics/ablations.json``): the evidence and whether it holds."""
    paper = paper or paper_numbers()
    ab = ablations or {}
    evidence: dict[str, tuple[str, bool | None]] = {}

    def put(cid: str, text: str, holds: bool | None) -> None:
        evidence[cid] = (text, holds)

    size = ab.get("duc_size") or {}
    curves = size.get("curves") or {}
    da, bert = curves.get("da") or [], curves.get("bert") or []
    pairs = [(p["percent"], _r2(p), _r2(q)) for p in da for q in bert if p["percent"] == q["percent"]]
    pairs = [(x, a, b) for x, a, b in pairs if a is not None and b is not None]
    if pairs:
        put(
            "fig4_da_beats_bert",
            "; ".join(f"{x:g}%: +DA {a:.2f} vs {b:.2f}" for x, a, b in pairs),
            all(a > b for _, a, b in pairs),
        )
    lines = size.get("lines") or {}
    both = _r2(next((p for p in bert if p["percent"] == 100), None))
    singles = {k: _r2(v) for k, v in lines.items() if k.endswith("only")}
    if both is not None and singles and all(v is not None for v in singles.values()):
        put(
            "fig4_both_years_beat_one",
            f"both {both:.2f}; " + "; ".join(f"{k} {v:.2f}" for k, v in singles.items()),
            all(both > v for v in singles.values()),
        )
    pts = (ab.get("data_size") or {}).get("points") or []
    if len(pts) >= 2:
        lo, hi = min(pts, key=lambda p: p["fraction"]), max(pts, key=lambda p: p["fraction"])
        a, b = _r2(lo, "wikiref"), _r2(hi, "wikiref")
        if a is not None and b is not None:
            put(
                "fig5_more_data_helps_wikiref",
                f"{100 * hi['fraction']:g}%: {b:.2f} vs {100 * lo['fraction']:g}%: {a:.2f}",
                b > a,
            )
    q = ab.get("quality") or {}
    qp = q.get("points") or []
    if len(qp) >= 2:
        worst, best = min(qp, key=lambda p: p["start"]), max(qp, key=lambda p: p["start"])
        a, b = _r2(worst), _r2(best)
        if a is not None and b is not None:
            put("fig6_quality_monotone", f"{best['name']} {b:.2f} vs {worst['name']} {a:.2f}", b > a)
        full = _r2(q.get("full"))
        if b is not None and full is not None:
            put("fig6_best_half_beats_full", f"{best['name']} {b:.2f} vs full data {full:.2f}", b > full)
    prow = (ab.get("pooling") or {}).get("rows") or []
    scored = [(r["label"], _r2(r)) for r in prow if _r2(r) is not None]
    if len(scored) >= 2:
        top = max(scored, key=lambda t: t[1])
        qb = next((v for lab, v in scored if norm(lab) == "Q-BERT"), None)
        if qb is not None:
            put("table8_query_pooling_best", "; ".join(f"{lab} {v:.2f}" for lab, v in scored), qb >= top[1])
    srow = (ab.get("subnetwork") or {}).get("rows") or []
    scored = [(f"{r['method_label']} ({r['init_label']})", r["method"], _r2(r)) for r in srow if _r2(r) is not None]
    if len(scored) >= 2:
        best_val = max(v for _, _, v in scored)
        one = [v for _, m, v in scored if m == "one_step"]
        if one:
            put("table9_one_step_best", "; ".join(f"{lab} {v:.2f}" for lab, _, v in scored), one[0] >= best_val)
    rows = []
    for claim in paper["claims"]:
        text, holds = evidence.get(claim["id"], ("not produced by this profile", None))
        rows.append(
            {
                "Source": claim["source"],
                "Paper finding": claim["text"],
                "Reproduced": text,
                "Holds": "not produced" if holds is None else ("yes" if holds else "no"),
            }
        )
    return pd.DataFrame(rows, columns=["Source", "Paper finding", "Reproduced", "Holds"])
