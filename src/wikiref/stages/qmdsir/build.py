"""MS MARCO record -> QmdsIr example, or a counted drop (Pasunuru et al., AAAI 2021, §3.2 + appendix).

The paper's Bing triplets are (search query, the answer passage Bing extracted = the summary, the
other top-ranked documents minus the one the answer was extracted from); MS MARCO QnA has the same
shape: a real Bing query, ~10 retrieved passages, and the passages the judges marked as supporting
the answer (``is_selected``). Each record goes through, in this order (each drop counted as
``dropped:<reason>``):

1. ``malformed``: a missing or ill-typed field (:func:`parse`);
2. ``no_selected_passage``: no passage with ``is_selected == 1`` (this covers the unanswered queries,
   ``answers == ["No Answer Present."]``);
3. summary = the FIRST selected passage's text split into sentences by the project's spaCy pipeline
   (:func:`wikiref.text.from_params`); ``summary_too_short``: fewer than ``min_summary_sentences``
   (the paper's criterion (i): at least 2);
4. documents = the other passages, minus every passage from the summary passage's URL (the paper
   omits the answer's source document; counted as ``source_document_passages``, not a drop) and minus
   empty passages (``empty_passages``); ``too_few_documents``: fewer than ``min_documents`` (criterion
   (ii): at least 3);
5. ``uncovered_summary_sentence``: every summary sentence needs a document whose ROUGE-1 recall of it
   is at least ``min_coverage_recall`` (criterion (iii): 0.8; :func:`coverage`).

Only the survivors' documents are split into sentences (spaCy is the cost: ``nlp.pipe`` per batch of
records, with only the components sentence boundaries need, :func:`wikiref.text.split_sentences`).
The split is the file's (``qmdsir.files``); when ``files.test`` is empty a share ``test_from_dev`` of
the dev queries becomes test, chosen by a seeded hash of the query id (:func:`assign_split`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from wikiref import examples
from wikiref.examples import Tally
from wikiref.stages.qmdsir.reader import Record, id_key
from wikiref.text import split_sentences

SOURCE = "qmdsir"
NO_ANSWER = "No Answer Present."
REASONS = (
    "malformed",
    "no_selected_passage",
    "summary_too_short",
    "too_few_documents",
    "uncovered_summary_sentence",
)


@dataclass(frozen=True)
class Passage:
    index: int  # position in the record's passage list (the document id suffix p<index>)
    text: str
    url: str
    selected: bool


@dataclass(frozen=True)
class Parsed:
    """A record whose fields have the MS MARCO types."""

    query_id: str  # reader.id_key of the query_id
    query: str
    query_type: str
    passages: tuple[Passage, ...]
    answers: tuple[str, ...]
    well_formed_answers: tuple[str, ...]


def _strings(value) -> tuple[str, ...] | None:
    if isinstance(value, list) and all(isinstance(x, str) for x in value):
        return tuple(value)
    return None


def parse(fields: Mapping) -> Parsed | None:
    """The record's fields checked and typed, or None when it is malformed: ``query`` a non-empty
    string, ``query_id`` an int or non-empty string, ``query_type`` a string, ``answers`` a list of
    strings, ``passages`` a list of objects each with ``passage_text`` and ``url`` strings and
    ``is_selected`` 0/1. ``wellFormedAnswers`` may be missing (v1.1), the string ``"[]"`` (v2.1 for
    none) or a list of strings."""
    query, query_type, passages = fields.get("query"), fields.get("query_type"), fields.get("passages")
    query_id = id_key(fields.get("query_id"))
    answers = _strings(fields.get("answers"))
    if not isinstance(query, str) or not query.strip() or query_id is None or answers is None:
        return None
    if not isinstance(query_type, str) or not isinstance(passages, list):
        return None
    well_formed = fields.get("wellFormedAnswers", "[]")
    if isinstance(well_formed, str):
        well_formed = () if well_formed.strip() in ("", "[]") else (well_formed,)
    else:
        well_formed = _strings(well_formed)
        if well_formed is None:
            return None
    out = []
    for i, p in enumerate(passages):
        if not isinstance(p, dict):
            return None
        text, url, selected = p.get("passage_text"), p.get("url"), p.get("is_selected")
        if not isinstance(text, str) or not isinstance(url, str):
            return None
        if isinstance(selected, bool) or selected not in (0, 1):
            return None
        out.append(Passage(i, text, url.strip(), selected == 1))
    return Parsed(query_id, query.strip(), query_type, tuple(out), answers, tuple(well_formed))


def rouge1_recall(sentence: Counter, document: Counter) -> float:
    """ROUGE-1 recall of a sentence by a document (unigram counts from :func:`wikiref.rouge.fast.tokenize`):
    clipped unigram overlap / the sentence's unigrams; 0.0 for a sentence without tokens (as
    ``rouge_score`` scores an empty target)."""
    total = sum(sentence.values())
    if not total:
        return 0.0
    return sum(min(c, document[t]) for t, c in sentence.items()) / total


def coverage(summary: Sequence[str], documents: Sequence[str]) -> list[float]:
    """Per summary sentence, its best ROUGE-1 recall over the documents (the paper's coverage of a
    summary sentence by a document, appendix "QmdsIr Dataset Construction"). Unigrams are
    ``rouge_score`` tokens (:func:`wikiref.rouge.fast.tokenize`: lower-case, runs of ``[a-z0-9]``,
    words longer than 3 characters Porter-stemmed), so the values equal ``rouge_score``'s
    ``rouge1`` recall with ``use_stemmer=True``."""
    from wikiref.rouge.fast import tokenize

    docs = [Counter(tokenize(d)) for d in documents]
    out = []
    for s in summary:
        counts = Counter(tokenize(s))
        out.append(max((rouge1_recall(counts, d) for d in docs), default=0.0))
    return out


def assign_split(file_split: str, query_id: str, *, carve_test: bool, test_from_dev: float, seed: int) -> str:
    """The example's split: its file's, except that with ``carve_test`` (``qmdsir.files.test`` empty) a
    dev query whose seeded hash fraction is below ``test_from_dev`` goes to test. Stable: depends only
    on the query id and the seed, not on the order or shard the record is read in."""
    from wikiref.files import stable_id

    if file_split == "dev" and carve_test and test_from_dev > 0:
        fraction = int(stable_id("qmdsir-test-from-dev", str(seed), query_id), 16) / 16**16
        if fraction < test_from_dev:
            return "test"
    return file_split


@dataclass(frozen=True)
class Config:
    min_summary_sentences: int
    min_documents: int
    min_coverage_recall: float
    carve_test: bool
    test_from_dev: float
    seed: int
    standin: bool
    batch_size: int = 256

    @classmethod
    def from_params(cls, params: Mapping) -> Config:
        """From the ``seed``, ``text`` (``batch_size``) and ``qmdsir`` sections."""
        q = params["qmdsir"]
        return cls(
            min_summary_sentences=int(q["min_summary_sentences"]),
            min_documents=int(q["min_documents"]),
            min_coverage_recall=float(q["min_coverage_recall"]),
            carve_test=not (q["files"].get("test") or []),
            test_from_dev=float(q["test_from_dev"]),
            seed=int(params["seed"]),
            standin=bool(q["standin"]),
            batch_size=int(params["text"].get("batch_size", 256)),
        )


@dataclass
class _Candidate:
    record: Record
    split: str
    parsed: Parsed
    summary_passage: Passage
    summary: list[str]
    documents: list[Passage]


class Builder:
    """Turns ``(record, file split)`` pairs into EXAMPLE rows (:func:`wikiref.examples.example`), in
    batches of ``cfg.batch_size`` records, counting every drop, ``kept:<split>`` and the info counters
    ``source_document_passages`` / ``empty_passages`` in a :class:`Tally`."""

    def __init__(self, nlp, cfg: Config):
        self.nlp = nlp
        self.cfg = cfg

    def build(self, items: Iterable[tuple[Record, str]], tally: Tally) -> Iterator[dict]:
        batch: list[tuple[Record, str]] = []
        for item in items:
            batch.append(item)
            if len(batch) >= self.cfg.batch_size:
                yield from self._batch(batch, tally)
                batch = []
        if batch:
            yield from self._batch(batch, tally)

    def _batch(self, batch: list[tuple[Record, str]], tally: Tally) -> Iterator[dict]:
        cfg = self.cfg
        selected: list[tuple[Record, str, Parsed, Passage]] = []
        for record, file_split in batch:
            parsed = parse(record.fields)
            if parsed is None:
                tally.drop("malformed", record.input_file)
                continue
            summary_passage = next((p for p in parsed.passages if p.selected), None)
            if summary_passage is None:
                tally.drop("no_selected_passage", record.input_file)
                continue
            selected.append((record, file_split, parsed, summary_passage))
        summaries = split_sentences(self.nlp, (s.text for _, _, _, s in selected), cfg.batch_size)
        survivors: list[_Candidate] = []
        for (record, file_split, parsed, summary_passage), summary in zip(selected, summaries):
            if len(summary) < cfg.min_summary_sentences:
                tally.drop("summary_too_short", record.input_file)
                continue
            documents = []
            for p in parsed.passages:
                if p.index == summary_passage.index:
                    continue
                if summary_passage.url and p.url == summary_passage.url:
                    tally.counts["source_document_passages"] += 1
                    continue
                if not p.text.strip():
                    tally.counts["empty_passages"] += 1
                    continue
                documents.append(p)
            if len(documents) < cfg.min_documents:
                tally.drop("too_few_documents", record.input_file)
                continue
            if min(coverage(summary, [p.text for p in documents])) < cfg.min_coverage_recall:
                tally.drop("uncovered_summary_sentence", record.input_file)
                continue
            split = assign_split(
                file_split,
                parsed.query_id,
                carve_test=cfg.carve_test,
                test_from_dev=cfg.test_from_dev,
                seed=cfg.seed,
            )
            survivors.append(_Candidate(record, split, parsed, summary_passage, summary, documents))
        texts = [p.text for c in survivors for p in c.documents]
        sentences = split_sentences(self.nlp, texts, cfg.batch_size)
        for c in survivors:
            p_sentences = [(p, next(sentences)) for p in c.documents]
            p_sentences = [(p, s) for p, s in p_sentences if s]  # (a passage of characters spaCy drops)
            if len(p_sentences) < cfg.min_documents:
                tally.drop("too_few_documents", c.record.input_file)
                continue
            yield self._example(c, p_sentences)
            tally.counts[f"kept:{c.split}"] += 1

    def _example(self, c: _Candidate, documents: list[tuple[Passage, list[str]]]) -> dict:
        qid = c.parsed.query_id
        return examples.example(
            SOURCE,
            qid,
            split=c.split,
            query=[c.parsed.query],
            documents=[
                examples.document(f"{qid}-p{p.index}", sentences, url=p.url, origin="original")
                for p, sentences in documents
            ],
            summary=c.summary,
            query_origin="search_query",
            standin=self.cfg.standin,
            input_file=c.record.input_file,
            meta={
                "query_type": c.parsed.query_type,
                "summary_url": c.summary_passage.url,
                "answers": list(c.parsed.answers),
                "well_formed_answers": list(c.parsed.well_formed_answers),
            },
        )
