"""DUC summaries of scored clusters: the journal's rule (:func:`wikiref.extractive.selection.select`, ``duc.select``)
over a year's table and per-row sentence scores, the held-out clusters' ROUGE that chooses epochs, targets and the
MMR weight, and a test year's official evaluation. Used by held-out-year fine-tuning (:mod:`.duc_finetune`) and
the learning-to-rank rows."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd


def cluster_summaries(
    df: pd.DataFrame, scores: Sequence[Sequence[float]], *, max_words: int, **select_options
) -> tuple[dict[str, list[str]], int]:
    """Per topic: the sentences of all its documents (cluster order) ranked by score and selected by
    the DUC rule (:func:`wikiref.extractive.selection.select` with ``select_options``: ``duc.select``).
    ``scores[i]`` belongs to row ``i`` of ``df``. Returns (summaries, unscored count): a sentence without a
    score (NaN) ranks last."""
    from wikiref.extractive.selection import select

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
        idx = select(flat.tolist(), sents, max_words=max_words, **select_options)
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
    ``duc.rouge_flags``) of the dev clusters' summaries; a rule with several MMR weights in rank order (the choices
    made before the weight's, :func:`held_out_rule`)."""
    from wikiref.extractive.selection import base_rule
    from wikiref.rouge import official

    refs = topic_references(dev)
    scorers = {t: official.Scorer(r, flags=duc["rouge_flags"]) for t, r in refs.items()}
    select = base_rule(duc["select"])

    def fn(scores: list[np.ndarray]) -> float:
        summaries, _ = cluster_summaries(dev, scores, max_words=duc["summary_words"], **select)
        return 100.0 * float(np.mean([scorers[t](summaries[t])["ROUGE-2"]["R"] for t in sorted(scorers)]))

    return fn


def held_out_rule(
    duc: Mapping, dev: pd.DataFrame, scores_of: Callable[[pd.DataFrame], Sequence[Sequence[float]]]
) -> tuple[dict, dict | None]:
    """``duc`` with its selection rule fixed: for a rule with several MMR weights, the one the held-out clusters
    ``dev`` score best with (:func:`dev_metric_fn` of ``scores_of(dev)``, the per-row sentence scores of the system
    at hand; :func:`wikiref.extractive.selection.choose_mmr`), and the choice's record; a fixed rule as it is, no
    record and nothing scored."""
    from wikiref.extractive.selection import choose_mmr, mmr_choices

    if not mmr_choices(duc["select"]):
        return dict(duc), None
    scores = scores_of(dev)
    select, record = choose_mmr(duc["select"], lambda rule: dev_metric_fn(dev, {**duc, "select": rule})(scores))
    return {**duc, "select": select}, record


def evaluate_year(df: pd.DataFrame, scores: Sequence[Sequence[float]], duc: Mapping) -> tuple[dict, dict]:
    """Summaries of a test year and their official ROUGE (as ``duc-baselines`` reports it); the rule must be fixed
    (:func:`held_out_rule`)."""
    from wikiref.extractive.baselines import evaluate, rows_to_topics
    from wikiref.extractive.selection import mean_summary_words

    summaries, unscored = cluster_summaries(df, scores, max_words=duc["summary_words"], **duc["select"])
    topics = rows_to_topics(df.to_dict("records"))
    scores_out = evaluate(summaries, topics, duc["rouge_flags"])
    scores_out["summary_words_mean"] = mean_summary_words(summaries)
    scores_out["unscored_sentences"] = unscored
    return scores_out, summaries
