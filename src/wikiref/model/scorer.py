"""The sentence scorer: encoder + pooling + output head (journal §III-B..E), its batches and files.

* Heads: ``classification`` - linear + sigmoid, trained with binary cross-entropy on the 0/1 oracle
  labels (eq. 4, 6); ``regression`` - linear, trained with mean squared error on the oracle scores
  (eq. 5, 7). Both losses are means over the sentences of a batch.
* :func:`score_sentences` is the one inference entry point: (query levels, document sentences)
  pairs in, one score per sentence out (probabilities for classification, raw values for regression).
* Files (:func:`save_scorer` / :func:`load_scorer`): ``model.safetensors`` (every weight: encoder,
  pooling, head), ``config.json`` (this module's :class:`ScorerConfig`, including the encoder's
  Hugging Face config) and the tokenizer files (with the [L#] tokens). Loading reads only
  safetensors + JSON: nothing is unpickled.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from wikiref.files import atomic_path, write_json
from wikiref.model import biencoder, losses
from wikiref.model.checkpoint import config_from_dict
from wikiref.model.encoders import is_random, load_encoder, load_tokenizer
from wikiref.model.packing import PackedWindow, Packer
from wikiref.model.pooling import POOLING_MODES, SentencePooler

log = logging.getLogger(__name__)

HEADS = ("classification", "regression")
PAIRINGS = ("cross", "bi")
FORMAT = "wikiref-scorer/1"
WEIGHTS_FILE = "model.safetensors"
CONFIG_FILE = "config.json"
LOAD_ONLY_TOKENIZER_KEYS = ("local_files_only",)  # left out of the saved tokenizer_config.json (save_scorer)


@dataclass
class ScorerConfig:
    encoder: str  # name from params (see wikiref.model.encoders)
    pooling: str = "cls"
    head: str = "classification"
    use_query: bool = True
    init: str = "pretrained"  # or "random" (the TRANSFORMER baseline)
    max_length: int = 512
    stride: int = 100
    max_query_tokens: int = 64
    num_levels: int = 8
    attention_dropout: float | None = None  # None: the encoder's own
    encoder_config: dict = field(default_factory=dict)  # filled when built; lets load rebuild the shape
    format: str = FORMAT
    # mse | pairwise | listwise (regression head) | bce (classification head); None: the head's own
    # (bce / mse). Left out of config.json when None, so older checkpoints and their files are unchanged.
    loss: str | None = None
    # cross: query and sentences packed into windows (the papers' BERT / Q-BERT); bi: each encoded alone
    # (wikiref.model.biencoder). Left out of config.json when cross, like ``loss``.
    pairing: str = "cross"
    sentence_tokens: int = 128  # bi: a sentence's token cap

    def __post_init__(self) -> None:
        if self.pairing not in PAIRINGS:
            raise ValueError(f"pairing {self.pairing!r} not in {PAIRINGS}")
        if self.pooling not in POOLING_MODES:
            raise ValueError(f"pooling {self.pooling!r} not in {POOLING_MODES}")
        if self.head not in HEADS:
            raise ValueError(f"head {self.head!r} not in {HEADS}")
        if self.init not in ("pretrained", "random"):
            raise ValueError(f"init {self.init!r} must be 'pretrained' or 'random'")
        if self.pooling == "query" and not self.use_query:
            raise ValueError("query pooling (Q-BERT) needs the query in the input (use_query: true)")
        if self.loss is not None:
            if self.loss not in losses.LOSSES:
                raise ValueError(f"loss {self.loss!r} not in {losses.LOSSES}")
            if (self.loss == "bce") != (self.head == "classification"):
                raise ValueError(f"loss {self.loss!r} does not fit the {self.head} head (bce <-> classification)")

    def use_loss(self, loss: str) -> bool:
        """Train with ``loss`` (a params ``loss``): bce on the classification head, the others on the
        regression head (the output layer is the same; only the loss and the output's meaning change).
        Returns whether the head changed."""
        if loss not in losses.LOSSES:
            raise ValueError(f"loss {loss!r} not in {losses.LOSSES}")
        head = "classification" if loss == "bce" else "regression"
        changed, self.head = head != self.head, head
        self.loss = loss if loss in ("pairwise", "listwise") else None
        return changed

    @property
    def loss_name(self) -> str:
        """The training loss: ``loss``, or the head's own (classification: bce, regression: mse)."""
        if self.loss is not None:
            return self.loss
        return "bce" if self.head == "classification" else "mse"

    @property
    def random_init(self) -> bool:
        return self.init == "random" or is_random(self.encoder)

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        if d["loss"] is None:
            d.pop("loss")
        if d["pairing"] == "cross":
            d.pop("pairing")
            d.pop("sentence_tokens")
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ScorerConfig:
        if d.get("format", FORMAT) != FORMAT:
            raise ValueError(f"scorer format {d.get('format')!r} is not {FORMAT!r}")
        return config_from_dict(cls, d, "scorer")


class SentenceScorer(nn.Module):
    def __init__(self, encoder: nn.Module, config: ScorerConfig) -> None:
        super().__init__()
        self.config = config
        if getattr(encoder, "pooler", None) is not None:
            # BERT's [CLS] pooler is never used (sentences are pooled here); dropping it saves compute
            # and leaves no parameter without gradient (which DDP would reject).
            encoder.pooler = None
        self.encoder = encoder
        hidden = encoder.config.hidden_size
        self.use_segments = getattr(encoder.config, "type_vocab_size", 0) >= 2
        if config.pairing == "bi":  # no pooler: mean pooling of each text; the head reads (cosine, length)
            self.head = nn.Linear(2, 1)
            biencoder.init_head(self.head)
            return
        self.pooler = SentencePooler(config.pooling, hidden)
        self.dropout = nn.Dropout(getattr(encoder.config, "hidden_dropout_prob", 0.1))
        self.head = nn.Linear(hidden, 1)

    def compile(self, *args, **kwargs) -> None:
        """``nn.Module.compile`` in place; a bi scorer compiles its encoder instead: its forward loops over the
        batch's length buckets, whose bounds are plain ints that change from batch to batch (dynamo would
        specialise on them), and calls the encoder once per bucket."""
        (self.encoder if self.config.pairing == "bi" else super()).compile(*args, **kwargs)

    def forward(self, batch: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """Raw outputs (logits or regression values), one per sentence of the batch."""
        if self.config.pairing == "bi":
            return biencoder.forward(self, batch)
        hidden = self.encoder(
            input_ids=batch["input_ids"],
            attention_mask=batch["attention_mask"],
            token_type_ids=batch["token_type_ids"] if self.use_segments else None,
        ).last_hidden_state
        v = self.pooler(hidden, batch["sent_window"], batch["positions"], batch["pos_mask"], batch["query_mask"])
        return self.head(self.dropout(v)).squeeze(-1)

    def loss(self, outputs: torch.Tensor, targets: torch.Tensor, groups: torch.Tensor | None = None) -> torch.Tensor:
        """The batch's loss (:mod:`wikiref.model.losses`); ``groups``: each sentence's ranking group
        (the batch's ``sent_group``), used by the pairwise and listwise losses."""
        return losses.compute(self.config.loss_name, outputs, targets, groups)

    def to_scores(self, outputs: torch.Tensor) -> torch.Tensor:
        outputs = outputs.float()
        return torch.sigmoid(outputs) if self.config.head == "classification" else outputs


def make_packer(config: ScorerConfig, tokenizer) -> Packer:
    if config.pairing != "cross":
        raise ValueError(f"a scorer with pairing {config.pairing!r} encodes sentences alone: it has no packed windows")
    return Packer(
        tokenizer,
        max_length=config.max_length,
        stride=config.stride,
        max_query_tokens=config.max_query_tokens,
        num_levels=config.num_levels,
        use_query=config.use_query,
    )


def build_scorer(config: ScorerConfig) -> tuple[SentenceScorer, Any]:
    """A fresh scorer (pretrained or random encoder per ``config``) and its tokenizer.

    Seed torch first: random encoders, new [L#] embedding rows and the head draw from its RNG.
    """
    tokenizer = load_tokenizer(config.encoder, config.num_levels)
    encoder = load_encoder(
        config.encoder, tokenizer, random_init=config.random_init, attention_dropout=config.attention_dropout
    )
    if config.max_length > getattr(encoder.config, "max_position_embeddings", config.max_length):
        raise ValueError(
            f"max_length {config.max_length} > the encoder's max_position_embeddings "
            f"{encoder.config.max_position_embeddings}"
        )
    config.encoder_config = json.loads(encoder.config.to_json_string())
    return SentenceScorer(encoder, config), tokenizer


# --------------------------------------------------------------------------- batches


PAD_MULTIPLE = 8  # batches are padded to their longest window rounded up to this (collate's default)


def collate(
    windows: Sequence[PackedWindow],
    pad_id: int,
    targets: Sequence[Sequence[float]] | None = None,
    pad_to: int | None = None,
    pad_multiple: int = PAD_MULTIPLE,
    groups: Sequence[int] | None = None,
    max_pad: int | None = None,
) -> dict[str, torch.Tensor]:
    """Dynamic padding: pad to the longest window of the batch (rounded up to ``pad_multiple``, but not past
    ``max_pad``, the scorer's ``max_length``, unless a window is longer), or to ``pad_to`` (the naive fixed-length
    baseline of bench/train.py).

    ``targets[e][j]`` is the target of sentence ``j`` of example ``e`` (``PackedWindow.example``).
    ``groups[e]`` is the ranking group of example ``e`` (``sent_group`` of its sentences; the ranking
    losses compare sentences of one group); None: each example is its own group.
    """
    # Built in numpy and handed over without copies: one slice per window and one vectorised pass over the
    # sentences, instead of small torch operations per sentence (the CPU side of a GPU step; same tensors).
    longest = max(len(w) for w in windows)
    T = pad_to if pad_to is not None else -(-longest // pad_multiple) * pad_multiple
    if pad_to is None and max_pad is not None:
        T = min(T, max(longest, max_pad))
    if longest > T:
        raise ValueError(f"pad_to={T} is shorter than a window of {longest} tokens")
    B = len(windows)
    input_ids = np.full((B, T), pad_id, dtype=np.int64)
    attention = np.zeros((B, T), dtype=np.int64)
    segments = np.zeros((B, T), dtype=np.int64)
    query_mask = np.zeros((B, T), dtype=bool)
    sent_window, sent_example, sent_index, spans, tgt = [], [], [], [], []
    for b, w in enumerate(windows):
        n = len(w.input_ids)
        input_ids[b, :n] = w.input_ids
        attention[b, :n] = 1
        segments[b, :n] = w.token_type_ids
        q0, q1 = w.query_span
        query_mask[b, q0:q1] = True
        k = len(w.sentences)
        sent_window += [b] * k
        sent_example += [w.example] * k
        sent_index += w.sentences
        spans += w.spans
        if targets is not None:
            row = targets[w.example]
            tgt += [float(row[j]) for j in w.sentences]
    if not spans:
        raise ValueError("a batch in which no sentence is scored")
    span = np.asarray(spans, dtype=np.int64).reshape(-1, 2)
    starts, lengths = span[:, :1], span[:, 1:] - span[:, :1]
    offsets = np.arange(int(lengths.max()), dtype=np.int64)[None, :]
    pos_mask = offsets < lengths
    positions = np.where(pos_mask, starts + offsets, starts)  # past a sentence's end: its first position
    sent_example_t = torch.tensor(sent_example, dtype=torch.long)
    batch = {
        "input_ids": torch.from_numpy(input_ids),
        "attention_mask": torch.from_numpy(attention),
        "token_type_ids": torch.from_numpy(segments),
        "query_mask": torch.from_numpy(query_mask),
        "sent_window": torch.tensor(sent_window, dtype=torch.long),
        "positions": torch.from_numpy(positions),
        "pos_mask": torch.from_numpy(pos_mask),
        "sent_example": sent_example_t,
        "sent_index": torch.tensor(sent_index, dtype=torch.long),
        "sent_group": sent_example_t.clone()
        if groups is None
        else torch.tensor([int(groups[e]) for e in sent_example], dtype=torch.long),
    }
    if targets is not None:
        batch["targets"] = torch.tensor(tgt, dtype=torch.float32)
    return batch


def example_groups(examples: Sequence) -> list[int] | None:
    """Each example's ranking group as an int (examples naming the same ``group`` share one); None when no
    example names one (each is its own group)."""
    if all(e.group is None for e in examples):
        return None
    ids: dict[tuple, int] = {}
    return [
        ids.setdefault(("example", i) if e.group is None else ("group", e.group), len(ids))
        for i, e in enumerate(examples)
    ]


def to_device(batch: Mapping[str, torch.Tensor], device: torch.device | str, pin: bool = False) -> dict:
    """Tensors move (``pin``: through pinned host memory); plain values (the bi batches' bucket bounds) stay on the
    host."""
    return {
        k: ((v.pin_memory() if pin else v).to(device, non_blocking=True) if torch.is_tensor(v) else v)
        for k, v in batch.items()
    }


def length_sorted_batches(windows: Sequence[PackedWindow], batch_size: int) -> list[list[int]]:
    """Inference batches: window indices sorted by length (stable), cut every ``batch_size``."""
    order = sorted(range(len(windows)), key=lambda i: (len(windows[i]), i))
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


def autocast_context(device: torch.device, amp: bool):
    """Mixed precision on CUDA (bf16 when supported, else fp16); a no-op elsewhere."""
    import contextlib

    if amp and device.type == "cuda":
        dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.autocast(device_type="cuda", dtype=dtype)
    return contextlib.nullcontext()


@torch.no_grad()
def score_windows(
    model: SentenceScorer,
    windows: Sequence[PackedWindow],
    n_examples: int,
    sentence_counts: Sequence[int],
    *,
    batch_size: int = 32,
    device: torch.device | str = "cpu",
    amp: bool = False,
    pad_id: int = 0,
    progress: bool = False,
    pad_to: int | None = None,
) -> list[np.ndarray]:
    """Score packed windows; returns one float array per example (NaN for a sentence never scored).

    ``pad_to`` pads every batch to a fixed length (the naive baseline of bench/train.py)."""
    from tqdm.auto import tqdm

    device = torch.device(device)
    was_training = model.training
    model.eval()
    out = [np.full(int(sentence_counts[e]), np.nan, dtype=np.float64) for e in range(n_examples)]
    batches = length_sorted_batches(windows, batch_size)
    for idx in tqdm(batches, desc="score", unit="batch", disable=not progress, mininterval=5):
        batch = to_device(collate([windows[i] for i in idx], pad_id, pad_to=pad_to), device)
        with autocast_context(device, amp):
            raw = model(batch)
        scores = model.to_scores(raw).float().cpu().numpy()
        for e, j, s in zip(batch["sent_example"].tolist(), batch["sent_index"].tolist(), scores):
            out[e][j] = float(s)
    model.train(was_training)
    return out


def score_sentences(
    model: SentenceScorer,
    tokenizer,
    examples: Sequence[Sequence],
    *,
    batch_size: int = 32,
    device: torch.device | str = "cpu",
    amp: bool = False,
    progress: bool = False,
) -> list[np.ndarray]:
    """(query levels, document sentences) pairs, or (query levels, sentences, sentences per document)
    triples for multi-document examples -> one score per sentence, per example.

    Classification heads give probabilities, regression heads raw predicted scores.
    """
    if model.config.pairing == "bi":
        items = biencoder.make_items(model.config, tokenizer, examples, biencoder.CHUNK)
        pad = tokenizer.pad_token_id or 0
        device = torch.device(device)
        scores, _ = biencoder.score_items(
            model, items, [len(e[1]) for e in examples], batch_size=batch_size, device=device, amp=amp, pad_id=pad
        )
        return scores
    packer = make_packer(model.config, tokenizer)
    windows, _ = packer.pack_many(examples)
    return score_windows(
        model,
        windows,
        len(examples),
        [len(e[1]) for e in examples],
        batch_size=batch_size,
        device=device,
        amp=amp,
        pad_id=packer.pad_id,
        progress=progress,
    )


# --------------------------------------------------------------------------- files


def save_scorer(model: SentenceScorer, tokenizer, out_dir: str | os.PathLike) -> None:
    """Write model.safetensors + config.json + tokenizer files into ``out_dir`` (each file atomically)."""
    from safetensors.torch import save_model

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    module = model.module if hasattr(model, "module") else model  # DDP wrapper
    # transformers records how the tokenizer was loaded, e.g. local_files_only from HF_HUB_OFFLINE: not a property
    # of the model, and the same run with and without that variable would write different files
    for key in LOAD_ONLY_TOKENIZER_KEYS:
        tokenizer.init_kwargs.pop(key, None)
    with tempfile.TemporaryDirectory(dir=out_dir, prefix=".tok.") as tmp:
        tokenizer.save_pretrained(tmp)
        for f in sorted(Path(tmp).iterdir()):
            if f.is_file() and f.name not in (WEIGHTS_FILE, CONFIG_FILE):
                os.replace(f, out_dir / f.name)
    with atomic_path(out_dir / WEIGHTS_FILE) as tmp:
        save_model(module, str(tmp), metadata={"format": FORMAT})
    write_json(out_dir / CONFIG_FILE, module.config.to_dict())


def load_scorer(model_dir: str | os.PathLike, device: torch.device | str = "cpu") -> tuple[SentenceScorer, Any]:
    """Rebuild a saved scorer from safetensors + JSON (no pickle) and its tokenizer."""
    from safetensors.torch import load_model
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    model_dir = Path(model_dir)
    with open(model_dir / CONFIG_FILE, encoding="utf-8") as fh:
        config = ScorerConfig.from_dict(json.load(fh))
    enc_cfg = dict(config.encoder_config)
    if not enc_cfg:
        raise ValueError(f"{model_dir / CONFIG_FILE} has no encoder_config")
    hf_config = AutoConfig.for_model(enc_cfg.pop("model_type"), **enc_cfg)
    encoder = AutoModel.from_config(hf_config)
    model = SentenceScorer(encoder, config)
    load_model(model, str(model_dir / WEIGHTS_FILE), strict=True, device=str(device))
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    return model.to(device), tokenizer
