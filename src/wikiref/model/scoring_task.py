"""The sentence scorer's side of the training loop: :class:`ScoringExample`, the :class:`TrainingTask` protocol
that :func:`wikiref.model.training.fit` trains on, the scorer's task (:class:`ScorerTask`: examples packed into
windows, one target per sentence) and dev scoring (:func:`predict`)."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch

from wikiref.model import biencoder
from wikiref.model.packing import PackedWindow, PackStats
from wikiref.model.scorer import (
    PAD_MULTIPLE,
    SentenceScorer,
    autocast_context,
    collate,
    example_groups,
    length_sorted_batches,
    make_packer,
    save_scorer,
    to_device,
)

log = logging.getLogger(__name__)


@dataclass
class ScoringExample:
    """One (query, document) pair with a target per sentence (None at inference)."""

    query: list[str]
    sentences: list[str]
    targets: list[float] | None = None
    id: str = ""
    doc_lengths: list[int] | None = None  # sentences per document (multi-document examples); None = one
    group: str | None = None  # ranking group (e.g. the DUC cluster of a document); None = the example itself


def packing_input(e: ScoringExample) -> tuple:
    """What :meth:`wikiref.model.packing.Packer.pack_many` takes for one example."""
    return (e.query, e.sentences) if e.doc_lengths is None else (e.query, e.sentences, e.doc_lengths)


def batch_to_device(batch: Mapping[str, torch.Tensor], device: torch.device) -> dict[str, torch.Tensor]:
    """A CPU batch on ``device``: on CUDA through pinned memory with non-blocking copies (the copy overlaps the
    work already queued); elsewhere :func:`wikiref.model.scorer.to_device`."""
    return to_device(batch, device, pin=device.type == "cuda")


def pack_examples(model_config, tokenizer, examples: Sequence[ScoringExample]) -> tuple[list[PackedWindow], PackStats]:
    packer = make_packer(model_config, tokenizer)
    return packer.pack_many([packing_input(e) for e in examples])


def examples_digest(examples: Sequence[ScoringExample]) -> str:
    h = hashlib.sha1()
    for e in examples:
        item = [e.id, e.query, e.sentences, e.targets] + ([] if e.doc_lengths is None else [e.doc_lengths])
        h.update(json.dumps(item, ensure_ascii=False).encode("utf-8"))
    return h.hexdigest()


# --------------------------------------------------------------------------- evaluation


@torch.no_grad()
def run_batches(
    model: SentenceScorer,
    cpu_batches,
    sentence_counts: Sequence[int],
    *,
    device: torch.device,
    amp: bool,
    with_loss: bool,
) -> tuple[list[np.ndarray], float | None]:
    """Score CPU batches (an iterable of either pairing's collated batches): scores per example (NaN where a sentence
    was never scored) and, ``with_loss``, the mean loss weighted by sentences. Scores and losses stay on the device
    until every batch has run (one transfer at the end, no host sync per batch)."""
    was = model.training
    model.eval()
    out = [np.full(int(n), np.nan) for n in sentence_counts]
    scores, losses, where = [], [], []
    for cpu_batch in cpu_batches:
        batch = batch_to_device(cpu_batch, device)
        with autocast_context(device, amp):
            raw = model(batch)
        if with_loss:
            losses.append((model.loss(raw, batch["targets"], batch["sent_group"]), len(raw)))
        scores.append(model.to_scores(raw).float())
        where.append((cpu_batch["sent_example"].tolist(), cpu_batch["sent_index"].tolist()))
    model.train(was)
    loss_sum, n_sent = 0.0, 0
    if losses:
        for value, (_, n) in zip(torch.stack([t for t, _ in losses]).tolist(), losses):
            loss_sum += value * n  # the float32 batch losses, summed in batch order
            n_sent += n
    flat = torch.cat(scores).cpu().numpy() if scores else np.zeros(0)
    k = 0
    for examples, indices in where:
        for e, j in zip(examples, indices):
            out[e][j] = float(flat[k])
            k += 1
    return out, (loss_sum / n_sent if n_sent else None)


def predict(
    model: SentenceScorer,
    windows: Sequence[PackedWindow],
    sentence_counts: Sequence[int],
    targets: Sequence[Sequence[float]] | None,
    *,
    batch_size: int,
    device: torch.device,
    amp: bool,
    pad_id: int,
) -> tuple[list[np.ndarray], float | None]:
    """:func:`run_batches` over packed windows (length-sorted batches); with targets, also the mean loss."""
    batches = (
        collate([windows[i] for i in idx], pad_id, targets) for idx in length_sorted_batches(windows, batch_size)
    )
    return run_batches(model, batches, sentence_counts, device=device, amp=amp, with_loss=targets is not None)


# --------------------------------------------------------------------------- tasks


def _targets(examples: Sequence[ScoringExample], what: str) -> list[list[float]]:
    out = []
    for e in examples:
        if e.targets is None or len(e.targets) != len(e.sentences):
            raise ValueError(
                f"{what} example {e.id!r}: needs one target per sentence "
                f"({len(e.sentences)} sentences, {None if e.targets is None else len(e.targets)} targets)"
            )
        out.append([float(t) for t in e.targets])
    return out


class TrainingTask(Protocol):
    """What :func:`fit` trains on: the examples and how a batch of them becomes a loss.

    The loop (optimizer, schedule, accumulation, AMP, DDP, checkpoints, resuming, dvclive) is the same for
    every model; a task says how its data is batched and scored. :class:`ScorerTask` is the sentence
    scorer's (packed windows); :mod:`wikiref.model.abstractive` has the abstractive models'.
    """

    train_items: Sequence  # what the epoch batches index; ``len(item)`` is its length in tokens (bucketing)
    train_stats: dict  # how the training / dev data was prepared (TrainResult.pack_stats / dev_pack_stats)
    dev_stats: dict

    def batch(self, idx: Sequence[int], device: torch.device) -> Any:
        """The training batch of ``train_items[i] for i in idx``, on ``device``."""

    def forward(self, forward: torch.nn.Module, batch: Any) -> Any:
        """The forward pass (under autocast); ``forward`` is the model or its DDP wrapper."""

    def loss(self, model: torch.nn.Module, output: Any, batch: Any) -> torch.Tensor:
        """The batch's loss from the forward pass's ``output`` (outside autocast)."""

    def evaluate(
        self, model: torch.nn.Module, *, device: torch.device, batch_size: int, amp: bool
    ) -> tuple[list, float | None]:
        """(dev predictions, passed to ``select_fn``; mean dev loss or None)."""

    def save(self, model: torch.nn.Module, out_dir: Path) -> None:
        """Save the best epoch's model to ``out_dir``."""

    def fingerprint(self) -> dict:
        """JSON-able description of the model and the data (with the settings, what ``last/`` must match)."""

    def live_params(self) -> dict:
        """The model's settings logged to dvclive."""


class _ScorerTaskBase:
    """What both pairings' tasks share: targets, ranking groups, digests, loss, dev scoring, saving and the
    fingerprint. A pairing's task sets ``_dev_units`` (what its ``_score_dev`` scores the dev set over)."""

    _score_dev: Callable[..., tuple[list[np.ndarray], float | None]]
    _dev_units: Sequence

    def __init__(self, model: SentenceScorer, tokenizer, train_examples, dev_examples) -> None:
        self.model_config = model.config
        self.tokenizer = tokenizer
        self.train_targets = _targets(train_examples, "train")
        self.dev_targets = _targets(dev_examples, "dev")
        self.dev_sentence_counts = [len(e.sentences) for e in dev_examples]
        self.pad_id = tokenizer.pad_token_id or 0
        self.train_groups = example_groups(train_examples)
        self._digests = {"train": examples_digest(train_examples), "dev": examples_digest(dev_examples)}

    def forward(self, forward: torch.nn.Module, batch: dict) -> torch.Tensor:
        return forward(batch)

    def loss(self, model: SentenceScorer, output: torch.Tensor, batch: dict) -> torch.Tensor:
        return model.loss(output, batch["targets"], batch["sent_group"])

    def evaluate(
        self, model: SentenceScorer, *, device: torch.device, batch_size: int, amp: bool
    ) -> tuple[list[np.ndarray], float | None]:
        """The dev set scored by the pairing's scoring function (``_score_dev``) over its dev units."""
        return self._score_dev(
            model,
            self._dev_units,
            self.dev_sentence_counts,
            self.dev_targets,
            batch_size=batch_size,
            device=device,
            amp=amp,
            pad_id=self.pad_id,
        )

    def save(self, model: SentenceScorer, out_dir: Path) -> None:
        save_scorer(model, self.tokenizer, out_dir)

    def fingerprint(self) -> dict:
        return {"model": self.model_config.to_dict(), **self._digests}

    def live_params(self) -> dict:
        return {k: v for k, v in self.model_config.to_dict().items() if k != "encoder_config"}


class ScorerTask(_ScorerTaskBase):
    """The sentence scorer's task: examples packed into windows (:func:`pack_examples`), one target per
    sentence, dev scored by :func:`predict`, the best epoch saved with its tokenizer."""

    _score_dev = staticmethod(predict)  # over the dev windows

    def __init__(
        self,
        model: SentenceScorer,
        tokenizer,
        train_examples: Sequence[ScoringExample],
        dev_examples: Sequence[ScoringExample],
        pad_multiple: int = PAD_MULTIPLE,
    ) -> None:
        super().__init__(model, tokenizer, train_examples, dev_examples)
        self.pad_multiple = pad_multiple  # training batches: padded to their longest window rounded up to this
        self.train_items, pstats = pack_examples(model.config, tokenizer, train_examples)
        self._dev_units, dstats = pack_examples(model.config, tokenizer, dev_examples)
        if not self.train_items:
            raise ValueError("no training windows: every training example has an empty document")
        log.info(
            "train: %d examples -> %d windows (%d partial sentences); dev: %d examples -> %d windows",
            len(train_examples),
            len(self.train_items),
            pstats.partial_sentences,
            len(dev_examples),
            len(self._dev_units),
        )
        self.train_stats, self.dev_stats = pstats.as_dict(), dstats.as_dict()

    def batch(self, idx: Sequence[int], device: torch.device) -> dict:
        windows = [self.train_items[i] for i in idx]
        batch = collate(
            windows,
            self.pad_id,
            self.train_targets,
            pad_multiple=self.pad_multiple,
            groups=self.train_groups,
            max_pad=self.model_config.max_length,
        )
        return batch_to_device(batch, device)


class BiEncoderTask(_ScorerTaskBase):
    """The bi scorer's task (:mod:`wikiref.model.biencoder`): one item per example (its whole ranking group; a longer
    example than ``biencoder.TRAIN_CHUNK`` sentences in items of that many), dev scored by
    :func:`wikiref.model.biencoder.score_items`."""

    _score_dev = staticmethod(biencoder.score_items)  # over the dev items

    def __init__(self, model: SentenceScorer, tokenizer, train_examples, dev_examples) -> None:
        super().__init__(model, tokenizer, train_examples, dev_examples)
        self.train_items = biencoder.make_items(
            model.config, tokenizer, [packing_input(e) for e in train_examples], biencoder.TRAIN_CHUNK
        )
        self._dev_units = biencoder.make_items(
            model.config, tokenizer, [packing_input(e) for e in dev_examples], biencoder.CHUNK
        )
        if not self.train_items:
            raise ValueError("no training items: every training example has an empty document")
        n_train = sum(len(it.sentences) for it in self.train_items)
        log.info("bi pairing: train %d examples (%d sentences); dev %d examples", len(train_examples), n_train,
                 len(dev_examples))  # fmt: skip
        self.train_stats = {"examples": len(train_examples), "sentences": n_train}
        self.dev_stats = {"examples": len(dev_examples), "sentences": sum(self.dev_sentence_counts)}

    def batch(self, idx: Sequence[int], device: torch.device) -> dict:
        items = [self.train_items[i] for i in idx]
        bucket = biencoder.bucket_training_batches(device)
        return batch_to_device(
            biencoder.collate(items, self.pad_id, self.train_targets, self.train_groups, bucket=bucket), device
        )
