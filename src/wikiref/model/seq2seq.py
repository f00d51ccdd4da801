"""The abstractive baselines of Psg2Sum (Table 4): s2s, s2s+copy and the pointer-generator with coverage.

One configurable module, :class:`Seq2Seq`, following See et al. 2017 ("Get to the point", ACL), whose
equation numbers are cited throughout:

* **s2s** (``copy=False, coverage=False``): a bidirectional LSTM encoder over the source (hidden states
  ``h_i``), an LSTM decoder (state ``s_t``) and Bahdanau attention, eq. (1)-(3)::

      e_i^t = v^T tanh(W_h h_i + W_s s_t + b_attn)          (1)
      a^t   = softmax(e^t)                                  (2)   padding masked out (never attended)
      h*_t  = sum_i a_i^t h_i                               (3)
      P_vocab = softmax(V'(V [s_t; h*_t] + b) + b')        (4)
      loss_t = -log P(w*_t)                                 (6)

  With ``attention=False`` the decoder is the plain Sutskever et al. 2014 s2s (``P_vocab`` from ``s_t``).
* **s2s+copy / pointer-generator** (``copy=True``), eq. (8)-(9)::

      p_gen = sigmoid(w_h*^T h*_t + w_s^T s_t + w_x^T x_t + b_ptr)               (8)
      P(w)  = p_gen P_vocab(w) + (1 - p_gen) sum_{i: w_i = w} a_i^t              (9)

  over the *extended* vocabulary of each example (the vocabulary followed by the source's own OOV words,
  :func:`source_ids_extended`); the copy term is a ``scatter_add`` of the attention onto the source's
  extended ids. The training loss (eq. 6) is computed in log space (``logaddexp`` of the two branches),
  so it is finite and its gradient free of NaN even where a branch has probability zero.
* **coverage** (``coverage=True``, needs attention), eq. (10)-(13)::

      c^t = sum_{t' < t} a^{t'}                                                  (10)
      e_i^t = v^T tanh(W_h h_i + W_s s_t + w_c c_i^t + b_attn)                   (11)
      covloss_t = sum_i min(a_i^t, c_i^t)                                        (12)
      loss_t = -log P(w*_t) + lambda covloss_t                                   (13)

  with ``lambda = coverage_weight`` (1.0 in the paper); source padding and decoder steps past the
  target's end contribute nothing.

**Cells** (``cell``): LSTMs as in See et al. (default), or GRUs as in Psg2Sum's appendix (a 256 + 256
bidirectional GRU encoder, a 512 GRU decoder). A GRU has no cell state: its decoder state is ``h`` alone,
the first one ``relu(W_h [h_fwd; h_bwd] + b)`` of the encoder's final states as for the LSTM's ``h`` (the
LSTM also reduces its cell states, ``reduce_c``, which a GRU model does not have).

The decoder is fed its previous context vector with the previous word (input feeding, as in See et al.'s
code); ``x_t`` of eq. (8) is the embedding of the decoder input word. A copied OOV word is fed back as
``<unk>``. The loss of an example is the mean of its per-step losses (eq. 7/13 averaged over its target
length), the loss of a batch the mean over its examples, so an example's loss does not depend on the
batch it is padded into.

Texts are token lists (words); :class:`Vocab` maps them to ids. Files (:func:`save_seq2seq` /
:func:`load_seq2seq`): ``model.safetensors``, ``config.json`` and ``vocab.json``; nothing is unpickled.
Decoding (greedy, beam search) is in :mod:`wikiref.model.decoding`.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence

from wikiref.files import write_json
from wikiref.model.checkpoint import config_from_dict
from wikiref.model.weights import load_weights, save_weights

FORMAT = "wikiref-seq2seq/1"
VOCAB_FORMAT = "wikiref-vocab/1"
WEIGHTS_FILE = "model.safetensors"
CONFIG_FILE = "config.json"
VOCAB_FILE = "vocab.json"

CELLS = ("lstm", "gru")

PAD, UNK, BOS, EOS = "<pad>", "<unk>", "<s>", "</s>"
SPECIALS = (PAD, UNK, BOS, EOS)
PAD_ID, UNK_ID, BOS_ID, EOS_ID = 0, 1, 2, 3

# log(0) stand-in of the log-space mixture: finite, so no inf - inf and no NaN gradients.
_LOG_ZERO = -1e30
_TINY = 1e-30


# --------------------------------------------------------------------------- vocabulary


class Vocab:
    """Word <-> id map: the four specials ``<pad> <unk> <s> </s>`` (ids 0-3), then words.

    :meth:`build` keeps the most frequent words of the training texts, ties broken by the word itself, so
    the same texts always give the same ids.
    """

    def __init__(self, words: Sequence[str]) -> None:
        words = list(words)
        if tuple(words[: len(SPECIALS)]) != SPECIALS:
            raise ValueError(f"a vocabulary starts with {list(SPECIALS)}, got {words[: len(SPECIALS)]}")
        index: dict[str, int] = {}
        for i, w in enumerate(words):
            if not isinstance(w, str) or not w:
                raise ValueError(f"vocabulary entry {i} is not a non-empty string: {w!r}")
            if w in index:
                raise ValueError(f"word {w!r} twice in the vocabulary (ids {index[w]} and {i})")
            index[w] = i
        self.words: tuple[str, ...] = tuple(words)
        self.index = index

    @classmethod
    def build(cls, texts: Iterable[Sequence[str]], max_words: int) -> Vocab:
        """The ``max_words`` most frequent words of ``texts`` (token lists) after the specials; ties by word."""
        if max_words < 0:
            raise ValueError(f"max_words must be >= 0, got {max_words}")
        counts: Counter[str] = Counter()
        for tokens in texts:
            if isinstance(tokens, str):
                raise TypeError("Vocab.build takes token lists, not strings")
            counts.update(tokens)
        for s in SPECIALS:
            counts.pop(s, None)
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:max_words]
        return cls([*SPECIALS, *(w for w, _ in ranked)])

    def __len__(self) -> int:
        return len(self.words)

    def __contains__(self, word: str) -> bool:
        return word in self.index

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vocab) and self.words == other.words

    __hash__ = None  # type: ignore[assignment]

    def id(self, word: str) -> int:
        """The word's id, ``<unk>``'s for a word out of the vocabulary."""
        return self.index.get(word, UNK_ID)

    def encode(self, tokens: Sequence[str]) -> list[int]:
        return [self.index.get(w, UNK_ID) for w in tokens]

    def to_dict(self) -> dict:
        return {"format": VOCAB_FORMAT, "words": list(self.words)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Vocab:
        if d.get("format") != VOCAB_FORMAT:
            raise ValueError(f"vocabulary format {d.get('format')!r} is not {VOCAB_FORMAT!r}")
        return cls(d["words"])

    def save(self, path: str | os.PathLike) -> None:
        write_json(path, self.to_dict())

    @classmethod
    def load(cls, path: str | os.PathLike) -> Vocab:
        with open(path, encoding="utf-8") as fh:
            return cls.from_dict(json.load(fh))


def source_ids_extended(tokens: Sequence[str], vocab: Vocab) -> tuple[list[int], list[int], list[str]]:
    """(ids with OOV words as ``<unk>``, extended ids, the example's OOV words in order of first occurrence).

    The extended vocabulary of an example is ``vocab`` followed by its source OOV words: the ``k``-th OOV
    word has extended id ``len(vocab) + k`` (the ids eq. 9 copies onto).
    """
    ids: list[int] = []
    ext: list[int] = []
    oovs: list[str] = []
    where: dict[str, int] = {}
    for w in tokens:
        i = vocab.index.get(w)
        if i is None:
            if w not in where:
                where[w] = len(vocab) + len(oovs)
                oovs.append(w)
            ids.append(UNK_ID)
            ext.append(where[w])
        else:
            ids.append(i)
            ext.append(i)
    return ids, ext, oovs


def target_ids_extended(tokens: Sequence[str], vocab: Vocab, oovs: Sequence[str]) -> list[int]:
    """Target ids in the example's extended vocabulary: a vocabulary word -> its id, an OOV word present
    in the source -> its extended id, any other OOV word -> ``<unk>``."""
    where = {w: len(vocab) + k for k, w in enumerate(oovs)}
    return [vocab.index.get(w, where.get(w, UNK_ID)) for w in tokens]


def words_from_ids(ids: Sequence[int], vocab: Vocab, oovs: Sequence[str]) -> list[str]:
    """Extended ids back to words (a copied OOV id becomes the source word); stops at ``</s>``."""
    out: list[str] = []
    for i in ids:
        i = int(i)
        if i == EOS_ID:
            break
        if i < len(vocab):
            out.append(vocab.words[i])
        elif i - len(vocab) < len(oovs):
            out.append(oovs[i - len(vocab)])
        else:
            raise ValueError(f"id {i} is past the extended vocabulary ({len(vocab)} + {len(oovs)} OOV words)")
    return out


# --------------------------------------------------------------------------- config


@dataclass(frozen=True)
class Seq2SeqConfig:
    """Shape and variant of a :class:`Seq2Seq`.

    ``hidden_size`` is the decoder's; each encoder direction has ``hidden_size // 2`` (the concatenated
    states ``h_i`` have ``hidden_size``), as in Psg2Sum's appendix B (256 + 256 encoder, 512 decoder).
    Sources longer than ``max_source_length`` and targets longer than ``max_target_length`` tokens are
    truncated by :func:`make_example` (See et al. truncate to 400 / 100); ``</s>`` follows the kept target.
    ``cell`` is ``"lstm"`` (See et al.; the default, and what a config saved without the key means) or
    ``"gru"`` (Psg2Sum's appendix).
    """

    vocab_size: int
    embedding_size: int = 128
    hidden_size: int = 256
    encoder_layers: int = 1
    decoder_layers: int = 1
    dropout: float = 0.0
    attention: bool = True
    copy: bool = False
    coverage: bool = False
    coverage_weight: float = 1.0
    attention_size: int | None = None  # None: hidden_size
    max_source_length: int = 400
    max_target_length: int = 100
    cell: str = "lstm"  # the encoder's and the decoder's recurrent cell: "lstm" or "gru"
    format: str = FORMAT

    def __post_init__(self) -> None:
        if self.vocab_size <= len(SPECIALS):
            raise ValueError(f"vocab_size {self.vocab_size} leaves no room for words after the specials")
        for name in ("embedding_size", "hidden_size", "encoder_layers", "decoder_layers"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.hidden_size % 2:
            raise ValueError(f"hidden_size {self.hidden_size} must be even (two encoder directions of half)")
        if self.attention_size is not None and self.attention_size < 1:
            raise ValueError(f"attention_size must be >= 1 or None, got {self.attention_size}")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout}")
        if self.copy and not self.attention:
            raise ValueError("copy (pointer-generator, eq. 8-9) copies with the attention: set attention: true")
        if self.coverage and not self.attention:
            raise ValueError("coverage (eq. 10-12) is a sum of attention distributions: set attention: true")
        if self.coverage_weight < 0:
            raise ValueError(f"coverage_weight must be >= 0, got {self.coverage_weight}")
        if self.coverage_weight != 1.0 and not self.coverage:
            raise ValueError("coverage_weight is set but coverage is off")
        if self.max_source_length < 1 or self.max_target_length < 1:
            raise ValueError("max_source_length and max_target_length must be >= 1")
        if self.cell not in CELLS:
            raise ValueError(f"cell must be one of {list(CELLS)}, got {self.cell!r}")
        if self.format != FORMAT:
            raise ValueError(f"seq2seq format {self.format!r} is not {FORMAT!r}")

    @property
    def variant(self) -> str:
        """``s2s``, ``s2s+copy`` or ``pgn`` (copy + coverage), the names of Psg2Sum's Table 4."""
        if self.copy:
            return "pgn" if self.coverage else "s2s+copy"
        return "s2s+coverage" if self.coverage else "s2s"

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Seq2SeqConfig:
        return config_from_dict(cls, d, "seq2seq")


# --------------------------------------------------------------------------- examples and batches


@dataclass(frozen=True)
class Seq2SeqExample:
    """One (source, target) pair as ids. ``target_ext`` is empty for an example without a target."""

    source_ids: tuple[int, ...]
    source_ext: tuple[int, ...]
    oovs: tuple[str, ...]
    target_ext: tuple[int, ...] = ()  # extended ids of the kept target words, without </s>
    truncated_source: bool = False
    truncated_target: bool = False

    def __len__(self) -> int:  # the length used by length-sorted batching
        return len(self.source_ids)


def make_example(
    source: Sequence[str], target: Sequence[str] | None, vocab: Vocab, config: Seq2SeqConfig
) -> Seq2SeqExample:
    """Ids of one example. The source is cut to ``config.max_source_length`` tokens and the target to
    ``config.max_target_length`` (the flags say when); ``</s>`` is added by :func:`collate`. Target words
    out of the vocabulary get their extended id when the model copies and the source has them, else
    ``<unk>`` (:func:`target_ids_extended`)."""
    if isinstance(source, str) or isinstance(target, str):
        raise TypeError("make_example takes token lists, not strings")
    if len(source) == 0:
        raise ValueError("empty source: there is nothing to attend to")
    if len(vocab) != config.vocab_size:
        raise ValueError(f"vocabulary has {len(vocab)} words, the config {config.vocab_size}")
    src = list(source[: config.max_source_length])
    ids, ext, oovs = source_ids_extended(src, vocab)
    tgt: list[int] = []
    truncated_target = False
    if target is not None:
        truncated_target = len(target) > config.max_target_length
        # Without copying a target word out of the vocabulary is <unk>, whether or not the source has it.
        tgt = target_ids_extended(list(target[: config.max_target_length]), vocab, oovs if config.copy else ())
    return Seq2SeqExample(
        tuple(ids), tuple(ext), tuple(oovs), tuple(tgt), len(source) > config.max_source_length, truncated_target
    )


@dataclass(frozen=True)
class BatchFacts:
    """What the model checks about a :func:`collate` batch and what packing needs on the CPU, taken on the host
    where the batch is made (``collate``'s ``host`` key; :func:`wikiref.model.scorer.to_device` leaves it there).
    On an accelerator each of them, read from the device tensors, would copy a value to the host: a
    synchronisation per training step (docs/gpu.md). A batch without it (built by hand) is checked on the device."""

    lengths: tuple[int, ...]  # src_len
    max_source_id: int  # the largest id of src, padding included
    max_target_id: int = -1  # of dec_out, padding and </s> included; -1 without targets
    max_target_past_oovs: int = -1  # the largest dec_out id minus its example's OOV count (extended vocab check)


def collate(examples: Sequence[Seq2SeqExample], vocab_size: int) -> dict[str, Any]:
    """Pad a batch. Keys: ``src``/``src_ext`` [B, S], ``src_len`` [B], ``n_oov`` [B]; with targets also
    ``dec_in`` [B, T] (``<s>`` then the target, OOVs as ``<unk>``), ``dec_out`` [B, T] (the target's
    extended ids then ``</s>``) and ``dec_mask`` [B, T]. Padding is ``<pad>`` (0) and masked everywhere.
    ``host``: the batch's :class:`BatchFacts` (not a tensor: it stays on the host)."""
    if not examples:
        raise ValueError("empty batch")
    b = len(examples)
    s = max(len(e.source_ids) for e in examples)
    src = torch.full((b, s), PAD_ID, dtype=torch.long)
    src_ext = torch.full((b, s), PAD_ID, dtype=torch.long)
    for k, e in enumerate(examples):
        src[k, : len(e.source_ids)] = torch.tensor(e.source_ids, dtype=torch.long)
        src_ext[k, : len(e.source_ext)] = torch.tensor(e.source_ext, dtype=torch.long)
    batch = {
        "src": src,
        "src_ext": src_ext,
        "src_len": torch.tensor([len(e.source_ids) for e in examples], dtype=torch.long),
        "n_oov": torch.tensor([len(e.oovs) for e in examples], dtype=torch.long),
    }
    with_target = [len(e.target_ext) > 0 for e in examples]
    if any(with_target):
        if not all(with_target):
            raise ValueError("a batch mixes examples with and without targets")
        t = max(len(e.target_ext) for e in examples) + 1
        dec_in = torch.full((b, t), PAD_ID, dtype=torch.long)
        dec_out = torch.full((b, t), PAD_ID, dtype=torch.long)
        for k, e in enumerate(examples):
            n = len(e.target_ext)
            tgt = torch.tensor(e.target_ext, dtype=torch.long)
            dec_in[k, 0] = BOS_ID
            dec_in[k, 1 : n + 1] = torch.where(tgt >= vocab_size, UNK_ID, tgt)
            dec_out[k, :n] = tgt
            dec_out[k, n] = EOS_ID
        batch.update(dec_in=dec_in, dec_out=dec_out, dec_mask=dec_out != PAD_ID)
    batch["host"] = _facts(examples, "dec_out" in batch)
    return batch


def _facts(examples: Sequence[Seq2SeqExample], with_target: bool) -> BatchFacts:
    """:class:`BatchFacts` of a batch, from the examples: the values the padded tensors hold (their ``<pad>``, id
    0, never raises a maximum: ids are >= 0 and every target row ends with ``</s>``)."""
    lengths = tuple(len(e.source_ids) for e in examples)
    max_source_id = max((i for e in examples for i in e.source_ids), default=PAD_ID)
    if not with_target:
        return BatchFacts(lengths, max_source_id)
    rows = [max([*e.target_ext, EOS_ID]) for e in examples]  # each dec_out row: the target, then </s>
    return BatchFacts(lengths, max_source_id, max(rows), max(r - len(e.oovs) for r, e in zip(rows, examples)))


# --------------------------------------------------------------------------- model


@dataclass
class EncoderOutput:
    """The encoder's states ``h_i`` [B, S, H], their attention features ``W_h h_i`` [B, S, A], the
    source mask [B, S] and the extended ids (for eq. 9), with ``n_ext`` = vocab size + max OOVs."""

    states: torch.Tensor
    features: torch.Tensor
    mask: torch.Tensor
    src_ext: torch.Tensor
    n_oov: torch.Tensor

    def index_select(self, index: torch.Tensor) -> EncoderOutput:
        """Rows ``index`` (beams flattened into the batch dimension)."""
        return EncoderOutput(
            *(t.index_select(0, index) for t in (self.states, self.features, self.mask, self.src_ext, self.n_oov))
        )


@dataclass
class DecoderState:
    """What a decoder step carries: the recurrent state ``h`` [L, B, H] and, for an LSTM, its cell
    state ``c`` [L, B, H] (None for a GRU, which has none), the previous context ``h*`` [B, H] (input
    feeding) and the coverage ``c^t`` [B, S] (eq. 10; None without coverage)."""

    h: torch.Tensor
    c: torch.Tensor | None
    context: torch.Tensor
    coverage: torch.Tensor | None

    @property
    def rnn_state(self) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """What the decoder RNN takes: ``(h, c)`` for an LSTM, ``h`` for a GRU."""
        return self.h if self.c is None else (self.h, self.c)

    def index_select(self, index: torch.Tensor) -> DecoderState:
        return DecoderState(
            self.h.index_select(1, index),
            None if self.c is None else self.c.index_select(1, index),
            self.context.index_select(0, index),
            None if self.coverage is None else self.coverage.index_select(0, index),
        )


@dataclass
class StepOutput:
    """One decoder step: vocabulary logits (eq. 4 before the softmax) [B, V], the ``p_gen`` logit
    (eq. 8) [B] or None, the attention ``a^t`` [B, S] (or None), the coverage it was computed with
    ``c^t`` [B, S] (or None) and the next state."""

    logits: torch.Tensor
    gen_logit: torch.Tensor | None
    attention: torch.Tensor | None
    coverage: torch.Tensor | None
    state: DecoderState


@dataclass
class Seq2SeqLoss:
    """A batch's loss (mean over examples of eq. 6/13 averaged over steps) and its parts."""

    loss: torch.Tensor  # scalar, what is minimised
    example_loss: torch.Tensor  # [B]
    nll: torch.Tensor  # [B, T] per-step -log P(w*_t), 0 past the target
    coverage_loss: torch.Tensor | None  # [B, T] per-step covloss_t (eq. 12), 0 past the target
    attention: torch.Tensor | None  # [B, T, S]
    p_gen: torch.Tensor | None  # [B, T]


class Seq2Seq(nn.Module):
    """s2s / s2s+copy / pointer-generator (+ coverage) of See et al. 2017, set by :class:`Seq2SeqConfig`;
    LSTM or GRU cells (``config.cell``)."""

    def __init__(self, config: Seq2SeqConfig) -> None:
        super().__init__()
        self.config = config
        e, h = config.embedding_size, config.hidden_size
        a = config.attention_size or h
        self.embedding = nn.Embedding(config.vocab_size, e, padding_idx=PAD_ID)
        self.dropout = nn.Dropout(config.dropout)
        rnn = nn.GRU if config.cell == "gru" else nn.LSTM
        self.encoder = rnn(
            e,
            h // 2,
            num_layers=config.encoder_layers,
            batch_first=True,
            bidirectional=True,
            dropout=config.dropout if config.encoder_layers > 1 else 0.0,
        )
        # The last encoder layer's final forward/backward states, reduced to the decoder's first state.
        # A GRU has no cell state, so no reduce_c (its checkpoints have no such weights).
        self.reduce_h = nn.Linear(h, h)
        if config.cell == "lstm":
            self.reduce_c = nn.Linear(h, h)
        dec_in = e + (h if config.attention else 0)
        self.decoder = rnn(
            dec_in,
            h,
            num_layers=config.decoder_layers,
            batch_first=True,
            dropout=config.dropout if config.decoder_layers > 1 else 0.0,
        )
        if config.attention:
            self.w_h = nn.Linear(h, a, bias=False)  # eq. 1: W_h h_i
            self.w_s = nn.Linear(h, a, bias=True)  # eq. 1: W_s s_t + b_attn
            self.v = nn.Linear(a, 1, bias=False)  # eq. 1: v^T
            if config.coverage:
                self.w_c = nn.Linear(1, a, bias=False)  # eq. 11: w_c c_i^t
        out_in = 2 * h if config.attention else h
        self.out_hidden = nn.Linear(out_in, h)  # eq. 4: V [s_t; h*_t] + b
        self.out_vocab = nn.Linear(h, config.vocab_size)  # eq. 4: V' (.) + b'
        if config.copy:
            self.p_gen = nn.Linear(h + h + e, 1)  # eq. 8: w_h*, w_s, w_x, b_ptr

    # ---- encoder

    def encode(
        self,
        src: torch.Tensor,
        src_len: torch.Tensor,
        src_ext: torch.Tensor,
        n_oov: torch.Tensor,
        host: BatchFacts | None = None,
    ):
        """Run the bidirectional encoder over packed sequences (padding never enters an LSTM step) and
        build the decoder's first state. Returns (:class:`EncoderOutput`, :class:`DecoderState`). ``host``: the
        batch's :class:`BatchFacts` (``collate``'s ``host``), so that nothing is read back from the device."""
        if src.dim() != 2 or src.shape != src_ext.shape:
            raise ValueError(
                f"src and src_ext must be [B, S] of one shape, got {tuple(src.shape)}, {tuple(src_ext.shape)}"
            )
        if host is not None:
            lengths, max_id = torch.tensor(host.lengths, dtype=torch.long), host.max_source_id
        else:  # one device-to-host transfer: the lengths (packing wants them on the CPU) and the largest id
            both = torch.cat([src_len, src.max().view(1)]).cpu()
            lengths, max_id = both[:-1], int(both[-1])
        if len(lengths) != src.shape[0]:
            raise ValueError(f"{len(lengths)} source lengths for a batch of {src.shape[0]}")
        if int(lengths.min()) < 1:
            raise ValueError("an empty source in the batch")
        if int(lengths.max()) > src.shape[1]:
            raise ValueError("src_len longer than the padded source")
        if max_id >= self.config.vocab_size:
            raise ValueError("src holds ids past the vocabulary (OOV words must be <unk> in src)")
        b = src.shape[0]
        emb = self.dropout(self.embedding(src))
        packed = pack_padded_sequence(emb, lengths, batch_first=True, enforce_sorted=False)
        out, final = self.encoder(packed)
        # pad_packed_sequence would also put the lengths back in batch order through its unsorting indices, which
        # it copies to the host; only the states are needed: padded in length order, then put back in batch order
        # on the device (the same operations on the states as pad_packed_sequence's).
        in_length_order = PackedSequence(out.data, out.batch_sizes)
        states, _ = pad_packed_sequence(in_length_order, batch_first=True, total_length=src.shape[1])
        states = states.index_select(0, out.unsorted_indices)
        mask = torch.arange(src.shape[1], device=src.device)[None, :] < src_len[:, None]
        lstm = self.config.cell == "lstm"
        h_n, c_n = final if lstm else (final, None)
        layers = self.config.decoder_layers

        def reduce(linear: nn.Linear, n: torch.Tensor) -> torch.Tensor:
            # n: [layers * 2, B, H/2]; the last layer's forward and backward final states, reduced.
            last = torch.cat([n[-2], n[-1]], dim=-1)
            return torch.relu(linear(last)).unsqueeze(0).expand(layers, -1, -1).contiguous()

        h0 = reduce(self.reduce_h, h_n)
        c0 = reduce(self.reduce_c, c_n) if lstm else None
        features = self.w_h(states) if self.config.attention else states.new_zeros(b, src.shape[1], 0)
        context = states.new_zeros(b, self.config.hidden_size if self.config.attention else 0)
        coverage = states.new_zeros(b, src.shape[1]) if self.config.coverage else None
        return EncoderOutput(states, features, mask, src_ext, n_oov), DecoderState(h0, c0, context, coverage)

    # ---- one decoder step

    def attend(
        self, enc: EncoderOutput, s_t: torch.Tensor, coverage: torch.Tensor | None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Eq. (1)/(11), (2), (3): attention ``a^t`` [B, S] over the unpadded source and context ``h*_t``."""
        pre = enc.features + self.w_s(s_t).unsqueeze(1)
        if coverage is not None:
            pre = pre + self.w_c(coverage.unsqueeze(-1))
        e = self.v(torch.tanh(pre)).squeeze(-1)
        e = e.masked_fill(~enc.mask, float("-inf"))
        a = torch.softmax(e, dim=-1)
        context = torch.bmm(a.unsqueeze(1), enc.states).squeeze(1)
        return a, context

    def step(self, enc: EncoderOutput, state: DecoderState, inputs: torch.Tensor) -> StepOutput:
        """One decoder step from input word ids [B] (vocabulary ids: copied OOVs as ``<unk>``)."""
        x = self.dropout(self.embedding(inputs))
        dec_in = torch.cat([x, state.context], dim=-1) if self.config.attention else x
        out, new_state = self.decoder(dec_in.unsqueeze(1), state.rnn_state)
        h, c = new_state if self.config.cell == "lstm" else (new_state, None)
        s_t = out.squeeze(1)
        attention = context = None
        if self.config.attention:
            attention, context = self.attend(enc, s_t, state.coverage)
            hidden = torch.cat([s_t, context], dim=-1)
        else:
            hidden = s_t
        logits = self.out_vocab(self.dropout(self.out_hidden(hidden)))
        gen_logit = None
        if self.config.copy:
            gen_logit = self.p_gen(torch.cat([context, s_t, x], dim=-1)).squeeze(-1)
        coverage = state.coverage
        new_coverage = None if coverage is None else coverage + attention  # eq. 10 for the next step
        new_context = context if context is not None else state.context
        return StepOutput(logits, gen_logit, attention, coverage, DecoderState(h, c, new_context, new_coverage))

    # ---- distributions

    def n_extended(self, enc: EncoderOutput) -> int:
        """Size of the batch's extended vocabulary: the vocabulary + the largest OOV count of the batch."""
        return self.config.vocab_size + (int(enc.n_oov.max()) if self.config.copy else 0)

    def final_distribution(self, enc: EncoderOutput, step: StepOutput) -> torch.Tensor:
        """Eq. (9): ``P(w)`` [B, V + max OOVs] as probabilities; without copy, ``P_vocab`` (eq. 4).

        The copy term is a ``scatter_add`` of ``(1 - p_gen) a^t`` onto the source's extended ids;
        extended slots past an example's own OOV words get probability zero.
        """
        p_vocab = torch.softmax(step.logits, dim=-1)
        if not self.config.copy:
            return p_vocab
        p_gen = torch.sigmoid(step.gen_logit).unsqueeze(-1)
        n_ext = self.n_extended(enc)
        dist = F.pad(p_gen * p_vocab, (0, n_ext - self.config.vocab_size))
        copy = (1 - p_gen) * step.attention.masked_fill(~enc.mask, 0.0)
        return dist.scatter_add(1, enc.src_ext, copy)

    def log_distribution(self, enc: EncoderOutput, step: StepOutput) -> torch.Tensor:
        """Log of :meth:`final_distribution` for decoding, in log space (eq. 9 as a ``logaddexp`` of the
        generate and copy branches); extended slots past an example's own OOV words are ``-inf``."""
        log_vocab = torch.log_softmax(step.logits, dim=-1)
        if not self.config.copy:
            return log_vocab
        n_ext = self.n_extended(enc)
        v = self.config.vocab_size
        gen = F.pad(F.logsigmoid(step.gen_logit).unsqueeze(-1) + log_vocab, (0, n_ext - v), value=_LOG_ZERO)
        mass = torch.zeros_like(gen).scatter_add(1, enc.src_ext, step.attention.masked_fill(~enc.mask, 0.0))
        cop = F.logsigmoid(-step.gen_logit).unsqueeze(-1) + torch.log(mass.clamp_min(_TINY))
        cop = torch.where(mass > 0, cop, torch.full_like(cop, _LOG_ZERO))
        out = torch.logaddexp(gen, cop)
        valid = torch.arange(n_ext, device=out.device)[None, :] < (v + enc.n_oov)[:, None]
        return out.masked_fill(~valid, float("-inf"))

    def target_log_prob(
        self, enc: EncoderOutput, step: StepOutput, target: torch.Tensor, check: bool = True
    ) -> torch.Tensor:
        """``log P(w*_t)`` [B] of target extended ids [B] (eq. 6 negated), computed only at the targets and
            in log space: ``logaddexp(log p_gen + log P_vocab(w), log(1 - p_gen) + log sum_{i: w_i = w} a_i)``;
            a branch with probability zero is a large finite negative number, so there is no NaN gradient.
        ``check=False`` skips the check of the targets against the vocabulary (a host sync per step; :meth:`forward`
        checks the whole batch once, from its host facts)."""
        v = self.config.vocab_size
        log_vocab = torch.log_softmax(step.logits, dim=-1)
        in_vocab = target < v
        lv = log_vocab.gather(1, torch.where(in_vocab, target, 0).unsqueeze(-1)).squeeze(-1)
        if not self.config.copy:
            if check and bool((~in_vocab).any()):
                raise ValueError("a target id is past the vocabulary but the model does not copy")
            return lv
        lv = torch.where(in_vocab, lv, torch.full_like(lv, _LOG_ZERO))
        attn = step.attention.masked_fill(~enc.mask, 0.0)
        mass = (attn * (enc.src_ext == target.unsqueeze(-1))).sum(-1)
        lc = torch.where(mass > 0, torch.log(mass.clamp_min(_TINY)), torch.full_like(mass, _LOG_ZERO))
        return torch.logaddexp(F.logsigmoid(step.gen_logit) + lv, F.logsigmoid(-step.gen_logit) + lc)

    # ---- training loss

    def forward(self, batch: Mapping[str, torch.Tensor]) -> Seq2SeqLoss:
        """Teacher-forced loss of a :func:`collate` batch (eq. 6, or 13 with coverage)."""
        if "dec_in" not in batch:
            raise ValueError("the batch has no targets (collate examples made with a target)")
        host = batch.get("host")
        enc, state = self.encode(batch["src"], batch["src_len"], batch["src_ext"], batch["n_oov"], host)
        dec_in, dec_out, dec_mask = batch["dec_in"], batch["dec_out"], batch["dec_mask"]
        v = self.config.vocab_size
        if host is not None:  # from collate, on the host
            past_vocab, past_oovs = host.max_target_id >= v, host.max_target_past_oovs >= v
        else:  # read back from the device (the first only where it is checked)
            past_vocab = not self.config.copy and int(dec_out.max()) >= v
            past_oovs = bool((dec_out >= (v + enc.n_oov)[:, None]).any())
        if not self.config.copy and past_vocab:
            raise ValueError("target ids past the vocabulary need a copying model (copy: true)")
        if past_oovs:
            raise ValueError("a target id is past its example's extended vocabulary (vocab + its source OOVs)")
        nll, cov, attn, pgen = [], [], [], []
        for t in range(dec_in.shape[1]):
            step = self.step(enc, state, dec_in[:, t])
            state = step.state
            nll.append(-self.target_log_prob(enc, step, dec_out[:, t], check=False))
            if step.attention is not None:
                attn.append(step.attention)
            if step.coverage is not None:
                cov.append(torch.minimum(step.attention, step.coverage).masked_fill(~enc.mask, 0.0).sum(-1))
            if step.gen_logit is not None:
                pgen.append(torch.sigmoid(step.gen_logit))
        m = dec_mask.to(enc.states.dtype)
        nll_t = torch.stack(nll, 1) * m
        per_step = nll_t
        cov_t = None
        if cov:
            cov_t = torch.stack(cov, 1) * m
            per_step = per_step + self.config.coverage_weight * cov_t
        example_loss = per_step.sum(1) / m.sum(1)
        return Seq2SeqLoss(
            loss=example_loss.mean(),
            example_loss=example_loss,
            nll=nll_t,
            coverage_loss=cov_t,
            attention=torch.stack(attn, 1) if attn else None,
            p_gen=torch.stack(pgen, 1) * m if pgen else None,
        )


def coverage_loss(attentions: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Eq. (10) + (12) from a sequence of attention distributions [T, S] (or [B, T, S]): per step
    ``sum_i min(a_i^t, c_i^t)`` with ``c^t`` the sum of the earlier steps' attentions; ``mask`` [T] or
    [B, T] zeroes steps past the target. The model computes the same inside :meth:`Seq2Seq.forward`."""
    cov = torch.cumsum(attentions, dim=-2) - attentions
    out = torch.minimum(attentions, cov).sum(-1)
    return out if mask is None else out * mask.to(out.dtype)


# --------------------------------------------------------------------------- files


def save_model_dir(model: nn.Module, vocab: Vocab, out_dir: str | os.PathLike, fmt: str) -> None:
    """Write ``model.safetensors`` (metadata ``format``) + ``config.json`` (the model's ``config.to_dict()``)
    + ``vocab.json`` into ``out_dir``, each atomically; shared by the abstractive models. The weights are
    copied to the CPU first (:func:`wikiref.model.weights.save_weights`), so RNN weights that cuDNN flattened
    into one buffer on CUDA save too."""
    module = model.module if hasattr(model, "module") else model  # DDP wrapper
    if len(vocab) != module.config.vocab_size:
        raise ValueError(f"vocabulary has {len(vocab)} words, the model {module.config.vocab_size}")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    save_weights(module, out_dir / WEIGHTS_FILE, metadata={"format": fmt})
    write_json(out_dir / CONFIG_FILE, module.config.to_dict())
    vocab.save(out_dir / VOCAB_FILE)


def load_model_dir(model_dir: str | os.PathLike, config_cls, model_cls, device: torch.device | str = "cpu"):
    """(model, vocabulary) rebuilt from a :func:`save_model_dir` folder: safetensors + JSON, nothing unpickled;
    the model is built and loaded on the CPU, then moved to ``device``."""
    model_dir = Path(model_dir)
    with open(model_dir / CONFIG_FILE, encoding="utf-8") as fh:
        config = config_cls.from_dict(json.load(fh))
    vocab = Vocab.load(model_dir / VOCAB_FILE)
    if len(vocab) != config.vocab_size:
        raise ValueError(f"{model_dir}: vocabulary has {len(vocab)} words, the config {config.vocab_size}")
    model = model_cls(config)
    load_weights(model, model_dir / WEIGHTS_FILE)
    return model.to(device), vocab


def save_seq2seq(model: Seq2Seq, vocab: Vocab, out_dir: str | os.PathLike) -> None:
    """Write ``model.safetensors`` + ``config.json`` + ``vocab.json`` into ``out_dir`` (each atomically)."""
    save_model_dir(model, vocab, out_dir, FORMAT)


def load_seq2seq(model_dir: str | os.PathLike, device: torch.device | str = "cpu") -> tuple[Seq2Seq, Vocab]:
    """Rebuild a saved model from safetensors + JSON (no pickle) and its vocabulary."""
    return load_model_dir(model_dir, Seq2SeqConfig, Seq2Seq, device)
