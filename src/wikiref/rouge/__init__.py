"""ROUGE for wikiref.

Two implementations, for two jobs (import the one you need; this package imports nothing heavy):

- :mod:`wikiref.rouge.fast` - ROUGE-1/2/L equal to ``rouge_score.rouge_scorer.RougeScorer(...,
  use_stemmer=True)`` (same tokenizer, same Porter stemmer), computed from cached, counted n-grams so
  the greedy oracle (:mod:`wikiref.rouge.oracle`) updates scores incrementally. Used for curation, oracle
  labels, regression targets and WikiRef evaluation. Also offers multi-reference pooled counts.
- :mod:`wikiref.rouge.official` - ROUGE-1.5.5-faithful scoring for the DUC evaluation (a package: options,
  text, counting, bootstrap, report).

:mod:`wikiref.rouge.parity` runs the real ROUGE-1.5.5.pl and writes random configurations to check
:mod:`wikiref.rouge.official` against it; only tests and benchmarks import it.
"""
