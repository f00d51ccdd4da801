"""NIST DUC 2005-2007 query-focused multi-document summarization benchmarks: reader.

DUC is licensed by NIST and never shipped here. Point ``duc.root`` at your copy, arranged with one
folder per year (symlinks are fine)::

    <root>/2006/duc2006_topics.sgml             topics: <topic><num> D0601A </num><title> ... </title>
                                                 <narr> ... </narr></topic> (SGML)
    <root>/2006/duc2006_docs/D0601A/APW19990707.0181 ...
                                                 one folder per cluster (named by <num>), TREC SGML
                                                 files: <DOC><DOCNO> ... </DOCNO> ... <TEXT> (with or
                                                 without <P> paragraphs) </TEXT></DOC>
    <root>/2006/NISTeval/ROUGE/models/D0601.M.250.A.A ...
                                                 reference summaries <topic>.M.250.<assessor>.<summarizer>

For each of ``topics``, ``docs`` and ``models`` the parameters give a list of candidate paths
(``duc.layout``, relative to ``root``, ``<year>`` and ``<yy>`` substituted; angle brackets
rather than braces so that Snakemake does not take them for wildcards): the first that exists is used, so the
folder names of NIST's tarballs (``DUC2005_Summarization_Documents/duc2005_docs``,
``duc2007_testdocs/main``, ``results/ROUGE/models``, ``mainEval/ROUGE/models`` ...) work unchanged.
When nothing is found, the error says which paths were tried and shows this layout.

The query of a topic is its query levels: ``[title, narrative sentence 1, narrative sentence 2, ...]``.
Sentences (narrative and documents) are split by a function passed in (the pipeline uses the
project's spaCy pipeline, :mod:`wikiref.text`); the reader itself is pure parsing.
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

NIST_LAYOUT_HELP = """Expected the NIST layout, one folder per year under duc.root:
  <root>/<year>/duc<year>_topics.sgml      <topic><num> D0601A </num><title> .. </title><narr> .. </narr></topic>
  <root>/<year>/duc<year>_docs/<num>/<DOCNO>  TREC SGML: <DOC><DOCNO> .. </DOCNO> .. <TEXT> [<P> .. </P>] </TEXT></DOC>
  <root>/<year>/models/<TOPIC>.M.250.<assessor>.<summarizer>   e.g. D0601.M.250.A.A (plain text)
Other folder names are accepted through duc.layout (lists of candidate paths, <year> substituted)."""

DEFAULT_LAYOUT = {
    "topics": ["<year>/duc<year>_topics.sgml", "<year>/topics.sgml"],
    "docs": [
        "<year>/duc<year>_docs",
        "<year>/DUC<year>_Summarization_Documents/duc<year>_docs",
        "<year>/duc<year>_testdocs/main",
        "<year>/docs",
    ],
    "models": [
        "<year>/models",
        "<year>/NISTeval/ROUGE/models",
        "<year>/results/ROUGE/models",
        "<year>/mainEval/ROUGE/models",
    ],
}


class DucLayoutError(FileNotFoundError):
    """A DUC file or folder is missing; the message says what was looked for and how NIST lays it out."""


@dataclass
class Document:
    docno: str
    date: str  # YYYYMMDD when it could be determined, else ""
    headline: str
    paragraphs: list[str]
    path: str = ""
    sentences: list[str] = field(default_factory=list)


@dataclass
class Reference:
    summarizer: str  # last field of D0601.M.250.A.<summarizer>
    name: str  # file name
    lines: list[str]  # the file's non-empty lines (what ROUGE reads in SPL format)

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


@dataclass
class Topic:
    year: int
    num: str  # as in the topics file, e.g. D0601A or d301i
    title: str
    narrative: str
    documents: list[Document]
    references: list[Reference]
    narrative_sentences: list[str] = field(default_factory=list)
    extra: dict = field(default_factory=dict)  # other topic fields (granularity, ...)

    @property
    def query(self) -> list[str]:
        """Query levels: title, then each narrative sentence."""
        levels = [self.title] + [s for s in (self.narrative_sentences or [self.narrative]) if s.strip()]
        return [q for q in levels if q.strip()]

    def documents_by_date(self) -> list[Document]:
        """Oldest first (date, then DOCNO); documents without a date keep their DOCNO order, first."""
        return sorted(self.documents, key=lambda d: (d.date, d.docno))

    def most_recent_document(self) -> Document | None:
        docs = self.documents_by_date()
        return docs[-1] if docs else None


# --------------------------------------------------------------------------------------------
# Parsing (pure functions over text)
# --------------------------------------------------------------------------------------------

_TAG_RE = re.compile(r"<[^>]+>")


def _field(block: str, tag: str) -> str | None:
    """Text of ``<tag> ... </tag>`` (SGML: the closing tag may be missing - then up to the next tag)."""
    m = re.search(rf"<{tag}\b[^>]*>(.*?)</{tag}\s*>", block, re.S | re.I)
    if m is None:
        m = re.search(rf"<{tag}\b[^>]*>([^<]*)", block, re.S | re.I)
    if m is None:
        return None
    return m.group(1)


def _clean_text(text: str) -> str:
    return " ".join(html.unescape(_TAG_RE.sub(" ", text)).split())


def parse_topics(text: str) -> list[dict]:
    """Topics SGML -> [{"num", "title", "narrative", <other fields>}] in file order."""
    out = []
    for block in re.findall(r"<topic\b[^>]*>(.*?)</topic\s*>", text, re.S | re.I):
        num = _field(block, "num")
        if num is None or not num.strip():
            raise ValueError("a <topic> without <num>")
        title = _field(block, "title") or ""
        narr = _field(block, "narr")
        if narr is None:
            narr = _field(block, "desc") or ""
        rec = {"num": _clean_text(num), "title": _clean_text(title), "narrative": _clean_text(narr)}
        for tag in re.findall(r"<([A-Za-z][\w-]*)\b", block):
            t = tag.lower()
            if t not in ("num", "title", "narr", "desc") and t not in rec:
                val = _field(block, tag)
                if val is not None:
                    rec[t] = _clean_text(val)
        out.append(rec)
    return out


_MONTHS = {
    m: i + 1
    for i, m in enumerate(
        [
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ]
    )
}


def document_date(docno: str, block: str) -> str:
    """YYYYMMDD from <DATE_TIME>, the DOCNO (AQUAINT: APW19990707.0181; LA Times: LA010189-0001),
    <DATE> (YYMMDD, YYYYMMDD or 'January 1, 1989'), else ''."""
    dt = _field(block, "DATE_TIME")
    if dt:
        m = re.search(r"(\d{4})-(\d{2})-(\d{2})", dt)
        if m:
            return "".join(m.groups())
    m = re.match(r"^[A-Z_]{3,}(\d{8})(?:\D|$)", docno)
    if m and 1900 <= int(m.group(1)[:4]) <= 2100:
        return m.group(1)
    m = re.match(r"^LA(\d{2})(\d{2})(\d{2})-", docno)
    if m:
        mm, dd, yy = m.groups()
        return f"19{yy}{mm}{dd}"
    d = _field(block, "DATE")
    if d:
        d = _clean_text(d)
        m = re.search(r"\b(\d{4})(\d{2})(\d{2})\b", d)
        if m:
            return "".join(m.groups())
        m = re.search(r"\b(\d{2})(\d{2})(\d{2})\b", d)
        if m:
            yy, mm, dd = m.groups()
            return f"{'19' if int(yy) > 30 else '20'}{yy}{mm}{dd}"
        m = re.search(r"\b([A-Za-z]+)\s+(\d{1,2}),?\s+(\d{4})\b", d)
        if m and m.group(1).lower() in _MONTHS:
            return f"{m.group(3)}{_MONTHS[m.group(1).lower()]:02d}{int(m.group(2)):02d}"
    return ""


def _paragraphs(text_block: str) -> list[str]:
    if re.search(r"<P\b", text_block, re.I):
        paras = re.findall(r"<P\b[^>]*>(.*?)(?=</P\s*>|<P\b|$)", text_block, re.S | re.I)
    else:
        paras = re.split(r"\n\s*\n", text_block)
    out = [_clean_text(p) for p in paras]
    return [p for p in out if p]


def parse_documents(text: str, path: str = "") -> list[Document]:
    """All <DOC> elements of a TREC SGML file."""
    docs = []
    for block in re.findall(r"<DOC\b[^>]*>(.*?)</DOC\s*>", text, re.S | re.I):
        docno = _field(block, "DOCNO")
        if docno is None or not _clean_text(docno):
            raise ValueError(f"{path or 'document'}: a <DOC> without <DOCNO>")
        docno = _clean_text(docno)
        texts = re.findall(r"<TEXT\b[^>]*>(.*?)</TEXT\s*>", block, re.S | re.I)
        paragraphs = [p for t in texts for p in _paragraphs(t)]
        headline = _clean_text(_field(block, "HEADLINE") or _field(block, "HEAD") or "")
        docs.append(
            Document(docno=docno, date=document_date(docno, block), headline=headline, paragraphs=paragraphs, path=path)
        )
    return docs


_MODEL_NAME = re.compile(
    r"^(?P<topic>[A-Za-z]?\d+)\.M\.(?P<size>\d+)\.(?P<assessor>[A-Za-z0-9]+)\.(?P<summ>[A-Za-z0-9]+)$"
)


def topic_model_key(num: str) -> tuple[str, str | None]:
    """``D0601A`` -> (``D0601``, ``A``); ``d301i`` -> (``D301``, ``I``); no trailing letter -> (num, None)."""
    m = re.match(r"^([A-Za-z]?\d+)([A-Za-z])$", num.strip())
    if m:
        return m.group(1).upper(), m.group(2).upper()
    return num.strip().upper(), None


def model_files_for(num: str, names: Iterable[str], size: int | None = 250) -> list[str]:
    """Model summary file names of a topic among ``names`` (sorted by summarizer id)."""
    base, assessor = topic_model_key(num)
    found = []
    for name in names:
        m = _MODEL_NAME.match(name)
        if not m or m.group("topic").upper() != base:
            continue
        if assessor is not None and m.group("assessor").upper() != assessor:
            continue
        if size is not None and int(m.group("size")) != size:
            continue
        found.append((m.group("summ"), name))
    return [n for _, n in sorted(found)]


def read_model_lines(data: bytes) -> list[str]:
    """A model summary file: its non-empty lines (decoded as UTF-8, else Latin-1)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    return [ln.rstrip("\r") for ln in text.split("\n") if ln.strip()]


# --------------------------------------------------------------------------------------------
# Locating and reading a year
# --------------------------------------------------------------------------------------------


def _candidates(layout: Mapping, key: str) -> list[str]:
    val = (layout or {}).get(key) or DEFAULT_LAYOUT[key]
    return [val] if isinstance(val, str) else list(val)


def resolve(root: str | os.PathLike, year: int, layout: Mapping | None, key: str, *, is_dir: bool) -> Path:
    tried = []
    for tmpl in _candidates(layout or {}, key):
        p = Path(root) / tmpl.replace("<year>", str(year)).replace("<yy>", str(year)[2:])
        tried.append(str(p))
        if p.is_dir() if is_dir else p.is_file():
            return p
    raise DucLayoutError(
        f"DUC {year}: no {key} {'folder' if is_dir else 'file'} found; tried: {', '.join(tried)}\n{NIST_LAYOUT_HELP}"
    )


def _read_text(path: Path) -> str:
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def read_year(
    root: str | os.PathLike,
    year: int,
    layout: Mapping | None = None,
    *,
    summary_size: int = 250,
    min_references: int = 1,
    log: Callable[[str], None] | None = None,
) -> list[Topic]:
    """Read one DUC year: topics (file order) with their documents and reference summaries.

    A topic without a document folder or with fewer than ``min_references`` model summaries is an
    error (the benchmark would silently change otherwise).
    """
    root = Path(root)
    if not root.is_dir():
        raise DucLayoutError(f"duc.root {root} does not exist\n{NIST_LAYOUT_HELP}")
    topics_path = resolve(root, year, layout, "topics", is_dir=False)
    docs_dir = resolve(root, year, layout, "docs", is_dir=True)
    models_dir = resolve(root, year, layout, "models", is_dir=True)
    model_names = sorted(os.listdir(models_dir))
    cluster_dirs = {p.name.lower(): p for p in docs_dir.iterdir() if p.is_dir()}
    topics = []
    for rec in parse_topics(_read_text(topics_path)):
        num = rec["num"]
        cdir = cluster_dirs.get(num.lower())
        if cdir is None:
            raise DucLayoutError(f"DUC {year}: no document folder for topic {num} in {docs_dir}\n{NIST_LAYOUT_HELP}")
        documents: list[Document] = []
        for f in sorted(cdir.iterdir()):
            if f.is_file() and not f.name.startswith("."):
                documents.extend(parse_documents(_read_text(f), str(f)))
        if not documents:
            raise DucLayoutError(f"DUC {year}: topic {num}: no <DOC> found in {cdir}")
        refs = [
            Reference(
                summarizer=_MODEL_NAME.match(n).group("summ"),
                name=n,
                lines=read_model_lines((models_dir / n).read_bytes()),
            )
            for n in model_files_for(num, model_names, summary_size)
        ]
        if len(refs) < min_references:
            base, assessor = topic_model_key(num)
            raise DucLayoutError(
                f"DUC {year}: topic {num}: {len(refs)} model summaries named {base}.M.{summary_size}."
                f"{assessor or '*'}.* in {models_dir} (need {min_references})\n{NIST_LAYOUT_HELP}"
            )
        extra = {k: v for k, v in rec.items() if k not in ("num", "title", "narrative")}
        topics.append(
            Topic(
                year=year,
                num=num,
                title=rec["title"],
                narrative=rec["narrative"],
                documents=documents,
                references=refs,
                extra=extra,
            )
        )
    if not topics:
        raise DucLayoutError(f"DUC {year}: no <topic> in {topics_path}\n{NIST_LAYOUT_HELP}")
    if log:
        log(
            f"DUC {year}: {len(topics)} topics, {sum(len(t.documents) for t in topics)} documents, "
            f"{sum(len(t.references) for t in topics)} model summaries from {root}"
        )
    return topics


def split_sentences(topics: Sequence[Topic], splitter: Callable[[list[str]], list[list[str]]]) -> None:
    """Fill ``narrative_sentences`` and each document's ``sentences`` in place.

    ``splitter`` maps a list of texts to a list of sentence lists (one batch call, e.g. spaCy pipe).
    Document paragraphs are split separately (a sentence never crosses a paragraph)."""
    texts: list[str] = []
    slots: list[tuple] = []
    for t in topics:
        texts.append(t.narrative)
        slots.append((t, None))
        for d in t.documents:
            for p in d.paragraphs:
                texts.append(p)
                slots.append((t, d))
    result = splitter(texts)
    for t in topics:
        t.narrative_sentences = []
        for d in t.documents:
            d.sentences = []
    for (t, d), sents in zip(slots, result):
        sents = [s.strip() for s in sents if s.strip()]
        if d is None:
            t.narrative_sentences = sents
        else:
            d.sentences.extend(sents)


def spacy_splitter(nlp, batch_size: int = 256) -> Callable[[list[str]], list[list[str]]]:
    def split(texts: list[str]) -> list[list[str]]:
        return [[s.text for s in doc.sents] for doc in nlp.pipe(texts, batch_size=batch_size)]

    return split


# --------------------------------------------------------------------------------------------
# Rows for training and evaluation (data/duc/<year>.parquet)
# --------------------------------------------------------------------------------------------


def topic_rows(topics: Sequence[Topic], *, target_metric: str = "rouge2_recall") -> list[dict]:
    """One row per (topic, document), documents oldest first, with the training targets: each
    sentence's ROUGE-2 recall against the topic's references pooled (wikiref.rouge.fast, the counts
    ROUGE-1.5.5 -f A pools), the regression targets of the DUC fine-tuning (journal §V-A)."""
    from wikiref.rouge.oracle import sentence_scores

    rows = []
    for t in topics:
        refs = [r.text for r in t.references]
        for pos, d in enumerate(t.documents_by_date()):
            targets = sentence_scores(d.sentences, refs, metric=target_metric) if d.sentences else []
            rows.append(
                {
                    "id": f"{t.year}/{t.num}/{d.docno}",
                    "year": t.year,
                    "topic": t.num,
                    "query": t.query,
                    "title": t.title,
                    "narrative": t.narrative,
                    "doc_id": d.docno,
                    "doc_date": d.date,
                    "doc_position": pos,
                    "doc_headline": d.headline,
                    "doc_sentences": list(d.sentences),
                    "sentence_targets": [float(x) for x in targets],
                    "references": refs,
                    "reference_ids": [r.name for r in t.references],
                }
            )
    rows.sort(key=lambda r: r["id"])
    return rows
