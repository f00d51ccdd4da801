"""Input packing (journal §III-A, §IV-A): query levels + document sentences -> encoder windows.

One window is::

    [CLS] [L1] title [L2] section ... [SEP]   [CLS] s_i ... [SEP] [CLS] s_i+1 ... [SEP] ...
    '---------- query, segment 0 ----------'  '------------ document, segment 1 -----------'

The document part (every sentence wrapped in its own [CLS] ... [SEP]) is one token sequence that
is cut into windows of at most ``max_length - len(query part)`` tokens whose starts are ``stride``
tokens apart (BERT's ``run_squad`` ``doc_stride``: the step between window starts; a sentence can
therefore appear in several windows). Each sentence is scored in exactly one window:

* among the windows that contain it **completely**, the one where its context is **maximal**,
  i.e. where ``min(tokens of the window before the sentence, tokens of the window after it)`` is
  largest - the sentence-level form of the "max context" rule of the BERT reference SQuAD code
  that the paper follows ("we score a sentence only when it is completely included and its context
  is maximally covered"). Ties go to the earlier window.
* a sentence that no window contains completely (it is longer than what fits, or it straddles
  every window boundary) is scored **partially** in the window that holds its first token ([CLS])
  and the most of its other tokens (ties: earlier window); it is flagged ``partial`` and counted.

Windows in which no sentence is scored are dropped (they would only cost compute).

**Multi-document examples** (QmdsCnn, QmdsIr, WCEP, DUC clusters on the common example schema) are
packed as one sentence sequence in document order, with a document boundary after the last sentence of
every document but the final one: one extra [SEP] token, so ``... s_k [SEP] [SEP] [CLS] s_k+1 ...``
marks where a document ends (BERT has two token types only, already used for query vs document).
The boundary token is planned as part of the sentence before it (the sentence is "complete" only
with its boundary in the window), but it is not part of the sentence's span, so pooling never sees it.
The core (:func:`plan_windows`) works on token counts only, so it is tested with hand-computed cases.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

LEVEL_TOKEN = "[L{}]"


def level_tokens(num_levels: int) -> list[str]:
    """The marker tokens [L1] ... [L<num_levels>] inserted before each query level."""
    return [LEVEL_TOKEN.format(i) for i in range(1, num_levels + 1)]


@dataclass(frozen=True)
class SentenceSlot:
    """Where one sentence is scored, in document-token coordinates."""

    window: int  # index into WindowPlan.windows
    start: int  # first token ([CLS]) of the sentence
    end: int  # exclusive; clipped to the window end when partial
    complete: bool
    context: int  # min(left, right) context inside the chosen window


@dataclass(frozen=True)
class WindowPlan:
    windows: list[tuple[int, int]]  # [start, end) of each window over the document tokens
    slots: list[SentenceSlot]  # one per sentence, in sentence order


def sentence_offsets(lengths: Sequence[int]) -> list[tuple[int, int]]:
    """[start, end) of each sentence in the concatenated document tokens."""
    out, pos = [], 0
    for n in lengths:
        if n < 1:
            raise ValueError(f"a packed sentence has at least its [CLS] and [SEP] tokens, got length {n}")
        out.append((pos, pos + n))
        pos += n
    return out


def window_spans(n_tokens: int, budget: int, stride: int) -> list[tuple[int, int]]:
    """Windows of at most ``budget`` tokens, starts ``stride`` apart, the last one reaching the end."""
    if budget < 1 or stride < 1:
        raise ValueError(f"budget and stride must be positive (budget={budget}, stride={stride})")
    if stride > budget:
        raise ValueError(f"stride {stride} > window budget {budget} would skip document tokens")
    spans: list[tuple[int, int]] = []
    start = 0
    while True:
        end = min(start + budget, n_tokens)
        spans.append((start, end))
        if end >= n_tokens:
            return spans
        start += stride


def plan_windows(lengths: Sequence[int], budget: int, stride: int) -> WindowPlan:
    """Cut the document (sentence token counts, wrappers included) into windows and assign sentences."""
    offsets = sentence_offsets(lengths)
    if not offsets:
        return WindowPlan([], [])
    windows = window_spans(offsets[-1][1], budget, stride)
    slots: list[SentenceSlot] = []
    for s_start, s_end in offsets:
        best = None
        best_key = None
        for w, (w_start, w_end) in enumerate(windows):
            if w_start <= s_start and s_end <= w_end:
                context = min(s_start - w_start, w_end - s_end)
                key = (context, -w)
                if best_key is None or key > best_key:
                    best_key, best = key, SentenceSlot(w, s_start, s_end, True, context)
        if best is None:  # partial: the window holding its [CLS] and most of its tokens
            for w, (w_start, w_end) in enumerate(windows):
                if w_start <= s_start < w_end:
                    covered = min(s_end, w_end) - s_start
                    key = (covered, -w)
                    if best_key is None or key > best_key:
                        best_key = key
                        best = SentenceSlot(w, s_start, min(s_end, w_end), False, s_start - w_start)
        assert best is not None  # windows cover every token, so some window holds s_start
        slots.append(best)
    return WindowPlan(windows, slots)


@dataclass
class PackedWindow:
    """One encoder input and the sentences scored in it (positions index ``input_ids``)."""

    example: int
    input_ids: list[int]
    token_type_ids: list[int]
    query_span: tuple[int, int]  # positions averaged into h_Q (the query tokens between [CLS] and [SEP])
    sentences: list[int] = field(default_factory=list)  # sentence indices scored here
    spans: list[tuple[int, int]] = field(default_factory=list)  # their [start, end) in input_ids
    partial: list[bool] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.input_ids)


@dataclass
class PackStats:
    examples: int = 0
    empty_documents: int = 0
    sentences: int = 0
    partial_sentences: int = 0
    windows: int = 0
    dropped_windows: int = 0  # windows in which no sentence is scored
    truncated_queries: int = 0
    deep_queries: int = 0  # queries with more levels than [L#] markers (extra levels reuse the last one)
    document_boundaries: int = 0  # boundary tokens between the documents of multi-document examples

    def as_dict(self) -> dict:
        return dict(self.__dict__)


class Packer:
    """Tokenize and pack (query levels, document sentences) into windows.

    ``tokenizer`` is a Hugging Face tokenizer that already holds the [L#] tokens
    (:func:`wikiref.model.encoders.add_level_tokens`). Text is tokenized with
    ``split_special_tokens=True``, so a literal "[SEP]" or "[L1]" in a document stays plain text.
    """

    def __init__(
        self,
        tokenizer,
        *,
        max_length: int,
        stride: int,
        max_query_tokens: int,
        num_levels: int,
        use_query: bool = True,
    ) -> None:
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.stride = stride
        self.max_query_tokens = max_query_tokens
        self.use_query = use_query
        self.cls_id = tokenizer.cls_token_id
        self.sep_id = tokenizer.sep_token_id
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        if self.cls_id is None or self.sep_id is None:
            raise ValueError("the tokenizer needs [CLS] and [SEP] tokens (a BERT-style tokenizer)")
        self.level_ids = tokenizer.convert_tokens_to_ids(level_tokens(num_levels))
        unk = tokenizer.unk_token_id
        if any(i is None or i == unk for i in self.level_ids):
            raise ValueError("the tokenizer lacks the [L#] tokens; call encoders.add_level_tokens first")
        if max_query_tokens < 3 and use_query:
            raise ValueError("max_query_tokens must leave room for [CLS], one [L#] and [SEP]")

    def _tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        texts = [str(t) for t in texts]  # also accepts numpy arrays (Parquet list columns)
        if not texts:
            return []
        enc = self.tokenizer(texts, add_special_tokens=False, split_special_tokens=True, verbose=False)
        return [list(ids) for ids in enc["input_ids"]]

    def query_ids(self, query: Sequence[str], stats: PackStats | None = None) -> list[int]:
        """[CLS] [L1] level-1 tokens [L2] level-2 tokens ... [SEP], cut to max_query_tokens."""
        if not self.use_query:
            return []
        ids = [self.cls_id]
        if len(query) > len(self.level_ids) and stats is not None:
            stats.deep_queries += 1
        for depth, level in enumerate(self._tokenize(query)):
            ids.append(self.level_ids[min(depth, len(self.level_ids) - 1)])
            ids.extend(level)
        if len(ids) + 1 > self.max_query_tokens:
            ids = ids[: self.max_query_tokens - 1]
            if stats is not None:
                stats.truncated_queries += 1
        return ids + [self.sep_id]

    def pack(
        self,
        query: Sequence[str],
        sentences: Sequence[str],
        example: int = 0,
        stats: PackStats | None = None,
        doc_lengths: Sequence[int] | None = None,
    ) -> list[PackedWindow]:
        """Windows of one example. ``doc_lengths``: sentences per document, in order (their sum is
        ``len(sentences)``); a boundary [SEP] follows every document but the last (module docstring).
        None = one document."""
        stats = stats if stats is not None else PackStats()
        ends = document_ends(doc_lengths, len(sentences))
        stats.examples += 1
        q = self.query_ids(query, stats)
        if len(sentences) == 0:
            stats.empty_documents += 1
            return []
        budget = self.max_length - len(q)
        if budget < max(self.stride, 4):
            raise ValueError(
                f"max_length {self.max_length} leaves {budget} document tokens after a {len(q)}-token query; "
                f"need at least stride={self.stride}"
            )
        doc: list[int] = []
        lengths = []
        for j, ids in enumerate(self._tokenize(sentences)):
            wrapped = [self.cls_id, *ids, self.sep_id]
            if j in ends:
                wrapped.append(self.sep_id)
                stats.document_boundaries += 1
            doc.extend(wrapped)
            lengths.append(len(wrapped))
        plan = plan_windows(lengths, budget, self.stride)
        windows: list[PackedWindow | None] = []
        qspan = (1, len(q) - 1) if q else (0, 0)
        for w_start, w_end in plan.windows:
            windows.append(
                PackedWindow(
                    example=example,
                    input_ids=q + doc[w_start:w_end],
                    token_type_ids=[0] * len(q) + [1] * (w_end - w_start),
                    query_span=qspan,
                )
            )
        for j, slot in enumerate(plan.slots):
            pw = windows[slot.window]
            w_start = plan.windows[slot.window][0]
            pw.sentences.append(j)
            # The boundary token after a document's last sentence is not part of the sentence.
            end = slot.end - 1 if (j in ends and slot.complete) else slot.end
            pw.spans.append((len(q) + slot.start - w_start, len(q) + end - w_start))
            pw.partial.append(not slot.complete)
            stats.partial_sentences += int(not slot.complete)
        stats.sentences += len(plan.slots)
        kept = [w for w in windows if w.sentences]
        stats.windows += len(kept)
        stats.dropped_windows += len(windows) - len(kept)
        return kept

    def pack_many(self, examples: Sequence[Sequence]) -> tuple[list[PackedWindow], PackStats]:
        """Pack (query, sentences) pairs or (query, sentences, doc_lengths) triples;
        ``PackedWindow.example`` is the position in ``examples``."""
        stats = PackStats()
        out: list[PackedWindow] = []
        for i, ex in enumerate(examples):
            query, sentences = ex[0], ex[1]
            doc_lengths = ex[2] if len(ex) > 2 else None
            out.extend(self.pack(query, sentences, example=i, stats=stats, doc_lengths=doc_lengths))
        return out, stats


def document_ends(doc_lengths: Sequence[int] | None, n_sentences: int) -> frozenset[int]:
    """Indices of the sentences followed by a document boundary (the last sentence of every document
    but the final one); raises ValueError when the lengths do not add up to ``n_sentences``."""
    if doc_lengths is None:
        return frozenset()
    lengths = [int(n) for n in doc_lengths]
    if any(n < 0 for n in lengths) or sum(lengths) != n_sentences:
        raise ValueError(f"document lengths {lengths} do not add up to {n_sentences} sentences")
    ends, pos = set(), 0
    for n in lengths:
        pos += n
        if n and pos < n_sentences:
            ends.add(pos - 1)
    return frozenset(ends)
