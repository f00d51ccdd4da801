"""The parameters a comparison job runs with.

A cell job is passed the ``pretrain`` / ``finetune`` sections without their Table IV variants / Table VI
settings (``wikiref.registry.JOB_KEYS``): it makes its own, the variant its model is built as
(:func:`variant_spec`) and the fine-tuning setting it starts from (:func:`start_setting`). Also here: an
abstractive cell's own model (:func:`abstractive_only`, the rules file passes it as ``replace=``) and the
``compare.budget`` overrides (:func:`effective_params`).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from wikiref.stages.compare.plan import Cell, CompareError, abstractive_models, parse_abstractive_cell


def effective_params(params: Mapping) -> dict:
    """``params`` with the ``compare.budget`` overrides applied to model / pretrain / finetune (null = keep)."""
    p = copy.deepcopy(dict(params))
    b = p["compare"]["budget"]
    for key in ("max_length", "stride", "max_query_tokens"):
        if b[key] is not None:
            p["model"][key] = b[key]
    if "finetune" in p:  # the DUC and QMSum jobs (a pre-training job does not read the section)
        ft = p["finetune"]
        if b["finetune_epochs"] is not None:
            ft["epochs"] = b["finetune_epochs"]
        if b["duc_doc_sentences"] is not None:
            ft["max_doc_sentences"] = b["duc_doc_sentences"]
        if b["duc_train_clusters"] is not None:
            ft["max_train_clusters"] = b["duc_train_clusters"]
        ft["keep_models"] = False  # only the scores of the fine-tuned copies are kept
    if p["model"]["stride"] > p["model"]["max_length"]:
        raise CompareError(f"compare: stride {p['model']['stride']} > max_length {p['model']['max_length']}")
    return p


def variant_spec(params: Mapping, cell: Cell) -> dict:
    """The ``pretrain.variants`` entry of a cell's model (its name is the cell id)."""
    cmp = params["compare"]
    return {
        "name": cell.id,
        "label": cell.label,
        "head": cmp["head"],
        "pooling": cmp["pooling"],
        "query": True,
        "init": "pretrained",
    }


def start_setting(params: Mapping, cell: Cell, method: str) -> dict:
    """The ``finetune.settings`` entry that starts from a cell's model (or the encoder)."""
    if cell.trains:
        start = {"init": "pretrained", "variant": cell.id}
    else:
        if method == "none":
            raise CompareError("the encoder-only row has no transfer (its sentence head is untrained)")
        start = {"init": "encoder", "pooling": params["compare"]["pooling"]}
    return {"name": "compare", "label": cell.label, **start, "method": method}


def abstractive_only(params: Mapping, cell: str) -> dict[str, Any]:
    """``replace=`` for an abstractive cell's job: ``compare.abstractive.models`` holding its model alone, so
    adding or editing another model reruns none of its jobs."""
    c = parse_abstractive_cell(cell)
    models = abstractive_models(params)
    if c.model not in models:
        raise CompareError(f"no model {c.model!r} in compare.abstractive.models ({', '.join(models) or 'none'})")
    return {"compare.abstractive.models": [copy.deepcopy(models[c.model])]}
