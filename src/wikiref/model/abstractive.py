"""The abstractive models on the common example schema: items, vocabulary, training and batched decoding.

Two families share one interface, so a stage trains and decodes either from params alone:

* ``seq2seq``: :mod:`wikiref.model.seq2seq` (s2s, s2s+copy, pointer-generator with coverage; Psg2Sum
  Table 4). The source is one token sequence: the query (when ``use_query``; Psg2Sum's models read the
  passage alone) followed by the documents in their order, cut to ``max_source_length``.
* ``hiersumm``: :mod:`wikiref.model.hiersumm` (Liu & Lapata's hierarchical transformer and HEROSumm's
  components; QmdsCnnIr Tables 3-5). Query and documents stay apart; the model decides how it reads the
  query (prepended to the first document, or its own encoder).

An :class:`Item` is one example as tokens (:func:`tokens`: lower-cased word and punctuation tokens, the
usual preprocessing of these models). :func:`fit` trains with the package's loop
(:func:`wikiref.model.training.fit`: AdamW, schedule, accumulation, checkpoints without unpickling,
resume, dvclive, DDP, length-bucketed batches) through :class:`AbstractiveTask`; the best epoch (lowest
dev loss, or highest dev ROUGE-L of greedy summaries with ``select="rougeL"``, HEROSumm's criterion) is
saved to ``out_dir`` with its vocabulary and ``abstractive.json`` (family, ``use_query``). :func:`summarise`
decodes in length-sorted batches on the model's device; the summaries do not depend on the batch size.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from wikiref.files import read_json, write_json
from wikiref.model import hiersumm, seq2seq
from wikiref.model.decoding import DecodeSettings
from wikiref.model.seq2seq import Vocab
from wikiref.model.training import TrainResult, TrainSettings

FAMILIES = ("seq2seq", "hiersumm")
META_FILE = "abstractive.json"
META_FORMAT = "wikiref-abstractive/1"
SELECT = ("loss", "rougeL")

_TOKEN = re.compile(r"\w+|[^\w\s]")
_SENTENCE_END = frozenset({".", "!", "?"})
_GREEDY = DecodeSettings(beam=1)


# --------------------------------------------------------------------------- items


def tokens(text: str) -> list[str]:
    """Lower-cased tokens: runs of letters/digits, or single other non-space characters."""
    return _TOKEN.findall(text.lower())


def split_sentences(toks: Sequence[str]) -> list[str]:
    """A generated token list as sentence strings (cut after ``.``, ``!``, ``?``), for sentence-level ROUGE
    (ROUGE-L's summary-level LCS reads sentences)."""
    out: list[str] = []
    cur: list[str] = []
    for t in toks:
        cur.append(t)
        if t in _SENTENCE_END:
            out.append(" ".join(cur))
            cur = []
    if cur:
        out.append(" ".join(cur))
    return out


@dataclass(frozen=True)
class Item:
    """One example as tokens: the query (its levels joined), the documents in order, the summary (None at
    inference)."""

    id: str
    query: list[str]
    documents: list[list[str]]
    summary: list[str] | None = None


def item_from_example(row: Mapping) -> Item:
    """An :class:`Item` from a row of ``data/sources/<source>/<split>.parquet`` (:data:`wikiref.schemas.EXAMPLE`).
    Documents without a token are dropped; an example left without one is an error naming it."""
    query = [t for level in row["query"] for t in tokens(str(level))]
    docs = [tokens(" ".join(str(s) for s in d["sentences"])) for d in row["documents"]]
    docs = [d for d in docs if d]
    if not docs:
        raise ValueError(f"example {row['id']!r} has no document with a token")
    summary = tokens(" ".join(str(s) for s in row["summary"]))
    return Item(str(row["id"]), query, docs, summary)


def build_vocab(items: Sequence[Item], max_words: int) -> Vocab:
    """The ``max_words`` most frequent tokens of the items' queries, documents and summaries (the training
    source's vocabulary; ties by the word, so the same items give the same ids)."""

    def texts():
        for it in items:
            yield it.query
            yield from it.documents
            if it.summary is not None:
                yield it.summary

    return Vocab.build(texts(), max_words)


def source_tokens(item: Item, use_query: bool) -> list[str]:
    """The seq2seq source: the query (when ``use_query``) then every document, in order."""
    return [*(item.query if use_query else ()), *(t for d in item.documents for t in d)]


# --------------------------------------------------------------------------- models


def _family(family: str) -> str:
    if family not in FAMILIES:
        raise ValueError(f"unknown abstractive model family {family!r}; known: {FAMILIES}")
    return family


def model_config(family: str, vocab: Vocab, config: Mapping[str, Any]):
    """The family's config (``Seq2SeqConfig`` / ``HierSummConfig``) from ``config`` + the vocabulary size."""
    if "vocab_size" in config:
        raise ValueError("vocab_size comes from the vocabulary, not from the config")
    cls = seq2seq.Seq2SeqConfig if _family(family) == "seq2seq" else hiersumm.HierSummConfig
    return cls.from_dict({**config, "vocab_size": len(vocab)})


def build_model(family: str, vocab: Vocab, config: Mapping[str, Any], *, seed: int = 0) -> torch.nn.Module:
    """A freshly initialised model (weights drawn from ``seed``, the global RNG left as it was)."""
    cfg = model_config(family, vocab, config)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return seq2seq.Seq2Seq(cfg) if family == "seq2seq" else hiersumm.HierSumm(cfg)


def _example(family: str, config, vocab: Vocab, item: Item, use_query: bool, with_target: bool):
    summary = item.summary if with_target else None
    if with_target and not summary:
        raise ValueError(f"example {item.id!r} has no summary to train on")
    if family == "seq2seq":
        return seq2seq.make_example(source_tokens(item, use_query), summary, vocab, config)
    return hiersumm.make_example(item.query, item.documents, summary, vocab, config)


def _collate(family: str, config, examples: Sequence) -> dict[str, torch.Tensor]:
    if family == "seq2seq":
        return seq2seq.collate(examples, config.vocab_size)
    return hiersumm.collate(examples, config)


def _digest(items: Sequence[Item]) -> str:
    h = hashlib.sha1()
    for it in items:
        h.update(json.dumps([it.id, it.query, it.documents, it.summary], ensure_ascii=False).encode("utf-8"))
    return h.hexdigest()


def _truncated(example) -> bool:
    return bool(getattr(example, "truncated", False) or getattr(example, "truncated_source", False))


class AbstractiveTask:
    """:class:`wikiref.model.scoring_task.TrainingTask` of an abstractive model: teacher-forced batches of
    :class:`Item` s, loss = the model's (mean over examples of the per-step mean; + coverage for the PGN),
    dev = mean dev loss (and greedy dev summaries with ``select="rougeL"``)."""

    def __init__(
        self,
        family: str,
        model: torch.nn.Module,
        vocab: Vocab,
        train_items: Sequence[Item],
        dev_items: Sequence[Item],
        *,
        use_query: bool = True,
        select: str = "loss",
    ) -> None:
        self.family = _family(family)
        if select not in SELECT:
            raise ValueError(f"unknown dev selection {select!r}; known: {SELECT}")
        if not train_items:
            raise ValueError("no training example")
        if not dev_items:
            raise ValueError("no dev example: the best epoch is chosen on dev")
        self.vocab, self.use_query, self.select = vocab, use_query, select
        self.config = model.config
        self.train_items = [_example(family, self.config, vocab, it, use_query, True) for it in train_items]
        self.dev_examples = [_example(family, self.config, vocab, it, use_query, True) for it in dev_items]
        self.dev_references = [" ".join(it.summary or ()) for it in dev_items]
        self.train_stats = self._stats(self.train_items)
        self.dev_stats = self._stats(self.dev_examples)
        self._digests = {"train": _digest(train_items), "dev": _digest(dev_items)}

    @staticmethod
    def _stats(examples: Sequence) -> dict:
        return {
            "examples": len(examples),
            "source_tokens": int(sum(len(e) for e in examples)),
            "truncated": int(sum(_truncated(e) for e in examples)),
        }

    def batch(self, idx: Sequence[int], device: torch.device) -> dict[str, torch.Tensor]:
        from wikiref.model.scoring_task import batch_to_device

        return batch_to_device(_collate(self.family, self.config, [self.train_items[i] for i in idx]), device)

    def forward(self, forward: torch.nn.Module, batch: dict) -> Any:
        return forward(batch)

    def loss(self, model: torch.nn.Module, output: Any, batch: dict) -> torch.Tensor:
        return output.loss

    @torch.no_grad()
    def evaluate(
        self, model: torch.nn.Module, *, device: torch.device, batch_size: int, amp: bool
    ) -> tuple[list, float]:
        from wikiref.model.scorer import autocast_context, length_sorted_batches, to_device

        was = model.training
        model.eval()
        sums, n = [], 0
        for idx in length_sorted_batches(self.dev_examples, batch_size):
            batch = to_device(_collate(self.family, self.config, [self.dev_examples[i] for i in idx]), device)
            with autocast_context(device, amp):
                out = model(batch)
            sums.append(out.example_loss.float().sum())  # fetched once below: no host sync per batch
            n += len(idx)
        total = 0.0
        for v in torch.stack(sums).tolist():  # the float32 sums, added in batch order
            total += v
        predictions: list = []
        if self.select == "rougeL":
            summariser = Summariser(self.family, model, self.vocab, self.use_query)
            predictions = _decode_examples(summariser, self.dev_examples, _GREEDY, batch_size, device)
        model.train(was)
        return predictions, total / n

    def select_fn(self) -> Callable[[list], float] | None:
        """Mean dev ROUGE-L F1 of the greedy summaries (``select="rougeL"``); None selects on the dev loss."""
        if self.select != "rougeL":
            return None
        from wikiref.rouge import fast

        refs = self.dev_references

        def rouge_l(predictions: list) -> float:
            return float(
                np.mean([fast.score(r, " ".join(p), ("rougeL",))["rougeL"].fmeasure for r, p in zip(refs, predictions)])
            )

        return rouge_l

    def save(self, model: torch.nn.Module, out_dir: Path) -> None:
        save_abstractive(self.family, model, self.vocab, out_dir, use_query=self.use_query)

    def fingerprint(self) -> dict:
        return {
            "model": self.config.to_dict(),
            "family": self.family,
            "vocab": hashlib.sha1("\n".join(self.vocab.words).encode("utf-8")).hexdigest(),
            "use_query": self.use_query,
            "select": self.select,
            **self._digests,
        }

    def live_params(self) -> dict:
        return {"family": self.family, "use_query": self.use_query, **self.config.to_dict()}


def fit(
    family: str,
    model: torch.nn.Module,
    vocab: Vocab,
    train_items: Sequence[Item],
    dev_items: Sequence[Item],
    settings: TrainSettings,
    out_dir: str | os.PathLike,
    *,
    live_dir: str | os.PathLike | None = None,
    use_query: bool = True,
    select: str = "loss",
) -> TrainResult:
    """Train ``model`` (from :func:`build_model`) on the items with :func:`wikiref.model.training.fit`; the best
    epoch is written to ``out_dir`` (:func:`save_abstractive`), with ``training.json``. Resumes from
    ``out_dir/last/`` when it was written with the same settings, model, vocabulary and data."""
    from wikiref.model import training

    task = AbstractiveTask(family, model, vocab, train_items, dev_items, use_query=use_query, select=select)
    result = training.fit(
        model,
        task,
        settings,
        out_dir,
        select_fn=task.select_fn(),
        live_dir=live_dir,
    )
    result.extra.update({"family": family, "variant": model.config.variant, "select": select})
    return result


# --------------------------------------------------------------------------- files


def save_abstractive(
    family: str, model: torch.nn.Module, vocab: Vocab, out_dir: str | os.PathLike, *, use_query: bool
) -> None:
    """The model's files (``model.safetensors``, ``config.json``, ``vocab.json``) + ``abstractive.json``."""
    out_dir = Path(out_dir)
    if _family(family) == "seq2seq":
        seq2seq.save_seq2seq(model, vocab, out_dir)
    else:
        hiersumm.save_hiersumm(model, vocab, out_dir)
    write_json(out_dir / META_FILE, {"format": META_FORMAT, "family": family, "use_query": bool(use_query)})


@dataclass
class Summariser:
    """A model ready to decode: its family, the model (eval mode), vocabulary and how it reads the query."""

    family: str
    model: torch.nn.Module
    vocab: Vocab
    use_query: bool = True

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device


def load(out_dir: str | os.PathLike, device: torch.device | str = "cpu") -> Summariser:
    """A model saved by :func:`fit` / :func:`save_abstractive` (safetensors + JSON; nothing unpickled)."""
    out_dir = Path(out_dir)
    meta = read_json(out_dir / META_FILE)
    if meta.get("format") != META_FORMAT:
        raise ValueError(f"{out_dir / META_FILE}: format {meta.get('format')!r} is not {META_FORMAT!r}")
    family = _family(meta["family"])
    loader = seq2seq.load_seq2seq if family == "seq2seq" else hiersumm.load_hiersumm
    model, vocab = loader(out_dir, device)
    model.eval()
    return Summariser(family, model, vocab, bool(meta["use_query"]))


# --------------------------------------------------------------------------- decoding


def _decode_examples(
    summariser: Summariser, examples: Sequence, settings: DecodeSettings, batch_size: int, device: torch.device
) -> list[list[str]]:
    from wikiref.model import decoding
    from wikiref.model.scorer import length_sorted_batches, to_device

    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    model, vocab = summariser.model, summariser.vocab
    out: list[list[str]] = [[] for _ in examples]
    for idx in length_sorted_batches(examples, batch_size):
        if summariser.family == "seq2seq":
            chunk = [
                seq2seq.Seq2SeqExample(examples[i].source_ids, examples[i].source_ext, examples[i].oovs) for i in idx
            ]
            batch = to_device(seq2seq.collate(chunk, model.config.vocab_size), device)
            for i, e, ids in zip(idx, chunk, decoding.decode_batch(model, batch, settings)):
                out[i] = seq2seq.words_from_ids(ids, vocab, e.oovs)
        else:
            chunk = [dataclasses.replace(examples[i], target_ids=()) for i in idx]
            batch = to_device(hiersumm.collate(chunk, model.config), device)
            for i, ids in zip(idx, hiersumm.decode_batch(model, batch, settings)):
                out[i] = seq2seq.words_from_ids(ids, vocab, ())
    return out


@torch.no_grad()
def summarise(
    summariser: Summariser, items: Sequence[Item], settings: DecodeSettings = _GREEDY, batch_size: int = 32
) -> list[list[str]]:
    """Summaries (token lists) of ``items`` in their order; batches of similar lengths on the model's device.
    The summaries do not depend on ``batch_size`` (tested)."""
    model = summariser.model
    was = model.training
    model.eval()
    examples = [
        _example(summariser.family, model.config, summariser.vocab, it, summariser.use_query, False) for it in items
    ]
    try:
        return _decode_examples(summariser, examples, settings, batch_size, summariser.device)
    finally:
        model.train(was)
