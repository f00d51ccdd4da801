"""Step 5: pre-train sentence scorers on WikiRef and benchmark them (journal §III, §IV, Table IV).

The jobs of the stage (``wikiref pretrain <job>``, src/wikiref/cli/pretrain.py), each
``job(params, inputs, outputs, **options) -> dict``; they write their outputs themselves:

* :func:`run` - :func:`train` then :func:`evaluate` one Table IV variant (what the rule runs).
* :func:`train` - one variant (``pretrain.variants[*]``: head, pooling, query in the input or not,
  pretrained or random encoder) trained on the oracle train split with the best epoch chosen on dev
  ROUGE-2 (threshold searched per epoch): the checkpoint and its dvclive curves.
* :func:`evaluate` - dev threshold search, then dev and test ROUGE-1/2/L F1: the variant's metrics.
* :func:`table` - Table IV (the variants + ALL, LEAD, ORACLE baselines) and the stage's metrics.
* :func:`fixture` - stand-in oracle-format splits (synthetic and/or WikiCite cloze examples).

The parts: :func:`train_variant`, :func:`evaluate_variant`, :func:`baseline_metrics` (ALL, LEAD,
ORACLE classification and regression), :func:`table4` (the Table IV frame) and
:func:`summary_metrics` (whether the pretrained encoder beats LEAD and the random-init TRANSFORMER on
dev ROUGE-2); :func:`synthetic_oracle_frame` (a learnable synthetic task) and
:func:`cloze_oracle_frame` (real WikiCite/Summary-Cloze examples in the oracle format).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from wikiref import layout
from wikiref.extractive import selection as sel
from wikiref.schemas import ORACLE
from wikiref.stages.pretrain.baselines import all_sentences, lead, oracle_summaries
from wikiref.supervised.pretraining import (
    PretrainError,
    evaluate_scores,
    evaluate_variant,
    read_split,
    split_files,
    train_variant,
    variants,
)

log = logging.getLogger(__name__)

SPLITS = layout.SPLITS


# --------------------------------------------------------------------------- data


# --------------------------------------------------------------------------- params -> objects


# --------------------------------------------------------------------------- train / evaluate


def baseline_metrics(params: Mapping, splits: Mapping[str, str | Path]) -> dict:
    """ALL, LEAD and the two ORACLE rows on the same (capped) dev/test examples as the models."""
    pre, seed = params["pretrain"], params["seed"]
    dev, _ = read_split(splits["dev"], pre["max_eval_examples"], seed)
    test, _ = read_split(splits["test"], pre["max_eval_examples"], seed)
    out: dict[str, dict] = {}
    for split, df in (("dev", dev), ("test", test)):
        docs = [list(d) for d in df["doc_sentences"]]
        refs = list(df["statement"])
        out.setdefault("all", {})[split] = sel.evaluate(all_sentences(docs), docs, refs)
        out.setdefault("lead", {})[split] = sel.evaluate(lead(docs, pre["lead_sentences"]), docs, refs)
        out.setdefault("oracle_classification", {})[split] = sel.evaluate(
            oracle_summaries(list(df["oracle_indices"]), docs), docs, refs
        )
    reg = evaluate_scores(
        pre,
        dev,
        test,
        [np.asarray(s, float) for s in dev["oracle_scores"]],
        [np.asarray(s, float) for s in test["oracle_scores"]],
    )
    out["oracle_regression"] = {"dev": reg["dev"], "test": reg["test"], "threshold": reg["threshold"]}
    return out


# --------------------------------------------------------------------------- the jobs


def _rank() -> int:
    """This process's rank under torchrun (0 otherwise): only rank 0 evaluates and reports."""
    return int(os.environ.get("RANK", "0"))


def _trained(name: str, result) -> dict:
    return {
        "variant": name,
        "rank": _rank(),
        "best_epoch": result.best_epoch,
        "dev_rouge2": result.best_metric,
        "windows_per_second": result.windows_per_second,
    }


def train(params: Mapping, inputs: Mapping, outputs: Mapping, *, variant: str, progress: bool = True) -> dict:
    """Train one variant. inputs: ``train``, ``dev`` (oracle splits); outputs: ``model_dir`` (the best dev
    epoch: model.safetensors, config.json, tokenizer, training.json), ``live_dir`` (dvclive, optional).
    Returns the training summary (best epoch, its dev ROUGE-2, windows per second, rank)."""
    result = train_variant(params, variant, inputs, outputs["model_dir"], outputs.get("live_dir"), progress=progress)
    return _trained(variant, result)


def evaluate(
    params: Mapping,
    inputs: Mapping,
    outputs: Mapping,
    *,
    variant: str,
    progress: bool = True,
    dev_scores: Sequence[Sequence[float]] | None = None,
) -> dict:
    """Evaluate a trained variant. inputs: ``model_dir``, ``dev``, ``test``; outputs: ``metrics`` (JSON:
    threshold, dev/test ROUGE-1/2/L F1, rows, training record). Returns the metrics."""
    from wikiref.files import write_json

    metrics = evaluate_variant(params, variant, inputs["model_dir"], inputs, progress=progress, dev_scores=dev_scores)
    write_json(outputs["metrics"], metrics)
    return metrics


def run(params: Mapping, inputs: Mapping, outputs: Mapping, *, variant: str, progress: bool = True) -> dict:
    """:func:`train` then :func:`evaluate` (reusing the best epoch's dev scores). inputs: ``train``,
    ``dev``, ``test``; outputs: ``model_dir``, ``live_dir`` (optional), ``metrics``. Under torchrun every
    rank trains and rank 0 alone evaluates; the other ranks return the training summary."""
    result = train_variant(params, variant, inputs, outputs["model_dir"], outputs.get("live_dir"), progress=progress)
    if _rank() != 0:
        return _trained(variant, result)
    return evaluate(
        params,
        {**inputs, "model_dir": outputs["model_dir"]},
        outputs,
        variant=variant,
        progress=progress,
        dev_scores=result.best_dev_scores,
    )


def table(params: Mapping, inputs: Mapping, outputs: Mapping) -> dict:
    """Table IV and the stage's metrics. inputs: ``dev``, ``test`` (oracle splits, for the baselines),
    ``variant_metrics`` (variant name -> its metrics JSON, every ``pretrain.variants`` name);
    outputs: ``table`` (stem of the .csv/.md/.tex), ``summary`` (JSON). Returns the summary."""
    from wikiref.files import read_json, write_json
    from wikiref.tables import standin_flag, write_table

    pre = params["pretrain"]
    metrics = {}
    for name in variants(pre):
        path = inputs["variant_metrics"].get(name)
        if path is None or not Path(path).exists():
            raise PretrainError(
                f"missing {path or f'the metrics of variant {name}'}: run `wikiref pretrain run --variant {name}` first"
            )
        metrics[name] = read_json(path)
    baselines = baseline_metrics(params, inputs)
    df = table4(pre, metrics, baselines)
    summary = summary_metrics(params["model"], pre, metrics, baselines)
    standin = standin_flag(params["profile"], any(m.get("standin") for m in metrics.values()), "pretrain table")
    write_table(
        df,
        outputs["table"],
        title="Table IV: ROUGE F1 of baselines and models on WikiRef",
        profile=params["profile"],
        encoder=params["model"]["encoder"],
        notes=table4_notes(params, metrics, summary),
        standin=standin,
    )
    summary["profile"] = params["profile"]["name"]
    summary["standin"] = standin
    write_json(outputs["summary"], summary)
    return summary


def fixture(params: Mapping, inputs: Mapping, outputs: Mapping, *, synthetic: int = 0) -> dict:
    """Stand-in splits in the data/oracle format, split 60/20/20 by a hash of the id. Reads no parameters
    (``params`` may be empty). inputs: ``cloze`` (a WikiCite cloze.jsonl to convert, optional);
    ``synthetic`` synthetic examples are added; outputs: ``dir`` (``<split>.parquet``). Returns the row
    count of each split."""
    parts = []
    if inputs.get("cloze"):
        with open(inputs["cloze"], encoding="utf-8") as fh:
            parts.append(cloze_oracle_frame(json.loads(line) for line in fh if line.strip()))
    if synthetic:
        parts.append(synthetic_oracle_frame(synthetic, seed=0))
    if not parts:
        raise PretrainError("give a cloze file and/or a number of synthetic examples")
    df = pd.concat(parts, ignore_index=True).sort_values("id", kind="stable").reset_index(drop=True)
    bucket = df["id"].map(lambda s: int(hashlib.sha1(s.encode()).hexdigest(), 16) % 10)
    frames = {"train": df[bucket < 6], "dev": df[(bucket >= 6) & (bucket < 8)], "test": df[bucket >= 8]}
    write_oracle_splits(frames, outputs["dir"])
    return {k: len(v) for k, v in frames.items()}


# --------------------------------------------------------------------------- Table IV


def _row(system: str, supervision: str, m: Mapping) -> dict:
    row = {"System": system, "Supervision": supervision}
    for split in ("dev", "test"):
        for k, lab in (("rouge1", "R-1"), ("rouge2", "R-2"), ("rougeL", "R-L")):
            row[f"{split.capitalize()} {lab}"] = float(m[split][k])
    return row


def table4(pretrain: Mapping, variant_metrics: Mapping[str, Mapping], baselines: Mapping) -> pd.DataFrame:
    """Rows in the paper's order: ALL, LEAD; regression variants + ORACLE; classification variants + ORACLE."""
    rows = [_row("ALL", "-", baselines["all"]), _row("LEAD", "-", baselines["lead"])]
    for head, oracle_key in (("regression", "oracle_regression"), ("classification", "oracle_classification")):
        chosen = [v for v in pretrain["variants"] if v["head"] == head]
        for v in chosen:
            label = v["label"] + (" (random init)" if v["init"] == "random" and "TRANSFORMER" not in v["label"] else "")
            rows.append(_row(label, head, variant_metrics[v["name"]]))
        if chosen:
            rows.append(_row("ORACLE", head, baselines[oracle_key]))
    return pd.DataFrame(rows)


def table4_notes(params: Mapping, variant_metrics: Mapping[str, Mapping], summary: Mapping) -> str:
    """The notes under Table IV: scoring, model and training settings, the dev ROUGE-2 comparisons."""
    pre, model = params["pretrain"], params["model"]
    first = next(iter(variant_metrics.values()))
    notes = (
        f"ROUGE F1 x 100 (rouge-score, Porter stemming; ROUGE-L summary-level). "
        f"Encoder {model['encoder']} (TRANSFORMER rows: same shape, random init); max_length "
        f"{model['max_length']}, stride {model['stride']}, epochs {pre['epochs']}, batch {pre['batch_size']}, "
        f"lr {pre['lr']}; train examples cap {pre['max_train_examples']}, "
        f"dev/test cap {pre['max_eval_examples']}; "
        f"dev/test examples: {first['dev']['examples']}/{first['test']['examples']}."
    )
    cmp = summary.get("comparison_dev_rouge2")
    if cmp:
        notes += (
            f" Dev ROUGE-2: best pretrained variant {cmp['best_pretrained_variant']} "
            f"{cmp['best_pretrained_dev_rouge2']:.2f} vs LEAD {cmp['lead_dev_rouge2']:.2f} "
            f"({cmp['margin_over_lead']:+.2f})"
        )
        if "transformer_dev_rouge2" in cmp:
            notes += f", vs TRANSFORMER {cmp['transformer_dev_rouge2']:.2f} ({cmp['margin_over_transformer']:+.2f})"
        if "same_config_pretrained_variant" in cmp:
            notes += (
                f"; like for like, {cmp['same_config_pretrained_variant']} (the TRANSFORMER's head, pooling "
                f"and input, pretrained) {cmp['same_config_pretrained_dev_rouge2']:.2f}: "
                f"{cmp['same_config_margin_over_transformer']:+.2f} vs TRANSFORMER, "
                f"{cmp['same_config_margin_over_lead']:+.2f} vs LEAD"
            )
        notes += ". The best of several variants on a small dev set is an optimistic pick."
    for v in pre["variants"]:
        own = [f"encoder {v['encoder']}"] if v.get("encoder") else []
        own += [f"pairing {v['pairing']}"] if v.get("pairing", "cross") != "cross" else []
        own += [f"{k} {x}" for k, x in (v.get("recipe") or {}).items()]
        if own:
            notes += f" {v['name']}: {', '.join(own)}."
    return notes


def summary_metrics(
    model: Mapping, pretrain: Mapping, variant_metrics: Mapping[str, Mapping], baselines: Mapping
) -> dict:
    """DVC metrics of the step: dev/test ROUGE-2 per system, best variant, and the key comparisons."""
    dev_r2 = {n: m["dev"]["rouge2"] for n, m in variant_metrics.items()}
    out: dict[str, Any] = {
        "encoder": model["encoder"],
        "variants": {
            n: {"dev_rouge2": m["dev"]["rouge2"], "test_rouge2": m["test"]["rouge2"], "threshold": m["threshold"]}
            for n, m in variant_metrics.items()
        },
        "baselines": {
            k: {"dev_rouge2": v["dev"]["rouge2"], "test_rouge2": v["test"]["rouge2"]} for k, v in baselines.items()
        },
        "best_variant": max(dev_r2, key=lambda n: (dev_r2[n], n)) if dev_r2 else None,
    }
    from wikiref.model.encoders import is_random

    # "pretrained" means real pretrained weights: with a random encoder (tiny-random) there is none.
    out["encoder_pretrained"] = not is_random(model["encoder"])
    pretrained = {
        n: r for n, r in dev_r2.items() if variant_metrics[n]["init"] == "pretrained" and out["encoder_pretrained"]
    }
    random = {n: r for n, r in dev_r2.items() if variant_metrics[n]["init"] == "random"}
    if pretrained:
        best_pre = max(pretrained, key=lambda n: (pretrained[n], n))
        cmp: dict[str, Any] = {"best_pretrained_variant": best_pre, "best_pretrained_dev_rouge2": pretrained[best_pre]}
        lead_r2 = baselines["lead"]["dev"]["rouge2"]
        cmp["lead_dev_rouge2"] = lead_r2
        cmp["margin_over_lead"] = pretrained[best_pre] - lead_r2
        cmp["beats_lead"] = pretrained[best_pre] > lead_r2
        if random:
            best_rand = max(random, key=lambda n: (random[n], n))
            cmp["transformer_variant"] = best_rand
            cmp["transformer_dev_rouge2"] = random[best_rand]
            cmp["margin_over_transformer"] = pretrained[best_pre] - random[best_rand]
            cmp["beats_transformer"] = pretrained[best_pre] > random[best_rand]
            # Like for like (no selection over variants): the pretrained twin of the TRANSFORMER
            # variant (same head, pooling and input), as in the paper's BERT vs TRANSFORMER rows.
            spec = {v["name"]: v for v in pretrain["variants"]}
            key = lambda v: (v["head"], v["pooling"], v["query"], v.get("pairing"), v.get("encoder"))  # noqa: E731
            twins = [n for n in pretrained if n in spec and best_rand in spec and key(spec[n]) == key(spec[best_rand])]
            if twins:
                twin = twins[0]
                cmp["same_config_pretrained_variant"] = twin
                cmp["same_config_pretrained_dev_rouge2"] = pretrained[twin]
                cmp["same_config_margin_over_transformer"] = pretrained[twin] - random[best_rand]
                cmp["same_config_margin_over_lead"] = pretrained[twin] - lead_r2
        out["comparison_dev_rouge2"] = cmp
    return out


# --------------------------------------------------------------------------- fixtures

_FILLER = (
    "market report city council weather season river museum school road festival harbour bridge "
    "station library garden factory election budget railway tower village forest island"
).split()


def synthetic_oracle_frame(n: int, seed: int = 0, prefix: str = "syn") -> pd.DataFrame:
    """A small learnable stand-in in the data/oracle format (for tests and smoke runs).

    The summary restates 1-2 "relevant" sentences that mention the query's section word; they sit
    at random positions, so LEAD is weak and a model that reads the query can learn the task.
    """
    from wikiref.extractive.selection import rouge2_f1

    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        title = f"{rng.choice(_FILLER)} {rng.choice(_FILLER)}"
        section = str(rng.choice(_FILLER))
        n_sent = int(rng.integers(5, 12))
        sents = []
        for _ in range(n_sent):
            words = [str(w) for w in rng.choice(_FILLER, size=int(rng.integers(6, 14)))]
            sents.append(" ".join(w for w in words if w != section) + " .")
        k = int(rng.integers(1, 3))
        relevant = sorted(int(j) for j in rng.choice(n_sent, size=k, replace=False))
        for r, j in enumerate(relevant):  # two templates: relevant sentences share no trigram
            sents[j] = (
                f"the {section} of {title} opened in {rng.integers(1900, 2020)} near {sents[j]}"
                if r == 0
                else f"{section} visitors counted {rng.integers(100, 999)} during {sents[j]}"
            )
        statement = " ".join(sents[j].rstrip(" .") for j in relevant) + " ."
        scores = [rouge2_f1(s, statement) for s in sents]
        rows.append(
            {
                "id": f"{prefix}{i:05d}",
                "query": [title, section],
                "doc_sentences": sents,
                "statement": statement,
                "oracle_labels": [int(j in relevant) for j in range(n_sent)],
                "oracle_scores": scores,
                "oracle_indices": relevant,
                "oracle_score": rouge2_f1(sel.summary_text(sents, relevant), statement),
                "standin": True,  # synthetic text is never real data
            }
        )
    return pd.DataFrame(rows)


def cloze_oracle_frame(records: Iterable[Mapping]) -> pd.DataFrame:
    """WikiCite / Summary-Cloze records (topics, document, cloze, labels) in the data/oracle format.

    Labels are the dataset's own oracle indices; per-sentence scores are ROUGE-2 F1 vs the cloze.
    """
    from wikiref.extractive.selection import rouge2_f1

    rows = []
    for r in records:
        doc = [str(s) for s in r["document"]]
        labels = sorted(int(i) for i in r["labels"] if 0 <= int(i) < len(doc))
        rows.append(
            {
                "id": str(r["id"]),
                "query": [str(t) for t in r["topics"]],
                "doc_sentences": doc,
                "statement": str(r["cloze"]),
                "oracle_labels": [int(j in labels) for j in range(len(doc))],
                "oracle_scores": [rouge2_f1(s, r["cloze"]) for s in doc],
                "oracle_indices": labels,
                "oracle_score": rouge2_f1(sel.summary_text(doc, labels), r["cloze"]) if labels else 0.0,
                "standin": False,  # real WikiCite / Summary-Cloze data
            }
        )
    return pd.DataFrame(rows)


def write_oracle_splits(frames: Mapping[str, pd.DataFrame], out_dir: str | Path) -> None:
    """``<out_dir>/<split>.parquet`` in the oracle stage's schema (:data:`wikiref.schemas.ORACLE`), rows by id."""
    import pyarrow as pa

    from wikiref.files import write_parquet

    for split, df in frames.items():
        df = df.sort_values("id", kind="stable").reset_index(drop=True)
        table = pa.Table.from_pandas(df[ORACLE.names], schema=ORACLE, preserve_index=False)
        write_parquet(split_files(out_dir, (split,))[split], table)
