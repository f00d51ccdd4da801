"""The hierarchical transformer of Liu & Lapata (2019) and HEROSumm's components (QmdsCnnIr, §4).

One configurable module, :class:`HierSumm`. Section and equation numbers are those of Liu & Lapata 2019
("Hierarchical Transformers for Multi-Document Summarization", ACL; *L&L*) and of Pasunuru et al. 2021
("Data Augmentation for Abstractive Query-Focused Multi-Document Summarization", AAAI; *HS*, the paper in
``papers/qmdscnnir.txt``).

**Baseline** (HS §4.1, Fig. 2(a); all three switches off). An example is a query and N ranked documents
(paragraphs), each a token sequence; the query is prepended to the first document (HS §4.1 "we append
the query to the first document"; the query tokens come first, as L&L do for the title).

* Input (HS §4.1 "Document Encoding", L&L §3.1): ``h^0_ij = sqrt(d) w^e_ij + [p^e_i; p^e_j]``, the
  concatenation of a sinusoidal encoding (Vaswani et al. 2017) of the document's rank ``i`` and one of the
  token's position ``j`` in its document, ``d/2`` dimensions each.
* ``local_layers`` local transformer layers (HS §4.1, L&L §3.1.1): the layer of Vaswani et al. (self
  attention, feed-forward, residuals and layer norm after each), applied to each document on its own:
  documents are separate rows of the batch, so no token attends across documents. Padded documents are
  not encoded at all (their encodings are zero).
* ``global_layers`` global transformer layers (L&L §3.1.2, eq. 6-13), each of
    - multi-head pooling (:class:`MultiHeadPooling`): per head z, scores ``a^z_ij = W^z_a x_ij`` and
      values ``b^z_ij = W^z_b x_ij``, weights ``softmax_j(a^z_ij)`` over the document's real tokens,
      ``head^z_i = sum_j softmax_j(a^z_ij) b^z_ij`` (eq. 6-8);
    - inter-paragraph attention: per head, ``q^z_i = W^z_q head^z_i``, ``k^z_i = W^z_k head^z_i``,
      ``v^z_i = W^z_v head^z_i``, ``context^z_i = sum_i' softmax_i'(q^z_i . k^z_i' / sqrt(d_head)) v^z_i'``
      over the example's real documents, ``c_i = W_c [context^1_i; ...; context^H_i]`` (eq. 9-11);
    - feed-forward update of the tokens: ``g_ij = W_o2 ReLU(W_o1 (x_ij + c_i))``,
      ``x'_ij = LayerNorm(g_ij + x_ij)`` (eq. 12-13), which broadcasts the document's context to its tokens.
* A transformer decoder (``decoder_layers`` layers of Vaswani et al.: masked self attention, attention to
  the encoder's token encodings of all documents, feed-forward) over ``sqrt(d) w^e_t + p^e_t``; the output
  distribution over the vocabulary uses the (shared) embedding matrix when ``tie_embeddings``.

**HEROSumm components** (HS §4.2, Fig. 2(b)), each a switch of :class:`HierSummConfig`:

* ``query_encoder`` (HS §4.2 "Query Encoder", eq. 1): the query is *not* prepended; it is embedded
  (``h^q_k = sqrt(d) w^q_k + p^q_k``) and summarised by multi-head pooling, and a query layer inserted
  between the local and the global layers conditions every document on it::

      o^1_i = LN(h^l_i + MHA(h^l_i, h^l_i, MHP(h^q)))          (1)
      o^2_i = LN(o^1_i + FFN(o^1_i))

  ``o^2`` is the input of the global layers. Read here (the paper's MHA arguments do not fit a single
  attention's query/key/value shapes): the tokens of document ``i`` attend to the document's own tokens
  and to the pooled query vector (keys and values ``[h^l_i; MHP(h^q)]``), so documents stay apart and each
  token can take in the query.
* ``decoder_local_global`` (HS §4.2 "Hierarchical Encodings"): the decoder attends to both the local and
  the global encodings: "we concatenate the output of the local and global layers and project it through
  a linear layer", ``m_ij = W_h [l_ij; g_ij]``; ``l`` is the input of the global layers (the last local
  layer's output, or the query layer's when there is one, HS §1 "conditioned on the query output
  encoding").
* ``ordering`` (HS §4.2 "Self Ordering Transformer Encodings", eq. 2): the rank positions are dropped
  from the input (``p^e_i = 0`` in ``h^0``); a self-attention module (Lin et al. 2017, one hop) scores each
  document from its pooled final encoding, ``r = softmax_i(w_2^T tanh(W_1 d_i))`` over the real
  documents with ``d_i = MHP(g_i)``; the scores are turned into an ordering encoding
  ``PE(D_i, 2j) = sin(r_i / 10000^{2j/d})``, ``PE(D_i, 2j+1) = cos(r_i / 10000^{2j/d})`` (eq. 2) which is
  concatenated to the final global encodings of the document's tokens and projected back to ``d``,
  ``g'_ij = W_o [g_ij; PE(D_i)]``. Everything is differentiable, so the ranking is learned end to end
  from the summarisation loss. (With ``decoder_local_global`` too, ``g'`` is the global side of ``W_h``.)

With all three off the model is the baseline: none of the components' parameters exist
(:meth:`HierSummConfig.variant` is ``"baseline"``).

The loss of an example is the mean token negative log-likelihood of its summary and ``</s>`` (padding
masked; ``label_smoothing`` optional), the loss of a batch the mean over its examples, so an example's loss
does not depend on the batch it is padded into. Decoding (greedy and beam search, batched, length
normalisation, trigram blocking) is :mod:`wikiref.model.decoding`'s, through a small adapter
(:func:`greedy_decode`, :func:`beam_search`, :func:`decode`). Files (:func:`save_hiersumm` /
:func:`load_hiersumm`): ``model.safetensors``, ``config.json`` and ``vocab.json``; nothing is unpickled.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from wikiref.model import decoding
from wikiref.model.checkpoint import config_from_dict
from wikiref.model.decoding import DecodeSettings
from wikiref.model.seq2seq import (
    BOS_ID,
    EOS_ID,
    PAD_ID,
    SPECIALS,
    Vocab,
    load_model_dir,
    save_model_dir,
    words_from_ids,
)

FORMAT = "wikiref-hiersumm/1"

_DEFAULT_SETTINGS = DecodeSettings()  # greedy, max length from the config


# --------------------------------------------------------------------------- config


@dataclass(frozen=True)
class HierSummConfig:
    """Shape and variant of a :class:`HierSumm`.

    Defaults are HS appendix A.3: d = 256, feed-forward 1024, 6 local + 2 global encoder layers (5 local +
    1 query + 2 global with the query encoder: set ``local_layers=5``), one decoder layer, dropout 0.1.
    :func:`make_example` keeps the first ``max_documents`` non-empty documents, each cut to
    ``max_doc_length`` tokens, the query cut to ``max_query_length`` and the summary to
    ``max_target_length`` (``</s>`` follows it).
    """

    vocab_size: int
    d_model: int = 256
    heads: int = 8
    ff_size: int = 1024
    local_layers: int = 6
    global_layers: int = 2
    decoder_layers: int = 1
    dropout: float = 0.1
    max_documents: int = 8
    max_doc_length: int = 200
    max_query_length: int = 32
    max_target_length: int = 100
    decoder_local_global: bool = False  # HS §4.2 Hierarchical Encodings
    ordering: bool = False  # HS §4.2 Self Ordering Transformer Encodings
    query_encoder: bool = False  # HS §4.2 Query Encoder
    tie_embeddings: bool = True
    label_smoothing: float = 0.0
    format: str = FORMAT

    def __post_init__(self) -> None:
        if self.vocab_size <= len(SPECIALS):
            raise ValueError(f"vocab_size {self.vocab_size} leaves no room for words after the specials")
        for name in ("d_model", "heads", "ff_size", "local_layers", "decoder_layers"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.global_layers < 0:
            raise ValueError(f"global_layers must be >= 0, got {self.global_layers}")
        if self.d_model % 2:
            raise ValueError(f"d_model {self.d_model} must be even (rank and token positions have d/2 each)")
        if self.d_model % self.heads:
            raise ValueError(f"d_model {self.d_model} is not a multiple of heads {self.heads}")
        for name in ("max_documents", "max_doc_length", "max_query_length", "max_target_length"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout}")
        if not 0.0 <= self.label_smoothing < 1.0:
            raise ValueError(f"label_smoothing must be in [0, 1), got {self.label_smoothing}")
        if self.decoder_local_global and self.global_layers == 0:
            raise ValueError(
                "decoder_local_global combines the local and the global encodings: it needs global_layers >= 1"
            )
        if self.format != FORMAT:
            raise ValueError(f"hiersumm format {self.format!r} is not {FORMAT!r}")

    @property
    def variant(self) -> str:
        """``baseline``, ``hs-hierarchical``, ``hs-ordering``, ``hs-query`` (one component, the rows of HS
        Tables 2-4) or ``hs-joint[...]`` naming the components combined."""
        parts = [
            name
            for name, on in (
                ("hierarchical", self.decoder_local_global),
                ("ordering", self.ordering),
                ("query", self.query_encoder),
            )
            if on
        ]
        if not parts:
            return "baseline"
        return f"hs-{parts[0]}" if len(parts) == 1 else f"hs-joint[{'+'.join(parts)}]"

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> HierSummConfig:
        return config_from_dict(cls, d, "hiersumm")


# --------------------------------------------------------------------------- examples and batches


@dataclass(frozen=True)
class HierSummExample:
    """One (query, documents, summary) triplet as ids; ``target_ids`` is empty without a summary."""

    query_ids: tuple[int, ...]
    document_ids: tuple[tuple[int, ...], ...]
    target_ids: tuple[int, ...] = ()
    truncated: bool = False  # documents dropped or cut, query or summary cut

    def __len__(self) -> int:  # the length used by length-sorted batching
        return len(self.query_ids) + sum(len(d) for d in self.document_ids)


def make_example(
    query: Sequence[str],
    documents: Sequence[Sequence[str]],
    summary: Sequence[str] | None,
    vocab: Vocab,
    config: HierSummConfig,
) -> HierSummExample:
    """Ids of one triplet (token lists). Empty documents are skipped; the first ``max_documents`` of the
    others are kept (in their given, ranked, order), each cut to ``max_doc_length``; the query is cut to
    ``max_query_length`` and the summary to ``max_target_length``. :func:`collate` prepends the query to
    the first document when the model has no query encoder."""
    if isinstance(query, str) or isinstance(summary, str) or any(isinstance(d, str) for d in documents):
        raise TypeError("make_example takes token lists, not strings")
    if len(query) == 0:
        raise ValueError("empty query")
    docs = [d for d in documents if len(d) > 0]
    if not docs:
        raise ValueError("no non-empty document")
    truncated = len(docs) > config.max_documents or len(query) > config.max_query_length
    docs = docs[: config.max_documents]
    truncated = truncated or any(len(d) > config.max_doc_length for d in docs)
    target: tuple[int, ...] = ()
    if summary is not None:
        truncated = truncated or len(summary) > config.max_target_length
        target = tuple(vocab.encode(summary[: config.max_target_length]))
    return HierSummExample(
        query_ids=tuple(vocab.encode(query[: config.max_query_length])),
        document_ids=tuple(tuple(vocab.encode(d[: config.max_doc_length])) for d in docs),
        target_ids=target,
        truncated=truncated,
    )


@dataclass(frozen=True)
class HierBatchFacts:
    """What :meth:`HierSumm.encode` checks about a :func:`collate` batch, taken on the host where the batch is made
    (``collate``'s ``host`` key, left on the host by :func:`wikiref.model.scorer.to_device`): read from the device
    it would be a host synchronisation per step (docs/gpu.md). A batch without it is checked on the device."""

    documents: tuple[int, ...]  # each example's non-empty documents


def collate(examples: Sequence[HierSummExample], config: HierSummConfig) -> dict[str, Any]:
    """Padded tensors of a batch:

    * ``docs`` [B, N, T]: the documents (rows of ``<pad>`` for an example with fewer than N); without a
      query encoder the query is prepended to each example's first document (HS §4.1);
    * ``query`` [B, Q]: the query (read only by the query encoder);
    * ``dec_in`` / ``dec_out`` [B, L]: ``<s> y`` and ``y </s>``; ``dec_mask`` [B, L] marks real steps;
    * ``doc_rows`` [D]: the rows of ``docs`` viewed as [B * N, T] that hold a document (the ones the local
      layers encode), found here on the host rather than with a ``nonzero`` on the device;
    * ``host``: the batch's :class:`HierBatchFacts` (not a tensor).
    """
    if not examples:
        raise ValueError("empty batch")
    docs: list[list[list[int]]] = []
    for e in examples:
        ds = [list(d) for d in e.document_ids]
        if not config.query_encoder:
            ds[0] = [*e.query_ids, *ds[0]]
        docs.append(ds)
    b = len(examples)
    n = max(len(ds) for ds in docs)
    t = max(len(d) for ds in docs for d in ds)
    q = max(len(e.query_ids) for e in examples)
    lt = max(len(e.target_ids) for e in examples) + 1
    out = {
        "docs": torch.full((b, n, t), PAD_ID, dtype=torch.long),
        "query": torch.full((b, q), PAD_ID, dtype=torch.long),
        "dec_in": torch.full((b, lt), PAD_ID, dtype=torch.long),
        "dec_out": torch.full((b, lt), PAD_ID, dtype=torch.long),
        "dec_mask": torch.zeros((b, lt), dtype=torch.bool),
    }
    for i, (e, ds) in enumerate(zip(examples, docs)):
        for k, d in enumerate(ds):
            out["docs"][i, k, : len(d)] = torch.tensor(d, dtype=torch.long)
        out["query"][i, : len(e.query_ids)] = torch.tensor(e.query_ids, dtype=torch.long)
        tgt = list(e.target_ids)
        out["dec_in"][i, : len(tgt) + 1] = torch.tensor([BOS_ID, *tgt], dtype=torch.long)
        out["dec_out"][i, : len(tgt) + 1] = torch.tensor([*tgt, EOS_ID], dtype=torch.long)
        out["dec_mask"][i, : len(tgt) + 1] = True
    present = (out["docs"] != PAD_ID).any(-1)  # [B, N], as encode's doc_mask
    out["doc_rows"] = present.view(-1).nonzero().squeeze(-1)
    out["host"] = HierBatchFacts(documents=tuple(present.sum(-1).tolist()))
    return out


# --------------------------------------------------------------------------- building blocks


def sinusoid(positions: torch.Tensor, dim: int) -> torch.Tensor:
    """``PE(pos, 2j) = sin(pos / 10000^{2j/dim})``, ``PE(pos, 2j+1) = cos(...)`` (Vaswani et al. 2017 §3.5;
    HS eq. 2 with a real-valued ``pos``); ``positions`` [...] -> [..., dim]."""
    pos = positions.to(torch.float32).unsqueeze(-1)
    two_j = torch.arange(0, dim, 2, dtype=torch.float32, device=positions.device)
    angles = pos / torch.pow(10000.0, two_j / dim)
    out = torch.zeros((*positions.shape, dim), dtype=torch.float32, device=positions.device)
    out[..., 0::2] = torch.sin(angles)
    out[..., 1::2] = torch.cos(angles[..., : dim // 2])
    return out


def _masked_softmax(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension where ``mask`` (broadcastable, True = real); rows without a real
    entry get all-zero weights (never NaN)."""
    scores = scores.masked_fill(~mask, float("-inf"))
    any_real = mask.any(-1, keepdim=True)
    weights = torch.softmax(scores.masked_fill(~any_real, 0.0), dim=-1)
    return weights.masked_fill(~mask, 0.0)


class MultiHeadAttention(nn.Module):
    """Scaled dot-product attention with ``heads`` heads (Vaswani et al. 2017 §3.2.2); keys where
    ``key_mask`` is False get weight 0; ``causal`` also hides later positions."""

    def __init__(self, d_model: int, heads: int, dropout: float) -> None:
        super().__init__()
        self.heads, self.d_head = heads, d_model // heads
        self.q, self.k, self.v, self.o = (nn.Linear(d_model, d_model) for _ in range(4))
        self.dropout = nn.Dropout(dropout)

    def _split(self, x: torch.Tensor) -> torch.Tensor:
        r, n, _ = x.shape
        return x.view(r, n, self.heads, self.d_head).transpose(1, 2)  # [R, H, n, dh]

    def forward(
        self, query: torch.Tensor, memory: torch.Tensor, key_mask: torch.Tensor, causal: bool = False
    ) -> torch.Tensor:
        q, k, v = self._split(self.q(query)), self._split(self.k(memory)), self._split(self.v(memory))
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.d_head)  # [R, H, Lq, Lk]
        mask = key_mask[:, None, None, :]
        if causal:
            lq, lk = scores.shape[-2:]
            mask = mask & torch.ones(lq, lk, dtype=torch.bool, device=scores.device).tril()
        weights = self.dropout(_masked_softmax(scores, mask))
        out = (weights @ v).transpose(1, 2).reshape(query.shape[0], query.shape[1], -1)
        return self.o(out)


class FeedForward(nn.Module):
    """``W_2 ReLU(W_1 x)`` (Vaswani et al. 2017 §3.3)."""

    def __init__(self, d_model: int, ff_size: int, dropout: float) -> None:
        super().__init__()
        self.w1, self.w2 = nn.Linear(d_model, ff_size), nn.Linear(ff_size, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w2(self.dropout(F.relu(self.w1(x))))


class EncoderLayer(nn.Module):
    """The transformer encoder layer of Vaswani et al. (post layer norm), HS §4.1 "Local Transformer
    Layer" / L&L §3.1.1: ``x = LN(x + MHA(x, x, x))``, ``x = LN(x + FFN(x))``."""

    def __init__(self, d_model: int, heads: int, ff_size: int, dropout: float) -> None:
        super().__init__()
        self.attention = MultiHeadAttention(d_model, heads, dropout)
        self.ff = FeedForward(d_model, ff_size, dropout)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x = self.norm1(x + self.dropout(self.attention(x, x, mask)))
        return self.norm2(x + self.dropout(self.ff(x)))


class MultiHeadPooling(nn.Module):
    """Multi-head pooling, L&L §3.1.2 eq. (6)-(8): per head z, ``a^z_j = W^z_a x_j`` (a score),
    ``b^z_j = W^z_b x_j`` (a ``d/H`` value), ``head^z = sum_j softmax_j(a^z_j) b^z_j`` over the real tokens.

    ``x`` [..., T, d], ``mask`` [..., T] -> (heads [..., H, d/H], weights [..., H, T]); the weights of each
    head sum to one over the real tokens (a sequence without real tokens gets zeros).
    """

    def __init__(self, d_model: int, heads: int, dropout: float) -> None:
        super().__init__()
        self.heads, self.d_head = heads, d_model // heads
        self.score = nn.Linear(d_model, heads)
        self.value = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        scores = self.score(x).transpose(-1, -2)  # [..., H, T]
        weights = _masked_softmax(scores, mask.unsqueeze(-2))
        values = self.value(x).unflatten(-1, (self.heads, self.d_head)).transpose(-2, -3)  # [..., H, T, dh]
        pooled = (self.dropout(weights).unsqueeze(-2) @ values).squeeze(-2)  # [..., H, dh]
        return pooled, weights


class GlobalLayer(nn.Module):
    """L&L §3.1.2 global transformer layer: multi-head pooling of each document (eq. 6-8), inter-paragraph
    attention between the pooled documents with per-head projections (eq. 9-11), and the feed-forward
    update ``x'_ij = LN(x_ij + W_o2 ReLU(W_o1 (x_ij + c_i)))`` of every token (eq. 12-13)."""

    def __init__(self, d_model: int, heads: int, ff_size: int, dropout: float) -> None:
        super().__init__()
        self.heads, self.d_head = heads, d_model // heads
        self.pooling = MultiHeadPooling(d_model, heads, dropout)
        # W^z_q, W^z_k, W^z_v of eq. (9): one d_head x d_head matrix per head
        self.w_q, self.w_k, self.w_v = (nn.Parameter(torch.empty(heads, self.d_head, self.d_head)) for _ in range(3))
        for w in (self.w_q, self.w_k, self.w_v):
            for z in range(heads):
                nn.init.kaiming_uniform_(w.data[z], a=math.sqrt(5))
        self.context = nn.Linear(d_model, d_model)  # W_c of eq. (11)
        self.ff = FeedForward(d_model, ff_size, dropout)  # W_o1, W_o2 of eq. (12)
        self.norm = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(
        self, x: torch.Tensor, token_mask: torch.Tensor, doc_mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``x`` [B, N, T, d] -> (new x, pooling weights [B, N, H, T])."""
        heads, weights = self.pooling(x, token_mask)  # [B, N, H, dh]
        q = torch.einsum("bnhe,hef->bhnf", heads, self.w_q)
        k = torch.einsum("bnhe,hef->bhnf", heads, self.w_k)
        v = torch.einsum("bnhe,hef->bhnf", heads, self.w_v)
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.d_head)  # [B, H, N, N]
        att = self.dropout(_masked_softmax(scores, doc_mask[:, None, None, :]))
        ctx = (att @ v).permute(0, 2, 1, 3).flatten(-2)  # [B, N, d]
        c = self.context(ctx).unsqueeze(2)  # [B, N, 1, d], broadcast to the document's tokens
        out = self.norm(x + self.dropout(self.ff(x + c)))
        return out * token_mask.unsqueeze(-1), weights


class QueryLayer(nn.Module):
    """HS §4.2 eq. (1): ``o^1_i = LN(h^l_i + MHA(h^l_i, [h^l_i; MHP(h^q)]))``, ``o^2_i = LN(o^1_i +
    FFN(o^1_i))``, each document's tokens attending to their document and to the pooled query."""

    def __init__(self, d_model: int, heads: int, ff_size: int, dropout: float) -> None:
        super().__init__()
        self.pooling = MultiHeadPooling(d_model, heads, dropout)
        self.attention = MultiHeadAttention(d_model, heads, dropout)
        self.ff = FeedForward(d_model, ff_size, dropout)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, h: torch.Tensor, mask: torch.Tensor, hq: torch.Tensor, query_mask: torch.Tensor) -> torch.Tensor:
        """``h`` [R, T, d] document rows, ``hq`` [R, Q, d] the query of each row's example."""
        pooled_q = self.pooling(hq, query_mask)[0].flatten(-2).unsqueeze(1)  # [R, 1, d]
        memory = torch.cat([h, pooled_q], dim=1)
        memory_mask = torch.cat([mask, torch.ones_like(mask[:, :1])], dim=1)
        o1 = self.norm1(h + self.dropout(self.attention(h, memory, memory_mask)))
        return self.norm2(o1 + self.dropout(self.ff(o1)))


class OrderingComponent(nn.Module):
    """HS §4.2 "Self Ordering Transformer Encodings": document scores ``r = softmax_i(w_2^T tanh(W_1
    d_i))`` (the self-attention of Lin et al. 2017 over documents, ``d_i`` the multi-head pooling of the
    document's final encodings), the sinusoidal encoding of eq. (2) of each ``r_i``, concatenated to the
    document's token encodings and projected back to ``d``."""

    def __init__(self, d_model: int, heads: int, dropout: float) -> None:
        super().__init__()
        self.d_model = d_model
        self.pooling = MultiHeadPooling(d_model, heads, dropout)
        self.w1 = nn.Linear(d_model, d_model, bias=False)  # W_s1 of Lin et al.
        self.w2 = nn.Linear(d_model, 1, bias=False)  # w_s2
        self.project = nn.Linear(2 * d_model, d_model)

    def forward(
        self, g: torch.Tensor, token_mask: torch.Tensor, doc_mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``g`` [B, N, T, d] -> (``W_o [g; PE(r)]`` [B, N, T, d], scores ``r`` [B, N])."""
        d_i = self.pooling(g, token_mask)[0].flatten(-2)  # [B, N, d]
        r = _masked_softmax(self.w2(torch.tanh(self.w1(d_i))).squeeze(-1), doc_mask)
        pe = sinusoid(r, self.d_model).to(g.dtype)  # eq. (2), [B, N, d]
        out = self.project(torch.cat([g, pe.unsqueeze(2).expand_as(g)], dim=-1))
        return out * token_mask.unsqueeze(-1), r


class DecoderLayer(nn.Module):
    """The transformer decoder layer of Vaswani et al. (post layer norm): masked self attention, attention
    to the encoder memory, feed-forward."""

    def __init__(self, d_model: int, heads: int, ff_size: int, dropout: float) -> None:
        super().__init__()
        self.self_attention = MultiHeadAttention(d_model, heads, dropout)
        self.cross_attention = MultiHeadAttention(d_model, heads, dropout)
        self.ff = FeedForward(d_model, ff_size, dropout)
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(d_model) for _ in range(3))
        self.dropout = nn.Dropout(dropout)

    def forward(
        self, y: torch.Tensor, y_mask: torch.Tensor, memory: torch.Tensor, memory_mask: torch.Tensor
    ) -> torch.Tensor:
        y = self.norm1(y + self.dropout(self.self_attention(y, y, y_mask, causal=True)))
        y = self.norm2(y + self.dropout(self.cross_attention(y, memory, memory_mask)))
        return self.norm3(y + self.dropout(self.ff(y)))


# --------------------------------------------------------------------------- the model


@dataclass
class HierEncoding:
    """What the encoder hands the decoder, and the intermediate encodings (for inspection and tests).

    ``memory`` [B, N*T, d] with ``memory_mask`` [B, N*T]; ``local`` / ``global_`` [B, N, T, d] (the input
    and the output of the global layers; padding zero); ``token_mask`` [B, N, T], ``doc_mask`` [B, N];
    ``doc_scores`` [B, N] the ordering component's ``r`` (None without it).
    """

    memory: torch.Tensor
    memory_mask: torch.Tensor
    local: torch.Tensor
    global_: torch.Tensor
    token_mask: torch.Tensor
    doc_mask: torch.Tensor
    doc_scores: torch.Tensor | None

    def index_select(self, index: torch.Tensor) -> HierEncoding:
        """Rows ``index`` of the batch (beams; :mod:`wikiref.model.decoding` flattens them into it)."""
        return HierEncoding(
            self.memory.index_select(0, index),
            self.memory_mask.index_select(0, index),
            self.local.index_select(0, index),
            self.global_.index_select(0, index),
            self.token_mask.index_select(0, index),
            self.doc_mask.index_select(0, index),
            None if self.doc_scores is None else self.doc_scores.index_select(0, index),
        )


@dataclass
class HierSummOutput:
    """``loss`` (mean of ``example_loss`` over the batch), ``example_loss`` [B] (mean over the example's
    target steps), ``nll`` [B, L] per step (0 on padding), ``logits`` [B, L, V]."""

    loss: torch.Tensor
    example_loss: torch.Tensor
    nll: torch.Tensor
    logits: torch.Tensor
    encoding: HierEncoding


class HierSumm(nn.Module):
    """Liu & Lapata's hierarchical transformer with HEROSumm's switchable components (module docstring)."""

    def __init__(self, config: HierSummConfig) -> None:
        super().__init__()
        self.config = c = config
        d = c.d_model
        self.embedding = nn.Embedding(c.vocab_size, d, padding_idx=PAD_ID)
        nn.init.normal_(self.embedding.weight, 0.0, d**-0.5)
        with torch.no_grad():
            self.embedding.weight[PAD_ID].zero_()
        self.local_layers = nn.ModuleList(EncoderLayer(d, c.heads, c.ff_size, c.dropout) for _ in range(c.local_layers))
        self.global_layers = nn.ModuleList(
            GlobalLayer(d, c.heads, c.ff_size, c.dropout) for _ in range(c.global_layers)
        )
        self.decoder_layers = nn.ModuleList(
            DecoderLayer(d, c.heads, c.ff_size, c.dropout) for _ in range(c.decoder_layers)
        )
        self.dropout = nn.Dropout(c.dropout)
        if c.query_encoder:
            self.query_layer = QueryLayer(d, c.heads, c.ff_size, c.dropout)
        if c.ordering:
            self.ordering = OrderingComponent(d, c.heads, c.dropout)
        if c.decoder_local_global:
            self.local_global = nn.Linear(2 * d, d)  # W_h of HS §4.2 Hierarchical Encodings
        if not c.tie_embeddings:
            self.out_vocab = nn.Linear(d, c.vocab_size, bias=False)

    # ----------------------------------------------------------------- encoder

    def _embed(self, ids: torch.Tensor) -> torch.Tensor:
        return self.embedding(ids) * math.sqrt(self.config.d_model)

    def encode_local(
        self, docs: torch.Tensor, query: torch.Tensor | None = None, rows: torch.Tensor | None = None
    ) -> torch.Tensor:
        """The documents [B, N, T] through the input encoding and the local layers (and the query layer
        with a query encoder; ``query`` [B, Q]), each document a batch row of its own: [B, N, T, d], zero on
        padding. Padded (all ``<pad>``) documents are not encoded; ``rows``: the others' rows of ``docs``
        viewed as [B * N, T] (``collate``'s ``doc_rows``), else found here."""
        c = self.config
        b, n, t = docs.shape
        token_mask = docs != PAD_ID
        half = c.d_model // 2
        intra = sinusoid(torch.arange(t, device=docs.device), half).expand(b, n, t, half)
        if c.ordering:  # HS §4.2: no rank positions in the input, the ordering component encodes them
            inter = torch.zeros_like(intra)
        else:
            inter = sinusoid(torch.arange(n, device=docs.device), half)[None, :, None, :].expand(b, n, t, half)
        x = self.dropout(self._embed(docs) + torch.cat([inter, intra], dim=-1))  # h^0 of HS §4.1
        if rows is None:
            rows = token_mask.any(-1).view(-1).nonzero().squeeze(-1)  # the documents that are not all <pad>
        h = x.view(b * n, t, -1).index_select(0, rows)
        mask = token_mask.view(b * n, t).index_select(0, rows)
        for layer in self.local_layers:
            h = layer(h, mask)
        if c.query_encoder:
            if query is None:
                raise ValueError("the query encoder needs the batch's query")
            query_mask = query != PAD_ID
            qpos = sinusoid(torch.arange(query.shape[1], device=query.device), c.d_model)
            hq = self.dropout(self._embed(query) + qpos)  # h^q_k = w^q_k + p^q_k
            example = rows // n
            h = self.query_layer(h, mask, hq.index_select(0, example), query_mask.index_select(0, example))
        h = h * mask.unsqueeze(-1)
        out = h.new_zeros(b * n, t, c.d_model).index_copy(0, rows, h)
        return out.view(b, n, t, c.d_model)

    def encode(self, batch: Mapping[str, Any]) -> HierEncoding:
        """Local layers, query layer, global layers, ordering and the local/global combination."""
        docs = batch["docs"]
        token_mask = docs != PAD_ID
        doc_mask = token_mask.any(-1)
        host = batch.get("host")
        if not (min(host.documents) > 0 if host is not None else bool(doc_mask.any(-1).all())):
            raise ValueError("an example of the batch has no document")
        local = self.encode_local(docs, batch.get("query"), batch.get("doc_rows"))
        g = local
        for layer in self.global_layers:
            g, _ = layer(g, token_mask, doc_mask)
        final, scores = g, None
        if self.config.ordering:
            final, scores = self.ordering(g, token_mask, doc_mask)
        if self.config.decoder_local_global:
            final = self.local_global(torch.cat([local, final], dim=-1)) * token_mask.unsqueeze(-1)
        b, n, t, d = final.shape
        return HierEncoding(
            memory=final.reshape(b, n * t, d),
            memory_mask=token_mask.reshape(b, n * t),
            local=local,
            global_=g,
            token_mask=token_mask,
            doc_mask=doc_mask,
            doc_scores=scores,
        )

    # ----------------------------------------------------------------- decoder

    def decode_states(self, enc: HierEncoding, dec_in: torch.Tensor) -> torch.Tensor:
        """Decoder states [R, L, d] of the inputs ``dec_in`` [R, L] (``<s> y``; padding after the end)."""
        y_mask = dec_in != PAD_ID
        pos = sinusoid(torch.arange(dec_in.shape[1], device=dec_in.device), self.config.d_model)
        y = self.dropout(self._embed(dec_in) + pos)
        for layer in self.decoder_layers:
            y = layer(y, y_mask, enc.memory, enc.memory_mask)
        return y

    def logits(self, states: torch.Tensor) -> torch.Tensor:
        """Scores over the vocabulary (the shared embedding matrix with ``tie_embeddings``)."""
        if self.config.tie_embeddings:
            return F.linear(states, self.embedding.weight)
        return self.out_vocab(states)

    def forward(self, batch: Mapping[str, torch.Tensor]) -> HierSummOutput:
        enc = self.encode(batch)
        logits = self.logits(self.decode_states(enc, batch["dec_in"]))
        mask = batch["dec_mask"]
        nll = F.cross_entropy(
            logits.transpose(1, 2), batch["dec_out"], reduction="none", label_smoothing=self.config.label_smoothing
        )
        nll = nll * mask.to(nll.dtype)
        example_loss = nll.sum(1) / mask.sum(1).clamp(min=1).to(nll.dtype)
        return HierSummOutput(example_loss.mean(), example_loss, nll, logits, enc)


# --------------------------------------------------------------------------- decoding


@dataclass
class _Prefix:
    """The decoder's state for :mod:`wikiref.model.decoding`: the words fed so far, [R, t]."""

    ids: torch.Tensor

    def index_select(self, index: torch.Tensor) -> _Prefix:
        return _Prefix(self.ids.index_select(0, index))


@dataclass
class _Step:
    state: _Prefix
    states: torch.Tensor  # [R, d], the decoder's last state


class _DecodingAdapter:
    """Presents a :class:`HierSumm` and one batch with the interface :mod:`wikiref.model.decoding` drives
    (``encode`` / ``step`` / ``log_distribution``, ``config.vocab_size`` / ``max_target_length``), so the
    greedy and beam search there (beams flattened into the batch, length normalisation, trigram blocking,
    min/max length) decode this model too. Each step runs the decoder over the whole prefix (no cache)."""

    def __init__(self, model: HierSumm, batch: Mapping[str, torch.Tensor]) -> None:
        self.model, self.batch = model, batch
        self.config = model.config
        self.training = model.training

    def request(self) -> dict:
        """The batch as :mod:`wikiref.model.decoding` reads it; ``encode`` uses this adapter's batch."""
        return {"src": self.batch["docs"], "src_len": None, "src_ext": None, "n_oov": None}

    def encode(self, *_unused) -> tuple[HierEncoding, _Prefix]:
        enc = self.model.encode(self.batch)
        return enc, _Prefix(torch.empty((enc.memory.shape[0], 0), dtype=torch.long, device=enc.memory.device))

    def step(self, enc: HierEncoding, state: _Prefix, inputs: torch.Tensor) -> _Step:
        ids = torch.cat([state.ids, inputs.unsqueeze(1)], dim=1)
        return _Step(_Prefix(ids), self.model.decode_states(enc, ids)[:, -1])

    def log_distribution(self, enc: HierEncoding, step: _Step) -> torch.Tensor:
        """Log-probabilities of the next word; ``<pad>`` and ``<s>`` are never generated (no summary has
        them: a ``<pad>`` fed back would be taken for padding)."""
        logits = self.model.logits(step.states)
        logits[:, [PAD_ID, BOS_ID]] = float("-inf")
        return torch.log_softmax(logits, dim=-1)


def greedy_decode(model: HierSumm, batch, settings: DecodeSettings = _DEFAULT_SETTINGS) -> list[list[int]]:
    """:func:`wikiref.model.decoding.greedy_decode` of a :func:`collate` batch; ids without ``</s>``."""
    adapter = _DecodingAdapter(model, batch)
    return decoding.greedy_decode(adapter, adapter.request(), settings)  # type: ignore[arg-type]


def beam_search(model: HierSumm, batch, settings: DecodeSettings = _DEFAULT_SETTINGS) -> list[list[int]]:
    """:func:`wikiref.model.decoding.beam_search` (``score / len**alpha``) of a :func:`collate` batch."""
    adapter = _DecodingAdapter(model, batch)
    return decoding.beam_search(adapter, adapter.request(), settings)  # type: ignore[arg-type]


def decode_batch(model: HierSumm, batch, settings: DecodeSettings = _DEFAULT_SETTINGS) -> list[list[int]]:
    """Greedy for ``beam=1``, else beam search."""
    return greedy_decode(model, batch, settings) if settings.beam == 1 else beam_search(model, batch, settings)


def decode(
    model: HierSumm,
    vocab: Vocab,
    inputs: Sequence[tuple[Sequence[str], Sequence[Sequence[str]]]] | Sequence[HierSummExample],
    settings: DecodeSettings = _DEFAULT_SETTINGS,
    *,
    batch_size: int = 32,
) -> list[list[str]]:
    """Summaries (token lists) of ``inputs`` ((query, documents) pairs of token lists, or
    :func:`make_example` examples), in input order; batches of similar lengths. The result does not depend
    on ``batch_size``."""
    from wikiref.model.scorer import length_sorted_batches

    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    examples = [
        x if isinstance(x, HierSummExample) else make_example(x[0], x[1], None, vocab, model.config) for x in inputs
    ]
    out: list[list[str]] = [[] for _ in examples]
    for idx in length_sorted_batches(examples, batch_size):  # type: ignore[arg-type]
        chunk = [dataclasses.replace(examples[i], target_ids=()) for i in idx]
        for i, ids in zip(idx, decode_batch(model, collate(chunk, model.config), settings)):
            out[i] = words_from_ids(ids, vocab, ())
    return out


# --------------------------------------------------------------------------- files


def save_hiersumm(model: HierSumm, vocab: Vocab, out_dir: str | os.PathLike) -> None:
    """Write ``model.safetensors`` + ``config.json`` + ``vocab.json`` into ``out_dir`` (each atomically)."""
    save_model_dir(model, vocab, out_dir, FORMAT)


def load_hiersumm(model_dir: str | os.PathLike, device: torch.device | str = "cpu") -> tuple[HierSumm, Vocab]:
    """Rebuild a saved model from safetensors + JSON (no pickle) and its vocabulary."""
    return load_model_dir(model_dir, HierSummConfig, HierSumm, device)
