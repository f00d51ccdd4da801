"""Sentence-scoring models: input packing, encoders, pooling, heads (journal §III).

Public API (also used by DUC fine-tuning):

* :class:`ScorerConfig`, :func:`build_scorer`, :func:`save_scorer`, :func:`load_scorer`
* :func:`score_sentences` - (query levels, document sentences) -> one score per sentence
* :class:`Packer`, :func:`plan_windows` - windows and the max-context sentence assignment
"""

from wikiref.model.packing import PackedWindow, Packer, PackStats, level_tokens, plan_windows
from wikiref.model.pooling import POOLING_MODES, SentencePooler
from wikiref.model.scorer import (
    HEADS,
    ScorerConfig,
    SentenceScorer,
    build_scorer,
    collate,
    load_scorer,
    make_packer,
    save_scorer,
    score_sentences,
    score_windows,
)

__all__ = [
    "HEADS",
    "POOLING_MODES",
    "Packer",
    "PackedWindow",
    "PackStats",
    "ScorerConfig",
    "SentencePooler",
    "SentenceScorer",
    "build_scorer",
    "collate",
    "level_tokens",
    "load_scorer",
    "make_packer",
    "plan_windows",
    "save_scorer",
    "score_sentences",
    "score_windows",
]
