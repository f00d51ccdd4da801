"""The extractive cells' jobs: pre-training a cell's scorer, then DUC and QMSum with it.

:func:`pretrain` trains the BERT scorer on a cell's rows (:func:`wikiref.stages.compare.data.training_data`);
:func:`duc` and :func:`qmsum` test it without fine-tuning (transfer), fine-tuned (held-out DUC year; QMSum
train split) and as one signal of a learning-to-rank layer (``ltr``), as ``compare.duc`` / ``compare.qmsum`` ask.
The encoder-only row has no transfer.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from wikiref import layout
from wikiref.stages.compare.data import training_data
from wikiref.stages.compare.plan import DUC_MEASURES, MODES, Cell, CompareError, _cell
from wikiref.stages.compare.runparams import effective_params, start_setting, variant_spec

# The stage's logger (not this module's): every module of the stage logs under the stage's name.
log = logging.getLogger("wikiref.stages.compare")


def pretrain(params: Mapping, inputs: Mapping, outputs: Mapping, *, cell: str | Cell, progress: bool = False) -> dict:
    """Pre-train one cell. inputs: ``train`` / ``dev`` (lists: the oracle files of the cell's sources, in
    :func:`members` order), ``sizes`` (other sources' train files, for ``examples: null``); outputs:
    ``model_dir``, ``result`` (JSON: examples per source, optimizer steps, windows, dev ROUGE-2, seconds,
    STAND-IN). Returns the result."""
    import torch

    from wikiref.files import write_json
    from wikiref.model import build_scorer
    from wikiref.model.training import TrainSettings, train
    from wikiref.supervised import pretraining as pre

    c = _cell(cell)
    if not c.trains:
        raise CompareError(f"{c.id}: no augmentation, nothing to pre-train")
    t0 = time.perf_counter()
    run_params = effective_params(params)
    seed = run_params["seed"]
    spec = variant_spec(run_params, c)
    run_params["pretrain"]["variants"] = [spec]
    train_df, dev_df, info = training_data(run_params, c, inputs)
    settings = TrainSettings.from_params(seed, run_params["model"], run_params["pretrain"], progress)
    if c.budget == "equal":
        settings.max_steps = info["steps"]
    else:
        settings.epochs = info["epochs"]
    torch.manual_seed(seed)
    model, tok = build_scorer(pre.scorer_config(run_params["model"], spec))
    log.info("%s: %d training examples (%s), %d dev", c.id, len(train_df), info["examples_by_source"], len(dev_df))
    result = train(
        model,
        tok,
        pre.to_examples(train_df, spec["head"]),
        pre.to_examples(dev_df, spec["head"]),
        settings,
        outputs["model_dir"],
        select_fn=pre.dev_rouge2_fn(dev_df, run_params["pretrain"]),
    )
    steps = result.history[-1]["global_step"] if result.history else 0
    out = {
        "cell": c.id,
        "source": c.source,
        "budget": c.budget,
        "label": c.label,
        "encoder": run_params["model"]["encoder"],
        "head": spec["head"],
        "pooling": spec["pooling"],
        **info,
        "optimizer_steps": int(steps),
        "batch_size": settings.batch_size * settings.grad_accum_steps,
        "train_windows": result.pack_stats.get("windows"),
        "document_boundaries": result.pack_stats.get("document_boundaries"),
        "best_epoch": result.best_epoch,
        "dev_rouge2": result.best_metric,
        "windows_per_second": round(result.windows_per_second, 3),
        "seconds": round(time.perf_counter() - t0, 2),
    }
    write_json(outputs["result"], out)
    return out


def _duc_paths(params: Mapping, inputs: Mapping) -> dict[int, str]:
    years = sorted(int(y) for y in params["duc"]["years"])
    paths = {y: inputs["years"].get(y) for y in years}
    missing = [str(p or y) for y, p in paths.items() if p is None or not Path(p).exists()]
    if missing:
        raise CompareError(f"missing DUC files {missing}: run `wikiref duc prepare` first")
    return paths


def _benchmark_run(params: Mapping, cell: str | Cell, benchmark: str) -> tuple[Cell, dict, list[str], dict]:
    """What a DUC / QMSum job starts with: the cell, its parameters (the cell's model as the only
    ``pretrain.variants`` entry), the modes it runs (``compare.<benchmark>``; the encoder-only row has no
    transfer) and the head of its result."""
    c = _cell(cell)
    run_params = effective_params(params)
    if c.trains:
        run_params["pretrain"]["variants"] = [variant_spec(run_params, c)]
    chosen = run_params["compare"][benchmark]
    modes = [m for m in MODES if chosen[m] and (c.trains or m != "transfer")]
    return c, run_params, modes, {"cell": c.id, "source": c.source, "budget": c.budget, "label": c.label}


def duc_years(params: Mapping, mode: str) -> list[int]:
    """The DUC years a mode is tested on: every year (transfer), or ``compare.duc.finetune_years`` held out
    in turn (fine-tuned; null = every year)."""
    years = sorted(int(y) for y in params["duc"]["years"])
    chosen = params["compare"]["duc"]["finetune_years"]
    if mode == "transfer" or chosen is None:
        return years
    unknown = [y for y in chosen if int(y) not in years]
    if unknown:
        raise CompareError(f"compare.duc.finetune_years {unknown} not in duc.years {years}")
    return sorted(int(y) for y in chosen)


def duc(params: Mapping, inputs: Mapping, outputs: Mapping, *, cell: str | Cell, progress: bool = False) -> dict:
    """DUC for one cell: transfer (the pre-trained model applied to every year, no fine-tuning), held-out-year
    fine-tuning and held-out-year learning to rank (``compare.ltr``; the cell's pre-trained scorer's sentence
    scores one of the ranker's signals, none for the encoder-only row), as ``compare.duc`` asks. inputs: ``years`` (DUC year
    -> ``data/duc/<year>.parquet``), ``start`` (the cell's checkpoint files,
    :func:`wikiref.stages.compare.plan.start_inputs`; none for the encoder-only row); outputs: ``work_dir``,
    ``result`` (JSON: mode -> year -> ROUGE recall x 100 and 95% intervals). Returns the result."""
    from wikiref.files import write_json
    from wikiref.supervised import duc_finetune as finetune

    c, run_params, modes, out = _benchmark_run(params, cell, "duc")
    paths = _duc_paths(run_params, inputs)
    start = finetune.start_from_files(inputs.get("start", ()))
    out.update(flags=run_params["duc"]["rouge_flags"], standin=bool(run_params["duc"]["standin"]), modes={})
    t0 = time.perf_counter()
    for mode in modes:
        setting = start_setting(run_params, c, {"transfer": "none", "finetuned": "full", "ltr": "ltr"}[mode])
        if mode == "ltr":
            setting["ltr"] = run_params["compare"]["ltr"]
        run_params["finetune"]["settings"] = [setting]
        per_year = {}
        for year in duc_years(run_params, mode):
            metrics, _, _ = finetune.train_and_test(
                run_params,
                "compare",
                year,
                paths,
                Path(outputs["work_dir"]) / mode / str(year),
                start=start,
                progress=progress,
            )
            test = metrics["test"]
            per_year[str(year)] = {
                "recall": finetune.recall_x100(test),
                "recall_ci": {m: [round(100.0 * float(x), 4) for x in test[m]["R_ci"]] for m in DUC_MEASURES},
                "topics": metrics["test_topics"],
                "train_clusters": len(metrics.get("train_clusters", [])),
                "best_epoch": (metrics.get("training") or {}).get("best_epoch"),
                "seconds": metrics["seconds"],
            }
        out["modes"][mode] = per_year
    out["seconds"] = round(time.perf_counter() - t0, 2)
    write_json(outputs["result"], out)
    return out


def qmsum(params: Mapping, inputs: Mapping, outputs: Mapping, *, cell: str | Cell, progress: bool = False) -> dict:
    """QMSum for one cell: transfer, fine-tuning and learning to rank (:func:`_qmsum_ltr`), as ``compare.qmsum``
    asks, in every setting of ``compare.qmsum.settings``. inputs: ``train`` / ``dev`` / ``test`` (``data/qmsum/<split>.parquet``),
    ``start`` (as for :func:`duc`); outputs: ``work_dir``, ``result`` (JSON: mode -> setting -> official ROUGE-1/2/L
    R/P/F x 100 with 95% intervals). Returns the result."""
    from wikiref.files import write_json
    from wikiref.supervised import duc_finetune as finetune
    from wikiref.supervised import qmsum_finetune as q

    c, run_params, modes, out = _benchmark_run(params, cell, "qmsum")
    cmp, seed = run_params["compare"], run_params["seed"]
    start = finetune.start_from_files(inputs.get("start", ()))
    splits = {s: q.load_split(inputs[s]) for s in layout.SPLITS}
    test = q.eval_rows(splits["test"], run_params["qmsum"], seed)
    out |= {
        "flags": run_params["qmsum"]["rouge_flags"],
        "summary_words": run_params["qmsum"]["summary_words"],
        "test_queries": len(test),
        "standin": bool(test["standin"].any()) if len(test) else False,
        "modes": {},
    }
    t0 = time.perf_counter()
    for mode in modes:
        if mode == "ltr":
            out["modes"][mode] = _qmsum_ltr(run_params, c, start, splits, test, progress)
            continue
        per_setting = {}
        for setting in cmp["qmsum"]["settings"]:
            method = "none" if mode == "transfer" else "full"
            model, tok, start_info = finetune.start_model(run_params, start_setting(run_params, c, method), start=start)
            info: dict[str, Any] = {"start": start_info}
            if mode == "finetuned":
                model, tok, info["training"] = q.finetune(
                    run_params,
                    model,
                    tok,
                    splits["train"],
                    splits["dev"],
                    setting,
                    Path(outputs["work_dir"]) / setting,
                    progress=progress,
                )
            res = q.evaluate_model(run_params, model, tok, test, setting, progress=progress)
            per_setting[setting] = {**res, **info}
        out["modes"][mode] = per_setting
    out["seconds"] = round(time.perf_counter() - t0, 2)
    write_json(outputs["result"], out)
    return out


def _qmsum_ltr(run_params: Mapping, c: Cell, start, splits: Mapping, test: pd.DataFrame, progress: bool) -> dict:
    """One cell's learning to rank on QMSum in every ``compare.qmsum.settings`` setting
    (:func:`wikiref.supervised.ltr_scoring.fit_and_extract_queries`): the ranker ``compare.ltr`` on ``qmsum.ltr``'s
    train / dev queries, the cell's pre-trained scorer's turn scores one of its signals (none for the encoder-only
    row), scored on the test rows. The scorer is loaded and each turn embedded once for all settings. Returns
    setting -> result."""
    from wikiref.model.training import resolve_device
    from wikiref.supervised import duc_finetune as finetune
    from wikiref.supervised import ltr_scoring as ls
    from wikiref.supervised import qmsum_finetune as q

    qp, seed, spec = run_params["qmsum"], int(run_params["seed"]), run_params["compare"]["ltr"]
    picked = {
        name: q.training_queries(splits[name], qp, qp["ltr"][f"{name}_queries"], seed) for name in ("train", "dev")
    }
    device = str(resolve_device(run_params["model"]["device"]))
    encoder = ls.encoder_name(spec, run_params["model"])
    start_info: dict[str, Any] = {"init": "encoder", "encoder": encoder}
    model = tok = None
    if c.trains:
        setting_spec = start_setting(run_params, c, "none")
        model, tok, start_info = finetune.start_model(run_params, setting_spec, start=start, device=device)
    cache = ls.TurnEmbeddings(ls.Embedder(encoder, device=device, seed=seed))
    out = {}
    for setting in run_params["compare"]["qmsum"]["settings"]:
        signal = None
        if model is not None:

            def signal(df: pd.DataFrame, setting=setting):
                return q.turn_scores(model, tok, df, setting, run_params["model"], progress)

        summaries, _, record = ls.fit_and_extract_queries(
            {**picked, "test": test},
            setting,
            cache,
            ls.ranker_settings(spec, seed),
            qp["summary_words"],
            span_targets=qp["ltr"]["span_targets"],
            signal=signal,
        )
        out[setting] = {**q.summary_metrics(qp, summaries, test), "start": start_info, "training": record}
    return out
