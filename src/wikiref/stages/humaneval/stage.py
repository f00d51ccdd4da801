"""The humaneval stage's jobs: :func:`sample` (items, keys, blank sheets) and :func:`score` (the tables).

Both read only files other stages declare in :mod:`wikiref.layout` (:func:`study_inputs` names them from
params), never their packages. The web page is :mod:`wikiref.stages.humaneval.server` (not a workflow job:
a person runs it).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping
from pathlib import Path

from wikiref import layout
from wikiref.stages.humaneval.studies import STUDIES, enabled, raters

log = logging.getLogger(__name__)


class HumanevalError(ValueError):
    """A study's sample or key is missing or does not match the declared study."""


def study_inputs(config: Mapping, study: str) -> dict:
    """The declared files study ``study`` samples from (:func:`wikiref.layout.humaneval_inputs`)."""
    return layout.humaneval_inputs(config, study)


def outputs(config: Mapping, study: str) -> dict:
    """The sample job's files of ``study``: items, key, one blank sheet per declared rater."""
    return {
        "items": layout.HUMANEVAL_ITEMS.format(study=study),
        "key": layout.HUMANEVAL_KEY.format(study=study),
        "sheets": {r: layout.HUMANEVAL_SHEET.format(study=study, rater=r) for r in raters(config["humaneval"], study)},
    }


def _duc_standin(stats_paths) -> bool:
    from wikiref.files import read_json

    paths = stats_paths.values() if isinstance(stats_paths, Mapping) else [stats_paths]
    return any(bool(read_json(p).get("standin")) for p in paths if Path(p).exists())


def sample_digest(sample: Mapping) -> str:
    """A short hash of what raters judge (study, questions, items): rating files name the sample they answer."""
    text = json.dumps({k: sample[k] for k in ("study", "questions", "items")}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def sample_study(params: Mapping, study: str, inputs: Mapping, outs: Mapping) -> dict:
    """Draw one study's sample and write its items, key and blank sheets. Returns its summary."""
    from dataclasses import asdict

    from wikiref.files import write_json, write_text
    from wikiref.stages.humaneval import sampling, sheets

    cfg = params["humaneval"]["studies"][study]
    inputs = dict(inputs)
    if "duc_stats" in inputs:
        inputs["standin"] = _duc_standin(inputs["duc_stats"])
    items, key, info = sampling.SAMPLERS[study](cfg, inputs, int(params["seed"]))
    declared = STUDIES[study]
    questions = [
        {**{k: v for k, v in asdict(q).items() if k != "scale"}, "scale": [list(x) for x in q.scale]}
        for q in declared.questions
    ]
    sample = {
        "study": study,
        "title": declared.title,
        "paper": declared.paper,
        "instructions": declared.instructions,
        "questions": questions,
        "items": items,
        "raters": raters(params["humaneval"], study),
        "seed": int(params["seed"]),
        "standin": bool(info["standin"]),
    }
    sample["digest"] = sample_digest(sample)
    write_json(outs["items"], sample)
    write_json(outs["key"], {"study": study, "digest": sample["digest"], "items": key})
    for rater, path in outs["sheets"].items():
        write_text(path, sheets.blank_sheet(sample, rater))
    log.info(
        "%s: %d items, %d raters%s", study, len(items), len(sample["raters"]), " (STAND-IN)" if info["standin"] else ""
    )
    return {"items": len(items), "raters": len(sample["raters"]), "digest": sample["digest"], **info}


def _each_study(params: Mapping, inputs: Mapping, outputs: Mapping, one) -> dict:
    """``one(params, study, inputs[study], outputs[study])`` for every enabled study, in order; the metrics
    (per study, and STAND-IN when any study's data is) written to ``outputs["metrics"]``."""
    from wikiref.files import write_json

    metrics = {"studies": {s: one(params, s, inputs[s], outputs[s]) for s in enabled(params["humaneval"])}}
    metrics["standin"] = any(s["standin"] for s in metrics["studies"].values())
    write_json(outputs["metrics"], metrics)
    return metrics


def sample(params: Mapping, inputs: Mapping, outputs: Mapping) -> dict:
    """The sample job. ``inputs``: study -> :func:`study_inputs`; ``outputs``: study -> :func:`outputs` and
    ``metrics`` (per study: items, raters, shortfalls, STAND-IN). Only the enabled studies are drawn."""
    return _each_study(params, inputs, outputs, sample_study)


# --------------------------------------------------------------------------------------------- score
def load_sample(items_path, key_path) -> tuple[dict, dict]:
    from wikiref.files import read_json

    sample, key = read_json(items_path), read_json(key_path)
    if key.get("digest") != sample.get("digest"):
        raise HumanevalError(f"{key_path} is the key of another sample than {items_path} (digests differ)")
    return sample, key["items"]


def score_study(params: Mapping, study: str, files: Mapping, table: str) -> dict:
    """One study's table from its items, key and rating files (all checked first: nothing is half-read)."""
    import pandas as pd

    from wikiref.stages.humaneval import scoring, sheets
    from wikiref.tables import write_table

    sample, key = load_sample(files["items"], files["key"])
    ratings = [sheets.load(p, sample) for p in files["ratings"]]
    cfg = params["humaneval"]["studies"][study]
    judgments = scoring.Judgments(sample, key, ratings)
    opts = {"bootstrap": params["humaneval"]["bootstrap"], "seed": int(params["seed"])}
    rows, metrics = scoring.TABLES[study](judgments, cfg, opts)
    declared, n = len(sample["raters"]), len(ratings)
    status = scoring.AWAITING if not ratings else f"{n} of {declared} declared raters"
    alphas = ", ".join(f"{k} {v:.3f}" for k, v in metrics.get("alpha", {}).items() if v is not None)
    notes = (
        f"{STUDIES[study].paper}. Here: {len(sample['items'])} item(s), {status}. "
        + (f"Krippendorff's alpha: {alphas}. " if alphas else "Krippendorff's alpha: needs two or more raters. ")
        + "Paper columns quote the published numbers."
    )
    title = f"{STUDIES[study].table} (human evaluation): {STUDIES[study].title} ({status})"
    write_table(
        pd.DataFrame(rows), table, title=title, profile=params["profile"], notes=notes, standin=sample["standin"]
    )
    out = {"items": len(sample["items"]), "raters": [r.rater for r in ratings], "status": status, **metrics}
    return {**out, "standin": bool(sample["standin"])}


def score(params: Mapping, inputs: Mapping, outputs: Mapping) -> dict:
    """The score job. ``inputs``: study -> ``items``, ``key``, ``ratings`` (the rating files found);
    ``outputs``: study -> table stem, and ``metrics``. A rating file that does not fit its sample raises
    :class:`wikiref.stages.humaneval.sheets.SheetError` naming the rater and the items."""
    return _each_study(params, inputs, outputs, score_study)
