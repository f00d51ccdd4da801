"""The script's flags: :class:`Options` (one field per ROUGE-1.5.5.pl flag, with the script's defaults and
checks), parsing them (:meth:`Options.from_flags`, :func:`flag_parser`, :func:`options_from_namespace`), keyword
options for :func:`~wikiref.rouge.official.score` (:func:`make_options`), the measures they select, the paper's
:data:`DUC_FLAGS`, and :class:`RougeError` (raised wherever the script would die)."""

from __future__ import annotations

import argparse
import dataclasses
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

DUC_FLAGS = "-n 2 -x -m -2 4 -u -c 95 -r 1000 -f A -p 0.5 -t 0 -l 250"


class RougeError(ValueError):
    """Bad options, a bad configuration file or a missing summary (the script would die)."""


# Longest n-gram (-n) accepted: far above any summary length a ROUGE run scores (NIST uses 4).
MAX_NGRAM = 100


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
        if self.n is not None and not 0 <= self.n <= MAX_NGRAM:
            # the script loops up to -n for every summary and report line; beyond this nothing is left to count
            raise RougeError(f"-n must be between 0 and {MAX_NGRAM}")
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
    def from_flags(cls, flags: str | Sequence[str]) -> Options:
        """Parse ROUGE-1.5.5.pl flags, e.g. ``Options.from_flags(DUC_FLAGS)``."""
        try:
            argv = shlex.split(flags) if isinstance(flags, str) else list(flags)
        except ValueError as exc:  # an unbalanced quote
            raise RougeError(f"cannot split ROUGE flags {flags!r}: {exc}") from None
        parser = flag_parser()

        def fail(message: str):  # argparse would print and exit: bad flags are a RougeError here
            raise RougeError(f"bad ROUGE flags {argv}: {message}")

        parser.error = fail
        ns, rest = parser.parse_known_args(attach_flag_values(argv))
        if rest:
            raise RougeError(f"unexpected arguments in ROUGE flags: {rest}")
        return options_from_namespace(ns)

    def with_(self, **changes) -> Options:
        return dataclasses.replace(self, **changes)


_KW_ALIASES = {
    "max_n": "n",
    "remove_stopwords": "stopwords",
    "skip_distance": "skip",
    "length_limit": "length",
    "byte_limit": "bytes",
}


def make_options(flags: str | Sequence[str] | None = None, **kwargs) -> Options:
    base = Options.from_flags(flags) if flags is not None else Options()
    if not kwargs:
        return base
    fixed = {_KW_ALIASES.get(k, k): v for k, v in kwargs.items()}
    unknown = set(fixed) - {f.name for f in dataclasses.fields(Options)}
    if unknown:
        raise RougeError(
            f"unknown ROUGE options {sorted(unknown)}; known: {[f.name for f in dataclasses.fields(Options)]}"
        )
    if "confidence" in fixed and "confidence_text" not in fixed:
        fixed["confidence_text"] = _perl_num(fixed["confidence"])
    if "wlcs" in fixed and fixed["wlcs"] is not None and "wlcs_text" not in fixed:
        fixed["wlcs_text"] = _perl_num(fixed["wlcs"])
    return dataclasses.replace(base, **fixed)


# The script's flags in the order of --help: letter -> (metavar, or None for a switch; help).
_FLAGS = {
    "a": (None, "evaluate all systems (peers) in the config"),
    "c": ("CF", "confidence interval percentage (default 95)"),
    "d": (None, "print per-evaluation scores"),
    "e": (
        "DIR",
        "ROUGE data dir; its smart_common_words.txt and "
        "WordNet-2.0-Exceptions/*.exc are used when present (the .db file is not needed)",
    ),
    "b": ("BYTES", "use only the first BYTES bytes of each summary"),
    "l": ("WORDS", "use only the first WORDS words of each summary"),
    "m": (None, "stem with Porter + WordNet-2.0 exceptions"),
    "M": (None, "(stem models only; NOT supported: rejected)"),
    "n": ("N", "compute ROUGE-1 .. ROUGE-N"),
    "p": ("ALPHA", "F = 1/(alpha/P + (1-alpha)/R) (default 0.5)"),
    "s": (None, "remove SMART stop words"),
    "t": ("0|1|2", "0: average per summary; 1: corpus level; 2: raw counts"),
    "r": ("SAMPLES", "bootstrap samples for the confidence intervals (default 1000)"),
    "2": ("GAP", "ROUGE-S with maximum gap GAP (< 0: unlimited)"),
    "3": ("MODE", "(Basic Elements; NOT supported: rejected)"),
    "w": ("WEIGHT", "ROUGE-W with weight WEIGHT"),
    "u": (None, "ROUGE-SU: skip bigrams plus unigrams (needs -2)"),
    "U": (None, "ROUGE-S and ROUGE-SU (needs -2)"),
    "v": (None, "verbose (accepted, ignored: no debug dump)"),
    "x": (None, "do not compute ROUGE-L"),
    "f": ("A|B", "A: pool the references (default); B: best reference"),
    "z": ("FORMAT", "the config is a file list 'peer model1 model2 ...' per line in FORMAT (SPL|SEE|ISI)"),
}
_FLAG_DEST = {"2": "skip", "3": "be"}  # the namespace names of the digit flags


def flag_parser(prog: str = "rouge155", add_help: bool = False) -> argparse.ArgumentParser:
    """The script's getopts('ahHb:c:de:f:l:mMn:p:st:r:2:3:w:uUvxz:') as argparse options."""
    p = argparse.ArgumentParser(prog=prog, add_help=add_help, allow_abbrev=False)
    g = p.add_argument_group("ROUGE-1.5.5.pl flags (same letters, same meaning)")
    for letter, (metavar, text) in _FLAGS.items():
        kind = {"action": "store_true"} if metavar is None else {"metavar": metavar}
        g.add_argument("-" + letter, dest=_FLAG_DEST.get(letter, letter), help=text, **kind)
    return p


_VALUE_FLAGS = frozenset("-" + letter for letter, (metavar, _) in _FLAGS.items() if metavar is not None)


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


def _whole(text: str, what: str) -> int:
    value = _num(text, what)
    if value != value or value in (float("inf"), float("-inf")):  # int() of NaN / inf: ValueError / OverflowError
        raise RougeError(f"{what} must be a finite number, got {text!r}")
    return int(value)


# The flags that take a value: (namespace attribute, flag, Options field, conversion).
_VALUED = (
    ("n", "-n", "n", _whole),
    ("skip", "-2", "skip", _whole),
    ("w", "-w", "wlcs", _num),
    ("l", "-l", "length", _whole),
    ("b", "-b", "bytes", _whole),
    ("p", "-p", "alpha", _num),
    ("t", "-t", "counting", _whole),
    ("c", "-c", "confidence", _num),
    ("r", "-r", "resamples", _whole),
)


def options_from_namespace(ns: argparse.Namespace) -> Options:
    if getattr(ns, "M", False):
        raise RougeError("-M (stem models only) is not supported by wikiref rouge155")
    if getattr(ns, "be", None):
        raise RougeError("-3 (Basic Elements) is not supported by wikiref rouge155")
    if ns.l is not None and ns.b is not None:
        raise RougeError("Please specify length limit in words or bytes but not both.")
    kw: dict = {"stem": bool(ns.m), "stopwords": bool(ns.s), "lcs": not ns.x}
    kw.update(skip_unigrams=bool(ns.u), skip_both=bool(ns.U))
    for attr, flag, key, convert in _VALUED:
        text = getattr(ns, attr)
        if text is not None:
            kw[key] = convert(text, flag)
    for attr, key in (("w", "wlcs_text"), ("c", "confidence_text")):  # the flag's text, as the Perl prints it
        if getattr(ns, attr) is not None:
            kw[key] = getattr(ns, attr)
    if ns.f is not None:
        kw["formula"] = ns.f
    return Options(**kw)


def _perl_num(x) -> str:
    """Perl's default number stringification (%.15g)."""
    if isinstance(x, int):
        return str(x)
    return format(x, ".15g")
