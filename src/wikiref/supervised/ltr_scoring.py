"""The learning-to-rank scorer (:mod:`wikiref.extractive.ltr`) on a benchmark's documents.

An :class:`Embedder` (an encoder such as ``model.encoder``, untrained: unit-normalised mean-pooled
vectors, :func:`wikiref.model.biencoder.embed_texts`) embeds the query and the units; every unit gets the
ranker's features; a :class:`~wikiref.extractive.ltr.Ranker` is fitted on the training documents' per-unit
ROUGE targets, one candidate per target transform, and the candidate whose summaries of held-out documents
score best is refitted on every training document.

DUC (a ``finetune.settings`` entry with ``method: ltr``): the ranking unit is a cluster, as the DUC rule
ranks sentences across the cluster. Its sentences (documents in cluster order, training documents cut to
``finetune.max_doc_sentences``) form one feature document: TF-IDF fitted on the cluster, z-scores, ranks and
centrality over the cluster, the position relative to the sentence's own document. Targets: each
sentence's ROUGE-2 recall against the cluster's references (``sentence_targets``). The cosine of the same
embeddings (the encoder's own ranking) is scored beside it, so the table can say what the ranker adds. With a
``signal`` (a setting with ``init: pretrained``: the WikiRef checkpoint's sentence scores) every sentence gets
:data:`~wikiref.extractive.ltr.SIGNAL_FEATURES` too.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import pandas as pd

from wikiref.extractive.ltr import FEATURES, Ranker, RankerSettings, document_features, signal_features

UNIT_TOKENS = 128  # a sentence or turn is cut to this many tokens before it is embedded
QUERY_TOKENS = 64
log = logging.getLogger(__name__)


def progress(what: str, items: Sequence, parts: int = 10) -> Iterator:
    """``items`` in order, logging "<what>: k/n (s)" after about every ``parts``-th of them and after the last:
    embedding whole meetings or clusters takes minutes on a CPU."""
    step, t0 = max(1, len(items) // parts), time.perf_counter()
    for k, item in enumerate(items, 1):
        yield item
        if k % step == 0 or k == len(items):
            log.info("%s: %d/%d (%.0fs)", what, k, len(items), time.perf_counter() - t0)


class Embedder:
    """Unit-normalised embeddings of texts by an encoder (no training), on ``device``."""

    def __init__(self, encoder_name: str, *, device: str = "cpu", seed: int = 0, unit_tokens: int = UNIT_TOKENS):
        import torch

        from wikiref.model.encoders import load_encoder, load_tokenizer

        torch.manual_seed(seed)  # a randomly initialised encoder (tiny-random) draws from the global RNG
        self.name, self.unit_tokens = encoder_name, unit_tokens
        self.tokenizer = load_tokenizer(encoder_name, 0)
        self.encoder = load_encoder(encoder_name, self.tokenizer).to(device)

    @classmethod
    def of(cls, encoder, tokenizer, name: str, *, unit_tokens: int = UNIT_TOKENS) -> Embedder:
        """An embedder over an encoder already in memory (e.g. a fine-tuned bi scorer's ``model.encoder``)."""
        self = cls.__new__(cls)
        self.name, self.unit_tokens, self.tokenizer, self.encoder = name, unit_tokens, tokenizer, encoder
        return self

    def units(self, texts: Sequence[str]) -> np.ndarray:
        from wikiref.model.biencoder import embed_texts

        if not texts:
            return np.zeros((0, self.encoder.config.hidden_size), dtype=np.float32)
        return embed_texts(self.encoder, self.tokenizer, list(texts), max_tokens=self.unit_tokens)

    def query(self, query: Sequence[str]) -> np.ndarray:
        from wikiref.model.biencoder import embed_texts

        text = " ; ".join(str(q) for q in query)
        return embed_texts(self.encoder, self.tokenizer, [text], max_tokens=QUERY_TOKENS)[0]


def ranker_settings(spec: Mapping, seed: int) -> list[RankerSettings]:
    """One :class:`RankerSettings` per target transform of ``spec`` (an ``ltr`` entry of the params: ``targets`` and
    optionally the ranker's other fields, the dataclass's defaults for those left out; its other keys are not the
    ranker's)."""
    known = {f.name for f in fields(RankerSettings)} - {"name", "target", "seed"}
    extra = {k: v for k, v in spec.items() if k in known}  # the params schema rejects unknown keys
    return [RankerSettings(name=f"ltr-{t}", target=t, seed=seed, **extra) for t in spec["targets"]]


def encoder_name(spec: Mapping, model: Mapping) -> str:
    """The encoder whose embeddings the ranker reads: the ``ltr`` entry's ``encoder``, else ``model.encoder``."""
    return spec.get("encoder") or model["encoder"]


# --------------------------------------------------------------------------- DUC clusters


@dataclass
class Cluster:
    """One DUC cluster as a feature document: its rows (indices into the year's table, in cluster order), the
    number of sentences of each, the features and ROUGE-2 recall targets of the sentences."""

    topic: str
    rows: list[int]
    sizes: list[int]
    x: np.ndarray
    y: np.ndarray


def cut_documents(df: pd.DataFrame, max_doc_sentences: int | None) -> pd.DataFrame:
    """A DUC table with every document cut to its first ``max_doc_sentences`` sentences and targets (None: as is)."""
    if max_doc_sentences is None:
        return df
    out = df.copy()
    for col in ("doc_sentences", "sentence_targets"):
        out[col] = [list(v)[:max_doc_sentences] for v in df[col]]
    return out


def duc_clusters(
    df: pd.DataFrame, embedder: Embedder, signal: Sequence[Sequence[float]] | None = None
) -> list[Cluster]:
    """The clusters of a DUC table (``data/duc/<year>.parquet`` rows, sorted by topic and document position, a
    RangeIndex). ``signal``: per row, a trained scorer's score of each sentence, appended to the features
    (:func:`wikiref.extractive.ltr.signal_features`, over the cluster)."""
    out = []
    for topic, group in progress("LTR: DUC clusters featurised", list(df.groupby("topic", sort=True))):
        rows, sizes, sents, positions, targets, extra = [], [], [], [], [], []
        for i, r in zip(group.index, group.itertuples(index=False)):
            s = [str(x) for x in r.doc_sentences]
            n = len(s)
            rows.append(int(i))
            sizes.append(n)
            sents += s
            positions += (np.arange(n) / max(n - 1, 1)).tolist()
            targets += [float(t) for t in r.sentence_targets][:n]
            if signal is not None:
                extra += [float(v) for v in signal[int(i)]]
        query = [str(q) for q in group.iloc[0]["query"]]
        x = document_features(query, sents, embedder.units(sents), embedder.query(query), positions=positions)
        if signal is not None:
            x = signal_features(x, extra)
        out.append(Cluster(str(topic), rows, sizes, x, np.asarray(targets, dtype=np.float64)))
    return out


def row_scores(clusters: Sequence[Cluster], n_rows: int, score: Callable[[np.ndarray], np.ndarray]) -> list[np.ndarray]:
    """Per row of the table the clusters came from: its sentences' scores (``score`` of a cluster's features)."""
    out: list[np.ndarray] = [np.zeros(0)] * n_rows
    for c in clusters:
        values = np.asarray(score(c.x), dtype=np.float64)
        bounds = np.cumsum([0] + c.sizes)
        for row, lo, hi in zip(c.rows, bounds[:-1], bounds[1:]):
            out[row] = values[lo:hi]
    return out


def fit_and_score_clusters(
    train_df: pd.DataFrame,
    dev_df: pd.DataFrame,
    test_df: pd.DataFrame,
    embedder: Embedder,
    candidates: Sequence[RankerSettings],
    dev_metric: Callable[[list[np.ndarray]], float],
    *,
    max_doc_sentences: int | None = None,
    signal: Callable[[pd.DataFrame], Sequence[Sequence[float]]] | None = None,
    held_out_scores: bool = False,
) -> tuple[list[np.ndarray], list[np.ndarray], dict[str, Any]]:
    """The DUC learning-to-rank pipeline: clusters of the three tables (the training clusters' documents cut to
    ``max_doc_sentences``), the ranker chosen by ``dev_metric`` (the held-out clusters' summary ROUGE of per-row
    sentence scores, higher is better; :func:`choose_ranker`), and the test table's per-row sentence scores by the
    ranker and by the encoder's cosine. ``signal``: a table -> per row, a trained scorer's sentence scores (a
    feature of every table's sentences). Returns (ranker scores, cosine scores, the choice's record);
    ``held_out_scores``: the record's ``dev_scores`` holds the dev table's per-row scores by the chosen ranker
    fitted on the training clusters alone (before its refit on both) and by the cosine, for choices made after
    the ranker's (arrays: not for a JSON record)."""

    def clusters(df: pd.DataFrame) -> list[Cluster]:
        return duc_clusters(df, embedder, None if signal is None else signal(df))

    train_df = cut_documents(train_df, max_doc_sentences)
    train, dev = clusters(train_df), clusters(dev_df)
    ranker, record = choose_ranker(
        [(c.x, c.y) for c in train],
        [(c.x, c.y) for c in dev],
        candidates,
        lambda score: dev_metric(row_scores(dev, len(dev_df), score)),
    )
    if held_out_scores:
        best = next(s for s in candidates if s.target == record["chosen_target"])
        held_out = Ranker(best).fit([(c.x, c.y) for c in train])
        record["dev_scores"] = {
            "ranker": row_scores(dev, len(dev_df), held_out.scores),
            "cosine": row_scores(dev, len(dev_df), cosine),
        }
    test = clusters(test_df)
    return row_scores(test, len(test_df), ranker.scores), row_scores(test, len(test_df), cosine), record


def cosine(x: np.ndarray) -> np.ndarray:
    """The encoder's own ranking: the embedding cosine column of the features."""
    return x[:, FEATURES.index("cos")]


def choose_ranker(
    train: Sequence[tuple[np.ndarray, np.ndarray]],
    dev: Sequence[tuple[np.ndarray, np.ndarray]],
    candidates: Sequence[RankerSettings],
    dev_value: Callable[[Callable[[np.ndarray], np.ndarray]], float],
) -> tuple[Ranker, dict[str, Any]]:
    """Each candidate fitted on the ``train`` documents (features, targets) and valued by ``dev_value`` (a function
    that scores a document's features -> the held-out summaries' ROUGE, higher is better; the encoder's cosine is
    valued too, for the record); the best refitted on ``train`` + ``dev``. Returns (ranker, record)."""
    t0 = time.perf_counter()
    values = {s.target: round(dev_value(Ranker(s).fit(train).scores), 4) for s in candidates}
    values["cosine"] = round(dev_value(cosine), 4)
    best = max(candidates, key=lambda s: values[s.target])
    record = {
        "chosen_target": best.target,
        "ranker": {f.name: getattr(best, f.name) for f in fields(best) if f.name != "name"},
        "dev_values": values,
        "train_documents": len(train),
        "dev_documents": len(dev),
        "train_units": int(sum(len(y) for _, y in train)),
    }
    ranker = Ranker(best).fit(list(train) + list(dev))
    record["fit_seconds"] = round(time.perf_counter() - t0, 2)
    return ranker, record


# --------------------------------------------------------------------------- QMSum queries


class TurnEmbeddings:
    """The embeddings of meeting turns and queries, each embedded once however many documents read it."""

    def __init__(self, embedder: Embedder):
        self.embedder = embedder
        self.vectors: dict[tuple[str, int], np.ndarray] = {}
        self.queries: dict[tuple[str, ...], np.ndarray] = {}

    def query(self, query: Sequence[str]) -> np.ndarray:
        key = tuple(str(q) for q in query)
        if key not in self.queries:
            self.queries[key] = self.embedder.query(key)
        return self.queries[key]

    def preload(self, meeting: str, vectors: np.ndarray) -> None:
        """Every turn's embedding of ``meeting`` (one row per turn, in order), e.g. read from a disk cache."""
        for i, v in enumerate(vectors):
            self.vectors[(meeting, i)] = v

    def get(self, meeting: str, turns: Sequence[str], indices: Sequence[int]) -> np.ndarray:
        missing = [i for i in dict.fromkeys(indices) if (meeting, i) not in self.vectors]
        for i, v in zip(missing, self.embedder.units([turns[i] for i in missing])):
            self.vectors[(meeting, i)] = v
        if not indices:
            return np.zeros((0, self.embedder.encoder.config.hidden_size), dtype=np.float32)
        return np.stack([self.vectors[(meeting, i)] for i in indices])


def qmsum_documents(
    df: pd.DataFrame,
    setting: str,
    cache: TurnEmbeddings,
    *,
    span_targets: bool,
    signal: Sequence[Sequence[float]] | None = None,
) -> list[dict]:
    """Per QMSUM row: ``id``, ``meeting_id``, ``answer``, the ``turns`` of its document in ``setting``, their features ``x`` and
    targets ``y`` (each turn's ROUGE-2 recall against the answer; with ``span_targets`` a transcript turn outside
    the annotated spans counts 0, so a transcript model learns to find the part of the meeting the query is about).
    ``signal``: per row, a trained scorer's score of each of those turns (:func:`~wikiref.extractive.ltr.signal_features`)."""
    from wikiref.extractive.meetings import document_turns

    out = []
    for k, r in enumerate(progress(f"LTR: QMSum {setting} documents featurised", df.to_dict("records"))):
        idx, turns = document_turns(r, setting)
        query = [str(q) for q in r["query"]]
        emb = cache.get(str(r["meeting_id"]), [str(t) for t in r["turns"]], idx)
        x = document_features(query, turns, emb, cache.query(query))
        if signal is not None:
            x = signal_features(x, signal[k])
        y = np.asarray([float(r["turn_targets"][i]) for i in idx], dtype=np.float64)
        if setting == "transcript" and span_targets:
            inside = {int(i) for i in r["span_turns"]}
            y = np.where([i in inside for i in idx], y, 0.0)
        out.append(
            {
                "id": str(r["id"]),
                "meeting_id": str(r["meeting_id"]),
                "answer": str(r["answer"]),
                "turns": turns,
                "x": x,
                "y": y,
            }
        )
    return out


def fit_and_extract_queries(
    splits: Mapping[str, pd.DataFrame],
    setting: str,
    cache: TurnEmbeddings,
    candidates: Sequence[RankerSettings],
    max_words: int,
    *,
    span_targets: bool,
    signal: Callable[[pd.DataFrame], Sequence[Sequence[float]]] | None = None,
) -> tuple[dict[str, list[str]], dict[str, list[str]], dict[str, Any]]:
    """The QMSum learning-to-rank pipeline in ``setting``: documents of the ``train``, ``dev`` and ``test`` rows
    (``splits``; :func:`qmsum_documents`, with ``signal``: a table -> per row, a trained scorer's turn scores), the
    ranker chosen on the dev extracts' quick ROUGE-2 F1 (:func:`choose_ranker`), and the test rows' extracts by the
    ranker and by the encoder's cosine. Returns (ranker extracts, cosine extracts, the choice's record). Raises
    :class:`~wikiref.supervised.qmsum_finetune.QmsumStageError` (before anything is embedded) when a split has no
    query."""
    from wikiref.supervised.qmsum_finetune import QmsumStageError

    sizes = {name: len(splits[name]) for name in ("train", "dev", "test")}
    if not all(sizes.values()):
        raise QmsumStageError(f"the ranker needs train, dev and test queries (have {sizes})")
    docs = {
        name: qmsum_documents(
            splits[name],
            setting,
            cache,
            span_targets=span_targets,
            signal=None if signal is None else signal(splits[name]),
        )
        for name in ("train", "dev", "test")
    }
    ranker, record = choose_ranker(
        [(d["x"], d["y"]) for d in docs["train"]],
        [(d["x"], d["y"]) for d in docs["dev"]],
        candidates,
        lambda score: quick_rouge2_f1(docs["dev"], extracts(docs["dev"], score, max_words)),
    )
    return extracts(docs["test"], ranker.scores, max_words), extracts(docs["test"], cosine, max_words), record


def extracts(docs: Sequence[dict], score: Callable[[np.ndarray], np.ndarray], max_words: int) -> dict[str, list[str]]:
    """``{row id: extract}``: each document's turns ranked by ``score`` of its features within the word budget."""
    from wikiref.supervised.qmsum_finetune import extract

    return {d["id"]: extract(d["turns"], score(d["x"]), max_words) for d in docs}


def quick_rouge2_f1(docs: Sequence[dict], summaries: Mapping[str, list[str]]) -> float:
    """Mean ROUGE-2 F1 x 100 of the extracts against the answers (the fast scorer: for choosing, not reporting)."""
    from wikiref.extractive.selection import rouge2_f1

    if not docs:
        raise ValueError("no held-out query to choose the ranker on")
    return 100.0 * float(np.mean([rouge2_f1(" ".join(summaries[d["id"]]), d["answer"]) for d in docs]))
