"""The abstractive cells' job: train an abstractive model on an extractive cell's rows, then DUC and QMSum.

An abstractive cell (:class:`~wikiref.stages.compare.plan.AbstractiveCell`) trains one of
``compare.abstractive.models`` on exactly the training examples of the extractive cell with the same source
and budget (:func:`wikiref.stages.compare.data.training_data`; the summary = the oracle's reference statement,
:func:`oracle_item`) and is tested without fine-tuning on every DUC year and on the QMSum test queries
(:func:`qmsum_items`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import pandas as pd

from wikiref.stages.compare.data import training_data
from wikiref.stages.compare.plan import DUC_MEASURES, CompareError, abstractive_models, parse_abstractive_cell
from wikiref.stages.compare.runparams import effective_params


def oracle_item(row: Mapping):
    """An oracle row (:data:`wikiref.schemas.ORACLE_SOURCE`) as an abstractive item: its documents from
    ``doc_lengths``, the summary = the reference statement."""
    from wikiref.model import abstractive as A

    sents = [str(s) for s in row["doc_sentences"]]
    docs, pos = [], 0
    for n in (int(x) for x in row["doc_lengths"]):
        docs.append(A.tokens(" ".join(sents[pos : pos + n])))
        pos += n
    docs = [d for d in docs if d]
    if not docs:
        raise CompareError(f"example {row['id']!r}: no document with a token")
    query = [t for level in row["query"] for t in A.tokens(str(level))]
    return A.Item(str(row["id"]), query, docs, A.tokens(str(row["statement"])))


def qmsum_items(rows: pd.DataFrame, setting: str, doc_tokens: int) -> list:
    """One abstractive item per QMSum query: the query, the setting's turns (``transcript`` / ``gold_span``) cut
    in order into documents of about ``doc_tokens`` tokens (whole turns; a longer turn is one document)."""
    from wikiref.extractive import meetings as qb
    from wikiref.model import abstractive as A

    items = []
    for r in rows.to_dict("records"):
        _, turns = qb.document_turns(r, setting)
        docs: list[list[str]] = [[]]
        for turn in turns:
            toks = A.tokens(str(turn))
            if docs[-1] and len(docs[-1]) + len(toks) > doc_tokens:
                docs.append([])
            docs[-1].extend(toks)
        docs = [d for d in docs if d] or [["."]]
        items.append(A.Item(str(r["id"]), A.tokens(str(r["query"])), docs, None))
    return items


def abstractive(params: Mapping, inputs: Mapping, outputs: Mapping, *, cell: str, progress: bool = False) -> dict:
    """One abstractive cell: train the model on the extractive cell's examples (``compare.abstractive.steps``
    optimizer steps under the equal budget, the family's epochs under the natural one), then summarise every DUC
    year (official ROUGE recall, ``duc.rouge_flags``, summaries cut to ``duc.summary_words`` words, as the
    abstractive stage does: :func:`wikiref.supervised.abstractive_runs.duc_items` / ``truncate_words``) and the QMSum
    test queries (official ROUGE F1, ``qmsum.rouge_flags``, cut to ``qmsum.summary_words``; the first of
    ``compare.qmsum.settings``). inputs: :func:`~wikiref.stages.compare.plan.abstractive_inputs`; outputs:
    ``model_dir``, ``result`` (JSON). Returns the result."""
    from wikiref.files import write_json
    from wikiref.model import abstractive as A
    from wikiref.model.training import TrainSettings, resolve_device
    from wikiref.supervised import abstractive_runs

    c = parse_abstractive_cell(cell)
    spec = abstractive_models(params)[c.model]
    family = spec["family"]
    run_params = effective_params(params)
    train_df, dev_df, info = training_data(run_params, c.cell, inputs)
    train_items = [oracle_item(r) for r in train_df.to_dict("records")]
    dev_items = [oracle_item(r) for r in dev_df.to_dict("records")]
    config, use_query = abstractive_runs.model_config(run_params, spec)
    section = run_params["abstractive"][family]
    settings = TrainSettings.from_params(run_params["seed"], run_params["model"], section["train"], progress=progress)
    if c.budget == "equal":
        settings.max_steps = int(run_params["compare"]["abstractive"]["steps"])
    vocab = A.build_vocab(train_items, int(run_params["abstractive"]["vocab"]["max_words"]))
    model = A.build_model(family, vocab, config, seed=int(run_params["seed"]))
    t0 = time.perf_counter()
    res = A.fit(family, model, vocab, train_items, dev_items, settings, outputs["model_dir"], use_query=use_query)
    summariser = A.load(outputs["model_dir"], resolve_device(run_params["model"]["device"]))
    out: dict[str, Any] = {
        "cell": c.id,
        "model": c.model,
        "family": family,
        "variant": model.config.variant,
        "source": c.source,
        "budget": c.budget,
        "label": f"{c.model} ({family}, abstractive)",
        "examples": info["examples"],
        "examples_by_source": info["examples_by_source"],
        "optimizer_steps": int(res.history[-1]["global_step"]) if res.history else 0,
        "best_epoch": res.best_epoch,
        "train_tokens_per_second": round(res.tokens_per_second, 1),
        "vocab_size": len(vocab),
        "summaries": {},
    }
    out["duc"] = _duc_transfer(run_params, spec, summariser, inputs["years"], out["summaries"])
    qmsum = _qmsum_transfer(run_params, spec, config, summariser, inputs, out["summaries"])
    if qmsum is not None:
        out["qmsum"] = qmsum
    out["standin"] = bool(info["standin"]) or out["duc"]["standin"] or bool(out.get("qmsum", {}).get("standin"))
    out["seconds"] = round(time.perf_counter() - t0, 2)
    write_json(outputs["result"], out)
    return out


def _duc_transfer(run_params: Mapping, spec: Mapping, summariser, years: list, summaries: dict) -> dict:
    """Every DUC year (``years``: the year files) summarised by the trained model and scored (official ROUGE
    recall); each year's summaries go into ``summaries`` as ``duc<year>``. Returns the result's ``duc`` entry."""
    from wikiref.extractive.baselines import evaluate as duc_evaluate
    from wikiref.model import abstractive as A
    from wikiref.model.decoding import DecodeSettings
    from wikiref.supervised import abstractive_runs
    from wikiref.supervised import duc_finetune as finetune

    keys, batch = abstractive_runs.decode_settings(run_params, spec, duc=True)
    keys.update({k: v for k, v in (spec.get("decode") or {}).items() if k in keys})  # the model's own decoding wins
    duc_settings = DecodeSettings(**keys)
    duc = run_params["duc"]
    per_year = {}
    for path in years:
        df = finetune.load_year(path)
        items, topics = abstractive_runs.duc_items(df.to_dict("records"))
        toks = A.summarise(summariser, items, duc_settings, batch)
        words = int(duc["summary_words"])
        year_summaries = {
            it.id: A.split_sentences(abstractive_runs.truncate_words(t, words)) for it, t in zip(items, toks)
        }
        scores = duc_evaluate(year_summaries, topics, duc["rouge_flags"])
        year = str(int(df["year"].iloc[0]))
        per_year[year] = {
            "recall": finetune.recall_x100(scores),
            "recall_ci": {m: [round(100.0 * float(x), 4) for x in scores[m]["R_ci"]] for m in DUC_MEASURES},
            "topics": len(items),
        }
        summaries[f"duc{year}"] = year_summaries
    return {"flags": duc["rouge_flags"], "standin": bool(duc["standin"]), "years": per_year}


def _qmsum_transfer(
    run_params: Mapping, spec: Mapping, config: Mapping, summariser, inputs: Mapping, summaries: dict
) -> dict | None:
    """The QMSum test queries (``inputs["qmsum_test"]``) in the first of ``compare.qmsum.settings``,
    summarised by the trained model and scored (official ROUGE F1); the summaries go into ``summaries`` as
    ``qmsum``. Returns the result's ``qmsum`` entry (None when ``compare.qmsum.settings`` is empty)."""
    from wikiref.model import abstractive as A
    from wikiref.model.decoding import DecodeSettings
    from wikiref.supervised import abstractive_runs
    from wikiref.supervised import qmsum_finetune as q

    settings_q = run_params["compare"]["qmsum"]["settings"]
    if not settings_q:
        return None
    setting, qp = settings_q[0], run_params["qmsum"]
    rows = q.eval_rows(q.load_split(inputs["qmsum_test"][0]), qp, run_params["seed"])
    doc_tokens = int(config.get("max_doc_length", config.get("max_source_length", 400)))
    keys, batch = abstractive_runs.decode_settings(run_params, spec)
    items = qmsum_items(rows, setting, doc_tokens)
    toks = A.summarise(summariser, items, DecodeSettings(**keys), batch)
    words = int(qp["summary_words"])
    query_summaries = {
        it.id: A.split_sentences(abstractive_runs.truncate_words(t, words)) for it, t in zip(items, toks)
    }
    out = {
        "setting": setting,
        "flags": qp["rouge_flags"],
        "test_queries": len(rows),
        "rouge": q.score(query_summaries, rows, qp["rouge_flags"]),
        "standin": bool(rows["standin"].any()) if len(rows) else False,
    }
    summaries["qmsum"] = query_summaries
    return out
