"""Held-out-year fine-tuning on DUC 2005-2007 (journal §V, Table VI; Table IX's subnetworks).

For a held-out year Y and a *setting* (``finetune.settings[*]``: starting point + method):

1. **Data** (``data/duc/<year>.parquet`` from ``wikiref duc prepare``): the other years are the training
   years; at most ``max_train_clusters`` clusters per training year are kept (seeded), and a seeded
   ``dev_fraction`` of the remaining clusters is held out for selection. One training example per
   (query, document): the query levels (title + narrative sentences), the document's sentences (the
   first ``max_doc_sentences`` when capped) and each sentence's ROUGE-2 recall against the cluster's
   references pooled (``sentence_targets``, x ``target_scale``), learned with the regression head
   (linear + MSE), the paper's fine-tuning objective.
2. **Start** (``init``): ``encoder`` = the encoder alone (``model.encoder``, fresh pooling + head;
   ``pooling: cls`` is BERT, ``query`` is Q-BERT); ``pretrained`` = a WikiRef checkpoint from
   ``models/pretrain/<variant>/`` (+DA): ``variant`` is a name or ``best`` = the variant with the
   highest dev ROUGE-2 in ``results/metrics/pretrain_<variant>.json`` among the pretrained-encoder
   variants with the query in the input (optionally only those with ``pooling`` / ``pretrain_head``).
   A classification checkpoint is switched to the regression head (same linear layer).
3. **Method**: ``full`` (every weight trainable), ``subnet`` (ST: top ``subnet.fraction`` by
   magnitude per encoder-layer tensor, :mod:`wikiref.model.subnetworks`), ``iterative`` (the subnetwork left by
   gradual magnitude pruning during a WikiRef training run, :func:`prune`, pruned entries
   stay zero) or ``none`` (DA PRE-TRAINED: the checkpoint applied as is).
4. **Selection**: :func:`wikiref.model.training.train` keeps the epoch with the best mean dev ROUGE-2 recall
   (official scorer, ``duc.rouge_flags``) of the summaries built by the DUC rule.
5. **Test**: every sentence of year Y is scored per (query, document), ranked across the cluster and
   added while the summary stays within ``duc.summary_words`` words, skipping a sentence when more
   than half of its bigrams are already in it (:mod:`wikiref.stages.duc.selection`); ROUGE-1/2/SU4
   with :mod:`wikiref.rouge.official` and the DUC flags (like the duc stage's baselines).

The jobs of the stage (``wikiref finetune <job>``), each ``job(params, inputs, outputs, **options) ->
dict`` writing its outputs itself: :func:`run_job` (one setting, one held-out year: metrics,
predictions, summaries), :func:`prune` (an iterative setting's pruned WikiRef model) and :func:`table`
(Table VI from the duc stage's baselines + the settings, :func:`table6` / :func:`summary_metrics`,
and the stage's metrics). :func:`train_and_test` is the work of one job without the files (the
ablation cells run it too).
"""

from __future__ import annotations

import logging
import math
import os
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from wikiref import layout
from wikiref.config import by_name, find_named
from wikiref.schemas import SchemaError, require_columns

log = logging.getLogger(__name__)

INITS = ("encoder", "pretrained")
METHODS = ("full", "subnet", "iterative", "none")
MEASURES = ("ROUGE-1", "ROUGE-2", "ROUGE-SU4")
MODEL_FILES_KEPT = ("training.json", "subnet.json")
# The columns of data/duc/<year>.parquet (wikiref.schemas.DUC) a job reads.
DUC_COLUMNS_READ = ("id", "year", "topic", "query", "doc_position", "doc_sentences", "sentence_targets", "references")


class FinetuneError(ValueError):
    """Bad input of a fine-tuning job: a setting that makes no sense, an unknown setting or year, a missing file."""


# --------------------------------------------------------------------------- settings


def _check_setting(s: Mapping) -> None:
    name = s["name"]
    if s["init"] not in INITS:
        raise FinetuneError(f"setting {name}: init {s['init']!r} not in {INITS}")
    if s["method"] not in METHODS:
        raise FinetuneError(f"setting {name}: method {s['method']!r} not in {METHODS}")
    if s["init"] == "encoder" and s["method"] == "none":
        raise FinetuneError(f"setting {name}: method none (no fine-tuning) needs init: pretrained")
    if s["init"] == "encoder" and not s.get("pooling"):
        raise FinetuneError(f"setting {name}: init encoder needs a pooling (cls = BERT, query = Q-BERT)")
    if s["init"] == "pretrained" and not s.get("variant"):
        raise FinetuneError(f"setting {name}: init pretrained needs variant (a pretrain.variants name or 'best')")


def settings(finetune: Mapping) -> dict[str, dict]:
    """``finetune.settings`` by name, checked."""
    return by_name(finetune["settings"], "finetune setting", FinetuneError, _check_setting)


def find_setting(finetune: Mapping, name: str) -> dict:
    """The ``finetune.settings`` entry called ``name``."""
    return find_named(settings(finetune), name, "setting", "finetune.settings", FinetuneError)


def run_job_name(setting: Mapping) -> str:
    """The registry job a setting's fine-tuning runs as: ``run_pretrained`` (it reads the ``pretrain``
    section: the WikiRef checkpoint it starts from) or ``run``."""
    return "run_pretrained" if setting["init"] == "pretrained" else "run"


def setting_only(params: Mapping, name: str) -> dict[str, Any]:
    """What a setting's jobs receive in place of the configured ``finetune.settings`` (``replace=`` of
    :func:`wikiref.config.job_params`): that setting alone, so adding or editing another setting reruns
    none of its jobs."""
    return {"finetune.settings": [find_setting(params["finetune"], name)]}


def pretrained_inputs(params: Mapping, name: str) -> list[str]:
    """The files setting ``name`` may start from: the checkpoint of each candidate variant and its
    metrics (which ``best`` compares); none for a setting that starts from the encoder."""
    files: list[str] = []
    for variant in candidate_variants(find_setting(params["finetune"], name), params["pretrain"]):
        files += [
            layout.PRETRAIN_MODEL.format(variant=variant),
            layout.PRETRAIN_CONFIG.format(variant=variant),
            layout.PRETRAIN_VARIANT_METRICS.format(variant=variant),
        ]
    return files


def pruned_files(name: str) -> list[str]:
    """What :func:`prune` writes for setting ``name`` (a ``{setting}`` wildcard works too)."""
    return [f"{layout.FINETUNE_PRUNED_DIR.format(setting=name)}/{f}" for f in layout.FINETUNE_PRUNED_FILES]


def start_inputs(params: Mapping, name: str) -> list[str]:
    """The files a fine-tuning job of setting ``name`` starts from: the pruned model (method iterative)
    or :func:`pretrained_inputs`."""
    if find_setting(params["finetune"], name)["method"] == "iterative":
        return pruned_files(name)
    return pretrained_inputs(params, name)


def pretrain_metrics_dir(start_files: Sequence[str]) -> str:
    """The folder of the pre-training metrics among a job's start files (:func:`start_inputs`), where
    ``variant: best`` compares the candidates; :data:`wikiref.layout.METRICS` when it starts elsewhere."""
    prefix, _ = layout.PRETRAIN_VARIANT_METRICS.split("{variant}")
    name_prefix = os.path.basename(prefix)
    for f in start_files:
        if os.path.basename(f).startswith(name_prefix) and f.endswith(".json"):
            return os.path.dirname(f)
    return layout.METRICS


def candidate_variants(setting: Mapping, pretrain: Mapping) -> list[str]:
    """Pretrain variants a ``pretrained`` setting may start from (one, or the candidates of ``best``)."""
    if setting["init"] != "pretrained":
        return []
    from wikiref.stages.pretrain import variants

    known = variants(pretrain)
    v = setting["variant"]
    if v != "best":
        if v not in known:
            raise FinetuneError(
                f"setting {setting['name']}: variant {v!r} is not in pretrain.variants ({', '.join(known)})"
            )
        return [v]
    out = [
        n
        for n, spec in known.items()
        if spec["init"] == "pretrained"
        and spec["query"]
        and (not setting.get("pooling") or spec["pooling"] == setting["pooling"])
        and (not setting.get("pretrain_head") or spec["head"] == setting["pretrain_head"])
    ]
    if not out:
        raise FinetuneError(
            f"setting {setting['name']}: no pretrain variant with a pretrained encoder and the query"
            f"{' and pooling ' + setting['pooling'] if setting.get('pooling') else ''}"
            f"{' and head ' + setting['pretrain_head'] if setting.get('pretrain_head') else ''}"
        )
    return out


def resolve_variant(setting: Mapping, pretrain: Mapping, metrics_dir: str | Path) -> tuple[str, dict]:
    """The variant to start from and why: ``best`` -> highest dev ROUGE-2 (ties: name)."""
    from wikiref.files import read_json
    from wikiref.stages.pretrain import variant_metrics_file

    cands = candidate_variants(setting, pretrain)
    if setting["variant"] != "best":
        return cands[0], {"rule": "named"}
    dev = {}
    for name in cands:
        path = variant_metrics_file(metrics_dir, name)
        if not path.exists():
            raise FinetuneError(f"{path} missing: run `wikiref pretrain run --variant {name}` (pretrain stage)")
        dev[name] = float(read_json(path)["dev"]["rouge2"])
    best = max(sorted(dev), key=lambda n: dev[n])
    return best, {"rule": "best dev ROUGE-2 F1 on WikiRef", "candidates_dev_rouge2": dev}


# --------------------------------------------------------------------------- data


def load_year(path: str | Path) -> pd.DataFrame:
    from wikiref.files import read_parquet

    df = read_parquet(path)
    require_columns(df.columns, DUC_COLUMNS_READ, f"{path} (written by `wikiref duc prepare`?)")
    if df["year"].nunique() != 1:
        raise SchemaError(f"{path}: expected one DUC year, found {sorted(df['year'].unique())}")
    return df.sort_values(["topic", "doc_position"], kind="stable").reset_index(drop=True)


def _topic_keys(df: pd.DataFrame) -> list[tuple[int, str]]:
    return sorted({(int(y), str(t)) for y, t in zip(df["year"], df["topic"])})


def cap_clusters(df: pd.DataFrame, cap: int | None, seed: int) -> pd.DataFrame:
    """At most ``cap`` clusters (topics) per year, a seeded choice; all when cap is None."""
    if cap is None:
        return df
    keep: list[tuple[int, str]] = []
    for year in sorted(df["year"].unique()):
        keys = [k for k in _topic_keys(df) if k[0] == int(year)]
        if len(keys) > cap:
            rng = np.random.default_rng([seed, int(year)])
            keys = [keys[i] for i in sorted(rng.choice(len(keys), size=cap, replace=False))]
        keep.extend(keys)
    mask = [(int(y), str(t)) in set(keep) for y, t in zip(df["year"], df["topic"])]
    return df[np.array(mask, dtype=bool)].reset_index(drop=True)


def held_out_split(df: pd.DataFrame, dev_fraction: float, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(train, dev) by cluster: a seeded ``dev_fraction`` of the (year, topic) clusters, at least one,
    and at least one left for training."""
    keys = _topic_keys(df)
    if len(keys) < 2:
        raise FinetuneError(f"need at least 2 training clusters to hold one out for selection, have {len(keys)}")
    n_dev = min(len(keys) - 1, max(1, int(math.floor(dev_fraction * len(keys) + 0.5))))
    rng = np.random.default_rng(seed)
    dev_keys = {keys[i] for i in rng.choice(len(keys), size=n_dev, replace=False)}
    is_dev = np.array([(int(y), str(t)) in dev_keys for y, t in zip(df["year"], df["topic"])], dtype=bool)
    return df[~is_dev].reset_index(drop=True), df[is_dev].reset_index(drop=True)


def to_examples(
    df: pd.DataFrame, *, max_doc_sentences: int | None = None, target_scale: float = 1.0, with_targets: bool = True
) -> tuple[list, pd.DataFrame, dict]:
    """ScoringExamples for the rows that have sentences; returns (examples, the rows used, counts)."""
    from wikiref.model.training import ScoringExample

    keep = np.array([len(s) > 0 for s in df["doc_sentences"]], dtype=bool)
    used = df[keep].reset_index(drop=True)
    counts = {
        "rows": int(len(df)),
        "empty_documents": int((~keep).sum()),
        "used": int(len(used)),
        "sentences": 0,
        "capped_sentences": 0,
    }
    out = []
    for r in used.itertuples(index=False):
        sents = [str(s) for s in r.doc_sentences]
        targets = [float(t) * target_scale for t in r.sentence_targets]
        if len(targets) != len(sents):
            raise FinetuneError(f"row {r.id}: {len(sents)} sentences but {len(targets)} targets")
        if max_doc_sentences is not None and len(sents) > max_doc_sentences:
            counts["capped_sentences"] += len(sents) - max_doc_sentences
            sents, targets = sents[:max_doc_sentences], targets[:max_doc_sentences]
        counts["sentences"] += len(sents)
        out.append(
            ScoringExample(
                query=[str(q) for q in r.query],
                sentences=sents,
                targets=targets if with_targets else None,
                id=str(r.id),
            )
        )
    if counts["empty_documents"]:
        log.warning("%d of %d documents have no sentences (skipped)", counts["empty_documents"], counts["rows"])
    return out, used, counts


# --------------------------------------------------------------------------- summaries and ROUGE


def cluster_summaries(
    df: pd.DataFrame, scores: Sequence[Sequence[float]], *, max_words: int, max_bigram_overlap: float, fill: str
) -> tuple[dict[str, list[str]], int]:
    """Per topic: the sentences of all its documents (cluster order) ranked by score and selected by
    the DUC rule. ``scores[i]`` belongs to row ``i`` of ``df``. Returns (summaries, unscored count):
    a sentence without a score (NaN) ranks last."""
    from wikiref.stages.duc.selection import select

    if len(scores) != len(df):
        raise ValueError(f"{len(scores)} score lists for {len(df)} rows")
    by_topic: dict[str, list[tuple[int, list[str], np.ndarray]]] = {}
    for (topic, pos, sents), sc in zip(zip(df["topic"], df["doc_position"], df["doc_sentences"]), scores):
        sc = np.asarray(sc, dtype=np.float64)
        if len(sc) != len(sents):
            raise ValueError(f"topic {topic} document {pos}: {len(sc)} scores for {len(sents)} sentences")
        by_topic.setdefault(str(topic), []).append((int(pos), [str(s) for s in sents], sc))
    out: dict[str, list[str]] = {}
    unscored = 0
    for topic in sorted(by_topic):
        docs = sorted(by_topic[topic], key=lambda d: d[0])
        sents = [s for _, ss, _ in docs for s in ss]
        flat = np.concatenate([sc for _, _, sc in docs]) if docs else np.zeros(0)
        nan = np.isnan(flat)
        unscored += int(nan.sum())
        flat = np.where(nan, -np.inf, flat)
        idx = select(flat.tolist(), sents, max_words=max_words, max_bigram_overlap=max_bigram_overlap, fill=fill)
        out[topic] = [sents[i] for i in idx]
    return out, unscored


def topic_references(df: pd.DataFrame) -> dict[str, list[list[str]]]:
    """Per topic: each reference summary as its lines (what ROUGE reads in SPL format)."""
    out: dict[str, list[list[str]]] = {}
    for topic, refs in zip(df["topic"], df["references"]):
        out.setdefault(str(topic), [str(r).split("\n") for r in refs])
    return out


def dev_metric_fn(dev: pd.DataFrame, duc: Mapping) -> Callable[[list[np.ndarray]], float]:
    """select_fn for :func:`wikiref.model.training.train`: mean per-topic ROUGE-2 recall x 100 (official scorer,
    ``duc.rouge_flags``) of the dev clusters' summaries."""
    from wikiref.rouge import official

    refs = topic_references(dev)
    scorers = {t: official.Scorer(r, flags=duc["rouge_flags"]) for t, r in refs.items()}
    sel = duc["select"]

    def fn(scores: list[np.ndarray]) -> float:
        summaries, _ = cluster_summaries(
            dev, scores, max_words=duc["summary_words"], max_bigram_overlap=sel["max_bigram_overlap"], fill=sel["fill"]
        )
        return 100.0 * float(np.mean([scorers[t](summaries[t])["ROUGE-2"]["R"] for t in sorted(scorers)]))

    return fn


def evaluate_year(df: pd.DataFrame, scores: Sequence[Sequence[float]], duc: Mapping) -> tuple[dict, dict]:
    """Summaries of a test year and their official ROUGE (as ``duc-baselines`` reports it)."""
    from wikiref.stages.duc import reader as duc_reader
    from wikiref.stages.duc.baselines import evaluate

    sel = duc["select"]
    summaries, unscored = cluster_summaries(
        df, scores, max_words=duc["summary_words"], max_bigram_overlap=sel["max_bigram_overlap"], fill=sel["fill"]
    )
    topics = duc_reader.rows_to_topics(df.to_dict("records"))
    scores_out = evaluate(summaries, topics, duc["rouge_flags"])
    scores_out["summary_words_mean"] = round(
        sum(len(" ".join(s).split()) for s in summaries.values()) / max(len(summaries), 1), 2
    )
    scores_out["unscored_sentences"] = unscored
    return scores_out, summaries


# --------------------------------------------------------------------------- models


def _require_checkpoint(path: str | Path, hint: str) -> None:
    if not (Path(path) / "config.json").exists():
        raise FinetuneError(f"no model in {path}: {hint}")


def start_model(
    params: Mapping,
    setting: Mapping,
    *,
    pretrain_dir: str | Path = layout.PRETRAIN_DIR,
    metrics_dir: str | Path = layout.METRICS,
    prune_dir: str | Path | None = None,
    device="cpu",
) -> tuple[Any, Any, dict]:
    """The model a setting starts from, its tokenizer, and a description of where it came from."""
    import torch

    from wikiref.model import build_scorer, load_scorer
    from wikiref.stages.pretrain import scorer_config

    info: dict[str, Any] = {"init": setting["init"]}
    if setting["method"] == "iterative":
        if prune_dir is None:
            raise FinetuneError(f"setting {setting['name']}: method iterative needs the pruned model (--prune-dir)")
        _require_checkpoint(prune_dir, f"run `wikiref finetune prune --setting {setting['name']}` first")
        from wikiref.files import read_json

        model, tok = load_scorer(prune_dir, device=device)
        pruning = Path(prune_dir) / "pruning.json"
        if pruning.exists():
            pinfo = read_json(pruning)
            info.update({k: v for k, v in pinfo["start"].items() if k in ("variant", "encoder", "selection")})
            info["pruned_from_checkpoint"] = pinfo["start"].get("checkpoint")
        info["checkpoint"] = str(prune_dir)
    elif setting["init"] == "encoder":
        torch.manual_seed(params["seed"])
        spec = {"pooling": setting["pooling"], "head": "regression", "query": True, "init": "pretrained"}
        model, tok = build_scorer(scorer_config(params["model"], spec))
        info["encoder"] = params["model"]["encoder"]
    else:
        variant, why = resolve_variant(setting, params["pretrain"], metrics_dir)
        path = Path(pretrain_dir) / variant
        _require_checkpoint(path, f"run `wikiref pretrain run --variant {variant}` first")
        model, tok = load_scorer(path, device=device)
        info.update(variant=variant, checkpoint=str(path), selection=why)
    info["pooling"] = model.config.pooling
    info["checkpoint_head"] = model.config.head
    if setting["method"] != "none" and model.config.head != "regression":
        # Fine-tuning regresses ROUGE-2 recall (journal §V-B); the linear layer is the same, only the
        # loss (MSE instead of BCE) and the output (raw instead of sigmoid) change.
        model.config.head = "regression"
        info["head_switched_to_regression"] = True
    return model, tok, info


def score_rows(model, tokenizer, df: pd.DataFrame, model_params: Mapping, progress: bool = False) -> list[np.ndarray]:
    from wikiref.model import score_sentences
    from wikiref.model.training import resolve_device

    device = resolve_device(model_params["device"])
    model.to(device)
    amp = model_params["amp"] and device.type == "cuda"
    pairs = [([str(q) for q in qs], [str(s) for s in ss]) for qs, ss in zip(df["query"], df["doc_sentences"])]
    return score_sentences(
        model, tokenizer, pairs, batch_size=model_params["eval_batch_size"], device=device, amp=amp, progress=progress
    )


def subnet_for(model, setting: Mapping, finetune: Mapping, prune_dir: str | Path | None):
    """The GradientMask of an ST setting (None for full fine-tuning)."""
    from wikiref.model import subnetworks as subnet

    if setting["method"] == "subnet":
        masks = subnet.magnitude_masks(model, finetune["subnet"]["fraction"], finetune["subnet"]["vectors"])
    elif setting["method"] == "iterative":
        masks = subnet.load_masks(Path(prune_dir) / subnet.MASKS_FILE)
    else:
        return None, {}
    stats = subnet.mask_stats(model, masks)
    return subnet.GradientMask(model, masks), stats


# --------------------------------------------------------------------------- one job


def train_and_test(
    params: Mapping,
    setting_name: str,
    year: int,
    year_paths: Mapping[int, str | Path],
    out_dir: str | Path,
    *,
    pretrain_dir: str | Path = layout.PRETRAIN_DIR,
    metrics_dir: str | Path = layout.METRICS,
    prune_dir: str | Path | None = None,
    live_dir: str | Path | None = None,
    progress: bool = True,
) -> tuple[dict, pd.DataFrame, dict]:
    """Fine-tune one setting with ``year`` held out and test on it (the work of :func:`run_job`).

    ``year_paths``: DUC year -> its ``data/duc/<year>.parquet``; ``pretrain_dir`` / ``metrics_dir``: the
    WikiRef checkpoints and their metrics (``pretrained`` settings); ``prune_dir``: the :func:`prune`
    output (``iterative``). Returns (metrics, per-document predictions of the test year, summaries by
    topic). The best dev epoch's weights are in ``out_dir`` (removed again unless ``finetune.keep_models``).
    """
    from wikiref.files import write_json
    from wikiref.model import load_scorer
    from wikiref.model.training import TrainSettings, train

    t_start = time.perf_counter()
    finetune_params, duc, seed = params["finetune"], params["duc"], params["seed"]
    spec = find_setting(finetune_params, setting_name)
    years = sorted(int(y) for y in year_paths)
    if year not in years:
        raise FinetuneError(f"held-out year {year} is not among the DUC years {years}")
    train_years = [y for y in years if y != year]
    if not train_years:
        raise FinetuneError("held-out-year fine-tuning needs at least two DUC years")
    test_df = load_year(year_paths[year])
    out_dir = Path(out_dir)
    model, tok, start = start_model(
        params, spec, pretrain_dir=pretrain_dir, metrics_dir=metrics_dir, prune_dir=prune_dir
    )
    metrics: dict[str, Any] = {
        "setting": setting_name,
        "label": spec["label"],
        "method": spec["method"],
        "year": year,
        "train_years": train_years if spec["method"] != "none" else [],
        "start": start,
        "standin": bool(duc["standin"]),
        "flags": duc["rouge_flags"],
    }
    if spec["method"] != "none":
        pool = pd.concat([load_year(year_paths[y]) for y in train_years], ignore_index=True)
        pool = cap_clusters(pool, finetune_params["max_train_clusters"], seed)
        train_df, dev_df = held_out_split(pool, finetune_params["dev_fraction"], seed + year)
        train_ex, _, train_counts = to_examples(
            train_df,
            max_doc_sentences=finetune_params["max_doc_sentences"],
            target_scale=finetune_params["target_scale"],
        )
        dev_ex, dev_used, dev_counts = to_examples(dev_df, target_scale=finetune_params["target_scale"])
        gradient_mask, mask_stats = subnet_for(model, spec, finetune_params, prune_dir)
        hooks = gradient_mask.hooks() if gradient_mask is not None else {}
        last = out_dir / "last"
        train_settings = TrainSettings.from_params(seed, params["model"], finetune_params, progress)
        result = train(
            model,
            tok,
            train_ex,
            dev_ex,
            train_settings,
            out_dir,
            select_fn=dev_metric_fn(dev_used, duc),
            live_dir=live_dir,
            **hooks,
        )
        if last.exists():
            shutil.rmtree(last)
        if mask_stats:
            write_json(out_dir / "subnet.json", mask_stats)
        model, tok = load_scorer(out_dir)  # the best dev epoch
        metrics.update(
            train_clusters=[f"{y}/{t}" for y, t in _topic_keys(train_df)],
            dev_clusters=[f"{y}/{t}" for y, t in _topic_keys(dev_df)],
            rows={"train": train_counts, "dev": dev_counts},
            subnet=mask_stats,
            training={
                "best_epoch": result.best_epoch,
                "dev_rouge2_recall": result.best_metric,
                "history": result.history,
                "train_seconds": result.train_seconds,
                "windows_per_second": result.windows_per_second,
                "pack_stats": result.pack_stats,
            },
        )
    scores = score_rows(model, tok, test_df, params["model"], progress=progress)
    rouge, summaries = evaluate_year(test_df, scores, duc)
    metrics["test"] = rouge
    metrics["test_topics"] = len(summaries)
    metrics["seconds"] = round(time.perf_counter() - t_start, 2)
    if spec["method"] != "none" and not finetune_params["keep_models"]:
        for f in out_dir.iterdir():
            if f.is_file() and f.name not in MODEL_FILES_KEPT:
                f.unlink()
    preds = pd.DataFrame(
        {
            "id": test_df["id"],
            "topic": test_df["topic"],
            "doc_position": test_df["doc_position"],
            "sentence_scores": [np.asarray(s, dtype=np.float64).tolist() for s in scores],
        }
    )
    return metrics, preds, summaries


def run_job(
    params: Mapping, inputs: Mapping, outputs: Mapping, *, setting: str, year: int, progress: bool = True
) -> dict:
    """One fine-tuning job: ``setting`` with ``year`` held out (:func:`train_and_test`), and its files.

    inputs: ``years`` (every ``duc.years`` year -> its ``data/duc/<year>.parquet``); ``pretrain_dir`` and
    ``pretrain_metrics_dir`` (settings that start from a WikiRef checkpoint: ``models/pretrain``,
    ``results/metrics``); ``pruned_dir`` (method iterative: the :func:`prune` output).
    outputs: ``model_dir`` (training.json, subnet.json; the weights when ``finetune.keep_models``),
    ``predictions`` (Parquet: id, topic, doc_position, sentence_scores per test document),
    ``summaries`` (JSON: topic -> summary sentences), ``metrics`` (JSON), ``live_dir`` (dvclive, optional).
    Returns the metrics.
    """
    import pyarrow as pa

    from wikiref.files import write_json, write_parquet

    spec = find_setting(params["finetune"], setting)
    years = list(params["duc"]["years"])
    if year not in years:
        raise FinetuneError(f"year {year} is not in duc.years {years}")
    paths = {y: inputs["years"].get(y) for y in years}
    missing = [str(path or y) for y, path in paths.items() if path is None or not Path(path).exists()]
    if missing:
        raise FinetuneError(
            f"missing {', '.join(missing)}: run `wikiref duc prepare` (Snakemake rule duc_prepare) first"
        )
    metrics, predictions, summaries = train_and_test(
        params,
        setting,
        year,
        paths,
        outputs["model_dir"],
        pretrain_dir=inputs.get("pretrain_dir", layout.PRETRAIN_DIR),
        metrics_dir=inputs.get("pretrain_metrics_dir", layout.METRICS),
        prune_dir=inputs.get("pruned_dir") if spec["method"] == "iterative" else None,
        live_dir=outputs.get("live_dir"),
        progress=progress,
    )
    write_parquet(outputs["predictions"], pa.Table.from_pandas(predictions, preserve_index=False))
    write_json(outputs["summaries"], summaries)
    write_json(outputs["metrics"], metrics)
    return metrics


# --------------------------------------------------------------------------- iterative pruning on WikiRef


def prune(params: Mapping, inputs: Mapping, outputs: Mapping, *, setting: str, progress: bool = True) -> dict:
    """Table IX "ITERATIVE": train on WikiRef (the oracle splits, the ``pretrain`` section's training
    settings and caps) from the setting's start while pruning the encoder layers gradually (Zhu &
    Gupta) to ``1 - subnet.fraction`` sparsity; the schedule runs from ``iterative.begin`` to
    ``iterative.end`` of the optimizer steps, pruning every ``iterative.frequency`` steps.

    inputs: ``train``, ``dev`` (oracle splits); ``pretrain_dir``, ``pretrain_metrics_dir`` (a setting
    that starts from a WikiRef checkpoint). outputs: ``dir``, which receives the best dev epoch *at final
    sparsity* + ``subnet_masks.safetensors`` + ``pruning.json``. Returns the pruning record.
    """
    from wikiref.files import write_json
    from wikiref.model import load_scorer
    from wikiref.model import subnetworks as subnet
    from wikiref.model.training import TrainSettings, epoch_batches, pack_examples, train
    from wikiref.stages import pretrain

    finetune_params, pre, seed = params["finetune"], params["pretrain"], params["seed"]
    spec = find_setting(finetune_params, setting)
    if spec["method"] != "iterative":
        raise FinetuneError(f"setting {setting} is not an iterative-pruning setting (method {spec['method']})")
    # The starting point, before any pruning, with its own head: the WikiRef run continues the
    # checkpoint's objective (oracle labels for classification, oracle scores for regression).
    start_spec = dict(spec, method="none")
    model, tok, start = start_model(
        params,
        start_spec,
        pretrain_dir=inputs.get("pretrain_dir", layout.PRETRAIN_DIR),
        metrics_dir=inputs.get("pretrain_metrics_dir", layout.METRICS),
    )
    head = model.config.head
    train_df, _ = pretrain.read_split(inputs["train"], pre["max_train_examples"], seed)
    dev_df, _ = pretrain.read_split(inputs["dev"], pre["max_eval_examples"], seed)
    train_ex, dev_ex = pretrain.to_examples(train_df, head), pretrain.to_examples(dev_df, head)
    train_settings = TrainSettings.from_params(seed, params["model"], pre, progress)
    windows, _ = pack_examples(model.config, tok, train_ex)
    n_batches = len(epoch_batches(windows, train_settings.batch_size, train_settings.bucket_batches, seed, 0))
    total = math.ceil(n_batches / train_settings.grad_accum_steps) * train_settings.epochs
    iterative = finetune_params["iterative"]
    schedule = subnet.schedule_from_fractions(
        total,
        1.0 - finetune_params["subnet"]["fraction"],
        begin=iterative["begin"],
        end=iterative["end"],
        frequency=iterative["frequency"],
        initial_sparsity=iterative["initial_sparsity"],
    )
    pruner = subnet.MagnitudePruner(model, schedule, finetune_params["subnet"]["vectors"])
    base_fn = pretrain.dev_rouge2_fn(dev_df, pre)

    def select(scores):
        # An epoch that has not reached the final sparsity is chosen only if none has.
        return base_fn(scores) - (0.0 if pruner.done else 1e6)

    out_dir = Path(outputs["dir"])
    if (out_dir / "last").exists():
        shutil.rmtree(out_dir / "last")  # the pruner's step count is not part of the resumable state
    result = train(model, tok, train_ex, dev_ex, train_settings, out_dir, select_fn=select, **pruner.hooks())
    if not pruner.done:
        raise RuntimeError(
            f"pruning schedule did not finish ({pruner.current_sparsity:.3f} < "
            f"{schedule.final_sparsity:.3f}); check finetune.iterative"
        )
    best, _ = load_scorer(out_dir)
    params_best = dict(best.named_parameters())
    leaked = [n for n, m in pruner.masks.items() if int((params_best[n].detach()[~m.cpu()] != 0).sum())]
    if leaked:
        raise RuntimeError(f"the saved epoch has non-zero pruned entries in {leaked[:3]}")
    subnet.save_masks(out_dir / subnet.MASKS_FILE, pruner.masks, {"final_sparsity": str(schedule.final_sparsity)})
    info = {
        "setting": setting,
        "start": start,
        "schedule": {
            "final_sparsity": schedule.final_sparsity,
            "initial_sparsity": schedule.initial_sparsity,
            "begin_step": schedule.begin_step,
            "n_steps": schedule.n_steps,
            "frequency": schedule.frequency,
            "end_step": schedule.end_step,
            "total_steps": total,
        },
        "pruning_steps": pruner.history,
        "best_epoch": result.best_epoch,
        "dev_rouge2_f1": result.best_metric,
        "masks": subnet.mask_stats(best, pruner.masks),
        "train_seconds": result.train_seconds,
    }
    write_json(out_dir / "pruning.json", info)
    return info


# --------------------------------------------------------------------------- Table VI


def _group(m: Mapping) -> str:
    start = m["start"]
    if start["init"] == "encoder":
        return "without DA"
    return f"{start.get('checkpoint_head', '?')} pre-training"


def table6(
    baselines: Mapping,
    job_metrics: Mapping[str, Mapping[int, Mapping]],
    setting_specs: Sequence[Mapping],
    years: Sequence[int],
) -> pd.DataFrame:
    """Rows: LEAD, QUERY-SIM, the settings in params order, ORACLE; columns: <year> R-1/R-2/R-SU4 recall x 100."""
    from wikiref.stages.duc.baselines import SYSTEMS

    def cells(per_year: Mapping) -> dict:
        row = {}
        for y in years:
            m = per_year[str(y)] if str(y) in per_year else per_year[y]
            for meas in MEASURES:
                row[f"{y} {meas.replace('ROUGE-', 'R-')}"] = round(100 * float(m[meas]["R"]), 2)
        return row

    rows = []
    base = baselines.get("systems", {})
    for key in ("lead", "query_sim"):
        if key in base:
            rows.append({"System": SYSTEMS[key], "Group": "baseline", **cells(base[key])})
    for s in setting_specs:
        per = job_metrics[s["name"]]
        first = per[years[0]]
        variant = first["start"].get("variant")
        rows.append(
            {
                "System": s["label"],
                "Group": _group(first) + (f" ({variant})" if variant else ""),
                **cells({y: per[y]["test"] for y in years}),
            }
        )
    if "oracle" in base:
        rows.append({"System": SYSTEMS["oracle"], "Group": "upper bound", **cells(base["oracle"])})
    return pd.DataFrame(rows)


def recall_x100(scores: Mapping) -> dict[str, float]:
    """R-1 / R-2 / R-SU4 recall of one official-scorer result (``{measure: {"R": ...}}``) x 100."""
    return {meas: round(100 * float(scores[meas]["R"]), 4) for meas in MEASURES}


def summary_metrics(
    job_metrics: Mapping[str, Mapping[int, Mapping]],
    setting_specs: Sequence[Mapping],
    years: Sequence[int],
    baselines: Mapping,
) -> dict:
    """Per setting and year R-1/R-2/R-SU4 recall (x 100) and their means; the DA and ST comparisons
    that the configured settings allow (mean R-2 over the years, with the per-year signs)."""
    out: dict[str, Any] = {"years": list(years), "settings": {}}
    r2: dict[str, list[float]] = {}
    for s in setting_specs:
        per = job_metrics[s["name"]]
        entry: dict[str, Any] = {"label": s["label"], "method": s["method"], "init": s["init"], "years": {}}
        for y in years:
            m = per[y]
            entry["years"][str(y)] = {
                **recall_x100(m["test"]),
                "seconds": m.get("seconds"),
                "best_epoch": m.get("training", {}).get("best_epoch"),
                "start_variant": m["start"].get("variant"),
            }
        for meas in MEASURES:
            entry[f"mean_{meas}"] = round(float(np.mean([entry["years"][str(y)][meas] for y in years])), 4)
        entry["seconds_total"] = round(float(sum(per[y].get("seconds") or 0.0 for y in years)), 2)
        out["settings"][s["name"]] = entry
        r2[s["name"]] = [entry["years"][str(y)]["ROUGE-2"] for y in years]
    base = baselines.get("systems", {})
    out["baselines_mean_ROUGE-2"] = {
        k: round(float(np.mean([100 * float(v[str(y)]["ROUGE-2"]["R"]) for y in years])), 4)
        for k, v in base.items()
        if all(str(y) in v for y in years)
    }

    def compare(a: str, b: str, what: str) -> dict:
        d = [x - y for x, y in zip(r2[a], r2[b])]
        return {
            "what": what,
            "setting": a,
            "reference": b,
            "mean_delta_ROUGE-2": round(float(np.mean(d)), 4),
            "years_better": int(sum(x > 0 for x in d)),
            "years": len(d),
            "helps": bool(np.mean(d) > 0),
        }

    def start_of(name: str) -> Mapping:
        return job_metrics[name][years[0]]["start"]

    cmps = []
    by = {s["name"]: s for s in setting_specs}
    for a, sa in by.items():
        for b, sb in by.items():
            if a == b:
                continue
            # +DA: fine-tuned from a WikiRef checkpoint vs the encoder alone with the same pooling.
            if (
                sa["init"] == "pretrained"
                and sa["method"] == "full"
                and sb["init"] == "encoder"
                and sb["method"] == "full"
                and start_of(a)["pooling"] == start_of(b)["pooling"]
            ):
                cmps.append(compare(a, b, "data augmentation (+DA)"))
            # ST: the same start, subnetwork vs every weight.
            if (
                sa["method"] in ("subnet", "iterative")
                and sb["method"] == "full"
                and sa["init"] == sb["init"]
                and sa.get("variant") == sb.get("variant")
                and sa.get("pooling") == sb.get("pooling")
            ):
                cmps.append(compare(a, b, f"subnetwork fine-tuning ({sa['method']})"))
            # Fine-tuning the checkpoint vs applying it as is.
            if (
                sa["method"] == "full"
                and sb["method"] == "none"
                and sa["init"] == "pretrained"
                and start_of(a).get("variant") == start_of(b).get("variant")
            ):
                cmps.append(compare(a, b, "fine-tuning vs DA PRE-TRAINED"))
    out["comparisons"] = cmps
    return out


def table6_notes(params: Mapping, summary: Mapping) -> str:
    """The notes under Table VI: how the jobs trained and scored, the comparisons the settings allow."""
    dp, fp = params["duc"], params["finetune"]
    notes = (
        f"Each year is tested with a model fine-tuned on the other years (epoch chosen on a held-out "
        f"{fp['dev_fraction']:.0%} of their clusters; regression on each sentence's ROUGE-2 recall); sentences "
        f"scored per (query, document), ranked across the cluster, <= {dp['summary_words']} words, bigram "
        f"redundancy > {dp['select']['max_bigram_overlap']} skipped. DA = started from a WikiRef pre-trained "
        f"checkpoint (Group: its pre-training head and variant); DA PRE-TRAINED = that checkpoint without "
        f"fine-tuning; ST = only the top {fp['subnet']['fraction']:.0%} by magnitude of each encoder-layer tensor "
        f"trained. Epochs {fp['epochs']}, batch {fp['batch_size']}, lr {fp['lr']}, train clusters per year cap "
        f"{fp['max_train_clusters']}, document sentences cap {fp['max_doc_sentences']}."
    )
    for c in summary["comparisons"]:
        notes += (
            f" {c['what']}: {c['setting']} vs {c['reference']} mean R-2 {c['mean_delta_ROUGE-2']:+.2f} "
            f"({c['years_better']}/{c['years']} years better)."
        )
    if dp["standin"]:
        notes += " STAND-IN: the topics, documents and references are built from Wikipedia, not NIST DUC."
    return notes


def job_metrics_file(metrics_dir: str | Path, setting: str, year: int) -> Path:
    """``<metrics_dir>/duc_<setting>_<year>.json`` (named as in :data:`wikiref.layout.FINETUNE_JOB_METRICS`)."""
    return layout.in_folder(metrics_dir, layout.FINETUNE_JOB_METRICS, setting=setting, year=year)


def table(params: Mapping, inputs: Mapping, outputs: Mapping) -> dict:
    """Table VI and the stage's metrics. inputs: ``job_metrics`` (setting name -> DUC year -> the metrics
    JSON of that job, for every setting and ``duc.years`` year), ``baselines`` (the duc stage's
    ``results/metrics/duc_baselines.json``); outputs: ``table`` (stem of the .csv/.md/.tex), ``summary``
    (JSON). The caption says STAND-IN when ``duc.standin``. Returns the summary."""
    from wikiref.files import read_json, write_json
    from wikiref.tables import write_table

    dp = params["duc"]
    years = sorted(dp["years"])
    chosen = list(settings(params["finetune"]).values())
    jobs: dict = {}
    for s in chosen:
        for y in years:
            path = inputs["job_metrics"].get(s["name"], {}).get(y)
            if path is None or not Path(path).exists():
                raise FinetuneError(
                    f"missing {path or 'the metrics file'} of setting {s['name']}, year {y}: run "
                    f"`wikiref finetune run --setting {s['name']} --year {y}` first"
                )
            jobs.setdefault(s["name"], {})[y] = read_json(path)
    if not Path(inputs["baselines"]).exists():
        raise FinetuneError(f"missing {inputs['baselines']}: run `wikiref duc baselines` first")
    baselines = read_json(inputs["baselines"])
    df = table6(baselines, jobs, chosen, years)
    summary = summary_metrics(jobs, chosen, years, baselines)
    kind = "STAND-IN pseudo-years" if dp["standin"] else "DUC"
    title = (
        f"Table VI: ROUGE recall x 100 on {kind} {', '.join(map(str, years))} (held-out-year fine-tuning), "
        f"official ROUGE-1.5.5 scoring ({dp['rouge_flags']})"
    )
    encoder = params["model"]["encoder"]
    write_table(
        df,
        outputs["table"],
        title=title,
        profile=params["profile"],
        encoder=encoder,
        notes=table6_notes(params, summary),
    )
    summary.update(profile=params["profile"]["name"], standin=bool(dp["standin"]), encoder=encoder)
    write_json(outputs["summary"], summary)
    return summary
