"""wikiref: turn Wikipedia citations into query-focused summarization data and reproduce the WikiRef papers."""

__version__ = "0.1.0"
