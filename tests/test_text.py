"""wikiref.text: the one spaCy pipeline (tokens, lemmas, stop words, sentences)."""

from __future__ import annotations

import pytest

from wikiref import text


@pytest.fixture(scope="module")
def nlp():
    return text.load_nlp()


def test_pipeline_components(nlp):
    names = nlp.pipe_names
    assert "senter" in names and "lemmatizer" in names
    assert "parser" not in names and "ner" not in names
    assert names.index("wikiref_newline_sentences") < names.index("senter")
    assert text.load_nlp() is nlp  # cached per process
    assert text.from_params({"spacy_model": text.DEFAULT_MODEL, "sentences": "senter", "batch_size": 8}) is nlp


def test_tokens_lemmas_stop_words(nlp):
    (info,) = text.annotate(["The cities were running 3 marathons, and it  has\u00a0rained!"], nlp)
    assert "  " not in info.tokens and "\u00a0" not in info.tokens  # whitespace is not a token
    assert len(info.tokens) == len(info.lemmas) == len(info.content)
    lem = dict(zip(info.tokens, info.lemmas))
    assert lem["cities"] == "city" and lem["running"] == "run" and lem["The"] == "the"
    content = {t for t, c in zip(info.tokens, info.content) if c}
    assert {"cities", "running", "3", "marathons", "rained"} <= content
    assert not content & {"The", "were", "and", "it", "has", ",", "!"}
    assert info.content_lemmas == [lm for lm, c in zip(info.lemmas, info.content) if c]


def test_line_breaks_end_sentences_and_empty_sentences_dropped(nlp):
    doc = "First paragraph has no final stop\nSecond paragraph. It has two sentences.\n\n   \nLast one"
    (info,) = text.annotate([doc], nlp)
    assert info.sentences == (
        "First paragraph has no final stop",
        "Second paragraph.",
        "It has two sentences.",
        "Last one",
    )


def test_annotate_batches_keep_order(nlp):
    texts = [f"Sentence number {i}. Another one." for i in range(7)]
    infos = list(text.annotate(texts, nlp, batch_size=3))
    assert [i.sentences[0] for i in infos] == [f"Sentence number {i}." for i in range(7)]
    assert list(text.annotate([], nlp)) == []


def test_count_tokens_uses_the_tokenizer(nlp):
    assert text.count_tokens(["Ken Fields", "Early life and career", "U.S. politics (2016)"], nlp) == [2, 4, 5]


def test_parser_mode_and_errors():
    nlp = text.load_nlp(sentences="parser")
    assert "parser" in nlp.pipe_names and "senter" not in nlp.pipe_names
    (info,) = text.annotate(["One sentence.\nTwo sentence"], nlp)
    assert info.sentences == ("One sentence.", "Two sentence")
    with pytest.raises(ValueError, match="sentences must be"):
        text.load_nlp(sentences="regex")
    with pytest.raises(RuntimeError, match="not installed"):
        text.load_nlp("en_no_such_pipeline_xyz")
