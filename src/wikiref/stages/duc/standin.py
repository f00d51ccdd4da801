"""A small DUC-format STAND-IN benchmark for the offline sample, built from the collected examples.

DUC 2005-2007 is licensed by NIST and cannot be shipped. So that held-out-year fine-tuning, the
baselines and the official ROUGE evaluation run end to end offline, this module writes a stand-in in
exactly the NIST layout that :mod:`wikiref.stages.duc.reader` reads (``<root>/<year>/duc<year>_topics.sgml``,
``<root>/<year>/duc<year>_docs/<topic>/<DOCNO>`` in TREC SGML, ``<root>/<year>/models/<topic>.M.250.A.<X>``),
from the raw WikiRef examples (``data/raw/*.parquet``):

* a cluster is one Wikipedia article with at least ``min_docs`` distinct cited documents (by URL);
  the articles citing the most documents are used first (ties by title); the documents used are
  the first ``docs_per_cluster`` distinct ones in example-id order;
* topic title = the article title; narrative = one sentence per distinct section of the used
  statements ("Describe <section> of <title>."), so the query has several levels like DUC's;
* documents = up to ``docs_per_cluster`` distinct cited documents (in the sample these are
  themselves STAND-IN pages derived from the article), as TREC SGML with <P> paragraphs and a
  pseudo date inside the pseudo-year (DOCNO ``WIKI<yyyymmdd>.<nnnn>``);
* reference ("model") summaries = the article's statements that cite those documents (real
  Wikipedia text), one per line, dealt round-robin into up to ``models_per_cluster`` references of at
  most ``summary_words`` words each;
* clusters are assigned to the pseudo-years by a seeded shuffle;
* held out from WikiRef: an article that has an example in the WikiRef splits is never a topic, and a
  document that a WikiRef example cites (same normalised URL ``doc_key`` or same body ``doc_hash``, the
  keys the split keeps apart) is never a cluster document, so pre-training on WikiRef (+DA) never sees
  a test topic or document. What was held back is counted in the MANIFEST (``held_out``).

Everything is marked STAND-IN: a NOTICE file at the root, a comment at the top of every topics
file, ``<DOCTYPE> STAND-IN </DOCTYPE>`` in every document, and the MANIFEST.
"""

from __future__ import annotations

import html
import random
import re
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from wikiref.files import sha256_file, stable_id, write_json, write_text

STANDIN_NOTICE = """STAND-IN DUC-FORMAT BENCHMARK - NOT DUC

This folder is NOT the NIST DUC 2005-2007 data (which is licensed by NIST and never shipped).
It was built by `wikiref duc standin` from the WikiRef examples collected from a Wikipedia dump:
  topics      = Wikipedia articles (title; narrative made from the section titles of the statements)
  documents   = the distinct web pages the article cites (in the offline sample these pages are
                themselves STAND-INS built from the article text)
  models      = the article's cited statements (real Wikipedia text), grouped into <= 250-word references
  years       = pseudo-years: clusters are assigned to 2005/2006/2007 by a seeded shuffle
It uses exactly the NIST file layout so that the DUC reader, the held-out-year fine-tuning, the
baselines and the ROUGE-1.5.5 evaluation run end to end offline. Numbers computed on it are NOT
comparable to published DUC results.
"""


def is_standin_tree(root: str | Path) -> bool:
    """Whether the DUC tree at ``root`` is a STAND-IN built here (its NOTICE or MANIFEST says so)."""
    import json

    root = Path(root)
    notice, manifest = root / "NOTICE.txt", root / "MANIFEST.json"
    if notice.is_file() and "NOT DUC" in notice.read_text(encoding="utf-8", errors="replace"):
        return True
    if manifest.is_file():
        try:
            return bool(json.loads(manifest.read_text(encoding="utf-8")).get("standin"))
        except (ValueError, AttributeError):
            return False
    return False


@dataclass
class Cluster:
    article: str
    documents: list[dict]  # {"url", "title", "text"}
    statements: list[dict]  # {"statement", "url", "section"}
    sections: list[str] = field(default_factory=list)
    available_docs: int = 0  # distinct cited documents of the article (before the cap)
    narrative: str | None = None  # the topic's narrative; None: made from the sections (:func:`narrative`)


def _section(query) -> str | None:
    q = [str(x) for x in (list(query) if query is not None else []) if str(x).strip()]
    return q[-1].strip() if len(q) >= 2 else None


@dataclass(frozen=True)
class HeldOut:
    """What the stand-in must not use: the WikiRef articles and the keys of the documents they cite."""

    articles: frozenset[str] = frozenset()
    doc_keys: frozenset[str] = frozenset()
    doc_hashes: frozenset[str] = frozenset()

    def blocks(self, url: str, text: str) -> bool:
        from wikiref.dedup import body_hash, url_key

        return url_key(url) in self.doc_keys or body_hash(text) in self.doc_hashes


def clusters_from_examples(
    rows: Sequence[Mapping],
    *,
    docs_per_cluster: int,
    min_docs: int = 2,
    held_out: HeldOut = HeldOut(),
    counts: dict | None = None,
) -> list[Cluster]:
    """Group raw examples by article; keep articles with >= ``min_docs`` distinct cited documents.
    Articles in ``held_out.articles`` and documents ``held_out`` blocks are skipped; the skips are counted
    in ``counts`` (``articles``, ``documents``) when given."""
    counts = counts if counts is not None else {}
    counts.setdefault("articles", 0)
    counts.setdefault("documents", 0)
    by_article: OrderedDict[str, list[Mapping]] = OrderedDict()
    for r in sorted(rows, key=lambda r: str(r["id"])):
        by_article.setdefault(str(r["article"]), []).append(r)
    out = []
    for article, items in by_article.items():
        if article in held_out.articles:
            counts["articles"] += 1
            continue
        docs: OrderedDict[str, dict] = OrderedDict()
        blocked: set[str] = set()
        for r in items:
            url = str(r["url"])
            text = str(r.get("doc_text") or "")
            if url in docs or url in blocked or not text.strip():
                continue
            if held_out.blocks(url, text):
                blocked.add(url)
                continue
            docs[url] = {"url": url, "title": str(r.get("doc_title") or ""), "text": text}
        counts["documents"] += len(blocked)
        if len(docs) < min_docs:
            continue
        chosen = list(docs.values())[:docs_per_cluster]
        urls = {d["url"] for d in chosen}
        statements = []
        seen = set()
        for r in items:
            st = " ".join(str(r["statement"]).split())
            if str(r["url"]) in urls and st and st not in seen:
                seen.add(st)
                statements.append({"statement": st, "url": str(r["url"]), "section": _section(r.get("query"))})
        if not statements:
            continue
        sections = list(OrderedDict.fromkeys(s["section"] for s in statements if s["section"]))
        out.append(
            Cluster(
                article=article, documents=chosen, statements=statements, sections=sections, available_docs=len(docs)
            )
        )
    out.sort(key=lambda c: (-c.available_docs, c.article))
    return out


def group_references(statements: Sequence[str], n_models: int, max_words: int) -> list[list[str]]:
    """Deal statements round-robin into up to ``n_models`` references of <= ``max_words`` words;
    a statement that fits nowhere is dropped (a statement longer than the budget is never used)."""
    refs: list[list[str]] = [[] for _ in range(max(1, n_models))]
    sizes = [0] * len(refs)
    k = 0
    for st in statements:
        n = len(st.split())
        for step in range(len(refs)):
            j = (k + step) % len(refs)
            if sizes[j] + n <= max_words:
                refs[j].append(st)
                sizes[j] += n
                k = j + 1
                break
    return [r for r in refs if r]


def narrative(title: str, sections: Sequence[str], max_sections: int = 4) -> str:
    if not sections:
        return f"Describe {title}."
    return " ".join(f"Describe {s} of {title}." for s in sections[:max_sections])


def _paragraphs(text: str) -> list[str]:
    paras = [" ".join(p.split()) for p in re.split(r"\n+", text)]
    return [p for p in paras if p]


def _sgml_doc(docno: str, date: str, title: str, text: str) -> str:
    esc = lambda s: html.escape(s, quote=False)  # noqa: E731
    paras = "\n".join(f"<P>\n{esc(p)}\n</P>" for p in _paragraphs(text))
    dt = f"{date[:4]}-{date[4:6]}-{date[6:]}"
    return (
        f"<DOC>\n<DOCNO> {docno} </DOCNO>\n<DOCTYPE> STAND-IN </DOCTYPE>\n<DATE_TIME> {dt} </DATE_TIME>\n"
        f"<BODY>\n<HEADLINE>\n{esc(title)}\n</HEADLINE>\n<TEXT>\n{paras}\n</TEXT>\n</BODY>\n</DOC>\n"
    )


def _pseudo_date(year: int, key: str, seed: int) -> str:
    rng = random.Random(f"{seed}:{year}:{key}")
    day = rng.randrange(365)
    import datetime

    d = datetime.date(year, 1, 1) + datetime.timedelta(days=day)
    return d.strftime("%Y%m%d")


def plan(
    clusters: Sequence[Cluster], years: Sequence[int], clusters_per_year: int, seed: int
) -> dict[int, list[Cluster]]:
    """Seeded assignment of the best ``len(years) * clusters_per_year`` clusters to the pseudo-years
    (round-robin after a shuffle, so every year gets a share even when clusters run short)."""
    need = len(years) * clusters_per_year
    chosen = list(clusters[:need])
    rng = random.Random(seed)
    rng.shuffle(chosen)
    out: dict[int, list[Cluster]] = {y: [] for y in years}
    for i, c in enumerate(chosen):
        out[years[i % len(years)]].append(c)
    for y in years:
        out[y].sort(key=lambda c: c.article)
    return out


def write_standin(
    root: str | Path,
    assignment: Mapping[int, Sequence[Cluster]],
    *,
    models_per_cluster: int,
    summary_words: int = 250,
    seed: int = 0,
    source: Sequence[str] = (),
    held_out: Mapping | None = None,
    notice: str = STANDIN_NOTICE,
) -> dict:
    """Write the NIST-layout tree under ``root``; returns the manifest (also written as MANIFEST.json).
    ``held_out``: what was kept out for WikiRef (counts), recorded in the manifest; ``notice``: the NOTICE.txt
    saying what the tree is (it must say "NOT DUC": :func:`is_standin_tree` reads it)."""
    from wikiref.dedup import url_key

    root = Path(root)
    if "NOT DUC" not in notice:
        raise ValueError('a STAND-IN notice must say "NOT DUC"')
    write_text(root / "NOTICE.txt", notice)
    manifest: dict = {"standin": True, "note": notice.splitlines()[0], "years": {}, "source": list(source)}
    if held_out is not None:
        manifest["held_out"] = dict(held_out)
    for year, clusters in assignment.items():
        ydir = root / str(year)
        head = (
            f"<!-- STAND-IN DUC-format topics for pseudo-year {year}: built by wikiref duc standin "
            "from Wikipedia; NOT NIST DUC data. See ../NOTICE.txt -->"
            if notice == STANDIN_NOTICE
            else f"<!-- {notice.splitlines()[0]} (pseudo-year {year}). See ../NOTICE.txt -->"
        )
        topics_sgml = [head, ""]
        yinfo = []
        for k, c in enumerate(clusters, start=1):
            base = f"D{year % 100:02d}{k:02d}"
            num = f"{base}A"
            topics_sgml += [
                "<topic>",
                f"<num> {num} </num>",
                f"<title> {html.escape(c.article, quote=False)} </title>",
                "<narr>",
                html.escape(c.narrative or narrative(c.article, c.sections), quote=False),
                "</narr>",
                "</topic>",
                "",
            ]
            cdir = ydir / f"duc{year}_docs" / num
            docnos = []
            for j, d in enumerate(c.documents, start=1):
                date = _pseudo_date(year, d["url"], seed)
                docno = f"WIKI{date}.{j:04d}"
                write_text(cdir / docno, _sgml_doc(docno, date, d["title"], d["text"]))
                docnos.append(docno)
            refs = group_references([s["statement"] for s in c.statements], models_per_cluster, summary_words)
            names = []
            for j, ref in enumerate(refs):
                name = f"{base}.M.{summary_words}.A.{chr(ord('A') + j)}"
                write_text(ydir / "models" / name, "\n".join(ref) + "\n")
                names.append(name)
            yinfo.append(
                {
                    "num": num,
                    "article": c.article,
                    "documents": docnos,
                    "doc_keys": [url_key(d["url"]) for d in c.documents],
                    "models": names,
                    "statements": len(c.statements),
                    "sections": c.sections,
                }
            )
        write_text(ydir / f"duc{year}_topics.sgml", "\n".join(topics_sgml))
        manifest["years"][str(year)] = {"topics": yinfo}
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.name != "MANIFEST.json")
    manifest["files"] = {str(p.relative_to(root)): sha256_file(p) for p in files}
    manifest["id"] = stable_id(*(f"{k}:{v}" for k, v in manifest["files"].items()))
    write_json(root / "MANIFEST.json", manifest)
    return manifest
