"""The comparison table: every cell's results (and the benchmarks' baselines) -> rows, findings, table, metrics.

:func:`assemble` makes one row per cell x mode (the extractive cells), one per abstractive cell and one per
baseline, with the findings of :func:`wikiref.stages.compare.ranking.findings`; :func:`table` (the job) reads
the cell result files, writes the table and ``results/metrics/compare.json``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from wikiref.stages.compare.plan import (
    ABSTRACTIVE_MODE,
    DUC_MEASURES,
    EXTRACTIVE,
    EXTRACTIVE_LABEL,
    MODE_LABELS,
    MODES,
    QMSUM_METRICS,
    QMSUM_R2_CI,
    SOURCE_LABELS,
    CompareError,
    abstractive_cells,
    cells,
    duc_r2_ci,
)
from wikiref.stages.compare.ranking import findings
from wikiref.stages.compare.runparams import effective_params


def _duc_cells(res: Mapping, mode: str, years: Sequence[int]) -> dict[str, Any]:
    per_year = res["modes"].get(mode, {})
    row: dict[str, Any] = {}
    for y in years:
        rec = per_year.get(str(y))
        for m, short in zip(DUC_MEASURES, ("R-1", "R-2", "R-SU4")):
            row[f"DUC {y} {short}"] = None if rec is None else float(rec["recall"][m])
        row[duc_r2_ci(y)] = None if rec is None else [float(x) for x in rec["recall_ci"]["ROUGE-2"]]
    return row


def _qmsum_cells(res: Mapping, mode: str, setting: str) -> dict[str, Any]:
    rec = res["modes"].get(mode, {}).get(setting)
    out: dict[str, Any] = {
        f"QMSum {short}": None if rec is None else float(rec["rouge"][m]["f1"])
        for m, short in zip(QMSUM_METRICS, ("R-1", "R-2", "R-L"))
    }
    # The bootstrap 95% interval of R-2 F1 (official scorer): the findings say when the runner-up is inside it.
    out[QMSUM_R2_CI] = None if rec is None else [float(x) for x in rec["rouge"]["rouge2"]["f1_ci"]]
    return out


def assemble(params: Mapping, results: Mapping[str, Mapping[str, Mapping]], baselines: Mapping) -> dict:
    """The comparison: rows (one per cell x mode, then the baselines), per-benchmark rankings and the
    findings. ``results``: kind (pretrain / duc / qmsum) -> cell id -> its JSON; ``baselines``: ``duc``
    (duc_baselines.json) and ``qmsum`` (qmsum_baselines.json)."""
    years = sorted(int(y) for y in params["duc"]["years"])
    setting = params["compare"]["qmsum"]["settings"][0] if params["compare"]["qmsum"]["settings"] else None
    rows: list[dict] = []
    for c in cells(params):
        pre = results["pretrain"].get(c.id, {})
        for mode in MODES:
            d = results["duc"][c.id]
            qm = results["qmsum"][c.id]
            if mode not in d["modes"] and mode not in qm["modes"]:
                continue
            rows.append(
                {
                    "Model": EXTRACTIVE_LABEL,
                    "model": EXTRACTIVE,
                    "Source": c.label,
                    "source": c.source,
                    "Budget": c.budget,
                    "Mode": MODE_LABELS[mode],
                    "mode": mode,
                    "Examples": pre.get("examples", 0),
                    "Steps": pre.get("optimizer_steps", 0),
                    **_duc_cells(d, mode, years),
                    **(_qmsum_cells(qm, mode, setting) if setting else {}),
                    "standin": bool(pre.get("standin")) or bool(d.get("standin")) or bool(qm.get("standin")),
                }
            )
    for c in abstractive_cells(params):
        res = results.get("abstractive", {}).get(c.id)
        if res is None:
            raise CompareError(f"no result of abstractive cell {c.id}")
        qm = res.get("qmsum")
        rows.append(
            {
                "Model": res["label"],
                "model": c.model,
                "Source": SOURCE_LABELS[c.source],
                "source": c.source,
                "Budget": c.budget,
                "Mode": MODE_LABELS[ABSTRACTIVE_MODE],
                "mode": ABSTRACTIVE_MODE,
                "Examples": res["examples"],
                "Steps": res["optimizer_steps"],
                **_duc_cells({"modes": {ABSTRACTIVE_MODE: res["duc"]["years"]}}, ABSTRACTIVE_MODE, years),
                **(
                    _qmsum_cells(
                        {"modes": {ABSTRACTIVE_MODE: {setting: {"rouge": qm["rouge"]}} if qm else {}}},
                        ABSTRACTIVE_MODE,
                        setting,
                    )
                    if setting
                    else {}
                ),
                "standin": bool(res["standin"]),
            }
        )
    for key, label in (("lead", "LEAD"), ("query_sim", "QUERY-SIM"), ("oracle", "ORACLE")):
        row: dict[str, Any] = {"Model": "-", "model": "baseline", "Source": label, "source": key}
        row.update(Budget="-", Mode="baseline", mode="baseline")
        row.update(Examples=0, Steps=0)
        for y in years:
            rec = baselines.get("duc", {}).get("systems", {}).get(key, {}).get(str(y))
            for m, short in zip(DUC_MEASURES, ("R-1", "R-2", "R-SU4")):
                row[f"DUC {y} {short}"] = None if rec is None else round(100.0 * float(rec[m]["R"]), 4)
        qrec = baselines.get("qmsum", {}).get("systems", {}).get(key, {}).get(setting) if setting else None
        if setting:
            for m, short in zip(QMSUM_METRICS, ("R-1", "R-2", "R-L")):
                row[f"QMSum {short}"] = None if qrec is None else float(qrec[m]["f1"])
        row["standin"] = bool(baselines.get("duc", {}).get("standin")) or bool(
            baselines.get("qmsum", {}).get("standin")
        )
        rows.append(row)
    return {"rows": rows, "findings": findings(rows, years, setting), "qmsum_setting": setting, "years": years}


def table(params: Mapping, inputs: Mapping, outputs: Mapping) -> dict:
    """The comparison table and metrics. inputs: ``pretrain`` / ``duc`` / ``qmsum`` (cell result files,
    :func:`result_files` order), ``duc_baselines``, ``qmsum_baselines``; outputs: ``table`` (stem),
    ``metrics`` (``results/metrics/compare.json``). Returns the metrics."""
    from wikiref.files import read_json, write_json
    from wikiref.tables import write_table

    results: dict[str, dict[str, Mapping]] = {}
    for kind in ("pretrain", "duc", "qmsum"):
        results[kind] = {}
        for path in inputs[kind]:
            if not Path(path).exists():
                raise CompareError(f"missing cell result {path}: run its compare job first")
            rec = read_json(path)
            results[kind][rec["cell"]] = rec
    results["abstractive"] = {}
    for path in inputs.get("abstractive", []):
        if not Path(path).exists():
            raise CompareError(f"missing abstractive cell result {path}: run its compare job first")
        rec = read_json(path)
        results["abstractive"][rec["cell"]] = rec
    baselines = {k: read_json(inputs[f"{k}_baselines"]) for k in ("duc", "qmsum") if inputs.get(f"{k}_baselines")}
    assembled = assemble(params, results, baselines)
    standin = any(r["standin"] for r in assembled["rows"])
    df = pd.DataFrame(assembled["rows"])
    hidden = {"model", "source", "mode", "standin", QMSUM_R2_CI, *(duc_r2_ci(y) for y in assembled["years"])}
    shown = df[[c for c in df.columns if c not in hidden]].astype(object)
    shown = shown.where(shown.notna(), "-")  # a cell that was not run (e.g. no transfer of the encoder)
    write_table(
        # The label comes from the data each row used (examples, DUC notice, QMSum file), row by row.
        shown.assign(Data=["STAND-IN" if s else "real" for s in df["standin"]]),
        outputs["table"],
        title="Augmentation sources compared: DUC ROUGE recall and QMSum ROUGE F1 (x 100)",
        profile=params["profile"],
        encoder=params["model"]["encoder"],
        notes=table_notes(params, assembled),
    )
    metrics = {
        "profile": params["profile"]["name"],
        "standin": standin,
        "encoder": params["model"]["encoder"],
        "cells": [c.id for c in cells(params)],
        "abstractive_cells": [c.id for c in abstractive_cells(params)],
        "rows": assembled["rows"],
        "findings": assembled["findings"],
        "qmsum_setting": assembled["qmsum_setting"],
        "years": assembled["years"],
        "pretrain": {
            cid: {
                k: r.get(k)
                for k in ("examples", "examples_by_source", "optimizer_steps", "train_windows", "dev_rouge2", "seconds")
            }
            for cid, r in results["pretrain"].items()
        },
        "seconds": {
            cid: round(
                float(results["pretrain"].get(cid, {}).get("seconds", 0.0))
                + float(results["duc"][cid]["seconds"])
                + float(results["qmsum"][cid]["seconds"]),
                2,
            )
            for cid in results["duc"]
        }
        | {cid: float(r["seconds"]) for cid, r in results["abstractive"].items()},
    }
    write_json(outputs["metrics"], metrics)
    return metrics


def table_notes(params: Mapping, assembled: Mapping) -> str:
    cmp = effective_params(params)["compare"]
    eq = cmp["equal"]
    b = cmp["budget"]
    return (
        f"Equal budget: the same examples ({'the smallest training split' if eq['examples'] is None else eq['examples']}) "
        f"and {eq['steps']} optimizer steps per source; natural: every training example, "
        f"{cmp['natural']['epochs']} epoch(s). Union: {', '.join(cmp['union'])} (equal shares). Windows "
        f"{b['max_length']} tokens; training documents: first {b['max_documents']} documents x "
        f"{b['document_sentences']} sentences (null = all). DUC: ROUGE recall, official flags "
        f"{params['duc']['rouge_flags']!r}, fine-tuned on the other years (held-out year) or transferred "
        f"without fine-tuning. QMSum ({assembled['qmsum_setting']}): ROUGE F1, official flags "
        f"{params['qmsum']['rouge_flags']!r}, {params['qmsum']['summary_words']}-word extracts."
    )
