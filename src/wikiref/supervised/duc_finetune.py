"""Held-out-year fine-tuning of the sentence scorer on DUC (``data/duc/<year>.parquet``): the fine-tuning
settings, a year's table, capped and held-out clusters, (query, document) examples with their sentence
targets, the starting model of a setting (encoder or WikiRef checkpoint, subnetworks), one fine-tune-and-test
run (:func:`train_and_test`) and gradual pruning on WikiRef (:func:`prune`). Used by the finetune, ablations and compare stages.
"""

from __future__ import annotations

import logging
import math
import shutil
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from wikiref import layout
from wikiref.config import by_name, find_named
from wikiref.extractive.selection import mmr_choices
from wikiref.schemas import SchemaError, require_columns
from wikiref.supervised.duc_summaries import dev_metric_fn, evaluate_year, held_out_rule

log = logging.getLogger(__name__)

INITS = ("encoder", "pretrained")
METHODS = ("full", "subnet", "iterative", "none", "ltr")
MEASURES = ("ROUGE-1", "ROUGE-2", "ROUGE-SU4")
MODEL_FILES_KEPT = ("training.json", "subnet.json", "target.json")
# The columns of data/duc/<year>.parquet (wikiref.schemas.DUC) a job reads.
DUC_COLUMNS_READ = ("id", "year", "topic", "query", "doc_position", "doc_sentences", "sentence_targets", "references")


class FinetuneError(ValueError):
    """Bad input of a fine-tuning job: a setting that makes no sense, an unknown setting or year, a missing file."""


def _check_setting(s: Mapping) -> None:
    name = s["name"]
    if s["init"] not in INITS:
        raise FinetuneError(f"setting {name}: init {s['init']!r} not in {INITS}")
    if s["method"] not in METHODS:
        raise FinetuneError(f"setting {name}: method {s['method']!r} not in {METHODS}")
    if s["init"] == "encoder" and s["method"] == "none":
        raise FinetuneError(f"setting {name}: method none (no fine-tuning) needs init: pretrained")
    if s["method"] == "ltr" and not (s.get("ltr") or {}).get("targets"):
        raise FinetuneError(f"setting {name}: method ltr needs ltr.targets (target transforms)")
    if s["init"] == "encoder" and not s.get("pooling") and s["method"] != "ltr":
        raise FinetuneError(f"setting {name}: init encoder needs a pooling (cls = BERT, query = Q-BERT)")
    if s["init"] == "pretrained" and not s.get("variant"):
        raise FinetuneError(f"setting {name}: init pretrained needs variant (a pretrain.variants name or 'best')")
    if s.get("interpolate") and s["method"] in ("none", "ltr"):
        raise FinetuneError(f"setting {name}: interpolate needs a fine-tuning method (full, subnet, iterative)")
    if s.get("encoder") and (s["init"] != "encoder" or s["method"] not in ("full", "subnet")):
        raise FinetuneError(
            f"setting {name}: encoder (instead of model.encoder) needs init: encoder, method full|subnet"
        )


def settings(finetune: Mapping) -> dict[str, dict]:
    """``finetune.settings`` by name, checked."""
    return by_name(finetune["settings"], "finetune setting", FinetuneError, _check_setting)


def find_setting(finetune: Mapping, name: str) -> dict:
    """The ``finetune.settings`` entry called ``name``."""
    return find_named(settings(finetune), name, "setting", "finetune.settings", FinetuneError)


RECIPE_KEYS = ("loss", "target", "lr", "head_lr_scale", "epochs", "batch_size")


def setting_params(params: Mapping, setting: Mapping) -> Mapping:
    """``params`` with the setting's ``recipe`` (its own values of some finetune keys) merged into the finetune
    section; ``params`` itself when the setting has none."""
    recipe = setting.get("recipe") or {}
    unknown = sorted(set(recipe) - set(RECIPE_KEYS))
    if unknown:
        raise FinetuneError(f"setting {setting['name']}: recipe keys {unknown} not in {list(RECIPE_KEYS)}")
    return {**params, "finetune": {**params["finetune"], **recipe}} if recipe else params


def candidate_variants(setting: Mapping, pretrain: Mapping) -> list[str]:
    """Pretrain variants a ``pretrained`` setting may start from (one, or the candidates of ``best``)."""
    if setting["init"] != "pretrained":
        return []
    from wikiref.supervised.pretraining import variants

    known = variants(pretrain)
    v, pairing = setting["variant"], setting.get("pairing", "cross")
    if v != "best":
        if v not in known:
            raise FinetuneError(
                f"setting {setting['name']}: variant {v!r} is not in pretrain.variants ({', '.join(known)})"
            )
        if (theirs := known[v].get("pairing", "cross")) != pairing:
            raise FinetuneError(
                f"setting {setting['name']} (pairing {pairing}): variant {v} is a {theirs}-pairing scorer"
            )
        return [v]
    out = [
        n
        for n, spec in known.items()
        if spec["init"] == "pretrained"
        and spec["query"]
        and spec.get("pairing", "cross") == pairing
        and (not setting.get("pooling") or spec["pooling"] == setting["pooling"])
        and (not setting.get("pretrain_head") or spec["head"] == setting["pretrain_head"])
    ]
    if not out:
        raise FinetuneError(
            f"setting {setting['name']}: no pretrain variant with a pretrained encoder, the query, pairing {pairing}"
            f"{' and pooling ' + setting['pooling'] if setting.get('pooling') else ''}"
            f"{' and head ' + setting['pretrain_head'] if setting.get('pretrain_head') else ''}"
        )
    return out


@dataclass(frozen=True)
class Start:
    """What a setting starts from: ``checkpoints`` (init pretrained: variant -> the folder of its WikiRef
    checkpoint, for every candidate variant), ``variant_metrics`` (variant -> its ``pretrain_<variant>.json``,
    which ``variant: best`` compares) and ``pruned`` (method iterative: the folder of the :func:`prune`
    output). Empty for a setting that starts from the encoder. :func:`start_from_files` reads it off a
    job's start files."""

    checkpoints: Mapping[str, Path] = field(default_factory=dict)
    variant_metrics: Mapping[str, Path] = field(default_factory=dict)
    pruned: Path | None = None


def start_from_files(files: Iterable[str | Path]) -> Start:
    """The :class:`Start` of the files a job starts from (a rule's declared start files): the folder of each
    ``model.safetensors`` is a checkpoint, named by its folder (the variant, or the cell id); a folder that also
    holds ``subnet_masks.safetensors`` is the pruned model instead; each ``pretrain_<variant>.json`` is that
    variant's pre-training metrics."""
    from wikiref.model.subnetworks import MASKS_FILE

    prefix, suffix = Path(layout.PRETRAIN_VARIANT_METRICS).name.split("{variant}")
    paths = [Path(f) for f in files]
    masks = {p.parent for p in paths if p.name == MASKS_FILE}
    checkpoints = {
        p.parent.name: p.parent for p in paths if p.name == layout.CHECKPOINT_WEIGHTS and p.parent not in masks
    }
    metrics = {
        p.name[len(prefix) : len(p.name) - len(suffix)]: p
        for p in paths
        if p.name.startswith(prefix) and p.name.endswith(suffix) and len(p.name) > len(prefix) + len(suffix)
    }
    if len(masks) > 1:
        raise FinetuneError(f"more than one pruned model among the start files: {sorted(map(str, masks))}")
    return Start(checkpoints, metrics, next(iter(masks), None))


def resolve_variant(setting: Mapping, pretrain: Mapping, variant_metrics: Mapping[str, str | Path]) -> tuple[str, dict]:
    """The variant to start from and why: ``best`` -> highest dev ROUGE-2 (ties: name) among the candidates'
    metrics files (``variant_metrics``: variant -> its ``pretrain_<variant>.json``)."""
    from wikiref.files import read_json

    cands = candidate_variants(setting, pretrain)
    if setting["variant"] != "best":
        return cands[0], {"rule": "named"}
    dev = {}
    for name in cands:
        path = variant_metrics.get(name)
        if path is None or not Path(path).exists():
            missing = path or Path(layout.PRETRAIN_VARIANT_METRICS).name.format(variant=name)
            given = "" if path else " (not among the given files)"
            raise FinetuneError(
                f"{missing} missing{given}: run `wikiref pretrain run --variant {name}` (pretrain stage)"
            )
        dev[name] = float(read_json(path)["dev"]["rouge2"])
    best = max(sorted(dev), key=lambda n: dev[n])
    return best, {"rule": "best dev ROUGE-2 F1 on WikiRef", "candidates_dev_rouge2": dev}


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


def held_out_clusters(
    params: Mapping, year: int, train_paths: Sequence[str | Path]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(train, dev) of a held-out-year run: the other years' clusters (``train_paths``), capped at
    ``finetune.max_train_clusters``, a seeded ``finetune.dev_fraction`` of them held out."""
    finetune_params, seed = params["finetune"], params["seed"]
    pool = pd.concat([load_year(p) for p in train_paths], ignore_index=True)
    pool = cap_clusters(pool, finetune_params["max_train_clusters"], seed)
    return held_out_split(pool, finetune_params["dev_fraction"], seed + year)


def to_examples(df: pd.DataFrame, *, max_doc_sentences: int | None = None) -> tuple[list, pd.DataFrame, dict]:
    """ScoringExamples for the rows that have sentences, their targets the raw ROUGE values
    (:func:`wikiref.model.targets.apply_targets` transforms them); returns (examples, the rows used, counts)."""
    from wikiref.model.scoring_task import ScoringExample

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
        targets = [float(t) for t in r.sentence_targets]
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
                targets=targets,
                id=str(r.id),
            )
        )
    if counts["empty_documents"]:
        log.warning("%d of %d documents have no sentences (skipped)", counts["empty_documents"], counts["rows"])
    return out, used, counts


def _require_checkpoint(path: str | Path, hint: str) -> None:
    if not (Path(path) / "config.json").exists():
        raise FinetuneError(f"no model in {path}: {hint}")


def start_model(
    params: Mapping,
    setting: Mapping,
    *,
    start: Start | None = None,
    device="cpu",
) -> tuple[Any, Any, dict]:
    """The model a setting starts from (out of ``start``: the checkpoints, their metrics, the pruned model;
    none for a setting that starts from the encoder), its tokenizer, and a description of where it came from."""
    import torch

    from wikiref.model import build_scorer, load_scorer
    from wikiref.supervised.pretraining import scorer_config

    start = start or Start()
    info: dict[str, Any] = {"init": setting["init"]}
    pairing = setting.get("pairing", "cross")
    if pairing != "cross" and setting["method"] == "iterative":
        raise FinetuneError(
            f"setting {setting['name']}: pairing {pairing} cannot use method iterative (its subnetwork comes from a "
            "cross-pairing WikiRef run)"
        )
    if setting["method"] == "iterative":
        prune_dir = start.pruned
        if prune_dir is None:
            raise FinetuneError(
                f"setting {setting['name']}: method iterative needs the pruned model "
                "(--start its files, or --prune-dir)"
            )
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
        spec["encoder"] = setting.get("encoder")  # None: model.encoder
        model, tok = build_scorer(scorer_config(params["model"], spec, pairing=pairing))
    else:
        variant, why = resolve_variant(setting, params["pretrain"], start.variant_metrics)
        if variant not in start.checkpoints:
            raise FinetuneError(
                f"setting {setting['name']}: no checkpoint of variant {variant} among the start files: "
                f"run `wikiref pretrain run --variant {variant}` first and give its files"
            )
        path = Path(start.checkpoints[variant])
        _require_checkpoint(path, f"run `wikiref pretrain run --variant {variant}` first")
        model, tok = load_scorer(path, device=device)
        info.update(variant=variant, checkpoint=str(path), selection=why)
    info.setdefault("encoder", model.config.encoder)
    if model.config.pairing != "cross":
        info["pairing"] = model.config.pairing
    info["pooling"] = model.config.pooling
    info["checkpoint_head"] = model.config.head
    if setting["method"] != "none" and model.config.use_loss(params["finetune"]["loss"]):
        # Fine-tuning regresses ROUGE-2 recall (journal §V-B) or ranks by it (finetune.loss); the linear
        # layer is the same, only the loss and the output (raw instead of sigmoid) change. loss: bce keeps
        # / switches to the classification head.
        info[f"head_switched_to_{model.config.head}"] = True
    return model, tok, info


def score_rows(model, tokenizer, df: pd.DataFrame, model_params: Mapping, progress: bool = False) -> list[np.ndarray]:
    from wikiref.supervised.pretraining import score_examples

    pairs = [([str(q) for q in qs], [str(s) for s in ss]) for qs, ss in zip(df["query"], df["doc_sentences"])]
    return score_examples(model, tokenizer, pairs, model_params, progress)


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


def training_examples(finetune: Mapping, train_df: pd.DataFrame, dev_df: pd.DataFrame):
    """(train examples, dev examples, the dev rows used, row counts, the fitted target transform or None):
    :func:`to_examples` (training documents capped), then ``finetune.loss`` / ``finetune.target``
    (:func:`wikiref.model.targets.apply_targets`; a document's cluster is its ranking group)."""
    from wikiref.model.targets import apply_targets

    train_ex, train_used, train_counts = to_examples(train_df, max_doc_sentences=finetune["max_doc_sentences"])
    dev_ex, dev_used, dev_counts = to_examples(dev_df)
    groups = [[str(t) for t in used["topic"]] for used in (train_used, dev_used)]
    transform = apply_targets(finetune, train_ex, dev_ex, *groups)
    return train_ex, dev_ex, dev_used, {"train": train_counts, "dev": dev_counts}, transform


def train_and_test(
    params: Mapping,
    setting_name: str,
    year: int,
    year_paths: Mapping[int, str | Path],
    out_dir: str | Path,
    *,
    start: Start | None = None,
    live_dir: str | Path | None = None,
    progress: bool = True,
) -> tuple[dict, pd.DataFrame, dict]:
    """Fine-tune one setting with ``year`` held out and test on it (the work of :func:`run_job`).

    ``year_paths``: DUC year -> its ``data/duc/<year>.parquet``; ``start``: what the setting starts from
    (:class:`Start`: the WikiRef checkpoints and their metrics of ``pretrained`` settings, the :func:`prune`
    output of ``iterative`` ones; none for the encoder). Returns (metrics, per-document predictions of the
    test year, summaries by topic). The best dev epoch's weights are in ``out_dir`` (removed again unless
    ``finetune.keep_models``).
    """
    from wikiref.extractive.official import paired_difference
    from wikiref.model.interpolation import snapshot

    t_start = time.perf_counter()
    spec = find_setting(params["finetune"], setting_name)
    params = setting_params(params, spec)  # the setting's recipe (if any) in the finetune section from here on
    finetune_params, duc = params["finetune"], params["duc"]
    train_years = _train_years(year, year_paths)
    test_df = load_year(year_paths[year])
    out_dir = Path(out_dir)
    start = start or Start()
    if spec["method"] == "ltr":
        return _ltr_held_out(params, spec, year, year_paths, test_df, out_dir, t_start, start, progress)
    model, tok, start_info = start_model(params, spec, start=start)
    metrics: dict[str, Any] = {
        "setting": setting_name,
        "label": spec["label"],
        "method": spec["method"],
        "year": year,
        "train_years": train_years if spec["method"] != "none" else [],
        "start": start_info,
        "standin": bool(duc["standin"]),
        "flags": duc["rouge_flags"],
    }
    start_state = start_scores = None
    if spec.get("interpolate"):  # the weights before training, and their test-year scores
        start_state = snapshot(model)
        start_scores = score_rows(model, tok, test_df, params["model"])
    train_paths = [year_paths[y] for y in train_years]
    if spec["method"] == "none" and mmr_choices(duc["select"]):  # not trained: the weight chosen on the dev clusters
        dev_df = held_out_clusters(params, year, train_paths)[1]
        duc, metrics["select"] = held_out_rule(duc, dev_df, lambda df: score_rows(model, tok, df, params["model"]))
    elif spec["method"] != "none":
        model, tok, trained, duc = _finetune_held_out(
            params,
            spec,
            model,
            tok,
            year,
            train_paths,
            out_dir,
            prune_dir=start.pruned,
            live_dir=live_dir,
            progress=progress,
            start_state=start_state,
        )
        metrics.update(trained)
    scores = score_rows(model, tok, test_df, params["model"], progress=progress)
    rouge, summaries = evaluate_year(test_df, scores, duc)
    metrics["test"] = rouge
    if start_scores is not None:  # the interpolated scorer against its start, by the same summary rule
        start_r2 = evaluate_year(test_df, start_scores, duc)[0]["ROUGE-2"]["per_topic_R"]
        metrics["paired_vs_start"] = paired_difference(rouge["ROUGE-2"]["per_topic_R"], start_r2)
    metrics["test_topics"] = len(summaries)
    metrics["seconds"] = round(time.perf_counter() - t_start, 2)
    if spec["method"] != "none" and not finetune_params["keep_models"]:
        for f in out_dir.iterdir():
            if f.is_file() and f.name not in MODEL_FILES_KEPT:
                f.unlink()
    return metrics, predictions(test_df, scores), summaries


def predictions(test_df: pd.DataFrame, scores: Sequence[Sequence[float]]) -> pd.DataFrame:
    """The predictions file's rows: id, topic, doc_position and the sentence scores of each test document."""
    return pd.DataFrame(
        {
            "id": test_df["id"],
            "topic": test_df["topic"],
            "doc_position": test_df["doc_position"],
            "sentence_scores": [np.asarray(s, dtype=np.float64).tolist() for s in scores],
        }
    )


def _ltr_held_out(
    params: Mapping,
    spec: Mapping,
    year: int,
    year_paths: Mapping[int, str | Path],
    test_df: pd.DataFrame,
    out_dir: Path,
    t_start: float,
    start: Start,
    progress: bool,
) -> tuple[dict, pd.DataFrame, dict]:
    """:func:`train_and_test` of a ``method: ltr`` setting (:mod:`wikiref.supervised.ltr_scoring`): the ranker
    fitted on the other years' clusters (capped like fine-tuning; the target transform chosen on the held-out
    clusters), and the encoder's own cosine scored beside it on the test year with a paired comparison. With
    ``init: pretrained`` the pre-trained scorer's sentence scores (:func:`start_model` of the setting's variant,
    not fine-tuned) are one more signal of every sentence: the papers' recipe, augmentation data first, with
    the ranker in place of fine-tuning."""
    from wikiref.extractive.official import paired_difference
    from wikiref.files import write_json
    from wikiref.model.training import resolve_device
    from wikiref.supervised import ltr_scoring as ls

    finetune_params, duc, seed = params["finetune"], params["duc"], int(params["seed"])
    train_years = _train_years(year, year_paths)
    train_df, dev_df = held_out_clusters(params, year, [year_paths[y] for y in train_years])
    encoder = ls.encoder_name(spec["ltr"], params["model"])
    device = str(resolve_device(params["model"]["device"]))
    embedder = ls.Embedder(encoder, device=device, seed=seed)
    start_info: dict[str, Any] = {"init": "encoder", "encoder": encoder, "pooling": "mean (embeddings, untrained)"}
    signal = None
    if spec["init"] == "pretrained":
        model, tok, scorer_info = start_model(params, {**spec, "method": "none"}, start=start, device=device)
        start_info = {**scorer_info, "encoder": encoder, "signal": "the start scorer's sentence scores"}

        def signal(df: pd.DataFrame) -> list[np.ndarray]:
            return score_rows(model, tok, df, params["model"], progress=progress)

    scores, cos_scores, record = ls.fit_and_score_clusters(
        train_df,
        dev_df,
        test_df,
        embedder,
        ls.ranker_settings(spec["ltr"], seed),
        dev_metric_fn(dev_df, duc),  # mean ROUGE-2 recall x 100 of the held-out clusters' summaries
        max_doc_sentences=finetune_params["max_doc_sentences"],
        signal=signal,
        held_out_scores=bool(mmr_choices(duc["select"])),
    )
    held_out = record.pop("dev_scores", {})  # the ranker's and the cosine's: each chooses its MMR weight on them
    rule, chosen = held_out_rule(duc, dev_df, lambda _: held_out["ranker"])
    cos_rule, cos_chosen = held_out_rule(duc, dev_df, lambda _: held_out["cosine"])
    rouge, summaries = evaluate_year(test_df, scores, rule)
    cos_rouge, _ = evaluate_year(test_df, cos_scores, cos_rule)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_json(out_dir / "ranker.json", record)
    metrics = {
        "setting": spec["name"],
        "label": spec["label"],
        "method": "ltr",
        "year": year,
        "train_years": train_years,
        "start": start_info,
        "standin": bool(duc["standin"]),
        "flags": duc["rouge_flags"],
        "train_clusters": [f"{y}/{t}" for y, t in _topic_keys(train_df)],
        "dev_clusters": [f"{y}/{t}" for y, t in _topic_keys(dev_df)],
        "training": record,
        "test": rouge,
        "test_topics": len(summaries),
        "cosine": {"label": f"COSINE ({encoder}, untrained)", "test": cos_rouge},
        "paired_vs_cosine": paired_difference(
            rouge["ROUGE-2"]["per_topic_R"], cos_rouge["ROUGE-2"]["per_topic_R"], seed=seed
        ),
        "seconds": round(time.perf_counter() - t_start, 2),
    }
    if chosen:  # the MMR weight each row's summaries took
        metrics["select"], metrics["cosine"]["select"] = chosen, cos_chosen
    return metrics, predictions(test_df, scores), summaries


def _train_years(year: int, year_paths: Mapping[int, str | Path]) -> list[int]:
    """The DUC years a held-out-year run trains on (every year but ``year``); an error when there are none."""
    years = sorted(int(y) for y in year_paths)
    if year not in years:
        raise FinetuneError(f"held-out year {year} is not among the DUC years {years}")
    train_years = [y for y in years if y != year]
    if not train_years:
        raise FinetuneError("held-out-year fine-tuning needs at least two DUC years")
    return train_years


def _finetune_held_out(
    params: Mapping,
    spec: Mapping,
    model,
    tok,
    year: int,
    train_paths: Sequence[str | Path],
    out_dir: Path,
    *,
    prune_dir: str | Path | None,
    live_dir: str | Path | None,
    progress: bool,
    start_state: Mapping | None = None,
) -> tuple[Any, Any, dict]:
    """The fine-tuning of :func:`train_and_test`: ``model`` trained on the clusters of the other years
    (``train_paths``; capped, a seeded dev part held out), the setting's subnetwork mask applied, the best dev
    epoch kept in ``out_dir`` (with the setting's ``interpolate``, moved towards ``start_state``, the weights before
    training, as far as the dev clusters prefer). Returns (that model, its tokenizer, the metrics it adds: clusters,
    rows, subnetwork, training, interpolation, the MMR weight chosen; ``duc`` with its summary rule fixed for this
    model, :func:`wikiref.supervised.duc_summaries.held_out_rule`)."""
    from wikiref.files import write_json
    from wikiref.model import load_scorer
    from wikiref.model.interpolation import choose
    from wikiref.model.scorer import save_scorer
    from wikiref.model.targets import save_transform
    from wikiref.model.training import TrainSettings, train

    finetune_params, duc, seed = params["finetune"], params["duc"], params["seed"]
    train_df, dev_df = held_out_clusters(params, year, train_paths)
    train_ex, dev_ex, dev_used, counts, transform = training_examples(finetune_params, train_df, dev_df)
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
    if transform is not None and transform.name != "raw":  # raw x scale has no statistics to keep
        save_transform(transform, out_dir)
    model, tok = load_scorer(out_dir)  # the best dev epoch
    if start_state is not None:  # moved to the start-to-fine-tuned point with the best dev metric, saved over it
        select = dev_metric_fn(dev_used, duc)
        choice = choose(
            model, start_state, spec["interpolate"], lambda m: select(score_rows(m, tok, dev_used, params["model"]))
        )
        save_scorer(model, tok, out_dir)
    trained = {
        "train_clusters": [f"{y}/{t}" for y, t in _topic_keys(train_df)],
        "dev_clusters": [f"{y}/{t}" for y, t in _topic_keys(dev_df)],
        "rows": counts,
        "subnet": mask_stats,
        "training": {
            "best_epoch": result.best_epoch,
            "dev_rouge2_recall": result.best_metric,
            "history": result.history,
            "train_seconds": result.train_seconds,
            "windows_per_second": result.windows_per_second,
            "pack_stats": result.pack_stats,
        },
    }
    if start_state is not None:
        trained["interpolation"] = choice.to_dict()
    duc, chosen = held_out_rule(duc, dev_used, lambda df: score_rows(model, tok, df, params["model"]))
    trained.update({"select": chosen} if chosen else {})
    return model, tok, trained, duc


def prune(params: Mapping, inputs: Mapping, outputs: Mapping, *, setting: str, progress: bool = True) -> dict:
    """Table IX "ITERATIVE": train on WikiRef (the oracle splits, the ``pretrain`` section's training
    settings and caps) from the setting's start while pruning the encoder layers gradually (Zhu &
    Gupta) to ``1 - subnet.fraction`` sparsity; the schedule runs from ``iterative.begin`` to
    ``iterative.end`` of the optimizer steps, pruning every ``iterative.frequency`` steps.

    inputs: ``train``, ``dev`` (oracle splits); ``start`` (a setting that starts from a WikiRef checkpoint:
    the candidates' checkpoint files and ``pretrain_<variant>.json``, :func:`start_from_files`). outputs:
    ``dir``, which receives the best dev epoch *at final sparsity* + ``subnet_masks.safetensors`` +
    ``pruning.json``. Returns the pruning record.
    """
    from wikiref.files import write_json
    from wikiref.model import subnetworks as subnet
    from wikiref.model.training import TrainSettings, train
    from wikiref.supervised import pretraining as pretrain

    finetune_params, pre, seed = params["finetune"], params["pretrain"], params["seed"]
    spec = find_setting(finetune_params, setting)
    if spec["method"] != "iterative":
        raise FinetuneError(f"setting {setting} is not an iterative-pruning setting (method {spec['method']})")
    # The starting point, before any pruning, with its own head: the WikiRef run continues the
    # checkpoint's objective (oracle labels for classification, oracle scores for regression).
    start_spec = dict(spec, method="none")
    model, tok, start = start_model(params, start_spec, start=start_from_files(inputs.get("start", ())))
    head = model.config.head
    train_df, _ = pretrain.read_split(inputs["train"], pre["max_train_examples"], seed)
    dev_df, _ = pretrain.read_split(inputs["dev"], pre["max_eval_examples"], seed)
    train_ex, dev_ex = pretrain.to_examples(train_df, head), pretrain.to_examples(dev_df, head)
    train_settings = TrainSettings.from_params(seed, params["model"], pre, progress)
    schedule, total = _pruning_schedule(model, tok, train_ex, train_settings, finetune_params, seed)
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
    best = _pruned_best(out_dir, pruner)
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


def _pruning_schedule(model, tok, train_ex, train_settings, finetune_params: Mapping, seed: int):
    """The gradual-pruning schedule of :func:`prune` over the run's optimizer steps (``finetune.iterative``,
    to ``1 - subnet.fraction`` sparsity). Returns (the schedule, the run's optimizer steps)."""
    from wikiref.model import subnetworks as subnet
    from wikiref.model.scoring_task import pack_examples
    from wikiref.model.training import epoch_batches

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
    return schedule, total


def _pruned_best(out_dir: Path, pruner):
    """The saved best epoch of a pruning run, checked: every pruned entry is zero in it."""
    from wikiref.model import load_scorer

    best, _ = load_scorer(out_dir)
    params_best = dict(best.named_parameters())
    leaked = [n for n, m in pruner.masks.items() if int((params_best[n].detach()[~m.cpu()] != 0).sum())]
    if leaked:
        raise RuntimeError(f"the saved epoch has non-zero pruned entries in {leaked[:3]}")
    return best


def recall_x100(scores: Mapping) -> dict[str, float]:
    """R-1 / R-2 / R-SU4 recall of one official-scorer result (``{measure: {"R": ...}}``) x 100."""
    return {meas: round(100 * float(scores[meas]["R"]), 4) for meas in MEASURES}
