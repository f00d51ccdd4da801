"""Greedy and beam-search decoding of a :class:`~wikiref.model.seq2seq.Seq2Seq`, batched.

* Several examples are decoded together; in beam search the beams are flattened into the batch
  dimension (row ``b * beam + k``) and the decoder states follow their hypotheses through
  ``DecoderState.index_select`` (LSTM ``(h, c)`` or GRU ``h``, whichever ``config.cell`` the model has). Every choice an example makes depends only on its own rows, so a
  batch decodes exactly as its examples decoded one at a time (same ids).
* Scores are sums of log-probabilities over the extended vocabulary (eq. 9 of See et al. 2017 for the
  copying variants). Finished hypotheses are compared by ``score / length**alpha`` (``length_penalty``
  = alpha; the length counts the generated tokens including ``</s>``); 0 compares raw sums.
* ``min_length``: ``</s>`` is not allowed before that many words; ``max_length``: at most that many
  decoder steps (a hypothesis cut there has no ``</s>``). ``block_trigrams``: a word that would repeat a
  trigram of the hypothesis is not allowed (Paulus et al. 2018).
* Beam search keeps ``beam`` live hypotheses; at each step the ``2 * beam`` best extensions are looked at
  in order, those ending in ``</s>`` are set aside as finished and the others fill the beam. An example
  stops once it has ``beam`` finished hypotheses (See et al.'s decoder) or at ``max_length``, where its
  live hypotheses are used if none finished. With ``beam=1`` this is exactly greedy decoding.
* A generated OOV id (copied source word) is fed back as ``<unk>``; :func:`decode` turns ids back into
  words, copied OOVs into the source's words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from wikiref.model.scorer import length_sorted_batches
from wikiref.model.seq2seq import (
    BOS_ID,
    EOS_ID,
    UNK_ID,
    Seq2Seq,
    Seq2SeqExample,
    Vocab,
    collate,
    make_example,
    words_from_ids,
)


@dataclass(frozen=True)
class DecodeSettings:
    beam: int = 1  # 1: greedy
    min_length: int = 0
    max_length: int | None = None  # None: the model's max_target_length + 1 (the words and </s>)
    length_penalty: float = 0.0  # alpha of score / len**alpha
    block_trigrams: bool = False

    def __post_init__(self) -> None:
        if self.beam < 1:
            raise ValueError(f"beam must be >= 1, got {self.beam}")
        if self.min_length < 0:
            raise ValueError(f"min_length must be >= 0, got {self.min_length}")
        if self.max_length is not None and self.max_length < 1:
            raise ValueError(f"max_length must be >= 1, got {self.max_length}")
        if self.max_length is not None and self.min_length >= self.max_length:
            raise ValueError(
                f"min_length {self.min_length} leaves no room for </s> within max_length {self.max_length}"
            )
        if self.length_penalty < 0:
            raise ValueError(f"length_penalty must be >= 0, got {self.length_penalty}")

    def steps(self, model: Seq2Seq) -> int:
        return self.max_length if self.max_length is not None else model.config.max_target_length + 1


def normalised_score(score: float, length: int, alpha: float) -> float:
    """``score / length**alpha`` (length at least 1)."""
    return score / (max(1, length) ** alpha)


def _blocked(history: Sequence[int]) -> set[int]:
    """Words that would repeat a trigram of ``history``: the third words of earlier trigrams whose first
    two words are the last two of ``history``."""
    if len(history) < 2:
        return set()
    a, b = history[-2], history[-1]
    return {history[i + 2] for i in range(len(history) - 2) if history[i] == a and history[i + 1] == b}


def _constrain(logp: torch.Tensor, histories: Sequence[Sequence[int]], settings: DecodeSettings) -> torch.Tensor:
    """Apply min_length (no </s> yet) and trigram blocking to log-probabilities [R, V_ext]: the forbidden
    (row, word) pairs are gathered in Python and set to -inf in one indexed write on ``logp``'s device."""
    rows: list[int] = []
    words: list[int] = []
    for r, hist in enumerate(histories):
        if len(hist) < settings.min_length:
            rows.append(r)
            words.append(EOS_ID)
        if settings.block_trigrams:
            blocked = sorted(_blocked(hist))
            rows.extend([r] * len(blocked))
            words.extend(blocked)
    logp = logp.clone()
    if rows:
        index = torch.tensor([rows, words], dtype=torch.long, device=logp.device)
        logp[index[0], index[1]] = float("-inf")
    return logp


def _feed(ids: torch.Tensor, vocab_size: int) -> torch.Tensor:
    """Next decoder inputs: copied OOV ids become <unk>."""
    return torch.where(ids >= vocab_size, torch.full_like(ids, UNK_ID), ids)


def _check_batch(model: Seq2Seq, batch) -> None:
    if model.training:
        raise ValueError("decode with the model in eval mode (model.eval()): dropout would make it random")
    if "src" not in batch:
        raise ValueError("not a collate() batch")


@torch.no_grad()
def greedy_decode(model: Seq2Seq, batch, settings: DecodeSettings = DecodeSettings()) -> list[list[int]]:
    """The most probable word at each step, per example; extended ids, without ``</s>``."""
    _check_batch(model, batch)
    enc, state = model.encode(batch["src"], batch["src_len"], batch["src_ext"], batch["n_oov"], batch.get("host"))
    b, device = batch["src"].shape[0], batch["src"].device
    inputs = torch.full((b,), BOS_ID, dtype=torch.long, device=device)
    out: list[list[int]] = [[] for _ in range(b)]
    done = [False] * b
    for _ in range(settings.steps(model)):
        step = model.step(enc, state, inputs)
        state = step.state
        logp = _constrain(model.log_distribution(enc, step), out, settings)
        best_logp, best = logp.max(-1)
        words, word_logp = best.tolist(), best_logp.tolist()  # one device-to-host copy per step
        for k in range(b):
            if done[k]:
                continue
            w = words[k]
            if w == EOS_ID or word_logp[k] == float("-inf"):  # </s>, or every word forbidden
                done[k] = True
            else:
                out[k].append(w)
        if all(done):
            break
        inputs = _feed(best, model.config.vocab_size)
    return out


@dataclass
class _Hyp:
    ids: list[int]
    score: float


def _extend(
    live: list[list[_Hyp]],
    finished: list[list[_Hyp]],
    done: list[bool],
    top_scores: list[list[float]],
    top_index: list[list[int]],
    n_ext: int,
    k_beam: int,
) -> tuple[list[int], list[int]]:
    """One beam-search step on the host: each example's best extensions (``top_*``, best first) fill its
    finished list and its new live beam (``live``, ``finished``, ``done`` updated in place). Returns the rows
    to continue from (unused rows keep their own) and the next input word of each row."""
    select = list(range(len(done) * k_beam))
    next_inputs = [UNK_ID] * (len(done) * k_beam)
    for i in range(len(done)):
        if done[i]:
            continue
        new_live: list[_Hyp] = []
        for score, index in zip(top_scores[i], top_index[i]):
            if score == float("-inf"):
                break
            k, w = divmod(index, n_ext)
            parent = live[i][k]
            if w == EOS_ID:
                finished[i].append(_Hyp(parent.ids, score))
                if len(finished[i]) >= k_beam:
                    break
                continue
            row = i * k_beam + len(new_live)
            select[row] = i * k_beam + k
            next_inputs[row] = w
            new_live.append(_Hyp([*parent.ids, w], score))
            if len(new_live) == k_beam:
                break
        if new_live or finished[i]:
            live[i] = new_live
        if len(finished[i]) >= k_beam or not new_live:
            done[i] = True  # enough finished, or every extension forbidden (the live beam is kept)
    return select, next_inputs


@torch.no_grad()
def beam_search(model: Seq2Seq, batch, settings: DecodeSettings = DecodeSettings()) -> list[list[int]]:
    """The best hypothesis of each example (by ``score / len**alpha``); extended ids, without ``</s>``."""
    _check_batch(model, batch)
    k_beam = settings.beam
    enc, state = model.encode(batch["src"], batch["src_len"], batch["src_ext"], batch["n_oov"], batch.get("host"))
    b, device = batch["src"].shape[0], batch["src"].device
    rows = torch.arange(b, device=device).repeat_interleave(k_beam)
    enc, state = enc.index_select(rows), state.index_select(rows)
    # Live hypotheses per example; at the start one (the others are copies that would only duplicate it).
    live: list[list[_Hyp]] = [[_Hyp([], 0.0)] for _ in range(b)]
    finished: list[list[_Hyp]] = [[] for _ in range(b)]
    done = [False] * b
    inputs = torch.full((b * k_beam,), BOS_ID, dtype=torch.long, device=device)
    n_steps = settings.steps(model)
    for t in range(n_steps):
        step = model.step(enc, state, inputs)
        histories = [live[i][k].ids if k < len(live[i]) else [] for i in range(b) for k in range(k_beam)]
        logp = _constrain(model.log_distribution(enc, step), histories, settings)
        n_ext = logp.shape[1]
        base = torch.tensor(
            [
                live[i][k].score if k < len(live[i]) and not done[i] else float("-inf")
                for i in range(b)
                for k in range(k_beam)
            ],
            dtype=logp.dtype,
            device=device,
        )
        total = (base.unsqueeze(-1) + logp).view(b, k_beam * n_ext)
        n_cand = min(2 * k_beam, total.shape[1])
        top_scores, top_index = total.topk(n_cand, dim=-1)  # sorted, best first
        select, next_inputs = _extend(live, finished, done, top_scores.tolist(), top_index.tolist(), n_ext, k_beam)
        if all(done) or t == n_steps - 1:
            break
        state = step.state.index_select(torch.tensor(select, dtype=torch.long, device=device))
        inputs = _feed(torch.tensor(next_inputs, dtype=torch.long, device=device), model.config.vocab_size)
    results: list[list[int]] = []
    for i in range(b):
        pool = finished[i] or live[i]
        lengths = [len(h.ids) + (1 if finished[i] else 0) for h in pool]
        best = max(
            range(len(pool)),
            key=lambda j: (normalised_score(pool[j].score, lengths[j], settings.length_penalty), -j),
        )
        results.append(pool[best].ids)
    return results


def decode_batch(model: Seq2Seq, batch, settings: DecodeSettings = DecodeSettings()) -> list[list[int]]:
    """Greedy for ``beam=1``, else beam search."""
    return greedy_decode(model, batch, settings) if settings.beam == 1 else beam_search(model, batch, settings)


def decode(
    model: Seq2Seq,
    vocab: Vocab,
    sources: Sequence[Sequence[str]] | Sequence[Seq2SeqExample],
    settings: DecodeSettings = DecodeSettings(),
    *,
    batch_size: int = 32,
) -> list[list[str]]:
    """Summaries (token lists) of ``sources`` (token lists or :func:`make_example` examples), in input
    order; batches of similar source lengths (:func:`~wikiref.model.scorer.length_sorted_batches`).
    The result does not depend on ``batch_size``."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    examples = [s if isinstance(s, Seq2SeqExample) else make_example(s, None, vocab, model.config) for s in sources]
    out: list[list[str]] = [[] for _ in examples]
    for idx in length_sorted_batches(examples, batch_size):
        chunk = [examples[i] for i in idx]
        batch = collate([Seq2SeqExample(e.source_ids, e.source_ext, e.oovs) for e in chunk], model.config.vocab_size)
        for i, e, ids in zip(idx, chunk, decode_batch(model, batch, settings)):
            out[i] = words_from_ids(ids, vocab, e.oovs)
    return out
