"""Fuzz harness: the readers of untrusted bytes and text, fed structured and random inputs by hypothesis.

    python bench/fuzz.py --minutes 10                     # every target, 10 minutes each (one after another)
    python bench/fuzz.py --minutes 1 --targets duc_topics,rouge_flags --seed 7
    python bench/fuzz.py --max-examples 50 --derandomize  # a fixed budget per target (what CI runs)

A *target* is one reader (or a small group of readers that take the same input) and the exceptions it raises on
purpose for bad input (its *clean rejections*: ``DumpError``, ``RougeError``, ``QmdsIrError``...). An input
gives one of three outcomes: accepted, rejected cleanly, or a *crash*: any other exception (an ``IndexError``,
``KeyError``, ``TypeError``, ``RecursionError``, ``SystemExit``...) or a hang (no answer within
``--timeout`` seconds; a pure-Python hang is interrupted by SIGALRM, a C extension looping forever is not).

Inputs come from hypothesis strategies that build the formats from their pieces (wikitext from ``<ref>``,
``{{cite web|...}}``, ``[[links]]``, headings and unbalanced braces; DUC SGML from its tags; MediaWiki XML from
pages and revisions, truncated or compressed; JSON lines with ill-typed fields; WARC records...) mixed with raw
random text and bytes. Each target runs as a loop of hypothesis runs (``max_examples`` per run, a new seed each
run) until its time is up; a failure is shrunk by hypothesis to a minimal input, which is written to
``tests/fuzz_regressions/<target>-<sha>.json`` (``tests/test_fuzz.py`` replays every such file).

Output: one JSON line per target on stdout ``{"target", "inputs", "rejected", "minutes", "crashes",
"crash_file", "crash_files", "errors"}`` (``inputs``: inputs actually run, shrinking included), then a summary
line. Exit status 1 when any target crashed, else 0.
"""

from __future__ import annotations

import argparse
import base64
import bz2
import contextlib
import gzip
import hashlib
import io
import json
import logging
import os
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import escape

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[1]
REGRESSIONS = REPO / "tests" / "fuzz_regressions"
DEFAULT_TIMEOUT = 30.0  # seconds one input may take before it counts as a hang


# ============================================================================================ the harness
@dataclass
class Target:
    """A reader under test: ``run(value)`` feeds it one generated value; ``rejects``: its clean rejections."""

    name: str
    strategy: st.SearchStrategy
    run: Callable[[object], None]
    rejects: tuple[type[BaseException], ...] = ()
    doc: str = ""


WARM_UP_LIMIT = 600.0  # seconds for the first, untimed call of a target (library loading)


class Hang(Exception):
    """An input took longer than the time limit."""


@contextlib.contextmanager
def time_limit(seconds: float | None):
    """Raise :class:`Hang` in the main thread after ``seconds`` (no limit off the main thread or on None)."""
    import threading

    if not seconds or threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def on_alarm(_signum, _frame):
        raise Hang(f"no answer within {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def check(target: Target, value, timeout: float | None = DEFAULT_TIMEOUT) -> tuple[str, BaseException | None]:
    """Run one input: ("ok", None), ("rejected", the exception) or ("crash", the exception)."""
    try:
        with time_limit(timeout), contextlib.redirect_stderr(io.StringIO()):  # warcio prints its warnings
            target.run(value)
    except KeyboardInterrupt:
        raise
    except target.rejects as exc:
        return "rejected", exc
    except BaseException as exc:  # noqa: BLE001 - anything else is what the harness is looking for
        return "crash", exc
    return "ok", None


def signature(exc: BaseException) -> str:
    """``Type at file:line`` of the innermost frame: one crash, however many inputs reach it."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return type(exc).__name__
    last = frames[-1]
    return f"{type(exc).__name__} at {Path(last.filename).name}:{last.lineno}"


def describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:300] if text else ''}"


# -- storing inputs (bytes as base64: JSON holds only text) -------------------------------------------
def encode(value):
    if isinstance(value, bytes):
        return {"__bytes__": base64.b64encode(value).decode("ascii")}
    if isinstance(value, tuple):
        return {"__tuple__": [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {"__dict__": [[encode(k), encode(v)] for k, v in value.items()]}
    return value


def decode(value):
    if isinstance(value, list):
        return [decode(v) for v in value]
    if isinstance(value, dict):
        if "__bytes__" in value:
            return base64.b64decode(value["__bytes__"])
        if "__tuple__" in value:
            return tuple(decode(v) for v in value["__tuple__"])
        if "__dict__" in value:
            return {decode(k): decode(v) for k, v in value["__dict__"]}
    return value


def save_crash(target: Target, value, exc: BaseException, directory: Path) -> Path:
    """Write the crashing input as ``<directory>/<target>-<sha12>.json`` (a regression test replays it)."""
    stored = encode(value)
    blob = json.dumps(stored, sort_keys=True, ensure_ascii=True)
    sha = hashlib.sha256(f"{target.name}\n{blob}".encode()).hexdigest()[:12]
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{target.name}-{sha}.json"
    record = {
        "target": target.name,
        "error": describe(exc),
        "where": signature(exc),
        "traceback": traceback.format_exception(type(exc), exc, exc.__traceback__)[-6:],
        "input": stored,
    }
    path.write_text(json.dumps(record, indent=1, ensure_ascii=True) + "\n", encoding="utf-8")
    return path


def replay(path: Path, targets: dict[str, Target] | None = None, timeout: float | None = DEFAULT_TIMEOUT):
    """Run a stored input again: (outcome, exception) as :func:`check` gives them."""
    record = json.loads(Path(path).read_text(encoding="utf-8"))
    target = (targets or TARGETS)[record["target"]]
    return check(target, decode(record["input"]), timeout)


@dataclass
class Result:
    target: str
    inputs: int = 0
    rejected: int = 0
    seconds: float = 0.0
    crashes: dict[str, tuple[str, Path]] = field(default_factory=dict)  # signature -> (error, file)

    def to_json(self) -> dict:
        files = [str(p.relative_to(REPO)) if p.is_relative_to(REPO) else str(p) for _, p in self.crashes.values()]
        return {
            "target": self.target,
            "inputs": self.inputs,
            "rejected": self.rejected,
            "minutes": round(self.seconds / 60, 2),
            "crashes": len(self.crashes),
            "crash_file": files[0] if files else None,
            "crash_files": files,
            "errors": [f"{e} [{sig}]" for sig, (e, _) in self.crashes.items()],
        }


def warm_up(target: Target) -> None:
    """Run the target once, without a time limit and outside the count, on one generated input, so that
    what a first call loads (spaCy, torch: seconds on a busy machine) is never mistaken for a hang - an
    alarm during that import leaves a half-initialised module behind, which then looks like a crash."""
    import warnings

    from hypothesis.errors import NonInteractiveExampleWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonInteractiveExampleWarning)
        value = target.strategy.example()
    # a generous limit still (an input that truly hangs shows up again, timed, in the fuzzing itself)
    with contextlib.suppress(Exception), time_limit(WARM_UP_LIMIT), contextlib.redirect_stderr(io.StringIO()):
        target.run(value)


def fuzz(
    target: Target,
    *,
    seconds: float | None = None,
    max_examples: int | None = None,
    run_size: int = 100,
    seed_base: int = 0,
    derandomize: bool = False,
    timeout: float | None = DEFAULT_TIMEOUT,
    out_dir: Path = REGRESSIONS,
) -> Result:
    """Fuzz one target until ``seconds`` have passed or ``max_examples`` generated inputs have run (one of
    them must be given). Each hypothesis run tries up to ``run_size`` inputs with its own seed; a failing run
    is shrunk and its minimal input saved (one file per crash signature)."""
    if seconds is None and max_examples is None:
        raise ValueError("fuzz: give seconds or max_examples")
    result = Result(target.name)
    warm_up(target)
    start = time.monotonic()
    last_fail: list = []

    def body(value):
        result.inputs += 1
        outcome, exc = check(target, value, timeout)
        if outcome == "rejected":
            result.rejected += 1
        elif outcome == "crash":
            last_fail[:] = [value, exc]
            raise exc

    generated = 0
    run_no = 0
    while True:
        if seconds is not None and time.monotonic() - start >= seconds:
            break
        if max_examples is not None and generated >= max_examples:
            break
        n = run_size if max_examples is None else min(run_size, max_examples - generated)
        conf = settings(
            max_examples=n,
            deadline=None,
            database=None,
            derandomize=derandomize,
            phases=(Phase.generate, Phase.shrink),
            suppress_health_check=list(HealthCheck),
            report_multiple_bugs=False,
            print_blob=False,
        )
        test = conf(given(target.strategy)(body))
        if not derandomize:
            test = seed(seed_base * 1_000_003 + run_no)(test)
        run_no += 1
        last_fail.clear()
        try:
            test()
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 - the shrunk failure (or hypothesis' Flaky around it)
            if not last_fail:
                raise RuntimeError(f"{target.name}: hypothesis failed without a failing input: {exc!r}") from exc
            value, crash = last_fail
            sig = signature(crash)
            if sig not in result.crashes:
                path = save_crash(target, value, crash, out_dir)
                result.crashes[sig] = (describe(crash), path)
        generated += n
        if derandomize and max_examples is None:
            derandomize = False  # a time budget wants new inputs on each run
    result.seconds = time.monotonic() - start
    return result


# ============================================================================================ strategies
def _pieces(fragments: list[str], max_size: int = 40, text_size: int = 12) -> st.SearchStrategy[str]:
    """Text built from format fragments and short random text, in any order."""
    return st.lists(st.one_of(st.sampled_from(fragments), st.text(max_size=text_size)), max_size=max_size).map("".join)


def _mixed(structured: st.SearchStrategy[str], raw_size: int = 300) -> st.SearchStrategy[str]:
    return st.one_of(structured, structured, structured, st.text(max_size=raw_size))


@st.composite
def _mutated(draw, base: st.SearchStrategy[bytes]) -> bytes:
    """``base`` bytes, optionally cut, with a few bytes changed, inserted or deleted."""
    data = bytearray(draw(base))
    for _ in range(draw(st.integers(0, 3))):
        op = draw(st.sampled_from(["set", "insert", "delete"]))
        pos = draw(st.integers(0, len(data)))
        if op == "insert" or not data:
            data[pos:pos] = draw(st.binary(min_size=1, max_size=4))
        elif op == "set":
            data[min(pos, len(data) - 1)] = draw(st.integers(0, 255))
        else:
            del data[pos : pos + draw(st.integers(1, 8))]
    if data and draw(st.booleans()):
        data = data[: draw(st.integers(0, len(data)))]
    return bytes(data)


def _compressed(data: bytes, how: str) -> bytes:
    if how == "bz2":
        return bz2.compress(data)
    if how == "gz":
        return gzip.compress(data, mtime=0)
    return data


@st.composite
def _file_bytes(draw, text: st.SearchStrategy[str], compress: bool = False, encodings=("utf-8",)) -> bytes:
    """A file of ``text`` (encoded), maybe compressed, maybe damaged after that; or raw random bytes."""
    if draw(st.integers(0, 5)) == 0:
        return draw(st.binary(max_size=400))
    data = draw(text).encode(draw(st.sampled_from(encodings)), "replace")
    how = draw(st.sampled_from(["none", "none", "bz2", "gz"])) if compress else "none"
    data = _compressed(data, how)
    if draw(st.integers(0, 3)) == 0:
        data = draw(_mutated(st.just(data)))
    return data


JSON_LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    st.sampled_from(["0", "1", "3", "-1", "01", "²", "٣", " 2", "1e3", "", "a"]),
)
JSON_VALUE = st.recursive(
    JSON_LEAF,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)


def _sometimes(strategy: st.SearchStrategy, wrong=JSON_VALUE) -> st.SearchStrategy:
    """The well-typed value mostly, an arbitrary JSON value sometimes."""
    return st.one_of(strategy, strategy, strategy, wrong)


@st.composite
def _json_object(draw, fields: dict[str, st.SearchStrategy]) -> dict:
    """A dict with (most of) ``fields``, values sometimes of the wrong type, sometimes an extra key."""
    out = {}
    for key, strategy in fields.items():
        if draw(st.integers(0, 9)):
            out[key] = draw(_sometimes(strategy))
    if draw(st.integers(0, 5)) == 0:
        out[draw(st.text(max_size=6))] = draw(JSON_VALUE)
    return out


def _jsonl(objects: st.SearchStrategy) -> st.SearchStrategy[str]:
    """JSON lines: objects, sometimes a broken line, a bare value or a blank line."""
    line = st.one_of(
        objects.map(lambda o: json.dumps(o, ensure_ascii=False)),
        objects.map(lambda o: json.dumps(o)[: max(len(json.dumps(o)) // 2, 1)]),
        JSON_VALUE.map(json.dumps),
        st.just(""),
        st.just("[" * 5000),  # deep nesting
        st.text(max_size=20),
    )
    return st.lists(line, max_size=5).map("\n".join)


# -- wikitext --------------------------------------------------------------------------------------
WIKITEXT = [
    "<ref>",
    "</ref>",
    '<ref name="a">',
    "<ref name=a />",
    '<ref name="b"/>',
    '<ref group="note">',
    "<ref>{{cite web|url=http://example.com/a|title=A title|access-date=1 May 2020}}</ref>",
    "{{cite web|url=http://example.org/b|title=",
    "{{Cite News |URL = https://news.example/x |title=T}}",
    "{{cite press release|url=http://[::1|title=x}}",
    "{{cite web|url={{{1}}}|title=[[a|b]]<!-- c -->}}",
    '{{reflist|refs=<ref name="a">{{cite web|url=http://a.example}}</ref>}}',
    "{{sfn|Smith|2000|p=1}}",
    "{{harvnb|A|1999}}",
    "{{convert|1|to|2|km}}",
    "{{convert|5}}",
    "{{lang|fr|mot}}",
    "{{lang-de}}",
    "{{nowrap|}}",
    "{{Current events|year=2019|month=01|day=1|content=",
    "{{",
    "}}",
    "{{{",
    "}}}",
    "|",
    "=",
    "[[",
    "]]",
    "[[Target|anchor]]",
    "[[bomb]]s",
    "[[File:x.jpg|thumb|caption <ref>r</ref>]]",
    "[[Category:Things]]",
    "[[:fr:Chose]]",
    "[[wikt:word]]",
    "[http://example.com/c title]",
    "[http://example.com/d]",
    "http://example.net/bare",
    "[//example.com proto]",
    "\n== Heading ==\n",
    "\n=== Sub heading ===\n",
    "\n== References ==\n",
    "\n======\n",
    "\n= A =\n",
    "\n\n",
    "\n",
    "\n* ",
    "\n** ",
    "\n# ",
    "\n: ",
    "\n; Term",
    "'''",
    "''",
    "\n{|\n",
    "\n|}\n",
    "\n|-\n",
    "<!--",
    "-->",
    "&amp;",
    "&#x1F600;",
    "&#99999999;",
    "&nbsp;",
    "<br/>",
    "<br>",
    "<div>",
    "</div>",
    "<p>",
    "</p>",
    "<li>",
    "<table>",
    "<b>",
    "</b>",
    "<span style=x>",
    "<gallery>\nx.jpg|<ref>g</ref>\n</gallery>",
    "<nowiki>",
    "</nowiki>",
    "<math>x</math>",
    "<references />",
    "__NOTOC__",
    "~~~~",
    '<ref name="a" name="b">',
    "<ref name>",
    "<ref name={{x}}>",
    "<REF>",
    '<ref  name = "c" >',
    '<ref name="a">[http://x.example t]</ref>',
    "<ref>http://bare.example/p</ref>",
    "<ref>plain words</ref>",
    "<ref> </ref>",
    "{{cite web|url=http://a.example|url=http://b.example|title=T}}",
    "{{cite web|title={{lang|fr|x}}|url=http://x.example}}",
    "{{cite news|url=http://n.example|title=a=b}}",
    "{{ Sfn |x}}",
    "{{Template:cite web|url=http://t.example}}",
    "{{cite web<!--c-->|url=http://c.example}}",
    "{{rp|5}}",
    "[[a|b|c]]",
    "[[a&amp;b|x]]",
    "[[{{x}}|y]]",
    "[http://x.example a|b]",
    "<!-- <ref>c</ref> -->",
    "<pre><ref>p</ref></pre>",
    "\n== H <ref>h</ref> ==\n",
    "\n== ''It'' &amp; [[link]] ==\n",
    "&#65;",
    "&#xD800;",
    "<i>",
    "</i>",
    "<p id=x>",
    "The statement is a fact of some length. ",
    "Another sentence, with words. ",
    ", ",
    ". ",
]
wikitext = _mixed(_pieces(WIKITEXT, max_size=50), raw_size=400)


# -- MediaWiki XML (pages-articles and history) ------------------------------------------------------
_XML_BAD_CHARS = {c: None for c in range(32) if chr(c) not in "\t\n\r"} | {0xFFFE: None, 0xFFFF: None}


def _maybe_escape(text: str, raw: bool) -> str:
    """``text`` as XML character data (control characters removed), or as it is (``raw``: maybe broken XML)."""
    return text if raw else escape(text.translate(_XML_BAD_CHARS))


XML_NUMBERS = st.one_of(
    st.integers(1, 10**6).map(str),
    st.integers(1, 10**6).map(str),
    st.integers(1, 10**6).map(str),
    st.integers(-5, 0).map(str),
    st.sampled_from(["", "x", "1.5", " 7 ", "9" * 30, "٣"]),
)


@st.composite
def _revision_xml(draw) -> str:
    raw = draw(st.integers(0, 19)) == 0
    parts = ["<revision>"]
    if draw(st.integers(0, 9)):
        parts.append(f"<id>{draw(XML_NUMBERS)}</id>")
    if draw(st.booleans()):
        parts.append(f"<parentid>{draw(XML_NUMBERS)}</parentid>")
    if draw(st.booleans()):
        parts.append(f"<timestamp>{draw(st.sampled_from(['2019-01-01T00:00:00Z', '', 'yesterday']))}</timestamp>")
    if draw(st.booleans()):
        who = draw(st.sampled_from(["<username>U</username><id>1</id>", "<ip>1.2.3.4</ip>", ""]))
        deleted = draw(st.sampled_from(["", ' deleted="deleted"']))
        parts.append(f"<contributor{deleted}>{who}</contributor>")
    if draw(st.booleans()):
        parts.append("<minor />")
    if draw(st.booleans()):
        parts.append(f"<comment>{_maybe_escape(draw(st.text(max_size=10)), False)}</comment>")
    if draw(st.booleans()):
        parts.append(f"<model>{draw(st.sampled_from(['wikitext', 'css', 'json', '']))}</model>")
    kind = draw(st.integers(0, 5))
    if kind == 0:
        parts.append('<text deleted="deleted" />')
    elif kind != 1:
        parts.append(f'<text xml:space="preserve">{_maybe_escape(draw(wikitext), raw)}</text>')
    if draw(st.booleans()):
        parts.append(f"<sha1>{draw(st.sampled_from(['', 'abc', 'phoiac9h4m842xq45sp7s6u21eteeq1']))}</sha1>")
    parts.append("</revision>")
    return "".join(parts)


@st.composite
def _page_xml(draw, history: bool) -> str:
    parts = ["<page>"]
    if draw(st.integers(0, 9)):
        title = draw(st.one_of(st.sampled_from(["A", "Portal:Current events/2019 January 1", "Talk:B"]), st.text()))
        parts.append(f"<title>{_maybe_escape(title, False)}</title>")
    if draw(st.integers(0, 5)):
        parts.append(f"<ns>{draw(st.one_of(st.sampled_from(['0', '100', '1']), XML_NUMBERS))}</ns>")
    if draw(st.integers(0, 9)):
        parts.append(f"<id>{draw(XML_NUMBERS)}</id>")
    if draw(st.integers(0, 5)) == 0:
        parts.append(draw(st.sampled_from(['<redirect title="X" />', "<redirect />"])))
    n = draw(st.integers(0, 4 if history else 2))
    parts += [draw(_revision_xml()) for _ in range(n)]
    if draw(st.integers(0, 9)) == 0:
        parts.append("<upload><timestamp>x</timestamp></upload>")
    parts.append("</page>")
    return "".join(parts)


@st.composite
def _mediawiki_xml(draw, history: bool = False) -> str:
    head = '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="en">'
    root = draw(st.sampled_from([head] * 6 + ["<mediawiki>", "<other>", "", '<?xml version="1.0"?>' + head]))
    parts = [root]
    if draw(st.integers(0, 3)):
        keys = draw(st.lists(st.one_of(st.sampled_from(["0", "100", "1", "-2"]), XML_NUMBERS), max_size=3))
        names = "".join(
            f'<namespace key="{escape(k)}" case="first-letter">N{i}</namespace>' for i, k in enumerate(keys)
        )
        parts.append(f"<siteinfo><sitename>W</sitename><namespaces>{names}</namespaces></siteinfo>")
    parts += [draw(_page_xml(history)) for _ in range(draw(st.integers(0, 3)))]
    if draw(st.integers(0, 9)):
        parts.append("</mediawiki>" if root else "")
    return "".join(parts)


def _xml_file(history: bool) -> st.SearchStrategy[bytes]:
    return _file_bytes(_mixed(_mediawiki_xml(history), raw_size=200), compress=True)


# -- NIST SGML -------------------------------------------------------------------------------------
DUC_TOPICS = [
    "<topic>",
    "</topic>",
    "<TOPIC id=1>",
    "<num>",
    "</num>",
    " D0601A ",
    " d301i ",
    "<title>",
    "</title>",
    "<narr>",
    "</narr>",
    "<desc>",
    "</desc>",
    "<granularity>",
    "specific",
    "</granularity>",
    "<x-y>",
    "<",
    ">",
    "&amp;",
    "&#1234567;",
    "&#xD800;",
    "\n",
    "Describe the effects of the ban. ",
]
DUC_DOCS = [
    "<DOC>",
    "</DOC>",
    "<DOCNO>",
    "</DOCNO>",
    " APW19990707.0181 ",
    " LA010189-0001 ",
    " NYT99999999.0001 ",
    " LA991399-0001 ",
    "<DATE_TIME>",
    "2000-13-45",
    "</DATE_TIME>",
    "<DATE>",
    "January 99, 1989",
    "Smarch 3, 2001",
    "891301",
    "19991232",
    "</DATE>",
    "<HEADLINE>",
    "</HEADLINE>",
    "<HEAD>",
    "<TEXT>",
    "</TEXT>",
    "<P>",
    "</P>",
    "\n\n",
    "\n",
    "&amp;",
    "&#0;",
    "Officials said on Monday. ",
]

# -- ROUGE -----------------------------------------------------------------------------------------
ROUGE_CONFIG = [
    '<ROUGE_EVAL version="1.55">',
    "</ROUGE_EVAL>",
    '<EVAL ID="1">',
    '<EVAL ID="">',
    "<EVAL>",
    "</EVAL>",
    "<PEER-ROOT>peers</PEER-ROOT>",
    "<MODEL-ROOT>\n models \n</MODEL-ROOT>",
    "<PEER-ROOT/>",
    '<INPUT-FORMAT TYPE="SPL"/>',
    '<INPUT-FORMAT TYPE="see">',
    "</INPUT-FORMAT>",
    '<INPUT-FORMAT TYPE="XYZ"/>',
    "<INPUT-FORMAT/>",
    "<PEERS>",
    "</PEERS>",
    '<P ID="1">peer.txt</P>',
    "<P>x</P>",
    '<P ID="2"/>',
    "<MODELS>",
    "</MODELS>",
    '<M ID="A">m.A</M>',
    "<M/>",
    "<!-- c -->",
    "<![CDATA[x]]>",
    '<?xml version="1.0"?>',
    '<!DOCTYPE r [<!ENTITY e "v">]>',
    "&e;",
    "&amp;",
    "\n",
    "text",
]
ROUGE_TEXT = st.one_of(
    st.sampled_from(["peer.txt", " models ", "", "\n", "a/b"]),
    st.text(max_size=8).map(lambda t: _maybe_escape(t, False)),
)


ROUGE_ATTRS = ["", ' ID="1"', ' ID="2"', ' ID="A"', ' ID=""', ' TYPE="SPL"', ' TYPE="see"', ' TYPE="ISI"', ' TYPE="Z"']


@st.composite
def _rouge_element(draw) -> str:
    kind = draw(st.sampled_from(["PEER-ROOT", "MODEL-ROOT", "INPUT-FORMAT", "PEERS", "MODELS", "OTHER", "EVAL"]))
    attr = draw(st.sampled_from(ROUGE_ATTRS))
    if kind in ("PEERS", "MODELS"):
        own = "P" if kind == "PEERS" else "M"
        children = []
        for _ in range(draw(st.integers(0, 3))):
            child = draw(st.sampled_from([own, own, "Q"]))
            children.append(f"<{child}{draw(st.sampled_from(ROUGE_ATTRS))}>{draw(ROUGE_TEXT)}</{child}>")
        return f"<{kind}{attr}>{''.join(children)}</{kind}>"
    if kind == "INPUT-FORMAT":
        return f"<INPUT-FORMAT{attr}{draw(st.sampled_from(ROUGE_ATTRS))}/>"
    return f"<{kind}{attr}>{draw(ROUGE_TEXT)}</{kind}>"


@st.composite
def _rouge_xml(draw) -> str:
    """A well-formed ROUGE evaluation file: EVAL elements holding the known elements, in any order."""
    evals = []
    for _ in range(draw(st.integers(0, 3))):
        eid = draw(st.sampled_from(['ID="1"', 'ID="2"', 'ID="x"', "", 'ID=""']))
        body = "".join(draw(st.lists(_rouge_element(), max_size=5)))
        evals.append(f"<EVAL {eid}>{body}</EVAL>")
    stray = "".join(draw(st.lists(_rouge_element(), max_size=1)))
    root = draw(st.sampled_from(["ROUGE_EVAL", "ROUGE-EVAL", "X"]))
    return f'<{root} version="1.55">{stray}{"".join(evals)}</{root}>'


ROUGE_FLAGS = [
    "-n",
    "2",
    "-x",
    "-m",
    "-2",
    "4",
    "-1",
    "-u",
    "-U",
    "-c",
    "95",
    "-r",
    "1000",
    "0",
    "-f",
    "A",
    "B",
    "-p",
    "0.5",
    "-t",
    "-l",
    "250",
    "-b",
    "-w",
    "1.2",
    "-M",
    "-3",
    "-z",
    "SPL",
    "-a",
    "-d",
    "-e",
    "/tmp",
    "-s",
    "-v",
    "-h",
    "--help",
    "--",
    "-",
    "nan",
    "inf",
    "-inf",
    "1e400",
    "-0",
    "1e-400",
    "999999999999999999999",
    "'",
    '"',
    "\\",
    "-nx",
    "-n2",
    "x",
]
rouge_flags = st.one_of(
    st.lists(st.sampled_from(ROUGE_FLAGS), max_size=12).map(" ".join),
    st.lists(st.one_of(st.sampled_from(ROUGE_FLAGS), st.text(max_size=6)), max_size=8),  # a list of words
    st.text(max_size=40),
)

# -- HTML ------------------------------------------------------------------------------------------
HTML = [
    "<html>",
    "</html>",
    "<head><title>The title</title></head>",
    "<title>",
    "</title>",
    '<meta charset="utf-16">',
    '<meta http-equiv="Content-Type" content="text/html; charset=x-unknown">',
    "<body>",
    "</body>",
    "<article>",
    "</article>",
    "<p>",
    "</p>",
    "<div>",
    "</div>",
    "<h1>Headline</h1>",
    "<script>var x = '<p>';</script>",
    "<style>p{}</style>",
    "<table><tr><td>cell</td></tr></table>",
    '<a href="http://example.com/x">link</a>',
    '<time datetime="2019-01-01">',
    '<meta property="article:published_time" content="2019-13-45">',
    "<!--",
    "-->",
    "<![CDATA[",
    "&amp;",
    "&#0;",
    "\x00",
    "<?xml version='1.0' encoding='latin-1'?>",
    "A sentence of news text that goes on for a while, as articles do. ",
    "Der Satz ist auf Deutsch geschrieben und ziemlich lang. ",
]
html_text = _mixed(_pieces(HTML, max_size=60, text_size=20), raw_size=300)

WCEP_HTML = [
    "<html><body>",
    "</body></html>",
    '<div class="vevent" id="2019_January_1">',
    '<table class="vevent" id="2016_August_1"><tr><td>',
    "</td></tr></table>",
    '<span class="bday">2019-01-01</span>',
    '<span class="bday">2019-02-30</span>',
    '<span class="dtstart">x</span>',
    '<span class="summary">January 1, 2019 (2019-01-01)</span>',
    '<div class="vevent" id="2019_Smarch_40">',
    '<div class="description">',
    "<p><b>Armed conflicts and attacks</b></p>",
    '<div role="heading">Disasters</div>',
    "<dl><dt>Politics</dt></dl>",
    "<ul>",
    "</ul>",
    "<li>",
    "</li>",
    "<ol><li>x</li></ol>",
    '<a href="/wiki/Foo_bar">Foo bar</a>',
    '<a href="/wiki/">empty</a>',
    '<a href="/wiki/%ZZ%">bad</a>',
    '<a href="/wiki/File:X.jpg">file</a>',
    '<a href="/w/index.php?title=Red&amp;action=edit&amp;redlink=1">Red</a>',
    '<a href="/w/index.php">no title</a>',
    '<a rel="nofollow" class="external text" href="http://example.com/s">(Reuters)</a>',
    '<a class="external" href="http://[::1">(bad)</a>',
    '<a class="external">(no href)</a>',
    '<sup class="reference">[1]</sup>',
    '<span style="display: none">hidden</span>',
    '<span class="noprint">x</span>',
    "</div>",
    "<div>",
    "&amp;",
    "Ten people are killed in an attack. ",
]
WCEP_WIKITEXT = [
    "{{Current events|year=2019|month=01|day=1|content=",
    "{{Current events|year=2019|month=1|day=32|top=yes}}",
    "{{current_events|year=x|month=y|day=z|content=",
    "{{Current events header|2017|05|5}}",
    "{{Current events footer}}",
    "}}",
    "{{",
    "\n'''Armed conflicts and attacks'''\n",
    "\n;Disasters and accidents\n",
    "\n* ",
    "\n** ",
    "\n*** ",
    "\n**** ",
    "\n# ",
    "\n: ",
    "\n*: ",
    "[[Target|anchor]]",
    "[[bomb]]s",
    "[[File:x.jpg]]",
    "[[Category:X]]",
    "[[",
    "]]",
    "[http://example.com/a (Reuters)]",
    "[https://example.org/b]",
    "http://bare.example.org/c",
    "[http://example.com/a",
    "<ref>r</ref>",
    "<div>",
    "</div>",
    "\n{|\n",
    "\n|}\n",
    "\n|-\n",
    "__NOTOC__",
    "<!-- c -->",
    "&amp;",
    "''",
    "Ten people are killed in an attack. ",
    "\n",
]


# -- WARC (CC-NEWS) --------------------------------------------------------------------------------
@st.composite
def _warc_record(draw) -> bytes:
    body = draw(html_text).encode("utf-8", "replace")
    status = draw(st.sampled_from(["200 OK", "200 OK", "404 Not Found", "abc", "", "200"]))
    ctype = draw(st.sampled_from(["text/html", "text/html; charset=utf-8", "application/xhtml+xml", "image/png", ""]))
    http_headers = f"HTTP/1.1 {status}\r\n" + (f"Content-Type: {ctype}\r\n" if ctype else "") + "\r\n"
    http = http_headers.encode("latin-1") + body if draw(st.integers(0, 9)) else body
    rec_type = draw(st.sampled_from(["response", "response", "request", "warcinfo", "metadata", ""]))
    headers = ["WARC/1.0", f"WARC-Type: {rec_type}"]
    if draw(st.integers(0, 9)):
        headers.append(f"WARC-Target-URI: {draw(st.sampled_from(['http://example.com/a', '<http://x.org/>', ' ']))}")
    if draw(st.booleans()):
        headers.append(f"WARC-Date: {draw(st.sampled_from(['2019-01-01T12:00:00Z', '2019-02-30T00:00:00Z', 'x']))}")
    if draw(st.integers(0, 4)) == 0:
        headers.append("WARC-Wikiref-Standin: true")
    headers.append("Content-Type: application/http; msgtype=response")
    length = len(http) + draw(st.sampled_from([0, 0, 0, -3, 5]))
    headers.append(f"Content-Length: {length}")
    record = ("\r\n".join(headers) + "\r\n\r\n").encode("latin-1") + http + b"\r\n\r\n"
    return gzip.compress(record, mtime=0) if draw(st.booleans()) else record


@st.composite
def _warc_file(draw) -> bytes:
    data = b"".join(draw(st.lists(_warc_record(), max_size=3)))
    if draw(st.integers(0, 2)) == 0:
        data = draw(_mutated(st.just(data)))
    return data


# -- Common Crawl: CDX index answers and single WARC records ----------------------------------------
CDX_LINE = _json_object(
    {
        "urlkey": st.sampled_from(["org,example)/a", ""]),
        "timestamp": st.sampled_from(
            [
                "20181214120000",
                "20190122080000",
                "20181310120000",
                "2018",
                "\u0662\u06600181214120000",
                "20181214120000\n",
            ]
        ),
        "url": st.sampled_from(["http://example.org/a", "https://www.example.org/a", " "]),
        "mime": st.sampled_from(["text/html", "Text/HTML; charset=utf-8", "application/pdf", "warc/revisit", ""]),
        "status": st.sampled_from(["200", "404", "-", 200, " 200"]),
        "digest": st.sampled_from(["3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ", ""]),
        "length": st.sampled_from(["497", "0", "-1", "1e3", 12, "\u00b2"]),
        "offset": st.sampled_from(["1283", "0", "-5", 7, "\u0663"]),
        "filename": st.sampled_from(
            ["crawl-data/CC-MAIN-2019-04/segments/1/warc/x.warc.gz", "../x", "a//b", "/abs", "x\n", ""]
        ),
    }
)
CDX_GOOD = st.fixed_dictionaries(
    {
        "timestamp": st.sampled_from(["20181213120000", "20181214000000", "20181215120000", "20190122080000"]),
        "url": st.just("http://example.org/a"),
        "mime": st.sampled_from(["text/html", "application/xhtml+xml", "application/pdf"]),
        "status": st.sampled_from(["200", "200", "404"]),
        "length": st.sampled_from(["497", "12"]),
        "offset": st.sampled_from(["0", "1283"]),
        "filename": st.sampled_from(["crawl-data/CC-MAIN-2019-04/segments/1/warc/x.warc.gz", "y.warc.gz"]),
    }
)
ACCESS_DATES = ["2018-12-14", "14 December 2018", "December 2018", "2018", "sometime", "", "31 February 2019", "0"]


@st.composite
def _cc_record(draw) -> bytes:
    """One WARC response record as Common Crawl stores it (a gzip member): the body chunked or gzip-encoded
    sometimes; a WARC-Payload-Digest right (base32 or hex), wrong, of an algorithm hashlib lacks or that needs
    a length, malformed or absent; then maybe followed by other bytes, cut or damaged."""
    body = draw(html_text).encode("utf-8", "replace")
    status = draw(st.sampled_from(["200 OK", "200 OK", "404 Not Found", "abc", ""]))
    http = [f"HTTP/1.1 {status}", f"Content-Type: {draw(st.sampled_from(['text/html', 'application/pdf', '']))}"]
    payload = body
    coding = draw(st.sampled_from(["", "", "gzip", "chunked", "bad-chunked", "br"]))
    if coding == "gzip":
        payload = gzip.compress(body, mtime=0)
        http.append("Content-Encoding: gzip")
    elif coding == "br":
        http.append("Content-Encoding: br")
    elif coding:
        size = len(body) + (3 if coding == "bad-chunked" else 0)
        payload = f"{size:x}\r\n".encode() + body + b"\r\n0\r\n\r\n"
        http.append("Transfer-Encoding: chunked")
    block = ("\r\n".join(http) + "\r\n\r\n").encode("latin-1") + payload
    sha1 = hashlib.sha1(payload).digest()
    digest = {
        "base32": "sha1:" + base64.b32encode(sha1).decode("ascii"),
        "hex": "sha1:" + sha1.hex(),
        "wrong": "sha1:" + "A" * 32,
        "unknown": "whirl:abc",
        "shake": "shake_128:abc",
        "malformed": ":::",
        "none": "",
    }[draw(st.sampled_from(["base32", "base32", "hex", "wrong", "unknown", "shake", "malformed", "none"]))]
    rec_type = draw(st.sampled_from(["response", "response", "response", "request", "revisit", "warcinfo"]))
    headers = ["WARC/1.0", f"WARC-Type: {rec_type}", "WARC-Target-URI: http://example.org/a"]
    headers.append("Content-Type: application/http; msgtype=response")
    if digest:
        headers.append(f"WARC-Payload-Digest: {digest}")
    headers.append(f"Content-Length: {len(block) + draw(st.sampled_from([0, 0, 0, -3, 5]))}")
    record = ("\r\n".join(headers) + "\r\n\r\n").encode("latin-1") + block + b"\r\n\r\n"
    data = gzip.compress(record, mtime=0) if draw(st.integers(0, 9)) else record
    if draw(st.integers(0, 4)) == 0:
        data += draw(st.binary(min_size=1, max_size=8))  # the next record's first bytes
    if draw(st.integers(0, 3)) == 0:
        data = draw(_mutated(st.just(data)))
    return data


# -- QmdsIr (MS MARCO) and QMSum JSON ----------------------------------------------------------------
PASSAGE = _json_object(
    {
        "passage_text": st.text(max_size=30),
        "url": st.sampled_from(["http://a.example/1", "http://a.example/2", " "]),
        "is_selected": st.sampled_from([0, 1, 1.0, True, 2]),
    }
)
MARCO_RECORD = _json_object(
    {
        "query": st.text(max_size=15),
        "query_id": st.one_of(st.integers(-3, 5), st.sampled_from(["1", " ", "a"])),
        "query_type": st.sampled_from(["DESCRIPTION", "NUMERIC"]),
        "passages": st.lists(PASSAGE, max_size=4),
        "answers": st.lists(st.text(max_size=8), max_size=2),
        "wellFormedAnswers": st.sampled_from(["[]", "", "x"]) | st.lists(st.text(max_size=5), max_size=2),
    }
)


@st.composite
def _marco_v21(draw) -> str:
    """The column layout: {"<column>": {"<row key>": value}}, rows not always in every column."""
    rows = draw(st.lists(st.sampled_from(["0", "1", "2", "10", "a", "²", "-1", ""]), max_size=4, unique=True))
    records = {r: draw(MARCO_RECORD) for r in rows}
    columns = ["query_id", "query", "query_type", "answers", "wellFormedAnswers", "passages"]
    obj = {}
    for column in draw(st.permutations(columns)):
        if draw(st.integers(0, 7)):
            obj[column] = {r: rec[column] for r, rec in records.items() if column in rec}
    return json.dumps(obj)


marco_file = _file_bytes(
    st.one_of(_jsonl(MARCO_RECORD), _marco_v21(), _marco_v21().map(lambda s: s[: len(s) * 2 // 3])), compress=True
)

SPAN = st.one_of(
    st.lists(st.sampled_from(["0", "1", "2", "5", "-1", "01", "²", "", "x"]), min_size=2, max_size=2),
    st.lists(st.integers(-2, 6), min_size=2, max_size=2),
    JSON_VALUE,
)
QMSUM_MEETING = _json_object(
    {
        "topic_list": st.lists(
            _json_object({"topic": st.text(max_size=8), "relevant_text_span": st.lists(SPAN, max_size=2)}),
            max_size=2,
        ),
        "general_query_list": st.lists(
            _json_object({"query": st.text(max_size=8), "answer": st.text(max_size=8)}), max_size=2
        ),
        "specific_query_list": st.lists(
            _json_object(
                {
                    "query": st.text(max_size=8),
                    "answer": st.text(max_size=8),
                    "relevant_text_span": st.lists(SPAN, max_size=3),
                }
            ),
            max_size=3,
        ),
        "meeting_transcripts": st.lists(
            _json_object({"speaker": st.text(max_size=5), "content": st.text(max_size=20)}), max_size=5
        ),
    }
)


# ============================================================================================ the targets
_SCRATCH: list[Path] = []


def _scratch(name: str) -> Path:
    """A file path in this process' scratch folder (one per target, rewritten for every input)."""
    if not _SCRATCH:
        _SCRATCH.append(Path(tempfile.mkdtemp(prefix="wikiref-fuzz-")))
    return _SCRATCH[0] / name


def _write(name: str, data: bytes | str) -> Path:
    path = _scratch(name)
    path.write_bytes(data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data)
    return path


def _tally():
    from wikiref.examples import Tally

    return Tally()


def run_statements(text: str) -> None:
    """Differential: the token walker (collect's path, full and statements-only) must return exactly what
    the node walker returns; a difference is an AssertionError, i.e. a crash."""
    import dataclasses
    from collections import Counter

    from wikiref.wiki.statements import StatementConfig, parse_article

    cfg = StatementConfig()
    ref_stats, tok_stats, only_stats = Counter(), Counter(), Counter()
    ref = parse_article("Fuzz", text, cfg, ref_stats, method="nodes")
    tok = parse_article("Fuzz", text, cfg, tok_stats, method="tokens")
    only = parse_article("Fuzz", text, cfg, only_stats, method="tokens", statements_only=True)
    assert dataclasses.asdict(ref) == dataclasses.asdict(tok), "token walker: different article"
    assert ref_stats == tok_stats, f"token walker: different counters {ref_stats - tok_stats} {tok_stats - ref_stats}"
    assert [dataclasses.astuple(s) for s in ref.statements] == [dataclasses.astuple(s) for s in only.statements], (
        "statements_only: different statements"
    )
    assert ref_stats == only_stats, "statements_only: different counters"


def run_dump(data: bytes) -> None:
    from wikiref.wiki.dump import iter_pages

    for _ in iter_pages(_write("dump.xml", data), namespaces=(0, 100)):
        pass


def run_extract(value: tuple) -> None:
    from wikiref.web.extract import ExtractConfig, extract_document

    body, as_bytes = value
    extract_document(body.encode("utf-8", "surrogatepass") if as_bytes else body, "", ExtractConfig(min_doc_chars=20))


def run_duc_topics(text: str) -> None:
    from wikiref.stages.duc.reader import parse_topics

    parse_topics(text)


def run_duc_docs(data: bytes) -> None:
    from wikiref.stages.duc.reader import parse_documents, read_model_lines

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    parse_documents(text, "fuzz")
    read_model_lines(data)


def run_rouge_config(data: bytes) -> None:
    from wikiref.rouge.official.report import read_config

    read_config(_write("rouge.xml", data))


def run_rouge_files(value: tuple) -> None:
    from wikiref.rouge.official.report import read_file_list
    from wikiref.rouge.official.text import read_units

    data, fmt = value
    path = _write("rouge.lst", data)
    read_file_list(path, fmt, "1")
    read_units(path, fmt)


def run_rouge_flags(flags) -> None:
    from wikiref.rouge.official.options import Options

    opts = Options.from_flags(flags)
    opts.measures()


def run_qmdscnn(value: tuple) -> None:
    from wikiref.stages.qmdscnn.corpus import page_title, parse_story

    story, html = value
    parse_story(story)
    page_title(html)


def run_qmdsir(data: bytes) -> None:
    from wikiref.stages.qmdsir.build import parse
    from wikiref.stages.qmdsir.reader import iter_records

    for record in iter_records(_write("marco.json", data), _tally()):
        parse(record.fields)


def run_wcep_wikitext(text: str) -> None:
    from wikiref.stages.wcep.portal_wikitext import parse_day_wikitext

    parse_day_wikitext(text, date="2019-01-01", location="fuzz", tally=_tally())


def run_wcep_html(data: bytes) -> None:
    from wikiref.stages.wcep.portal_html import parse_month_html

    parse_month_html(data, location="fuzz", tally=_tally())


def run_wcep_ccnews(value: tuple) -> None:
    from wikiref.stages.wcep.ccnews import iter_articles

    data, find_dates = value
    for _ in iter_articles([_write("cc.warc", data)], _tally(), find_dates=find_dates, progress_every=0):
        pass


def run_commoncrawl_cdx(value: tuple) -> None:
    from wikiref.web.commoncrawl import choose_capture, parse_cdx_lines, target_day

    data, max_lines, access_date, fallback = value
    captures, bad = parse_cdx_lines(data, "CC-MAIN-2019-04", max_lines)
    assert len(captures) + bad <= max_lines, (len(captures), bad)
    choose_capture(captures, ("text/html", "application/xhtml+xml"), target_day(access_date, fallback))


def run_commoncrawl_record(value: tuple) -> None:
    from wikiref.web.commoncrawl import read_record

    data, max_body = value
    rec = read_record(data, max_body)
    assert rec.reason in ("", "cc_record_corrupt", "cc_digest_mismatch", "too_large"), rec.reason
    assert len(rec.body) <= max_body and (not rec.reason or not rec.body)


_MINER: list = []


def _miner():
    if not _MINER:
        import spacy

        from wikiref.stages.psg2sum.mining import Miner
        from wikiref.wiki.statements import DEFAULT_SKIP_SECTIONS

        _MINER.append(Miner(spacy.blank("en"), skip_sections=DEFAULT_SKIP_SECTIONS, min_passage_tokens=3))
    return _MINER[0]


def run_psg2sum_mining(value: tuple) -> None:
    old, new = value
    miner = _miner()
    miner.mine(miner.parse(old), miner.parse(new), min_score=0.5, tally=_tally())


def run_psg2sum_history(data: bytes) -> None:
    from wikiref.stages.psg2sum.history import iter_edits

    for _ in iter_edits(_write("history.xml", data), _tally(), namespaces=(0, 100), progress_every=0):
        pass


def run_qmsum(value: tuple) -> None:
    from wikiref.stages.qmsum.reader import SpanError, parse_spans, query_rows, read_meetings

    data, spans, n_turns = value
    for meeting in read_meetings(_write("qmsum.jsonl", data), split="train", tally=_tally()):
        query_rows(meeting, tally=_tally())
    with contextlib.suppress(SpanError):
        parse_spans(spans, n_turns)


def _rejects(*names: str) -> tuple[type[BaseException], ...]:
    """The exception classes named ``module:Class`` (imported when the targets are built)."""
    import importlib

    out = []
    for name in names:
        module, _, cls = name.partition(":")
        out.append(getattr(importlib.import_module(module), cls))
    return tuple(out)


def build_targets() -> dict[str, Target]:
    dump_error = "wikiref.wiki.dump:DumpError"
    rouge_error = "wikiref.rouge.official.options:RougeError"
    targets = [
        Target(
            "statements",
            wikitext,
            run_statements,
            (),
            "collect.statements.parse_article: never raises; token and node walkers agree",
        ),
        Target("dump", _xml_file(history=False), run_dump, _rejects(dump_error), "collect.dump.iter_pages"),
        Target(
            "extract",
            st.tuples(html_text, st.booleans()),
            run_extract,
            (),
            "collect.extract.extract_document: a drop reason, never an exception",
        ),
        Target(
            "duc_topics",
            _mixed(_pieces(DUC_TOPICS)),
            run_duc_topics,
            (ValueError,),
            "duc.reader.parse_topics: ValueError for a topic without <num>",
        ),
        Target(
            "duc_docs",
            _file_bytes(_mixed(_pieces(DUC_DOCS, max_size=50)), encodings=("utf-8", "latin-1", "utf-16")),
            run_duc_docs,
            (ValueError,),
            "duc.reader.parse_documents (ValueError for a <DOC> without <DOCNO>) and read_model_lines",
        ),
        Target(
            "rouge_config",
            _file_bytes(st.one_of(_rouge_xml(), _rouge_xml(), _mixed(_pieces(ROUGE_CONFIG)))),
            run_rouge_config,
            _rejects(rouge_error),
            "rouge.official.report.read_config",
        ),
        Target(
            "rouge_files",
            st.tuples(
                _file_bytes(_mixed(_pieces(["peer.txt ", "model.A ", "\t", "\n", "#", "<a>", "[1] ", " "]))),
                st.sampled_from(["SPL", "SEE", "ISI", "spl", "XYZ", ""]),
            ),
            run_rouge_files,
            _rejects(rouge_error),
            "rouge.official.report.read_file_list (-z lists) and text.read_units (SPL/SEE/ISI summaries)",
        ),
        Target(
            "rouge_flags",
            rouge_flags,
            run_rouge_flags,
            _rejects(rouge_error),
            "rouge.official.options.Options.from_flags (the ROUGE-1.5.5.pl flag string)",
        ),
        Target(
            "qmdscnn",
            st.tuples(
                _mixed(_pieces(["@highlight", "\n", "\n\n", "\r\n", "\r", " ", "A paragraph of the story."])),
                _file_bytes(html_text, encodings=("utf-8", "utf-16", "latin-1")),
            ),
            run_qmdscnn,
            (),
            "qmdscnn.corpus.parse_story and page_title: a reason / an empty title, never an exception",
        ),
        Target(
            "qmdsir",
            marco_file,
            run_qmdsir,
            _rejects("wikiref.stages.qmdsir.reader:QmdsIrError"),
            "qmdsir.reader.iter_records (both layouts) then qmdsir.build.parse of every record",
        ),
        Target(
            "wcep_wikitext",
            _mixed(_pieces(WCEP_WIKITEXT, max_size=50)),
            run_wcep_wikitext,
            (),
            "wcep.portal_wikitext.parse_day_wikitext: counted drops, never an exception",
        ),
        Target(
            "wcep_html",
            _file_bytes(_mixed(_pieces(WCEP_HTML, max_size=50)), encodings=("utf-8", "latin-1", "utf-16")),
            run_wcep_html,
            (),
            "wcep.portal_html.parse_month_html: counted drops, never an exception",
        ),
        Target(
            "wcep_ccnews",
            st.tuples(_warc_file(), st.booleans()),
            run_wcep_ccnews,
            (),
            "wcep.ccnews.iter_articles over a WARC file: counted drops, never an exception",
        ),
        Target(
            "commoncrawl_cdx",
            st.tuples(
                _file_bytes(_jsonl(st.one_of(CDX_GOOD, CDX_GOOD, CDX_LINE))),
                st.integers(1, 6),
                st.one_of(st.sampled_from(ACCESS_DATES), st.text(max_size=20)),
                st.sampled_from(["", "2019-01-01"]),
            ),
            run_commoncrawl_cdx,
            (),
            "collect.commoncrawl.parse_cdx_lines + target_day + choose_capture: counted bad lines, never raises",
        ),
        Target(
            "commoncrawl_record",
            st.tuples(_cc_record(), st.sampled_from([16, 2000, 100_000])),
            run_commoncrawl_record,
            (),
            "collect.commoncrawl.read_record (one gzip member from a range request): a reason, never raises",
        ),
        Target(
            "psg2sum_mining",
            st.tuples(wikitext, wikitext),
            run_psg2sum_mining,
            (),
            "psg2sum.mining.Miner.parse + mine of two revisions: never raises",
        ),
        Target(
            "psg2sum_history",
            _xml_file(history=True),
            run_psg2sum_history,
            _rejects(dump_error, "wikiref.stages.psg2sum.history:SevenZipMissing"),
            "psg2sum.history.iter_edits",
        ),
        Target(
            "qmsum",
            st.tuples(
                _file_bytes(_jsonl(QMSUM_MEETING)),
                st.one_of(st.lists(SPAN, max_size=3), JSON_VALUE),
                st.integers(-1, 6),
            ),
            run_qmsum,
            (),
            "qmsum.reader.read_meetings + query_rows (counted drops) and parse_spans (SpanError only)",
        ),
    ]
    return {t.name: t for t in targets}


TARGETS: dict[str, Target] = build_targets()


# ============================================================================================ command line
def main(argv: list[str] | None = None, targets: dict[str, Target] | None = None, out=None) -> int:
    targets = targets if targets is not None else TARGETS
    out = out or sys.stdout
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--minutes", type=float, help="time per target (default 1; ignored with --max-examples alone)")
    p.add_argument("--max-examples", type=int, help="generated inputs per target (a fixed budget, e.g. for CI)")
    p.add_argument("--targets", help=f"comma-separated subset of: {', '.join(targets)}")
    p.add_argument("--seed", type=int, default=0, help="seed of the first hypothesis run (default 0)")
    p.add_argument("--derandomize", action="store_true", help="hypothesis' fixed derandomized inputs")
    p.add_argument("--run-size", type=int, default=100, help="inputs per hypothesis run (default 100)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per input before a hang")
    p.add_argument("--out-dir", type=Path, default=REGRESSIONS, help="where crashing inputs are written")
    p.add_argument("--list", action="store_true", help="list the targets and exit")
    args = p.parse_args(argv)
    if args.list:
        for t in targets.values():
            print(f"{t.name:16} {t.doc}", file=out)
        return 0
    names = [n.strip() for n in args.targets.split(",") if n.strip()] if args.targets else list(targets)
    unknown = [n for n in names if n not in targets]
    if unknown:
        p.error(f"unknown target(s) {unknown}; known: {', '.join(targets)}")
    minutes = args.minutes if args.minutes is not None or args.max_examples is not None else 1.0
    logging.disable(logging.CRITICAL)  # the readers log every drop; the harness reports outcomes only
    total_inputs, total_crashes = 0, 0
    for name in names:
        result = fuzz(
            targets[name],
            seconds=minutes * 60 if minutes is not None else None,
            max_examples=args.max_examples,
            run_size=args.run_size,
            seed_base=args.seed,
            derandomize=args.derandomize,
            timeout=args.timeout,
            out_dir=args.out_dir,
        )
        total_inputs += result.inputs
        total_crashes += len(result.crashes)
        print(json.dumps(result.to_json()), file=out, flush=True)
    print(
        json.dumps({"summary": True, "targets": len(names), "inputs": total_inputs, "crashes": total_crashes}),
        file=out,
        flush=True,
    )
    return 1 if total_crashes else 0


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sys.exit(main())
