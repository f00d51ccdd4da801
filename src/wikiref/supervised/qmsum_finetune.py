"""The sentence scorer on QMSum (``data/qmsum/<split>.parquet``): a split's table, the capped evaluation
queries, a scorer's extracts of a meeting (turns ranked by score within the word budget) with their
official ROUGE, and fine-tuning on QMSum train queries. Used by the qmsum and compare stages.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from wikiref.extractive import meetings as qb
from wikiref.extractive.selection import mean_summary_words


class QmsumStageError(ValueError):
    """Missing or unusable QMSum input."""


def load_split(path: str | Path) -> pd.DataFrame:
    from wikiref.files import read_parquet
    from wikiref.schemas import QMSUM, require_columns

    if not Path(path).exists():
        raise QmsumStageError(f"{path} missing: run `wikiref qmsum prepare` first")
    df = read_parquet(path)
    require_columns(df.columns, QMSUM.names, str(path))
    return df.sort_values("id", kind="stable").reset_index(drop=True)


def cap_queries(df: pd.DataFrame, cap: int | None, seed: int) -> pd.DataFrame:
    """At most ``cap`` rows, a seeded choice, in id order (all when cap is None)."""
    from wikiref.supervised.pretraining import cap_rows

    return cap_rows(df, cap, seed)


def training_queries(df: pd.DataFrame, qmsum: Mapping, cap: int | None, seed: int) -> pd.DataFrame:
    """The ``qmsum.eval_query_types`` queries of a training split (a model learns the query types it is tested
    on), at most ``cap`` of them (seeded)."""
    return cap_queries(df[df["query_type"].isin(list(qmsum["eval_query_types"]))], cap, seed)


def eval_rows(test: pd.DataFrame, qmsum: Mapping, seed: int) -> pd.DataFrame:
    """The test queries every system is scored on: the ``qmsum.eval_query_types`` queries, then
    ``qmsum.eval_queries`` of them (seeded)."""
    test = test[test["query_type"].isin(list(qmsum["eval_query_types"]))].reset_index(drop=True)
    return cap_queries(test, qmsum["eval_queries"], seed)


def score(summaries: Mapping[str, list[str]], rows: pd.DataFrame, flags: str, per_example: bool = False) -> dict:
    """Official ROUGE-1/2/L of the summaries against each row's answer (one reference per query);
    ``per_example``: with each query's F1 (:func:`wikiref.extractive.official.score`)."""
    from wikiref.extractive.official import score as official_score

    refs = {str(i): [str(a)] for i, a in zip(rows["id"], rows["answer"])}
    return official_score(summaries, refs, flags=flags, per_example=per_example)


def documents(df: pd.DataFrame, setting: str, cap: int | None = None) -> list[tuple[list[int], list[str]]]:
    """Per row: (turn indices, turns) of its document in ``setting``, at most ``cap`` turns."""
    docs = [qb.document_turns(r, setting) for r in df.to_dict("records")]
    return [(i[:cap], t[:cap]) if cap is not None else (i, t) for i, t in docs]


def extract(turns: list[str], scores, max_words: int) -> list[str]:
    """The turns ranked by score (ties: transcript order; NaN last) filling the word budget, in transcript order."""
    from wikiref.extractive.selection import ranking

    sc = np.nan_to_num(np.asarray(scores, dtype=np.float64), nan=-np.inf)
    return [t for _, t in qb.fill(ranking(sc.tolist()), turns, max_words)]


def model_summaries(
    df: pd.DataFrame, scores, setting: str, max_words: int, docs: list | None = None
) -> dict[str, list[str]]:
    """Per row: :func:`extract` of its document (``docs``: the rows' documents when already made)."""
    docs = docs if docs is not None else documents(df, setting)
    return {str(rid): extract(turns, sc, max_words) for rid, (_, turns), sc in zip(df["id"], docs, scores)}


def score_documents(model, tok, df: pd.DataFrame, docs: list, model_params: Mapping, progress: bool = False):
    """The model's score of every turn of each row's document (``docs``: :func:`_documents` of the rows)."""
    from wikiref.supervised.pretraining import score_examples

    pairs = [([str(x) for x in q], turns) for q, (_, turns) in zip(df["query"], docs)]
    return score_examples(model, tok, pairs, model_params, progress)


def turn_scores(model, tok, rows: pd.DataFrame, setting: str, model_params: Mapping, progress: bool = False):
    """The model's score of every turn of each row's document in ``setting`` (the turns of
    :func:`wikiref.extractive.meetings.document_turns`, in order)."""
    return score_documents(model, tok, rows, documents(rows, setting), model_params, progress)


def evaluate_model(params: Mapping, model, tok, rows: pd.DataFrame, setting: str, progress: bool = False) -> dict:
    """A scorer's extracts of ``rows`` in ``setting`` and their official ROUGE."""
    q = params["qmsum"]
    docs = documents(rows, setting)
    scores = score_documents(model, tok, rows, docs, params["model"], progress)
    return summary_metrics(q, model_summaries(rows, scores, setting, q["summary_words"], docs), rows)


def summary_metrics(qmsum: Mapping, summaries: Mapping[str, list[str]], rows: pd.DataFrame) -> dict:
    """The extracts' official ROUGE against ``rows``' answers (``qmsum.rouge_flags``) and their mean length in
    words."""
    return {
        "rouge": score(summaries, rows, qmsum["rouge_flags"]),
        "summary_words_mean": mean_summary_words(summaries),
    }


def finetune(
    params: Mapping,
    model,
    tok,
    train_df: pd.DataFrame,
    dev_df: pd.DataFrame,
    setting: str,
    out_dir: str | Path,
    progress: bool = False,
):
    """Fine-tune a scorer on QMSum train queries (``qmsum.finetune`` caps; the ``finetune`` section's
    training settings); the epoch with the best dev ROUGE-2 F1 of the extracts is kept, and with
    ``qmsum.finetune.interpolate`` moved towards the weights it started from as far as the dev queries prefer.
    Returns (model, tokenizer, training record)."""
    from wikiref.extractive.selection import rouge2_f1
    from wikiref.model import interpolation, load_scorer
    from wikiref.model.scoring_task import ScoringExample
    from wikiref.model.targets import apply_targets
    from wikiref.model.training import TrainSettings, train

    q, seed, ft = params["qmsum"], int(params["seed"]), params["finetune"]
    caps = q["finetune"]
    train_df = training_queries(train_df, q, caps["train_queries"], seed)
    dev_df = training_queries(dev_df, q, caps["dev_queries"], seed)
    if train_df.empty or dev_df.empty:
        raise QmsumStageError(f"QMSum fine-tuning needs train and dev queries (have {len(train_df)}, {len(dev_df)})")

    def examples(df: pd.DataFrame) -> list:
        out = []
        for r, (idx, turns) in zip(df.itertuples(index=False), documents(df, setting, caps["document_turns"])):
            out.append(
                ScoringExample(
                    query=[str(x) for x in r.query],
                    sentences=turns,
                    targets=[float(r.turn_targets[i]) for i in idx],
                    id=str(r.id),
                )
            )
        return out

    dev_docs = documents(dev_df, setting, caps["document_turns"])
    answers = [str(a) for a in dev_df["answer"]]

    def select(scores) -> float:
        values = [
            rouge2_f1(" ".join(extract(turns, sc, q["summary_words"])), ans)
            for (_, turns), sc, ans in zip(dev_docs, scores, answers)
        ]
        return 100.0 * float(np.mean(values))

    settings = TrainSettings.from_params(seed, params["model"], ft, progress)
    train_ex, dev_ex = examples(train_df), examples(dev_df)
    apply_targets(ft, train_ex, dev_ex)  # finetune.loss / finetune.target; each query is one ranking group
    start_state = interpolation.snapshot(model) if caps["interpolate"] else None
    result = train(model, tok, train_ex, dev_ex, settings, out_dir, select_fn=select)
    model, tok = load_scorer(out_dir)
    if start_state is not None:
        choice = interpolation.choose(
            model,
            start_state,
            caps["interpolate"],
            lambda m: select(score_documents(m, tok, dev_df, dev_docs, params["model"])),
        )
    record = {
        "train_queries": len(train_df),
        "dev_queries": len(dev_df),
        "document_turns_cap": caps["document_turns"],
        "best_epoch": result.best_epoch,
        "dev_rouge2_f1": result.best_metric,
        "windows": result.pack_stats.get("windows"),
        "seconds": round(result.train_seconds, 2),
        **({"interpolation": choice.to_dict()} if start_state is not None else {}),
    }
    for f in Path(out_dir).iterdir():  # only the scores of the fine-tuned copy are kept
        if f.is_file() and f.name != "training.json":
            f.unlink()
    return model, tok, record
