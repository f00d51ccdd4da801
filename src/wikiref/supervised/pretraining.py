"""Pre-training the sentence scorer on oracle-format tables (data/oracle/<split>.parquet and the tables of
the same schema the compare and ablations stages build): read and validate a split, cap it, turn its rows into
the scorer's examples, the Table IV variants and their scorer configuration, score examples with a trained
scorer (:func:`score_examples`, the one way every stage does it), and train / evaluate one variant (best epoch
by dev ROUGE-2). Used by pretrain, finetune, ablations, compare, qmsum, wcep and psg2sum.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from wikiref import layout
from wikiref.config import by_name, find_named
from wikiref.extractive import selection as sel
from wikiref.schemas import ORACLE, SchemaError

EVAL_SPLITS = ("dev", "test")

log = logging.getLogger(__name__)

SPLITS = layout.SPLITS

_SCORER_MODEL_KEYS = ("encoder", "max_length", "stride", "max_query_tokens", "num_levels", "attention_dropout")

_SCORER_VARIANT_KEYS = ("pooling", "head", "init")


class PretrainError(ValueError):
    """Bad input of a pretrain job: an unknown variant, no usable examples, a missing metrics file."""


def validate_oracle_frame(df: pd.DataFrame, where: str = "") -> tuple[pd.DataFrame, dict]:
    """Keep rows usable for training/evaluation; count (never silently drop) the rest."""
    missing = [c for c in ORACLE.names if c not in df.columns]
    if missing:
        raise SchemaError(f"{where}: missing oracle columns {missing} (have {list(df.columns)})")
    keep, counts = [], {"rows": len(df), "empty_document": 0, "length_mismatch": 0, "empty_statement": 0}
    for row in df.itertuples(index=False):
        n = len(row.doc_sentences)
        if n == 0:
            counts["empty_document"] += 1
            keep.append(False)
        elif len(row.oracle_labels) != n or len(row.oracle_scores) != n:
            counts["length_mismatch"] += 1
            keep.append(False)
        elif not str(row.statement).strip():
            counts["empty_statement"] += 1
            keep.append(False)
        else:
            keep.append(True)
    counts["kept"] = int(sum(keep))
    counts["standin"] = int(sum(bool(x) for x, k in zip(df["standin"], keep) if k))
    dropped = counts["rows"] - counts["kept"]
    if dropped:
        log.warning(
            "%s: skipped %d of %d rows: %s",
            where,
            dropped,
            counts["rows"],
            {k: v for k, v in counts.items() if k not in ("rows", "kept") and v},
        )
    return df[np.array(keep, dtype=bool)].reset_index(drop=True), counts


def cap_rows(df: pd.DataFrame, cap: int | None, seed: int) -> pd.DataFrame:
    """A seeded subset of at most ``cap`` rows, in id order (all rows when cap is None)."""
    df = df.sort_values("id", kind="stable").reset_index(drop=True)
    if cap is None or len(df) <= cap:
        return df
    rng = np.random.default_rng(seed)
    idx = np.sort(rng.choice(len(df), size=cap, replace=False))
    return df.iloc[idx].reset_index(drop=True)


def read_split(path: str | Path, cap: int | None, seed: int) -> tuple[pd.DataFrame, dict]:
    """An oracle split file (``data/oracle/<split>.parquet``): its usable rows, capped, and their counts."""
    from wikiref.files import read_parquet

    if not Path(path).exists():
        raise PretrainError(f"{path} missing: run the oracle stage (`wikiref oracle`) first")
    df, counts = validate_oracle_frame(read_parquet(path), str(path))
    df = cap_rows(df, cap, seed)
    counts["used"] = len(df)
    return df, counts


def split_files(data_dir: str | Path, splits: Sequence[str] = SPLITS) -> dict[str, Path]:
    """The oracle split files in ``data_dir`` (named as in :data:`wikiref.layout.ORACLE_FILE`)."""
    return {s: layout.in_folder(data_dir, layout.ORACLE_FILE, split=s) for s in splits}


def load_split(data_dir: str | Path, split: str, cap: int | None, seed: int) -> tuple[pd.DataFrame, dict]:
    """:func:`read_split` of ``<data_dir>/<split>.parquet``."""
    return read_split(split_files(data_dir, (split,))[split], cap, seed)


def variant_metrics_file(metrics_dir: str | Path, name: str) -> Path:
    """``<metrics_dir>/pretrain_<variant>.json`` (named as in :data:`wikiref.layout.PRETRAIN_VARIANT_METRICS`)."""
    return layout.in_folder(metrics_dir, layout.PRETRAIN_VARIANT_METRICS, variant=name)


def to_examples(df: pd.DataFrame, head: str):
    """Rows -> ScoringExamples: 0/1 oracle labels for classification, oracle scores for regression; rows
    with ``doc_lengths`` (the oracle of any source, :data:`wikiref.schemas.ORACLE_SOURCE`) keep their
    document boundaries for the packing."""
    from wikiref.model.scoring_task import ScoringExample

    col = "oracle_labels" if head == "classification" else "oracle_scores"
    multi = "doc_lengths" in df.columns
    return [
        ScoringExample(
            query=[str(q) for q in r.query],
            sentences=[str(s) for s in r.doc_sentences],
            targets=[float(t) for t in getattr(r, col)],
            id=str(r.id),
            doc_lengths=[int(n) for n in r.doc_lengths] if multi else None,
        )
        for r in df.itertuples(index=False)
    ]


# A variant's own values of these pretrain keys (``pretrain.variants[].recipe``), the section's for the rest.
VARIANT_RECIPE_KEYS = ("loss", "lr", "head_lr_scale", "epochs", "batch_size")


def _check_variant(v: Mapping) -> None:
    name, recipe = v["name"], v.get("recipe") or {}
    if v.get("pairing", "cross") == "bi" and not v["query"]:
        raise PretrainError(f"variant {name}: pairing bi scores sentences against the query (query: true)")
    unknown = sorted(set(recipe) - set(VARIANT_RECIPE_KEYS))
    if unknown:
        raise PretrainError(f"variant {name}: recipe keys {unknown} not in {list(VARIANT_RECIPE_KEYS)}")
    if "loss" in recipe and (recipe["loss"] == "bce") != (v["head"] == "classification"):
        raise PretrainError(
            f"variant {name}: loss {recipe['loss']} does not fit the {v['head']} head (bce <-> classification)"
        )


def variants(pretrain: Mapping) -> dict[str, dict]:
    """``pretrain.variants`` by name, checked."""
    return by_name(pretrain["variants"], "variant", PretrainError, _check_variant)


def variant_section(pretrain: Mapping, spec: Mapping) -> Mapping:
    """The pretrain section with the variant's ``recipe`` values in place of the section's (itself without one)."""
    recipe = {k: v for k, v in (spec.get("recipe") or {}).items() if k != "loss"}
    return {**pretrain, **recipe} if recipe else pretrain


def find_variant(pretrain: Mapping, name: str) -> dict:
    """The ``pretrain.variants`` entry called ``name``."""
    return find_named(variants(pretrain), name, "variant", "params", PretrainError)


def scorer_config(model: Mapping, variant: Mapping, pairing: str | None = None):
    """The ScorerConfig of a variant (or a fine-tuning start): the ``model`` section's encoder and lengths, the
    variant's pooling / head / init / input; a variant's own ``encoder`` (if set) replaces ``model.encoder``, its
    ``pairing`` (default cross) is used unless ``pairing`` is given, its ``recipe.loss`` (if set) is the loss."""
    from wikiref.model import ScorerConfig

    cfg = ScorerConfig(
        **{k: model[k] for k in _SCORER_MODEL_KEYS} | {"encoder": variant_encoder(model, variant)},
        **{k: variant[k] for k in _SCORER_VARIANT_KEYS},
        use_query=variant["query"],
        pairing=pairing or variant.get("pairing", "cross"),
    )
    loss = (variant.get("recipe") or {}).get("loss")
    if loss:
        cfg.use_loss(loss)
    return cfg


def variant_encoder(model: Mapping, variant: Mapping) -> str:
    """A variant's encoder: its own ``encoder``, else ``model.encoder``."""
    return variant.get("encoder") or model["encoder"]


def score_examples(model, tokenizer, examples: Sequence, model_params: Mapping, progress: bool = False):
    """:func:`wikiref.model.score_sentences` with the ``model`` section's settings, the same for every stage that
    scores with a trained scorer: its ``device`` (the model moved there), ``eval_batch_size``, and autocast where
    ``amp`` is on and the device is CUDA (as in training; CPU scoring stays float32)."""
    from wikiref.model import score_sentences
    from wikiref.model.training import resolve_device

    device = resolve_device(model_params["device"])
    model.to(device)
    amp = bool(model_params["amp"]) and device.type == "cuda"
    batch = int(model_params["eval_batch_size"])
    return score_sentences(model, tokenizer, examples, batch_size=batch, device=device, amp=amp, progress=progress)


def encoder_label(model: Mapping, variant: Mapping) -> str:
    return ("random-init " if variant["init"] == "random" else "") + variant_encoder(model, variant)


def dev_rouge2_fn(dev: pd.DataFrame, pretrain: Mapping):
    """select_fn for train(): mean dev ROUGE-2 F1 at the best threshold for these scores."""
    docs = [list(d) for d in dev["doc_sentences"]]
    refs = list(dev["statement"])

    def fn(scores: list[np.ndarray]) -> float:
        return sel.search_threshold(
            scores, docs, refs, min_sentences=pretrain["min_sentences"], block_trigrams=pretrain["block_trigrams"]
        ).rouge2

    return fn


def train_variant(
    params: Mapping,
    name: str,
    splits: Mapping[str, str | Path],
    out_dir: str | Path,
    live_dir: str | Path | None = None,
    progress: bool = True,
    **train_kwargs,
):
    """Train one variant on ``splits["train"]`` (epoch chosen on ``splits["dev"]``); the best dev epoch
    lands in ``out_dir``. Returns the TrainResult."""
    import torch

    from wikiref.model import build_scorer, training

    model_p, pre, seed = params["model"], params["pretrain"], params["seed"]
    spec = find_variant(pre, name)
    train_df, train_counts = read_split(splits["train"], pre["max_train_examples"], seed)
    dev_df, dev_counts = read_split(splits["dev"], pre["max_eval_examples"], seed)
    if len(train_df) == 0 or len(dev_df) == 0:
        raise PretrainError(
            f"{Path(splits['train']).parent}: no usable train ({len(train_df)}) or dev ({len(dev_df)}) examples"
        )
    torch.manual_seed(seed)
    model, tokenizer = build_scorer(scorer_config(model_p, spec))
    result = training.train(
        model,
        tokenizer,
        to_examples(train_df, spec["head"]),
        to_examples(dev_df, spec["head"]),
        training.TrainSettings.from_params(seed, model_p, variant_section(pre, spec), progress),
        out_dir,
        select_fn=dev_rouge2_fn(dev_df, pre),
        live_dir=live_dir,
        **train_kwargs,
    )
    result.extra.update(variant=spec, train_rows=train_counts, dev_rows=dev_counts)
    return result


def evaluate_scores(
    pretrain: Mapping,
    dev: pd.DataFrame,
    test: pd.DataFrame,
    dev_scores: Sequence[Sequence[float]],
    test_scores: Sequence[Sequence[float]],
) -> dict:
    """Threshold on dev, then dev and test ROUGE-1/2/L F1 (x 100) and mean summary length."""
    docs_dev = [list(d) for d in dev["doc_sentences"]]
    docs_test = [list(d) for d in test["doc_sentences"]]
    kw = dict(min_sentences=pretrain["min_sentences"], block_trigrams=pretrain["block_trigrams"])
    search = sel.search_threshold(dev_scores, docs_dev, list(dev["statement"]), **kw)
    out: dict[str, Any] = {"threshold": sel.finite(search.threshold), "threshold_candidates": search.candidates}
    for split, df, docs, scores in (("dev", dev, docs_dev, dev_scores), ("test", test, docs_test, test_scores)):
        chosen = sel.threshold_select_all(scores, docs, search.threshold, **kw)
        out[split] = {
            **sel.evaluate(chosen, docs, list(df["statement"])),
            "examples": len(df),
            "mean_sentences": float(np.mean([len(c) for c in chosen])),
        }
    return out


def evaluate_variant(
    params: Mapping,
    name: str,
    model_dir: str | Path,
    splits: Mapping[str, str | Path],
    progress: bool = False,
    dev_scores: Sequence[Sequence[float]] | None = None,
) -> dict:
    """Dev threshold search, then dev/test ROUGE on ``splits["dev"]`` / ``splits["test"]``.
    ``dev_scores``: the saved model's dev scores when the caller has them already
    (``TrainResult.best_dev_scores``), to skip scoring dev again."""
    from wikiref.files import read_json
    from wikiref.model import load_scorer

    model_p, pre, seed = params["model"], params["pretrain"], params["seed"]
    spec = find_variant(pre, name)
    dev, dev_counts = read_split(splits["dev"], pre["max_eval_examples"], seed)
    test, test_counts = read_split(splits["test"], pre["max_eval_examples"], seed)
    if not (Path(model_dir) / "config.json").exists():
        raise PretrainError(f"{model_dir}: no trained model; run `wikiref pretrain train --variant {name}` first")
    model, tokenizer = load_scorer(model_dir)  # score_examples moves it to the model section's device

    def scores(df):
        return score_examples(model, tokenizer, list(zip(df["query"], df["doc_sentences"])), model_p, progress)

    if dev_scores is None or len(dev_scores) != len(dev):
        dev_scores = scores(dev)
    metrics = evaluate_scores(pre, dev, test, dev_scores, scores(test))
    training = Path(model_dir) / "training.json"
    tr = read_json(training) if training.exists() else {}
    metrics.update(
        variant=name,
        **{k: spec[k] for k in ("label", "head", "pooling", "query", "init")},
        encoder=variant_encoder(model_p, spec),
        encoder_label=encoder_label(model_p, spec),
        **({"pairing": spec["pairing"]} if spec.get("pairing", "cross") != "cross" else {}),
        rows={"dev": dev_counts, "test": test_counts},
        standin=bool(dev_counts["standin"] or test_counts["standin"]),
        training={
            k: tr.get(k)
            for k in ("best_epoch", "best_metric", "train_seconds", "windows_per_second", "pack_stats", "history")
        },
    )
    return metrics


# The ScorerConfig fields a variant takes as they are from the ``model`` section and from its own entry.
