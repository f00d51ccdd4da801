"""The CNN/DailyMail corpus as the QmdsCnn builder reads it: ``.story`` files, URL split lists, titles.

* A ``.story`` file (Hermann et al., 2015) holds the article's paragraphs, one per line with blank lines
  between them, then ``@highlight`` blocks (the marker line, a blank line, one highlight sentence). Its
  name is ``sha1(url)`` of the story's line in the official URL lists.
* The URL lists (``all_train.txt``, ``all_val.txt``, ``all_test.txt``) give the splits: one Wayback
  ``id_`` URL per line.
* The query is the article's title: from the archived page when a fetch backend has it, else derived
  from the URL path (:func:`title_from_url`).

:func:`resolve` decides, from params alone plus whether ``qmdscnn.stories_dir`` exists, which corpus the
workflow reads (the real stories or the STAND-IN) — the Snakefile, the registry and the jobs all call it.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

from wikiref import layout

HIGHLIGHT = "@highlight"
NOTICE = "NOTICE.txt"  # a STAND-IN corpus carries this file (its first line starts with "STAND-IN")
WAYBACK = re.compile(r"^https?://web\.archive\.org/web/\d{4,14}(?:[a-z]{2}_)?/(.+)$")
EXPECTED_LAYOUT = """expected the CNN/DailyMail layout:
  <stories_dir>/<sha1(url)>.story   one file per story (cnn/stories or dailymail/stories of the corpus)
  <stories_dir>/all_train.txt       official URL split lists, one URL per line (qmdscnn.split_lists)
  <stories_dir>/all_val.txt
  <stories_dir>/all_test.txt
(the stories: https://cs.nyu.edu/~kcho/DMQA/ ; the lists: github.com/abisee/cnn-dailymail, url_lists/)"""


class CorpusError(ValueError):
    """The corpus cannot be read (missing folder, no URL list, a URL in two splits...)."""


# ------------------------------------------------------------------------------------- which corpus
@dataclass(frozen=True)
class Corpus:
    stories_dir: str  # the folder the articles job reads
    standin: bool  # it is the STAND-IN built from the Wikipedia sample
    build_standin: bool  # the workflow builds the STAND-IN (standin: auto | true)
    warc_paths: tuple[str, ...] = field(default=())  # archives of article pages for the titles


def resolve(config: Mapping) -> Corpus:
    """The corpus of ``config``: ``qmdscnn.standin`` true -> the STAND-IN; false -> ``stories_dir``
    (must exist when read); auto -> the STAND-IN is built and used when ``stories_dir`` does not exist.
    The STAND-IN's archive of article pages is added to the title archives when it is used."""
    q = config["qmdscnn"]
    mode = q["standin"]
    real = q["stories_dir"].rstrip("/")
    use_standin = mode is True or (mode == "auto" and not Path(real).is_dir())
    warcs = tuple(q["titles"]["warc_paths"])
    if use_standin:
        warcs += (f"{layout.QMDSCNN_STANDIN}/{layout.QMDSCNN_STANDIN_ARCHIVE}",)
    return Corpus(
        stories_dir=layout.QMDSCNN_STANDIN if use_standin else real,
        standin=use_standin,
        build_standin=mode in (True, "auto"),
        warc_paths=warcs,
    )


def is_standin_dir(stories_dir: str | Path) -> bool:
    """The folder is a STAND-IN corpus (its NOTICE.txt says so): the flag comes from the data."""
    notice = Path(stories_dir) / NOTICE
    return notice.is_file() and notice.read_text(encoding="utf-8", errors="replace").startswith("STAND-IN")


# ------------------------------------------------------------------------------------------ stories
@dataclass
class Story:
    paragraphs: list[str]
    highlights: list[str]


def parse_story(text: str) -> tuple[Story | None, str]:
    """``.story`` text -> (Story, "") or (None, reason): ``no_highlights`` (no ``@highlight``),
    ``empty_article`` (no paragraph before the highlights), ``empty_highlights`` (markers without text),
    ``text_after_highlights`` (a second line in a highlight block: not the format)."""
    lines = [ln.strip() for ln in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    paragraphs: list[str] = []
    highlights: list[str] = []
    i = 0
    while i < len(lines) and lines[i] != HIGHLIGHT:
        if lines[i]:
            paragraphs.append(lines[i])
        i += 1
    if i == len(lines):
        return None, "no_highlights"
    current: list[str] | None = None
    for ln in lines[i:]:
        if ln == HIGHLIGHT:
            if current:
                highlights.append(current[0])
            current = []
        elif ln:
            if current is None or current:
                return None, "text_after_highlights"
            current.append(ln)
    if current:
        highlights.append(current[0])
    if not paragraphs:
        return None, "empty_article"
    if not highlights:
        return None, "empty_highlights"
    return Story(paragraphs, highlights), ""


def story_id(list_url: str) -> str:
    """The story file name (without ``.story``) of a URL-list line: ``sha1(url)``."""
    return hashlib.sha1(list_url.strip().encode("utf-8")).hexdigest()


def original_url(list_url: str) -> str:
    """The article's own URL: the Wayback prefix removed (``.../web/2007...id_/http://x`` -> ``http://x``)."""
    m = WAYBACK.match(list_url.strip())
    return m.group(1) if m else list_url.strip()


def title_from_url(url: str) -> str:
    """A title derived from the URL path: the last meaningful segment (not ``index.html``, not a number,
    not DailyMail's ``article-<id>``), extension removed, ``.``, ``-``, ``_`` and ``+`` as spaces.
    ``.../2007/US/07/13/btsc.obrien.criminallyinsane/index.html`` -> ``btsc obrien criminallyinsane``."""
    path = unquote(urlsplit(original_url(url)).path)
    for seg in reversed([s for s in path.split("/") if s]):
        stem = re.sub(r"\.(s?html?|php|aspx?)$", "", seg, flags=re.I)
        if stem.lower() in ("index", "default", "story") or stem.isdigit() or re.fullmatch(r"article-\d+", stem):
            continue
        words = re.sub(r"[._\-+]+", " ", stem).strip()
        if re.search(r"[A-Za-z]", words):
            return words
    return ""


def clean_title(title: str, strip: list[str]) -> str:
    """A page title with the ``qmdscnn.titles.strip`` patterns removed (site name, date), whitespace collapsed."""
    for pattern in strip:
        title = re.sub(pattern, "", title)
    return " ".join(title.split())


def page_title(html: bytes) -> str:
    """The ``<title>`` of an HTML page ("" when it has none or cannot be parsed)."""
    import lxml.html

    try:
        doc = lxml.html.fromstring(html)
    except (ValueError, TypeError, lxml.etree.ParserError):
        return ""
    found = doc.find(".//title")
    return " ".join((found.text_content() if found is not None else "").split())


# ------------------------------------------------------------------------------------------- splits
def read_split_lists(stories_dir: str | Path, lists: Mapping[str, list[str]], stats: Counter) -> dict[str, str | None]:
    """URL-list line -> split, over ``lists`` (split -> file names in ``stories_dir``). A missing list file is
    counted (``missing_split_list``); all of them missing is a :class:`CorpusError`. A URL listed twice in one
    split is kept once (``duplicate_url_line``); a URL in two splits maps to None: which split it belongs to
    cannot be known, so the caller drops its story (``url_in_several_splits``)."""
    root = Path(stories_dir)
    if not root.is_dir():
        raise CorpusError(f"{root}: no such folder (qmdscnn.stories_dir)\n{EXPECTED_LAYOUT}")
    found: dict[str, set[str]] = {}
    files_read = 0
    for split, names in lists.items():
        for name in names:
            path = root / name
            if not path.is_file():
                stats["missing_split_list"] += 1
                stats[f"missing_split_list:{name}"] += 1
                continue
            files_read += 1
            seen: set[str] = set()
            with open(path, encoding="utf-8", errors="strict") as fh:
                try:
                    lines = fh.read().splitlines()
                except UnicodeDecodeError as exc:
                    raise CorpusError(f"{path}: not UTF-8 ({exc})") from None
            for lineno, line in enumerate(lines, 1):
                url = line.strip()
                if not url or url.startswith("#"):
                    continue
                if not re.match(r"^https?://", url):
                    raise CorpusError(f"{path}:{lineno}: not a URL: {url[:80]!r}")
                if url in seen:
                    stats["duplicate_url_line"] += 1
                    continue
                seen.add(url)
                found.setdefault(url, set()).add(split)
    if not files_read:
        raise CorpusError(f"{root}: none of the URL lists {dict(lists)} exists\n{EXPECTED_LAYOUT}")
    return {url: (next(iter(splits)) if len(splits) == 1 else None) for url, splits in found.items()}
