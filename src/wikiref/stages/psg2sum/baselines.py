"""Psg2Sum's extractive baselines (Zhou, Wei & Zhou, Table 4, §3 and Appendix B) and their official scoring.

A Psg2Sum example on the common schema (:data:`wikiref.schemas.EXAMPLE`) has one ``original`` document whose
``sentences`` are the passage's sentences, ``summary`` = [the lead-section sentence] and ``query`` = [article
title, section path...]. Every method here returns one sentence of the passage (the paper's summaries are one
sentence long); a passage without a (non-blank) sentence gets an empty summary, scored 0, never skipped.
Passage sentences are the documents' sentences in order, stripped, blank ones dropped (:func:`passage_sentences`).

Methods (:data:`METHODS`)
-------------------------
``lead1``
    "extracts the first sentence as the summary" (§3.1).
``textrank``
    The paper ran gensim's TextRank summariser (Mihalcea & Tarau 2004, ``gensim.summarization``), which is
    gone from gensim 4 (the installed version). Appendix B.4: it "refuse[s] to summariz[e] passages with less
    than three sentences. Therefore, we randomly select one sentence as the summary for passages shorter than
    three sentences." Reproduced: a passage with 1 or 2 sentences gets a uniformly drawn sentence, from a NumPy
    generator seeded with ``seed`` and a SHA-256 digest of the example id
    (:func:`wikiref.extractive.textrank.cluster_rng`: deterministic, independent of Python's hash salt and of
    the order examples are processed); a passage with >= 3 sentences gets its top TextRank sentence, ties to
    the earlier sentence. The scores are the project's TextRank
    (:func:`wikiref.extractive.textrank.textrank_scores`): PageRank (damping 0.85, networkx's definition)
    of the graph of the passage's sentences weighted by the cosine of their tf-idf vectors (scikit-learn
    ``TfidfVectorizer``, English stop words, idf fitted on the passage's own sentences, no self-loops).
    **Difference from gensim**: gensim's summariser is the variant of Barrios et al. (2016): sentences are
    cleaned (stop words removed, Porter-stemmed), the edge from one sentence to another is the BM25 score of
    the first as a query against the second (BM25 statistics over the passage's sentences; asymmetric), edges
    below a small threshold are dropped and unconnected sentences removed, then weighted PageRank. Here the
    similarity is the symmetric tf-idf cosine without stemming, so the top sentence can differ from gensim's
    on some passages. When the passage's sentences share no content word the graph has no edge, every score
    is equal and the first sentence wins the tie (gensim would return an empty summary there; the paper does
    not say what it did).
``bert``
    The package's BERT extractive scorer (:mod:`wikiref.model`) in NN-SE's place (Cheng & Lapata 2016,
    Appendix B.5: "we select the sentence with highest extraction score as the passage summary"). Trained by
    :func:`train_bert` with a classification head (sigmoid + binary cross-entropy) on 0/1 labels: the single
    positive of a passage is its sentence with the highest ROUGE-1 F1 against the summary
    (:class:`wikiref.rouge.fast.SentenceSetRouge`, rouge-score semantics with stemming; ties to the earlier
    sentence; a passage whose sentences all score 0 has no positive). NN-SE extracts one sentence, so the
    label is top-1 too. Input: the passage alone (:data:`QUERY_INPUT` false; NN-SE reads only the document,
    so the scorer does not see the title / section query; ``pooling: query`` (Q-BERT) needs the query and is
    refused). Encoder and window settings from the ``model`` section, sentence pooling
    ``psg2sum.supervised.pooling``, optimiser settings from ``pretrain`` with ``psg2sum.supervised.epochs``;
    at most ``psg2sum.supervised.max_train_examples`` training examples (a seeded subset, null = all). The
    epoch kept is the one with the best dev score of the test-time rule: the mean ROUGE-1 F1 (the label
    metric) of each dev passage's highest-scoring sentence. At test (:func:`bert_summaries`) the
    highest-scoring sentence is the summary (ties to the earlier sentence).

Scoring (:func:`score`)
-----------------------
The paper scores with "the official Rouge script" (ROUGE-1.5.5) and prints R / P / F1 of ROUGE-1, -2 and -L
with 95% confidence intervals, but does not list its flags. We use ROUGE-1.5.5's defaults plus
``-n 2 -m -c 95 -r 1000`` (:data:`ROUGE_FLAGS`): ROUGE-1 and -2, ROUGE-L (on unless ``-x``), Porter stemming
with the WordNet exceptions (``-m``), 95% bootstrap confidence intervals from 1000 resamples, no stop-word
removal, no length limit, model averaging ``-f A``, ``-p 0.5`` (F1), ``-t 0`` (the mean of per-example
scores). The scorer is :mod:`wikiref.rouge.official` (the project's exact re-implementation of
ROUGE-1.5.5.pl, averages and bootstrap intervals included), in memory through
:func:`wikiref.rouge.official.evaluate_summaries`, one reference per example. Numbers are x100 as the
paper prints them. The paper's "± h" is read as the half-width of the script's interval, ``(upper - lower) / 2``
(:func:`table4`), since the script prints the interval's bounds.
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from wikiref.extractive.official import ROUGE_FLAGS
from wikiref.papers.psg2sum import (
    ABSTRACTIVE,
    ABSTRACTIVE_NOTE,
    FIELD_SHORT,
    FIELDS,
    METHOD_LABELS,
    METHODS,
    METRICS,
    PAPER_ROW,
    SHORT,
    ours_cells,
    paper_cells,
)

TEXTRANK_MIN_SENTENCES = 3  # gensim's summariser refuses shorter passages (Appendix B.4)
QUERY_INPUT = False  # the BERT scorer reads the passage alone, as NN-SE does


# --------------------------------------------------------------------------------------- inputs
def passage_sentences(row: Mapping) -> list[str]:
    """The passage's sentences: every document's sentences in order (Psg2Sum has one), stripped, blank ones
    dropped."""
    return [s.strip() for d in row["documents"] for s in (str(x) for x in d["sentences"]) if s.strip()]


def references(rows: Sequence[Mapping]) -> dict[str, list[str]]:
    """``{example id: summary sentences}``."""
    return {str(r["id"]): [str(s) for s in r["summary"]] for r in rows}


def _clean(sentences: Sequence[str]) -> list[str]:
    return [s.strip() for s in (str(x) for x in sentences) if s.strip()]


def _top(scores: Sequence[float]) -> int:
    """Index of the highest score, ties to the earlier sentence; NaN (never scored) counts as lowest."""
    a = np.nan_to_num(np.asarray(scores, dtype=np.float64), nan=-np.inf)
    return int(np.argmax(a))


# -------------------------------------------------------------------------------------- methods
def lead1(sentences: Sequence[str]) -> list[str]:
    """LEAD1: the passage's first (non-blank) sentence; [] for an empty passage."""
    sents = _clean(sentences)
    return sents[:1]


def textrank(sentences: Sequence[str], *, example_id: str, seed: int) -> list[str]:
    """TEXTRANK: with fewer than 3 sentences a seeded random one (Appendix B.4), else the top TextRank
    sentence (tf-idf cosine graph + PageRank, ties to the earlier sentence). See the module docstring."""
    from wikiref.extractive.textrank import cluster_rng, textrank_scores

    sents = _clean(sentences)
    if not sents:
        return []
    if len(sents) < TEXTRANK_MIN_SENTENCES:
        rng = cluster_rng(str(example_id), int(seed))
        return [sents[int(rng.integers(len(sents)))]]
    return [sents[_top(textrank_scores(sents))]]


def summarize(method: str, row: Mapping, *, seed: int) -> list[str]:
    """One unsupervised method (``lead1`` / ``textrank``) on one example row."""
    sents = passage_sentences(row)
    if method == "lead1":
        return lead1(sents)
    if method == "textrank":
        return textrank(sents, example_id=str(row["id"]), seed=seed)
    if method == "bert":
        raise ValueError("bert needs a trained scorer: use train_bert() and bert_summaries()")
    raise ValueError(f"unknown Psg2Sum method {method!r}; known: {METHODS}")


def summarize_all(method: str, rows: Sequence[Mapping], *, seed: int) -> dict[str, list[str]]:
    """``{example id: summary}`` of ``lead1`` or ``textrank`` for every row."""
    return {str(r["id"]): summarize(method, r, seed=seed) for r in rows}


# ----------------------------------------------------------------------------------------- BERT
def sentence_labels(sentences: Sequence[str], summary: Sequence[str]) -> tuple[list[float], list[float]]:
    """(0/1 labels, each sentence's ROUGE-1 F1 against the summary): the one positive is the sentence with
    the highest ROUGE-1 F1 (ties to the earlier sentence); none when every sentence scores 0."""
    from wikiref.rouge.fast import SentenceSetRouge

    if not sentences:
        return [], []
    scorer = SentenceSetRouge(list(sentences), " ".join(summary), rouge_type="rouge1")
    f1 = [float(s.fmeasure) for s in scorer.sentence_scores()]
    labels = [0.0] * len(f1)
    best = _top(f1)
    if f1[best] > 0:
        labels[best] = 1.0
    return labels, f1


def _subset(rows: Sequence[Mapping], cap, seed: int) -> list[Mapping]:
    rows = list(rows)
    if cap is not None and len(rows) > int(cap):
        rows = random.Random(f"{seed}:psg2sum-supervised").sample(rows, int(cap))
        rows.sort(key=lambda r: str(r["id"]))
    return rows


def _labelled_examples(rows: Sequence[Mapping]):
    from wikiref.model.scoring_task import ScoringExample

    examples, f1s, positives = [], [], 0
    for r in rows:
        sents = passage_sentences(r)
        if not sents:
            continue
        labels, f1 = sentence_labels(sents, [str(s) for s in r["summary"]])
        positives += int(any(labels))
        examples.append(ScoringExample([str(q) for q in r["query"]], sents, labels, str(r["id"])))
        f1s.append(f1)
    return examples, f1s, positives


def _variant(sup: Mapping) -> dict:
    if sup["pooling"] == "query":
        raise ValueError(
            "psg2sum.supervised.pooling: 'query' (Q-BERT) needs the query in the input; the Psg2Sum BERT row "
            "reads the passage alone, as NN-SE does"
        )
    return {"pooling": sup["pooling"], "head": "classification", "init": "pretrained", "query": QUERY_INPUT}


def train_bert(
    params: Mapping,
    train_rows: Sequence[Mapping],
    dev_rows: Sequence[Mapping],
    model_dir: str | Path,
    sup: Mapping,
) -> dict:
    """Train the BERT row's scorer (see the module docstring) into ``model_dir`` and return a summary of the
    run. ``params``: the ``seed``, ``model`` and ``pretrain`` sections; ``sup``: ``psg2sum.supervised``
    (``enabled, pooling, epochs, max_train_examples``). With ``enabled`` false nothing is trained and the
    summary says so (``{"enabled": False, ...}``)."""
    if not sup["enabled"]:
        return {"enabled": False, "note": "psg2sum.supervised.enabled is false: no BERT row"}
    import torch

    from wikiref.model import build_scorer, training
    from wikiref.supervised.pretraining import scorer_config

    t0 = time.perf_counter()
    seed = int(params["seed"])
    variant = _variant(sup)
    train_ex, _, train_pos = _labelled_examples(_subset(train_rows, sup["max_train_examples"], seed))
    dev_ex, dev_f1, dev_pos = _labelled_examples(list(dev_rows))
    if not train_ex or not dev_ex:
        raise ValueError(f"Psg2Sum BERT: no train ({len(train_ex)}) or dev ({len(dev_ex)}) passage with sentences")

    def dev_top1_rouge1(scores: list[np.ndarray]) -> float:
        return float(np.mean([f1[_top(s)] for f1, s in zip(dev_f1, scores)]))

    torch.manual_seed(seed)
    model, tokenizer = build_scorer(scorer_config(params["model"], variant))
    section = dict(params["pretrain"], epochs=int(sup["epochs"]))
    settings = training.TrainSettings.from_params(seed, params["model"], section, progress=False)
    result = training.train(model, tokenizer, train_ex, dev_ex, settings, model_dir, select_fn=dev_top1_rouge1)
    return {
        "enabled": True,
        "encoder": params["model"]["encoder"],
        "pooling": variant["pooling"],
        "head": variant["head"],
        "query_input": QUERY_INPUT,
        "label": "the passage sentence with the highest ROUGE-1 F1 against the summary (one positive)",
        "train_examples": len(train_ex),
        "train_with_positive": train_pos,
        "dev_examples": len(dev_ex),
        "dev_with_positive": dev_pos,
        "max_train_examples": sup["max_train_examples"],
        "epochs": int(sup["epochs"]),
        "dev_top1_rouge1_f1": round(float(result.best_metric), 5),
        "training": {
            k: v
            for k, v in result.to_dict().items()
            if k in ("best_epoch", "history", "train_seconds", "windows_per_second", "pack_stats")
        },
        "seconds": round(time.perf_counter() - t0, 3),
    }


def bert_summaries(model_dir: str | Path, rows: Sequence[Mapping], params: Mapping) -> dict[str, list[str]]:
    """``{example id: [the passage sentence the trained scorer ranks highest]}`` for every row ([] for a
    passage without sentences). ``params``: the ``model`` section (device, evaluation batch size)."""
    from wikiref.model import load_scorer
    from wikiref.supervised.pretraining import score_examples

    model, tokenizer = load_scorer(model_dir)  # score_examples moves it to the model section's device
    todo = [(str(r["id"]), [str(q) for q in r["query"]], passage_sentences(r)) for r in rows]
    todo = [t for t in todo if t[2]]
    scores = score_examples(model, tokenizer, [(q, s) for _, q, s in todo], params["model"])
    chosen = {i: [s[_top(sc)]] for (i, _, s), sc in zip(todo, scores)}
    return {str(r["id"]): chosen.get(str(r["id"]), []) for r in rows}


def table4(results: Mapping[str, Mapping], stem: str | Path, *, profile: Mapping, n_test: int) -> list[dict]:
    """Write Table 4 (:func:`wikiref.tables.write_table`): one row per extractive method of :data:`METHODS`
    (``results``: method -> :func:`score` output; a method not in ``results`` shows empty cells) with
    R / P / F of ROUGE-1/2/L as "x ± h" (h = half the 95% interval), the paper's row beside it, then the
    paper's abstractive rows (s2s, s2s+copy, PGN; no numbers of ours here, marked with :data:`ABSTRACTIVE_NOTE`:
    the abstractive stage's ``abstractive_psg2sum_table4`` has them beside every row of this table).
    When ``profile["standin"]``, every row has ``Data`` = STAND-IN. Returns the rows."""
    import pandas as pd

    from wikiref.tables import stand_in_rows, write_table

    ours_cols = [f"{SHORT[m]} {FIELD_SHORT[f]}" for m in METRICS for f in FIELDS]
    unknown = sorted(set(results) - set(METHODS))
    if unknown:
        raise ValueError(f"unknown Psg2Sum methods {unknown}; known: {METHODS}")
    records = []
    for method in METHODS:
        rec: dict = {"Method": METHOD_LABELS[method] + ("" if method in results else " (not run)")}
        rec.update(ours_cells(results[method]) if method in results else dict.fromkeys(ours_cols, ""))
        rec["Paper row"] = PAPER_ROW[method]
        rec.update(paper_cells(PAPER_ROW[method]))
        records.append(rec)
    for row in ABSTRACTIVE:
        rec = {"Method": f"{row} {ABSTRACTIVE_NOTE}", **dict.fromkeys(ours_cols, "")}
        rec["Paper row"] = row
        rec.update(paper_cells(row))
        records.append(rec)
    df = stand_in_rows(pd.DataFrame(records), profile)
    write_table(
        df,
        stem,
        title=(
            f"Psg2Sum Table 4: extractive baselines on the test split ({n_test} passages; official ROUGE-1.5.5 "
            f"{ROUGE_FLAGS}, recall / precision / F1 x100 ± half the 95% interval)"
        ),
        profile=profile,
        notes=(
            "Paper columns: Zhou, Wei & Zhou, Psg2Sum Table 4 (test set, official ROUGE script; the paper does not "
            f"list its flags, ours are ROUGE-1.5.5 defaults with {ROUGE_FLAGS}). TextRank: tf-idf cosine graph + "
            "PageRank in place of gensim's BM25-weighted variant, a seeded random sentence for passages with "
            "fewer than 3 sentences as in the paper. The package's BERT scorer (classification head, top-1 "
            "sentence, label = the sentence with the best ROUGE-1 F1) takes NN-SE's row. The abstractive rows "
            "(s2s, s2s+copy, PGN) are the paper's only here; the abstractive stage trains them and puts them beside "
            "every row of this table in results/tables/abstractive_psg2sum_table4."
        ),
    )
    return df.to_dict("records")
