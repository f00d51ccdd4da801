"""The QMSum benchmark stage (Zhong et al., NAACL 2021): jobs and the model evaluation the comparison uses.

Jobs (``wikiref qmsum <job>``, rules in ``workflow/rules/qmsum.smk``), each
``job(params, inputs, outputs, **options) -> dict`` writing its outputs itself:

* :func:`standin` - a STAND-IN QMSum file in the published format (``qmsum.standin`` true or auto: built
  on every machine, so the DVC outputs do not depend on whether the real files exist);
* :func:`prepare` - the QMSum files (``qmsum.files``: one per split; or the STAND-IN) ->
  ``data/qmsum/<split>.parquet`` (:data:`wikiref.schemas.QMSUM`, one row per query) and the counts;
  ``qmsum.resplit`` re-splits whole meetings of the files of its ``pool`` splits (the STAND-IN: all of it),
  so the sample holds a dev part out of the training meetings and tests on the validation file;
* :func:`baselines` - LEAD, QUERY-SIM and ORACLE (:mod:`wikiref.extractive.meetings`) on the test
  queries (``qmsum.eval_queries``, seeded) in every ``qmsum.settings`` setting, official ROUGE-1/2/L
  (``qmsum.rouge_flags``) R/P/F with 95% intervals -> a table and ``results/metrics/qmsum_baselines.json``;
* :func:`ltr` - learning to rank over each turn's signals (``qmsum.ltr``) on the same queries;
* :func:`bi` - the bi scorer fine-tuned on the train queries (``qmsum.bi``) on the same queries.

For the source comparison (:mod:`wikiref.stages.compare`): :func:`eval_rows` (the same test queries as
the baselines), :func:`finetune` (a scorer trained on QMSum train queries: each turn's ROUGE-2 recall
against the answer, as ``finetune.loss`` / ``finetune.target`` say, epoch chosen on dev ROUGE-2) and :func:`evaluate_model`
(turns ranked by the model's scores fill the word budget like QUERY-SIM's ranking does).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from wikiref import layout
from wikiref.examples import Tally
from wikiref.extractive import meetings as qb
from wikiref.stages.qmsum import reader
from wikiref.supervised.qmsum_finetune import QmsumStageError, eval_rows, load_split, score

log = logging.getLogger(__name__)

MEASURES = ("rouge1", "rouge2", "rougeL")


# --------------------------------------------------------------------------- which files


def use_standin(qmsum: Mapping) -> bool:
    """Whether :func:`prepare` reads the STAND-IN: ``standin: true``, or ``auto`` with a listed file missing
    (or none listed)."""
    mode = qmsum["standin"]
    if mode is True:
        return True
    listed = [f for f in qmsum["files"].values() if f]
    if mode == "auto":
        return not listed or not all(Path(f).is_file() for f in listed)
    if not listed:
        raise QmsumStageError("qmsum.files lists no file and qmsum.standin is false")
    return False


def real_inputs(qmsum: Mapping) -> list[str]:
    """The real QMSum files Snakemake should see as inputs (none when the STAND-IN is read)."""
    return [] if use_standin(qmsum) else [f for f in qmsum["files"].values() if f]


# --------------------------------------------------------------------------- jobs


def standin(params: Mapping, inputs: Mapping, outputs: Mapping) -> dict:
    """Write the STAND-IN file (``outputs["file"]``: ``qmsum.standin_meetings`` meetings, seeded)."""
    from wikiref.stages.qmsum.standin import write_standin

    q = params["qmsum"]
    write_standin(outputs["file"], meetings=int(q["standin_meetings"]), seed=int(params["seed"]))
    return {"meetings": int(q["standin_meetings"]), "file": str(outputs["file"])}


def prepare(params: Mapping, inputs: Mapping, outputs: Mapping) -> dict:
    """QMSum files -> one table per split. inputs: ``standin`` (the STAND-IN file); outputs: split ->
    ``data/qmsum/<split>.parquet``, ``stats`` (counts, drops with locations), ``metrics``. Returns the
    metrics (per split: meetings, queries by type, mean turns, span turns and answer words)."""
    import pyarrow as pa

    from wikiref.files import write_json, write_parquet

    q, seed = params["qmsum"], int(params["seed"])
    tally = Tally()
    standin_used = use_standin(q)
    if standin_used:
        files = [(Path(inputs["standin"]), "test")]
        if not q["resplit"]["enabled"]:
            raise QmsumStageError("the STAND-IN is one file: qmsum.resplit must give the dev/test fractions")
    else:
        files = [(Path(f), split) for split, f in q["files"].items() if f]
    meetings = []
    for path, split in files:
        meetings.extend(reader.read_meetings(path, split=split, standin=standin_used, tally=tally))
    if q["resplit"]["enabled"]:
        fractions = {k: q["resplit"][k] for k in ("dev", "test")}
        pool = set(q["resplit"]["pool"])
        pooled = [m.meeting_id for m in meetings if standin_used or m.split in pool]
        assignment = reader.resplit(pooled, fractions, seed)
        meetings = [dataclasses.replace(m, split=assignment.get(m.meeting_id, m.split)) for m in meetings]
    rows = [r for m in meetings for r in reader.query_rows(m, with_speaker=q["with_speaker"], tally=tally)]
    table = reader.to_table(rows)
    by_split = {s: [r for r in rows if r["split"] == s] for s in layout.SPLITS}
    metrics: dict[str, Any] = {
        "standin": standin_used,
        "files": [str(p) for p, _ in files],
        "resplit": q["resplit"],
        "splits": {s: split_statistics(v) for s, v in by_split.items()},
    }
    split_of = table.column("split").to_pylist()
    for split in layout.SPLITS:
        mask = [s == split for s in split_of]
        write_parquet(outputs[split], table.filter(pa.array(mask, type=pa.bool_())))
    write_json(outputs["stats"], {**tally.to_json(), "standin": standin_used})
    write_json(outputs["metrics"], metrics)
    return metrics


def split_statistics(rows: list[Mapping]) -> dict:
    def mean(values) -> float:
        return round(float(np.mean(values)), 3) if values else 0.0

    return {
        "meetings": len({r["meeting_id"] for r in rows}),
        "queries": len(rows),
        "general": sum(r["query_type"] == "general" for r in rows),
        "specific": sum(r["query_type"] == "specific" for r in rows),
        "turns_mean": mean([len(r["turns"]) for r in rows]),
        "span_turns_mean": mean([len(r["span_turns"]) for r in rows if r["query_type"] == "specific"]),
        "answer_words_mean": mean([len(r["answer"].split()) for r in rows]),
    }


def baselines(params: Mapping, inputs: Mapping, outputs: Mapping) -> dict:
    """LEAD / QUERY-SIM / ORACLE on the evaluated test queries. inputs: ``test``; outputs: ``table``
    (stem), ``metrics`` (JSON: system -> setting -> ROUGE). Returns the metrics."""
    from wikiref.files import write_json
    from wikiref.tables import write_table

    q, seed = params["qmsum"], int(params["seed"])
    rows = eval_rows(load_split(inputs["test"]), q, seed)
    if rows.empty:
        raise QmsumStageError(f"{inputs['test']}: no test query to evaluate")
    records = rows.to_dict("records")
    out: dict[str, Any] = {
        "standin": bool(rows["standin"].any()),
        "test_queries": len(rows),
        "summary_words": q["summary_words"],
        "flags": q["rouge_flags"],
        "systems": {},
    }
    table_rows = []
    for system, label in qb.SYSTEMS.items():
        for setting in q["settings"]:
            t0 = time.perf_counter()
            summaries = qb.summarize(records, system, setting, q["summary_words"])
            res = score(summaries, rows, q["rouge_flags"])
            out["systems"].setdefault(system, {})[setting] = res
            table_rows.append(
                {
                    "System": label,
                    "Setting": setting,
                    **{f"{m} {f}": res[m][f] for m in MEASURES for f in ("recall", "precision", "f1")},
                    "Data": "STAND-IN" if out["standin"] else "real",
                }
            )
            log.info("%s %s: R-2 F1 %.2f (%.1fs)", label, setting, res["rouge2"]["f1"], time.perf_counter() - t0)
    write_table(
        pd.DataFrame(table_rows),
        outputs["table"],
        title="QMSum extractive baselines: official ROUGE x 100 on the test queries",
        profile=params["profile"],
        notes=(
            f"{len(rows)} test queries ({'/'.join(q['eval_query_types'])}; seeded choice of "
            f"{q['eval_queries'] or 'all'}); {q['summary_words']}-word "
            f"extracts of speaker turns; flags {q['rouge_flags']!r}; settings: transcript = the whole meeting, "
            "gold_span = the annotated relevant spans (general queries: the whole meeting)."
        ),
    )
    write_json(outputs["metrics"], out)
    return out


# --------------------------------------------------------------------------- learning to rank


def ltr(params: Mapping, inputs: Mapping, outputs: Mapping) -> dict:
    """The learning-to-rank scorer (:mod:`wikiref.supervised.ltr_scoring`) in each ``qmsum.ltr.settings``
    setting: fitted on the train queries (``qmsum.ltr.train_queries``, seeded, of the ``eval_query_types``),
    the target transform chosen on the dev queries, scored on the evaluated test queries (:func:`eval_rows`,
    the baselines' queries) beside the encoder's own cosine and QUERY-SIM, with paired bootstrap comparisons of
    the per-query ROUGE-2 F1. inputs: ``train``, ``dev``, ``test``; outputs: ``table`` (stem), ``metrics``."""
    from wikiref.model.training import resolve_device
    from wikiref.supervised import ltr_scoring as ls
    from wikiref.supervised.qmsum_finetune import training_queries

    q, seed = params["qmsum"], int(params["seed"])
    spec, words = q["ltr"], q["summary_words"]
    split = {s: load_split(inputs[s]) for s in ("train", "dev", "test")}
    train_df = training_queries(split["train"], q, spec["train_queries"], seed)
    dev_df = training_queries(split["dev"], q, spec["dev_queries"], seed)
    rows = eval_rows(split["test"], q, seed)
    encoder = ls.encoder_name(spec, params["model"])
    cache = ls.TurnEmbeddings(ls.Embedder(encoder, device=str(resolve_device(params["model"]["device"])), seed=seed))
    standin = bool(rows["standin"].any() or train_df["standin"].any())
    out: dict[str, Any] = {"standin": standin, "encoder": encoder, "test_queries": len(rows), "settings": {}}
    cos_name = f"COSINE ({encoder}, untrained)"
    systems, records = {}, {}
    for setting in spec["settings"]:
        t0 = time.perf_counter()
        ltr_extracts, cos_extracts, record = ls.fit_and_extract_queries(
            {"train": train_df, "dev": dev_df, "test": rows},
            setting,
            cache,
            ls.ranker_settings(spec, seed),
            words,
            span_targets=spec["span_targets"],
        )
        systems[setting] = {f"LTR ({record['chosen_target']})": ltr_extracts, cos_name: cos_extracts}
        records[setting] = {"training": record}
        log.info("LTR %s: fitted and extracted in %.1fs", setting, time.perf_counter() - t0)
    title = "QMSum: learning to rank over each turn's signals, official ROUGE F1 x 100 on the test queries"
    notes = (
        f"Ranker fitted on {len(train_df)} train queries, its target transform chosen among "
        f"{', '.join(spec['targets'])} on {len(dev_df)} dev queries (then refitted on both); {len(rows)} test "
        f"queries, {words}-word extracts, flags {q['rouge_flags']!r}. COSINE: the same embeddings' cosine alone. "
    )
    return _score_and_write(out, systems, records, rows, params, {"COSINE": cos_name}, outputs, title, notes)


def _score_and_write(
    out: dict,
    systems: Mapping[str, Mapping[str, list[str]]],
    records: Mapping[str, Mapping],
    rows: pd.DataFrame,
    params: Mapping,
    references: Mapping[str, str],
    outputs: Mapping,
    title: str,
    notes: str,
) -> dict:
    """Each setting's ``systems`` (setting -> name -> extracts) scored beside QUERY-SIM (:func:`scored_systems`,
    the first system paired with QUERY-SIM and ``references``) into ``out["settings"]`` (after the setting's
    ``records``), the table (stem ``outputs["table"]``, ``notes`` followed by what the paired column means) and
    the metrics JSON (``outputs["metrics"]``) written. Returns ``out``."""
    from wikiref.files import write_json
    from wikiref.tables import write_table

    q, seed, table_rows = params["qmsum"], int(params["seed"]), []
    for setting, by_name in systems.items():
        results, paired, rows_here = scored_systems(by_name, rows, q, seed, setting, out["standin"], references)
        out["settings"][setting] = {**records.get(setting, {}), "systems": results, "paired": paired}
        table_rows += rows_here
        first = next(iter(by_name))
        log.info("%s %s: R-2 F1 %.2f", first, setting, results[first]["rouge2"]["f1"])
    write_table(
        pd.DataFrame(table_rows),
        outputs["table"],
        title=title,
        profile=params["profile"],
        encoder=out["encoder"],
        notes=notes + "Paired bootstrap of the per-query ROUGE-2 F1: mean difference (one-sided p).",
    )
    write_json(outputs["metrics"], out)
    return out


def scored_systems(
    systems: Mapping[str, Mapping[str, list[str]]],
    rows: pd.DataFrame,
    qmsum: Mapping,
    seed: int,
    setting: str,
    standin: bool,
    references: Mapping[str, str],
) -> tuple[dict, dict, list[dict]]:
    """``systems`` (name -> extracts) and QUERY-SIM's extracts of ``setting`` (last) scored with official ROUGE
    (``qmsum.rouge_flags``) on ``rows``, the first system compared with QUERY-SIM and with each of ``references``
    (label -> system name) by a paired bootstrap of the per-query ROUGE-2 F1: (results by system, paired comparisons
    by "vs <label>", the table rows of ``setting``)."""
    from wikiref.extractive.official import paired_difference, paired_text

    qs_name = qb.SYSTEMS["query_sim"]
    systems = {**systems, qs_name: qb.summarize(rows.to_dict("records"), "query_sim", setting, qmsum["summary_words"])}
    references = {"QUERY-SIM": qs_name, **references}
    results = {name: score(s, rows, qmsum["rouge_flags"], per_example=True) for name, s in systems.items()}
    per = {name: res["rouge2"].pop("f1_by_example") for name, res in results.items()}
    for res in results.values():
        for m in MEASURES:
            res[m].pop("f1_by_example", None)
    first = next(iter(systems))
    paired = {f"vs {what}": paired_difference(per[first], per[other], seed=seed) for what, other in references.items()}
    table_rows = []
    for name, res in results.items():
        row = {"System": name, "Setting": setting, **{f"{m} F1": res[m]["f1"] for m in MEASURES}}
        for what, d in paired.items():
            row[what] = paired_text(d) if name == first else ""
        table_rows.append({**row, "Data": "STAND-IN" if standin else "real"})
    return results, paired, table_rows


def _recipe_text(recipe: Mapping) -> str:
    """``qmsum.bi.recipe`` as words: "loss pairwise, target raw, lr 0.0001, ..."."""
    return ", ".join(f"{k} {v['transform'] if k == 'target' else v}" for k, v in recipe.items())


def bi(params: Mapping, inputs: Mapping, outputs: Mapping) -> dict:
    """The bi scorer (:mod:`wikiref.model.biencoder`: query and turns encoded alone, the recipe study's winner) on
    QMSum: ``qmsum.bi.encoder`` (null: ``model.encoder``) fine-tuned on the train queries' gold spans with
    ``qmsum.bi.recipe`` (the finetune section's values for the other training keys; the caps of
    ``qmsum.finetune``), the epoch and, with ``qmsum.bi.interpolate``, the start-to-fine-tuned mixing weight
    (:mod:`wikiref.model.interpolation`) chosen on the dev queries' ROUGE-2 F1; then the baselines' test queries
    in each ``qmsum.bi.settings`` setting beside QUERY-SIM and the untrained scorer (the encoder's cosine), paired
    bootstrap of the per-query ROUGE-2 F1. inputs: ``train``, ``dev``, ``test``; outputs: ``table`` (stem),
    ``metrics``."""
    import tempfile

    import torch

    from wikiref.model import build_scorer
    from wikiref.supervised import qmsum_finetune as gq
    from wikiref.supervised.pretraining import scorer_config

    q, seed, spec = params["qmsum"], int(params["seed"]), params["qmsum"]["bi"]
    split = {s: load_split(inputs[s]) for s in ("train", "dev", "test")}
    rows = eval_rows(split["test"], q, seed)
    if rows.empty:
        raise QmsumStageError(f"{inputs['test']}: no test queries of types {q['eval_query_types']}")
    encoder = spec["encoder"] or params["model"]["encoder"]
    start = {"pooling": "mean", "head": "regression", "query": True, "init": "pretrained", "encoder": encoder}
    torch.manual_seed(seed)
    model, tok = build_scorer(scorer_config(params["model"], start, pairing="bi"))

    def extracts(m) -> dict[str, dict[str, list[str]]]:
        out = {}
        for setting in spec["settings"]:
            docs = gq.documents(rows, setting)
            scores = gq.score_documents(m, tok, rows, docs, params["model"], progress=True)
            out[setting] = gq.model_summaries(rows, scores, setting, q["summary_words"], docs)
        return out

    untrained = extracts(model)  # before training: the scorer's start ranks turns by the encoder's cosine
    run = {
        **params,
        "finetune": {**params["finetune"], **spec["recipe"]},
        "qmsum": {**q, "finetune": {**q["finetune"], "interpolate": spec["interpolate"]}},
    }
    with tempfile.TemporaryDirectory() as scratch:  # the epochs' checkpoints; the job keeps none
        model, tok, record = gq.finetune(
            run, model, tok, split["train"], split["dev"], "gold_span", scratch, progress=True
        )
    trained = extracts(model)
    standin = bool(rows["standin"].any() or split["train"]["standin"].any())
    out: dict[str, Any] = {"standin": standin, "encoder": encoder, "test_queries": len(rows), "training": record}
    out["settings"] = {}
    names = ("BI (fine-tuned" + (", interpolated)" if spec["interpolate"] else ")"), f"BI ({encoder}, untrained)")
    systems = {s: {names[0]: trained[s], names[1]: untrained[s]} for s in spec["settings"]}
    alpha = record.get("interpolation", {}).get("alpha")
    title = "QMSum: the bi scorer fine-tuned on the train queries, official ROUGE F1 x 100 on the test queries"
    notes = (
        f"Trained on the gold spans of {record['train_queries']} train queries ({_recipe_text(spec['recipe'])}), epoch "
        f"{record['best_epoch']} chosen on {record['dev_queries']} dev queries"
        + ("" if alpha is None else f", mixing weight {alpha:g} with its start (1 = fine-tuned) chosen there too")
        + f"; {len(rows)} test queries, {q['summary_words']}-word extracts, flags {q['rouge_flags']!r}. "
    )
    return _score_and_write(out, systems, {}, rows, params, {"untrained": names[1]}, outputs, title, notes)


# --------------------------------------------------------------------------- models (the comparison)
