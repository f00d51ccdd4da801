"""The ablation jobs: a cell's WikiRef training subset, :func:`pretrain_cell` (one augmentation cell),
:func:`finetune_cell` (one DUC cell) and :func:`collect` (every cell -> ``results/metrics/ablations.json``,
put together by :func:`assemble`).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from wikiref.stages.ablations.cells import (
    POOLING_LABELS,
    SUBNET_ROWS,
    AblationError,
    AugCell,
    DucCell,
    Plan,
    duc_metrics_path,
    effective_params,
    parse_aug,
    parse_duc,
    plan,
    variant_spec,
    wikiref_metrics_path,
)
from wikiref.supervised.duc_finetune import MEASURES  # DUC cells are fine-tuning jobs: the same measures

# The stage's logger (not this module's): every module of the stage logs under the stage's name.
log = logging.getLogger("wikiref.stages.ablations")


# --------------------------------------------------------------------------- WikiRef subsets


def training_subset(pool: pd.DataFrame, cell: AugCell, window: float, seed: int) -> tuple[pd.DataFrame, dict]:
    """The rows of the training pool an augmentation cell trains on, and a description.

    ``size``: the first round(amount x n) rows of a seeded permutation of the pool (so 25% is inside
    50% is inside 100%); ``quality``: the pool sorted by ``oracle_score`` ascending (ties by id), the
    round(window x n) rows starting at floor(amount x n) - the paper's "half of the data with a step
    of 10%". Rows come back in id order.
    """
    pool = pool.sort_values("id", kind="stable").reset_index(drop=True)
    n = len(pool)
    if n == 0:
        raise AblationError("the WikiRef training pool is empty")
    if cell.data == "size":
        k = max(1, int(math.floor(cell.amount * n + 0.5)))
        order = np.random.default_rng(seed).permutation(n)
        chosen = np.sort(order[:k])
        info = {"kind": "size", "fraction": cell.amount}
    elif cell.data == "quality":
        k = max(1, int(math.floor(window * n + 0.5)))
        ranked = pool.assign(_pos=np.arange(n)).sort_values(["oracle_score", "id"], kind="stable")
        by_quality = ranked["_pos"].to_numpy()
        start = min(int(math.floor(cell.amount * n + 1e-9)), n - k)
        chosen = np.sort(by_quality[start : start + k])
        scores = pool["oracle_score"].to_numpy(dtype=float)[chosen]
        info = {
            "kind": "quality",
            "start": cell.amount,
            "window": window,
            "start_row": start,
            "oracle_score_min": float(scores.min()),
            "oracle_score_max": float(scores.max()),
            "oracle_score_mean": float(scores.mean()),
        }
    else:
        raise AblationError(f"cell {cell.id} has no WikiRef training data")
    sub = pool.iloc[chosen].reset_index(drop=True)
    info.update(pool=n, examples=len(sub))
    return sub, info


def cap_doc_sentences(df: pd.DataFrame, n: int | None) -> tuple[pd.DataFrame, int]:
    """Training documents cut to their first ``n`` sentences (labels, scores and oracle indices with
    them); returns the frame and the number of sentences cut. ``None`` = unchanged."""
    if n is None:
        return df, 0
    df = df.copy()
    cut = int(sum(max(0, len(d) - n) for d in df["doc_sentences"]))
    for col in ("doc_sentences", "oracle_labels", "oracle_scores"):
        df[col] = [list(v)[:n] for v in df[col]]
    df["oracle_indices"] = [[int(i) for i in v if int(i) < n] for v in df["oracle_indices"]]
    return df, cut


# --------------------------------------------------------------------------- jobs


def _cell(parse: Callable[[str], Any], cell: Any) -> Any:
    return parse(cell) if isinstance(cell, str) else cell


def pretrain_cell(
    params: Mapping, inputs: Mapping, outputs: Mapping, *, aug: str | AugCell, progress: bool = False
) -> dict:
    """One augmentation cell: train on its WikiRef subset and score it on WikiRef dev/test; or, for
    ``prune: iterative``, run :func:`wikiref.supervised.duc_finetune.prune` from the encoder / DA model.

    inputs: ``train``, ``dev``, ``test`` (oracle splits), ``start`` (a cell that starts from the DA model:
    that checkpoint's files, :func:`wikiref.stages.ablations.cells.start_files`); outputs:
    ``model_dir`` (the checkpoint), ``result`` (the cell's JSON). Returns the result."""
    import torch

    from wikiref.files import write_json
    from wikiref.model import build_scorer
    from wikiref.model.training import TrainSettings, train
    from wikiref.supervised import pretraining as pretrain

    cell = _cell(parse_aug, aug)
    model_dir = outputs["model_dir"]
    run_params = effective_params(params)
    ablation_params, seed = run_params["ablations"], run_params["seed"]
    spec = variant_spec(cell, ablation_params["head"])
    run_params["pretrain"]["variants"] = [spec]
    out: dict[str, Any] = {
        "cell": cell.id,
        "pooling": cell.pooling,
        "data": cell.data,
        "amount": cell.amount,
        "prune": cell.prune,
        "start": cell.start,
        "head": ablation_params["head"],
        "encoder": run_params["model"]["encoder"],
    }
    if not cell.trains:
        raise AblationError(f"{cell.id}: no augmentation, nothing to train")
    if cell.prune == "iterative":
        out["pruning"] = _prune_cell(run_params, cell, inputs, model_dir, progress)
        write_json(outputs["result"], out)
        return out
    train_all, counts = pretrain.read_split(inputs["train"], None, seed)
    pool = pretrain.cap_rows(train_all, run_params["pretrain"]["max_train_examples"], seed)
    train_df, subset = training_subset(pool, cell, ablation_params["quality"]["window"], seed)
    train_df, subset["sentences_cut"] = cap_doc_sentences(train_df, ablation_params["budget"]["wikiref_doc_sentences"])
    dev_df, _ = pretrain.read_split(inputs["dev"], run_params["pretrain"]["max_eval_examples"], seed)
    torch.manual_seed(seed)
    model, tok = build_scorer(pretrain.scorer_config(run_params["model"], spec))
    log.info("%s: training on %d WikiRef examples (%s)", cell.id, len(train_df), subset)
    result = train(
        model,
        tok,
        pretrain.to_examples(train_df, spec["head"]),
        pretrain.to_examples(dev_df, spec["head"]),
        TrainSettings.from_params(seed, run_params["model"], run_params["pretrain"], progress),
        model_dir,
        select_fn=pretrain.dev_rouge2_fn(dev_df, run_params["pretrain"]),
    )
    # The best epoch's dev scores are reused (scoring dev again would cost as much as the training).
    metrics = pretrain.evaluate_variant(run_params, cell.id, model_dir, inputs, dev_scores=result.best_dev_scores)
    out.update(
        subset=subset,
        train_rows=counts,
        wikiref={
            split: {k: metrics[split][k] for k in ("rouge1", "rouge2", "rougeL", "examples", "mean_sentences")}
            for split in ("dev", "test")
        },
        threshold=metrics["threshold"],
        training={
            "best_epoch": result.best_epoch,
            "train_seconds": result.train_seconds,
            "windows": result.pack_stats.get("windows"),
            "windows_per_second": result.windows_per_second,
        },
    )
    write_json(outputs["result"], out)
    return out


def _prune_cell(run_params: dict, cell: AugCell, inputs: Mapping, model_dir, progress: bool) -> dict:
    """A ``prune: iterative`` cell: :func:`wikiref.supervised.duc_finetune.prune` on WikiRef from the encoder or
    from the DA model of its pooling (``run_params`` is set up for it in place). Returns the pruning record."""
    from wikiref.supervised import duc_finetune as finetune

    setting = {"name": "ablation", "label": "iterative", "method": "iterative"}
    if cell.start == "encoder":
        setting.update(init="encoder", pooling=cell.pooling)
    else:
        base = AugCell(cell.pooling, "size", 1.0)
        setting.update(init="pretrained", variant=base.id)
        run_params["pretrain"]["variants"] = [variant_spec(base, run_params["ablations"]["head"])]
    run_params["finetune"]["settings"] = [setting]
    prune_inputs = {"train": inputs["train"], "dev": inputs["dev"], "start": inputs.get("start", ())}
    return finetune.prune(run_params, prune_inputs, {"dir": model_dir}, setting="ablation", progress=progress)


def duc_setting(aug: AugCell, duc: DucCell) -> dict:
    """The ``finetune.settings`` entry of a DUC cell."""
    if not aug.trains:
        if duc.method != "full":
            raise AblationError(f"{aug.id}/{duc.id}: without augmentation only full fine-tuning is defined")
        da, start = "(no DA)", {"init": "encoder", "pooling": aug.pooling}
    else:
        if duc.method == "iterative" and aug.prune != "iterative":
            raise AblationError(f"{aug.id}/{duc.id}: method iterative needs a pruned augmentation cell")
        if aug.prune == "iterative" and duc.method != "iterative":
            raise AblationError(f"{aug.id}/{duc.id}: a pruned augmentation cell is fine-tuned with method iterative")
        da, start = "+ DA", {"init": "pretrained", "variant": aug.id}
    return {"name": "ablation", "label": f"{POOLING_LABELS[aug.pooling]} {da}", **start, "method": duc.method}


def clusters_for_percent(n_clusters: Mapping[int, int], percent: int, cap: int | None) -> int | None:
    """``finetune.max_train_clusters`` for a percentage of each training year's clusters (at least 1;
    None = all). ``cap`` is the fine-tuning section's own cap (the 100% point)."""
    if percent >= 100:
        return cap
    most = max(n_clusters.values())
    base = most if cap is None else min(cap, most)
    return max(1, int(math.floor(percent / 100.0 * base + 0.5)))


def finetune_cell(
    params: Mapping,
    inputs: Mapping,
    outputs: Mapping,
    *,
    aug: str | AugCell,
    duc: str | DucCell,
    progress: bool = False,
) -> dict:
    """One DUC cell: fine-tune (or just apply) the augmentation model with
    :func:`wikiref.supervised.duc_finetune.train_and_test` and test on the held-out year.

    inputs: ``years`` (DUC year -> its ``data/duc/<year>.parquet``; the cell reads the ones it needs),
    ``model`` (the augmentation model's checkpoint files, :func:`wikiref.stages.ablations.cells.model_files`;
    none for data~none); outputs: ``work_dir`` (the
    fine-tuning folder; the weights are not kept), ``result`` (the cell's JSON: ROUGE recall x 100).
    Returns the result."""
    from wikiref.files import write_json
    from wikiref.supervised import duc_finetune as finetune

    aug, duc = _cell(parse_aug, aug), _cell(parse_duc, duc)
    start = finetune.start_from_files(inputs.get("model", ()))
    if duc.method == "iterative":  # the pruned augmentation model: its folder holds the masks too
        start = replace(start, pruned=start.pruned or start.checkpoints.get(aug.id))
    run_params = effective_params(params)
    ablation_params = run_params["ablations"]
    planned = plan(run_params)
    setting = duc_setting(aug, duc)
    run_params["finetune"]["settings"] = [setting]
    if aug.trains:
        run_params["pretrain"]["variants"] = [variant_spec(aug, ablation_params["head"])]
    if duc.train == "all":
        train_years = planned.train_years
    elif duc.train == "none":
        train_years = []
    else:
        train_years = [int(duc.train)]
        if train_years[0] not in planned.train_years:
            raise AblationError(f"{duc.id}: {duc.train} is not a training year ({planned.train_years})")
    years = sorted((train_years or planned.train_years) + [planned.test_year])
    paths = {y: inputs["years"].get(y) for y in years}
    missing = [str(path or y) for y, path in paths.items() if path is None or not Path(path).exists()]
    if missing:
        raise AblationError(f"missing DUC files {missing}: run `wikiref duc prepare` first")
    n_clusters = {y: int(finetune.load_year(paths[y])["topic"].nunique()) for y in train_years}
    cap = run_params["finetune"]["max_train_clusters"]
    if train_years:
        run_params["finetune"]["max_train_clusters"] = clusters_for_percent(n_clusters, duc.percent, cap)
    metrics, _, _ = finetune.train_and_test(
        run_params, "ablation", planned.test_year, paths, outputs["work_dir"], start=start, progress=progress
    )
    test = metrics["test"]
    result = {
        "aug": aug.id,
        "duc_cell": duc.id,
        "train": duc.train,
        "percent": duc.percent,
        "method": duc.method,
        "test_year": planned.test_year,
        "train_years": train_years,
        "train_clusters": len(metrics.get("train_clusters", [])),
        "dev_clusters": len(metrics.get("dev_clusters", [])),
        "clusters_per_year_cap": run_params["finetune"]["max_train_clusters"] if train_years else None,
        "duc": finetune.recall_x100(test),
        "duc_ci": {m: [round(100.0 * float(x), 4) for x in test[m]["R_ci"]] for m in MEASURES},
        "test_topics": metrics["test_topics"],
        "standin": metrics["standin"],
        "seconds": metrics["seconds"],
        "subnet": metrics.get("subnet") or {},
        "start": metrics.get("start", {}),
        "best_epoch": (metrics.get("training") or {}).get("best_epoch"),
    }
    write_json(outputs["result"], result)
    return result


# --------------------------------------------------------------------------- collect


def assemble(params: Mapping, read: Callable[[str], Mapping]) -> dict:
    """All cells -> the ``results/metrics/ablations.json`` structure (``read(path)`` -> the cell JSON).

    ``wikiref`` metrics are WikiRef *test* ROUGE F1 x 100 (dev threshold); ``duc`` metrics are DUC
    ``test_year`` ROUGE recall x 100 (official scorer)."""
    run_params = effective_params(params)
    planned = plan(run_params)
    ablation_params = run_params["ablations"]

    def wiki(cell: AugCell) -> dict:
        m = read(wikiref_metrics_path(cell))
        return {
            "rouge1": m["wikiref"]["test"]["rouge1"],
            "rouge2": m["wikiref"]["test"]["rouge2"],
            "rougeL": m["wikiref"]["test"]["rougeL"],
            "train_examples": m["subset"]["examples"],
            **(
                {"oracle_score_range": [m["subset"]["oracle_score_min"], m["subset"]["oracle_score_max"]]}
                if m["subset"]["kind"] == "quality"
                else {}
            ),
        }

    def duc(a: AugCell, d: DucCell) -> dict:
        m = read(duc_metrics_path(a, d))
        return {"duc": m["duc"], "train_clusters": m["train_clusters"], "seconds": m["seconds"]}

    model, pre, tuning = run_params["model"], run_params["pretrain"], run_params["finetune"]
    out: dict[str, Any] = {
        "profile": run_params["profile"]["name"],
        "standin": bool(run_params["profile"].get("standin")),
        "duc_standin": bool(run_params["duc"]["standin"]),
        "encoder": model["encoder"],
        "head": ablation_params["head"],
        "base_pooling": ablation_params["pooling"],
        "test_year": planned.test_year,
        "train_years": planned.train_years,
        "budget": {
            "max_length": model["max_length"],
            "stride": model["stride"],
            "max_query_tokens": model["max_query_tokens"],
            "pretrain_epochs": pre["epochs"],
            "finetune_epochs": tuning["epochs"],
            "train_pool": pre["max_train_examples"],
            "eval_examples": pre["max_eval_examples"],
            "wikiref_doc_sentences": ablation_params["budget"]["wikiref_doc_sentences"],
            "duc_doc_sentences": tuning.get("max_doc_sentences"),
            "duc_train_clusters": tuning.get("max_train_clusters"),
        },
    }
    out["data_size"] = {"points": [{"fraction": f, "wikiref": wiki(a), **duc(a, d)} for f, a, d in planned.data_size]}
    out["quality"] = {
        "window": ablation_params["quality"]["window"],
        "points": [{"name": n, "start": s, "wikiref": wiki(a), **duc(a, d)} for n, s, a, d in planned.quality],
        "full": (
            {"wikiref": wiki(planned.base), **duc(planned.base, DucCell("all", 100, "full"))}
            if planned.quality
            else None
        ),
    }
    out["pooling"] = {
        "rows": [{"pooling": a.pooling, "label": lab, "wikiref": wiki(a), **duc(a, d)} for lab, a, d in planned.pooling]
    }
    out["subnetwork"] = {"rows": _subnetwork_rows(planned, read)}
    out["duc_size"] = {
        "curves": {k: [{"percent": pc, **duc(a, d)} for pc, a, d in v] for k, v in planned.duc_size.items()},
        "lines": {k: duc(a, d) for k, (a, d) in planned.duc_lines.items()},
    }
    seconds = [read(duc_metrics_path(a, d))["seconds"] for a, d in planned.pairs()]
    out["cells"] = {
        "augmentation": len(planned.aug_cells),
        "duc": len(planned.pairs()),
        "duc_seconds_total": round(float(sum(seconds)), 1),
    }
    return out


def _subnetwork_rows(planned: Plan, read: Callable[[str], Mapping]) -> list[dict]:
    """Table IX's rows: one per subnetwork cell (its DUC recall, mask statistics and seconds)."""
    rows = []
    for key, a, d in planned.subnetwork:
        m = read(duc_metrics_path(a, d))
        rows.append(
            {
                "method": "one_step" if key == "one_step_da" else key.split("_")[0],
                "key": key,
                "method_label": SUBNET_ROWS[key][0],
                "init_label": SUBNET_ROWS[key][1],
                "duc": m["duc"],
                "subnet": m.get("subnet") or {},
                "seconds": m["seconds"],
            }
        )
    return rows


def collect(params: Mapping, inputs: Mapping, outputs: Mapping) -> dict:
    """Every cell's result -> ``results/metrics/ablations.json`` (:func:`assemble`). inputs: ``results`` (the
    cell result files, at their layout paths; a cell whose file is not among them is an error) or
    ``results_root`` (the folder the cell result paths are relative to); outputs: ``metrics``. Returns the
    collected structure."""
    from wikiref.files import read_json, write_json

    given = {str(Path(p)) for p in inputs["results"]} if "results" in inputs else None
    root = Path(inputs.get("results_root", "."))

    def read(path: str) -> Mapping:
        if given is not None and str(Path(path)) not in given:
            raise AblationError(f"the cell result {path} is not among the given results")
        if not (root / path).exists():
            raise AblationError(f"missing cell result {root / path}: run its ablations job first")
        return read_json(root / path)

    out = assemble(params, read)
    write_json(outputs["metrics"], out)
    return out


def plan_lines(params: Mapping) -> list[str]:
    """The jobs of the current parameters, one line each: ``pretrain <aug>`` / ``finetune <aug>/<duc>``."""
    pl = plan(params)
    return [f"pretrain {cell.id}" for cell in pl.aug_cells] + [f"finetune {a.id}/{d.id}" for a, d in pl.pairs()]
