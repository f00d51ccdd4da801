"""The scorer's bi-encoder pairing (``ScorerConfig.pairing: bi``): the query and every sentence encoded
**alone**, each mean-pooled and L2-normalised, and a sentence's output ``w_cos * cos(q, s) + w_len * log1p(tokens)
+ b`` (the scorer's ``head``: a linear layer over those two features, started at ``w_cos = COS_SCALE``, ``w_len =
0``).

Why a second pairing: the encoders this package installs with weights (MiniLM-L6, mpnet-base) are sentence-embedding
models, trained to place a query and a relevant passage close when each is encoded alone. The cross pairing (query
and sentences packed into one window, :mod:`wikiref.model.packing`) gives that training up: on the real QMSum
meetings the MiniLM-L6 cosine of separately encoded query and turn ranks turns better (8.02 R-2 F1) than the same
cosine inside a packed window (6.87) or any fine-tuned cross-pairing Q-BERT (7.46 at best;
bench/results/recipe-study-NOTES.md). A bi scorer starts from that ranking (at step 0 its order is the encoder's
cosine order) and fine-tuning moves it; the length feature lets it learn what the longer turns are worth (mean
pooling hides length).

Training items are whole examples up to ``TRAIN_CHUNK`` sentences (one query with all its sentences: the ranking group
of the listwise and pairwise losses is complete in the batch); a longer example (a whole meeting for a general QMSum
query, a long cited page) is cut into items of ``TRAIN_CHUNK`` sentences, its ranking group then spread over the
batches its items land in. ``batch_size`` counts items, so one step holds at most ``batch_size x TRAIN_CHUNK``
sentences whatever the documents' lengths (the epoch's length bucketing batches the longest items together). At
inference long documents are cut into chunks of ``CHUNK`` sentences (the query is encoded once per chunk).
Sentences are cut to ``sentence_tokens`` tokens and the query to ``max_query_tokens``; no [L#] markers (the query's
levels are joined with " ; ": the markers' embedding rows are new and would move the pretrained query embedding).
A batch's sentences are encoded in length buckets (:data:`BUCKET_BOUNDS`, :func:`collate`): the same embeddings as
one padded block, at a fraction of its tokens.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

# Sentences of a batch are encoded in length buckets (:func:`collate`): sorted by length, cut where the length passes
# one of these bounds, each bucket padded to its own longest (a multiple of 8). One padded block per batch made the
# encoder see 6.6x the real tokens on the QMSum turns (a few 128-token turns among many short ones); these bounds
# give 1.2x at about 8 encoder calls per batch (bench/biencoder.py measures it).
BUCKET_BOUNDS = (8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512)
COS_SCALE = 20.0  # the cosine's initial weight: a softmax temperature of 1/20, as sentence-transformers' ranking loss
CHUNK = 64  # sentences per inference item
# sentences per training item at most: a step's activations stay bounded (MiniLM-L6, 128-token rows, float32 on the
# CPU: ~44 MB a sentence, so the QMSum recipe's 4 items of 128 sentences ~22 GB at most, the pre-training recipe's 8
# ~45 GB, about half under bfloat16 autocast), where 4 whole QMSum meetings (up to 1,832 turns each) would need
# several times an accelerator's memory
TRAIN_CHUNK = 128
LEN_NORM = math.log1p(128)  # log1p(tokens) / LEN_NORM stays in [0, ~1] for the sentence lengths used here


@dataclass
class BiItem:
    """One query with some of its example's sentences (token ids without padding)."""

    example: int
    query_ids: list[int]
    sentences: list[list[int]]
    first: int = 0  # index of sentences[0] in the example

    def __len__(self) -> int:  # tokens: what the epoch batches bucket by
        return len(self.query_ids) + sum(len(s) for s in self.sentences)


def init_head(head: nn.Linear) -> None:
    """The bi head's start: the output is ``COS_SCALE * cos`` (length weight and bias 0)."""
    with torch.no_grad():
        head.weight.zero_()
        head.weight[0, 0] = COS_SCALE
        head.bias.zero_()


def _ids(tokenizer, texts: Sequence[str], max_tokens: int) -> list[list[int]]:
    if not texts:
        return []
    return tokenizer(list(texts), truncation=True, max_length=max_tokens, add_special_tokens=True)["input_ids"]


def make_items(config, tokenizer, examples: Sequence[Sequence], chunk: int | None = None) -> list[BiItem]:
    """(query levels, sentences[, doc lengths]) examples -> items (``chunk``: sentences per item; None: all)."""
    queries = [" ; ".join(str(x) for x in e[0] if str(x).strip()) for e in examples]
    q_ids = _ids(tokenizer, queries, config.max_query_tokens)
    items = []
    for k, e in enumerate(examples):
        sents = _ids(tokenizer, [str(s) for s in e[1]], config.sentence_tokens)
        step = chunk or max(1, len(sents))
        for i in range(0, len(sents), step):
            items.append(BiItem(k, q_ids[k], sents[i : i + step], i))
    return items


def _pad(rows: Sequence[Sequence[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    longest = -(-max(len(r) for r in rows) // 8) * 8
    ids = np.full((len(rows), longest), pad_id, dtype=np.int64)
    mask = np.zeros((len(rows), longest), dtype=np.int64)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = r
        mask[i, : len(r)] = 1
    return torch.from_numpy(ids), torch.from_numpy(mask)


def length_buckets(sorted_lengths: np.ndarray, bounds: Sequence[int] = BUCKET_BOUNDS) -> tuple:
    """``(start, end, width)`` per bucket of rows sorted by length: a bucket ends where a length passes a bound, and
    is padded to its longest row rounded up to a multiple of 8 (plain ints: the forward pass slices with them on any
    device without a host synchronisation)."""
    keys = np.searchsorted(np.asarray(bounds), sorted_lengths, side="left")
    cuts = [0, *(np.flatnonzero(np.diff(keys)) + 1).tolist(), len(sorted_lengths)]
    return tuple((a, b, int(-(-int(sorted_lengths[b - 1]) // 8) * 8)) for a, b in zip(cuts[:-1], cuts[1:]))


def bucket_training_batches(device: torch.device | str) -> bool:
    """Whether a training batch's sentences are encoded in length buckets on ``device`` (``collate``'s ``bucket``).

    On the CPU, yes: compute sets the pace there, and the buckets cut it (2 cores: 2.42 against 11.85 s a step,
    docs/benchmarks.md). On CUDA, no: at the paper recipe's 4 items a step, one padded block took 0.052 s a step and
    the buckets 0.218 (an H100, ``bench/biencoder.py --encoder random-minilm --data synthetic``, bf16):
    each of the batch's ~8 encoder calls is too small to occupy the GPU, and launching its kernels (and transformers'
    check of each call's padding mask, a host synchronisation) costs more than the padded tokens. Inference keeps the
    buckets everywhere (:func:`score_items`: in the paper profile 64 items of up to 64 sentences a batch against 4,
    where padding costs more than calls; not measured on a GPU)."""
    return torch.device(device).type != "cuda"


def collate(
    items: Sequence[BiItem],
    pad_id: int,
    targets: Sequence[Sequence[float]] | None = None,
    groups: Sequence[int] | None = None,
    bucket: bool = True,
) -> dict:
    """Padded query and sentence rows; ``sent_query`` maps a sentence to its item's query row. The bookkeeping keys
    (``sent_example``, ``sent_index``, ``sent_group``, ``targets``) mean what they mean in the cross batches.

    The sentence rows (``sent_ids`` / ``sent_mask``) are stored sorted by length, with ``sent_buckets`` (see
    :func:`length_buckets`) and ``sent_unsort`` (row of each sentence of the batch among them); every other
    per-sentence key keeps the items' order. ``bucket=False``: the rows in the items' order, one bucket as wide as
    the longest row (one padded block)."""
    sents = [s for it in items for s in it.sentences]
    if not sents:
        raise ValueError("a batch in which no sentence is scored")
    lengths = np.fromiter((len(s) for s in sents), dtype=np.int64, count=len(sents))
    order = np.argsort(lengths, kind="stable") if bucket else np.arange(len(sents))
    unsort = np.empty_like(order)
    unsort[order] = np.arange(len(sents))
    q_ids, q_mask = _pad([it.query_ids for it in items], pad_id)
    s_ids, s_mask = _pad([sents[i] for i in order], pad_id)
    sent_query = [b for b, it in enumerate(items) for _ in it.sentences]
    sent_example = [it.example for it in items for _ in it.sentences]
    sent_index = [it.first + j for it in items for j in range(len(it.sentences))]
    n_tokens = [max(len(s) - 2, 1) for s in sents]  # without the two special tokens
    batch = {
        "query_ids": q_ids,
        "query_mask": q_mask,
        "sent_ids": s_ids,
        "sent_mask": s_mask,
        "sent_buckets": length_buckets(lengths[order]) if bucket else ((0, len(sents), int(s_ids.shape[1])),),
        "sent_unsort": torch.from_numpy(unsort),
        "sent_query": torch.tensor(sent_query, dtype=torch.long),
        "sent_length": torch.tensor(np.log1p(n_tokens) / LEN_NORM, dtype=torch.float32),
        "sent_example": torch.tensor(sent_example, dtype=torch.long),
        "sent_index": torch.tensor(sent_index, dtype=torch.long),
        "sent_group": torch.tensor(
            sent_example if groups is None else [int(groups[e]) for e in sent_example], dtype=torch.long
        ),
    }
    if targets is not None:
        batch["targets"] = torch.tensor([float(targets[e][j]) for e, j in zip(sent_example, sent_index)])
    return batch


def _embed(encoder: nn.Module, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    hidden = encoder(input_ids=ids, attention_mask=mask).last_hidden_state.float()  # pooled in float32 under AMP
    m = mask.unsqueeze(-1).to(hidden.dtype)
    mean = (hidden * m).sum(1) / m.sum(1).clamp(min=1.0)
    return nn.functional.normalize(mean, dim=-1)


def forward(model, batch) -> torch.Tensor:
    """Raw outputs, one per sentence of the batch (``model``: a bi :class:`~wikiref.model.scorer.SentenceScorer`)."""
    q = _embed(model.encoder, batch["query_ids"], batch["query_mask"])
    ids, mask = batch["sent_ids"], batch["sent_mask"]
    # contiguous slices: a compiled encoder (model.compile) guards on the ids' strides, so views would recompile
    parts = [
        _embed(model.encoder, ids[a:b, :w].contiguous(), mask[a:b, :w].contiguous())
        for a, b, w in batch["sent_buckets"]
    ]
    s = (torch.cat(parts) if len(parts) > 1 else parts[0]).index_select(0, batch["sent_unsort"])
    cos = (s * q.index_select(0, batch["sent_query"])).sum(-1)
    features = torch.stack([cos, batch["sent_length"].float()], dim=-1)
    # the head by hand in float32: under autocast a linear layer would round the scores to bfloat16 (~0.06 at 10)
    return (features * model.head.weight[0].float()).sum(-1) + model.head.bias.float()


def score_items(
    model, items: Sequence[BiItem], sentence_counts: Sequence[int], targets=None, *, batch_size, device, amp, pad_id
) -> tuple[list[np.ndarray], float | None]:
    """:func:`wikiref.model.scoring_task.run_batches` over items sorted by length, ``batch_size`` items a batch:
    scores per example and, with targets, the mean loss."""
    from wikiref.model.scoring_task import run_batches  # the task layer sits above this module

    order = sorted(range(len(items)), key=lambda i: (len(items[i]), i))
    batches = (
        collate([items[i] for i in order[b : b + batch_size]], pad_id, targets)
        for b in range(0, len(order), batch_size)
    )
    return run_batches(model, batches, sentence_counts, device=device, amp=amp, with_loss=targets is not None)


def embed_texts(
    encoder: nn.Module,
    tokenizer,
    texts: Sequence[str],
    *,
    max_tokens: int = 128,
    batch_size: int = 64,
    device: torch.device | str | None = None,
) -> np.ndarray:
    """Unit-normalised mean-pooled embeddings of ``texts`` (float32, one row each, in order), as a bi scorer
    embeds a query or a sentence: each text alone, cut to ``max_tokens`` tokens, encoded in length order so a
    batch pads little. ``device``: where the encoder is (default: its parameters' device)."""
    device = torch.device(device) if device is not None else next(encoder.parameters()).device
    ids = _ids(tokenizer, list(texts), max_tokens)
    out = np.zeros((len(ids), encoder.config.hidden_size), dtype=np.float32)
    order = sorted(range(len(ids)), key=lambda i: (len(ids[i]), i))
    pad_id = tokenizer.pad_token_id or 0
    was_training = encoder.training
    encoder.eval()
    try:
        with torch.no_grad():  # as the package's other scoring paths (the CPU tests' emulated device needs it)
            for b in range(0, len(order), batch_size):
                rows = order[b : b + batch_size]
                batch_ids, mask = _pad([ids[i] for i in rows], pad_id)
                emb = _embed(encoder, batch_ids.to(device), mask.to(device))
                out[rows] = emb.float().cpu().numpy()
    finally:
        encoder.train(was_training)
    return out
