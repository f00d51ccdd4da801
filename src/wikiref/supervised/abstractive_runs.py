"""What an abstractive run (:mod:`wikiref.model.abstractive`) takes from params and the stages' tables: its
model configuration and decoding settings from the ``abstractive`` section, DUC topics as abstractive items,
and the word truncation of decoded summaries. Used by the abstractive and compare stages.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

FAMILIES = ("seq2seq", "hiersumm")


SEQ2SEQ_KEYS = (
    "embedding_size",
    "hidden_size",
    "encoder_layers",
    "decoder_layers",
    "dropout",
    "attention",
    "copy",
    "coverage",
    "coverage_weight",
    "attention_size",
    "max_source_length",
    "max_target_length",
    "cell",
)


HIERSUMM_KEYS = (
    "d_model",
    "heads",
    "ff_size",
    "local_layers",
    "global_layers",
    "decoder_layers",
    "dropout",
    "max_documents",
    "max_doc_length",
    "max_query_length",
    "max_target_length",
    "decoder_local_global",
    "ordering",
    "query_encoder",
    "tie_embeddings",
    "label_smoothing",
)


CONFIG_KEYS = {"seq2seq": SEQ2SEQ_KEYS, "hiersumm": HIERSUMM_KEYS}


# Keys of a family section that are not model config: whether the query is read (seq2seq) and training.
EXTRA_KEYS = {"seq2seq": ("use_query",), "hiersumm": ()}


DECODE_KEYS = ("beam", "min_length", "max_length", "length_penalty", "block_trigrams")


class AbstractiveError(ValueError):
    """A run that cannot be trained as configured (unknown run, a config key of the other family...)."""


def model_config(params: Mapping, run: Mapping) -> tuple[dict[str, Any], bool]:
    """(the family's config keys with the run's overrides, use_query) for ``run`` (an entry). A key of the
    other family is an error. ``use_query``: the seq2seq section's (or the run's override); always true for
    hiersumm, whose baseline reads the query with the top document and whose query encoder reads it apart."""
    fam = run["family"]
    if fam not in FAMILIES:
        raise AbstractiveError(f"unknown family {fam!r}; known: {FAMILIES}")
    section = params["abstractive"][fam]
    overrides = dict(run.get("config") or {})
    unknown = sorted(set(overrides) - set(CONFIG_KEYS[fam]) - set(EXTRA_KEYS[fam]))
    if unknown:
        raise AbstractiveError(f"run config keys {unknown} are not {fam} settings ({', '.join(CONFIG_KEYS[fam])})")
    config = {k: overrides.get(k, section[k]) for k in CONFIG_KEYS[fam]}
    use_query = bool(overrides.get("use_query", section["use_query"])) if fam == "seq2seq" else True
    return config, use_query


def decode_settings(params: Mapping, run: Mapping, *, duc: bool = False) -> tuple[dict[str, Any], int]:
    """(DecodeSettings keys, batch size): ``abstractive.decode`` with the run's ``decode`` overrides, then (for
    DUC) ``abstractive.duc.decode``'s."""
    merged = dict(params["abstractive"]["decode"])
    merged.update(run.get("decode") or {})
    if duc:
        merged.update(params["abstractive"]["duc"]["decode"] or {})
    return {k: merged[k] for k in DECODE_KEYS}, int(merged["batch_size"])


def truncate_words(toks: Sequence[str], max_words: int) -> list[str]:
    """The tokens up to the ``max_words``-th word token (one with a letter or digit; punctuation does not count,
    as ROUGE's ``-l`` counts words)."""
    out, words = [], 0
    for t in toks:
        is_word = any(ch.isalnum() for ch in t)
        if is_word and words >= max_words:
            break
        out.append(t)
        words += is_word
    return out


def duc_items(rows: Sequence[Mapping]) -> tuple[list, list[dict]]:
    """(Items, topics) of one DUC year's rows: one item per topic (id = topic), query = its query levels (title
    + narrative sentences), documents = its documents oldest first; the topics as
    :func:`wikiref.extractive.baselines.rows_to_topics` gives them (references for scoring)."""
    from wikiref.extractive.baselines import rows_to_topics
    from wikiref.model import abstractive as am

    topics = rows_to_topics(rows)
    items = []
    for t in topics:
        docs = [am.tokens(" ".join(str(s) for s in d["sentences"])) for d in t["documents"]]
        docs = [d for d in docs if d]
        if not docs:
            raise AbstractiveError(f"DUC topic {t['topic']!r} has no document with a token")
        query = [tok for level in t["query"] for tok in am.tokens(str(level))]
        items.append(am.Item(str(t["topic"]), query, docs, None))
    return items, topics
