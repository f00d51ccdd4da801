"""The offline sample: a real Wikipedia dump fragment + a WARC of STAND-IN cited pages.

* ``dump/enwiki-sample.xml.bz2``: the real English Wikipedia fragment that the ``gensim`` wheel
  ships as test data (CC BY-SA), copied byte for byte from the installed package.
* ``warc/standin.warc.gz``: cited pages cannot be fetched offline, so for every URL that a kept
  statement of the fragment cites (first citation, cite web/news/press release) the archive holds a
  clearly labelled STAND-IN page built from the citing article itself: the citing section's other
  paragraphs, extended with neighbouring sections (next, previous, next-but-one, ...) until about
  ``sample.standin_target_tokens`` whitespace tokens. A paragraph that cites the URL anywhere (the
  statement's own paragraph included) never goes into its stand-in. Every record carries
  ``WARC-Wikiref-Standin: true`` and a description; the HTML page shows a stand-in notice.
* ``MANIFEST.json``: files with sha256, counts, the gensim version and the stand-in note.

Deterministic: fixed WARC-Date, record ids derived from content, records sorted by URL, gzip
members without timestamps; the same params give the same bytes.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import logging
import shutil
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

from wikiref import layout
from wikiref.files import atomic_path, sha256_file, write_json
from wikiref.standin import STANDIN_NOTE, Standin, write_standin_warc
from wikiref.wiki.dump import iter_pages
from wikiref.wiki.statements import Article, Statement, StatementConfig, kept_statements, parse_article

log = logging.getLogger(__name__)

GENSIM_DUMP = ("test", "test_data", "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2")
DUMP_PART = "enwiki-sample"


class SampleError(FileNotFoundError):
    """The sample cannot be built here (the gensim package or its dump fragment is missing)."""


def locate_gensim_dump() -> Path:
    """The dump fragment inside the installed gensim package (found without importing gensim)."""
    spec = importlib.util.find_spec("gensim")
    if spec is None or not spec.submodule_search_locations:
        raise SampleError("gensim is not installed; `pip install gensim` (it ships the sample dump)")
    path = Path(list(spec.submodule_search_locations)[0]).joinpath(*GENSIM_DUMP)
    if not path.is_file():
        raise SampleError(f"the gensim package has no {'/'.join(GENSIM_DUMP)} (looked at {path})")
    return path


def _section_order(n_sections: int, start: int) -> list[int]:
    """start, start+1, start-1, start+2, start-2, ... within [0, n_sections)."""
    order = [start]
    for d in range(1, n_sections):
        for idx in (start + d, start - d):
            if 0 <= idx < n_sections:
                order.append(idx)
    return order


def build_standins(
    articles: Sequence[tuple[int, Article]], target_tokens: int, stats: Counter | None = None
) -> list[Standin]:
    """One stand-in per URL cited (first citation, kept type) by a statement of ``articles``.

    ``articles``: (page_id, parsed article) in dump order.
    """
    stats = stats if stats is not None else Counter()
    # Every paragraph that cites each URL (any ref of the paragraph), over all articles.
    citing_paragraphs: dict[str, set[tuple[int, int, int]]] = {}
    for page_id, art in articles:
        for sec in art.sections:
            for p_idx, urls in enumerate(sec.paragraph_urls):
                for u in urls:
                    citing_paragraphs.setdefault(u, set()).add((page_id, sec.index, p_idx))
    articles_by_id = {pid: art for pid, art in articles}
    first_citing: dict[str, tuple[int, Article, Statement]] = {}
    n_citing: Counter = Counter()
    for page_id, art in articles:
        for st in kept_statements(art):
            url = st.citation.url.strip()
            n_citing[url] += 1
            first_citing.setdefault(url, (page_id, art, st))
    out: list[Standin] = []
    for url in sorted(first_citing):
        page_id, art, first = first_citing[url]
        sec_idx = first.section_index
        banned = citing_paragraphs.get(url, set())
        # The same text can stand in several places (captions, repeated notes): ban it everywhere.
        banned_text = {articles_by_id[pid].sections[s].paragraphs[p] for pid, s, p in banned}
        chosen: list[tuple[int, int, str]] = []
        tokens = 0
        for s in _section_order(len(art.sections), sec_idx):
            sec = art.sections[s]
            if sec.skipped:
                continue
            for p_idx, para in enumerate(sec.paragraphs):
                if not para or (page_id, s, p_idx) in banned or para in banned_text:
                    continue
                chosen.append((s, p_idx, para))
                tokens += len(para.split())
                if tokens >= target_tokens:
                    break
            if tokens >= target_tokens:
                break
        if not chosen:
            stats["standin_skipped:no_other_paragraph"] += 1
            continue
        chosen.sort()
        sections = []
        for s, _, _ in chosen:
            name = " > ".join(art.sections[s].query)
            if name not in sections:
                sections.append(name)
        title = first.citation.title
        out.append(
            Standin(
                url=url,
                title=title or f"{art.title} – {art.sections[sec_idx].query[-1]}",
                article=art.title,
                page_id=page_id,
                sections=sections,
                paragraphs=[p for _, _, p in chosen],
                tokens=tokens,
                citing_statements=n_citing[url],
            )
        )
        stats["standin_pages"] += 1
        stats["standin_tokens"] += tokens
    return out


def build_sample(out_dir: str | Path, sample: Mapping, collect: Mapping, articles_out: list | None = None) -> dict:
    """Materialise the offline sample under ``out_dir``; returns the manifest (also written).

    ``articles_out``, when given, receives the parsed (page_id, Article) pairs (tests reuse them).
    """
    out = Path(out_dir)
    src = locate_gensim_dump()
    dump_path = out / layout.SAMPLE_DUMP
    with atomic_path(dump_path) as tmp:
        shutil.copyfile(src, tmp)
    log.info("copied %s -> %s", src, dump_path)

    cfg = StatementConfig.from_params(collect)
    stats: Counter = Counter()
    articles: list[tuple[int, Article]] = []
    for page in iter_pages(dump_path, stats):
        articles.append((page.page_id, parse_article(page.title, page.text, cfg, stats)))
    log.info("parsed %d articles, %d kept statements", len(articles), stats["statements_kept"])
    if articles_out is not None:
        articles_out.extend(articles)

    build_stats: Counter = Counter()
    pages = build_standins(articles, int(sample["standin_target_tokens"]), build_stats)
    warc_path = out / layout.SAMPLE_WARC
    gensim_version = importlib.metadata.version("gensim")
    n = write_standin_warc(pages, warc_path, f"gensim {gensim_version} {'/'.join(GENSIM_DUMP)}")
    log.info("wrote %d stand-in pages to %s", n, warc_path)

    urls = {st.citation.url.strip() for _, a in articles for st in kept_statements(a)}
    manifest = {
        "standin": True,
        "note": STANDIN_NOTE,
        "dump": {
            "source": f"gensim=={gensim_version}: gensim/{'/'.join(GENSIM_DUMP)}",
            "license": "CC BY-SA (Wikipedia text)",
            "pages_read": stats["pages_read"],
            "articles": len(articles),
            "statements_kept": stats["statements_kept"],
            "kept_by_type": {
                k.split(":", 1)[1]: v for k, v in sorted(stats.items()) if k.startswith("kept_citation_type:")
            },
        },
        "gensim_version": gensim_version,
        "warc": {
            "records": n,
            "cited_urls": len(urls),
            "skipped": {
                k.split(":", 1)[1]: v for k, v in sorted(build_stats.items()) if k.startswith("standin_skipped:")
            },
            "mean_tokens": round(build_stats["standin_tokens"] / n, 1) if n else 0.0,
            "standin_target_tokens": int(sample["standin_target_tokens"]),
            "record_header": "WARC-Wikiref-Standin: true",
        },
        "files": {},
    }
    for f in sorted(
        p
        for p in out.rglob("*")
        if p.is_file()
        and p.name != layout.SAMPLE_MANIFEST
        and not p.name.startswith(".")
        and p.parent.name in ("dump", "warc")
    ):
        manifest["files"][f.relative_to(out).as_posix()] = {"bytes": f.stat().st_size, "sha256": sha256_file(f)}
    write_json(out / layout.SAMPLE_MANIFEST, manifest)
    return manifest


def run(params: Mapping, inputs: Mapping, outputs: Mapping, *, articles_out: list | None = None) -> dict:
    """The sample job: ``params`` holds the ``sample`` and ``collect`` sections; ``inputs`` is empty (the
    dump fragment comes from the installed gensim package); ``outputs["dir"]`` is the sample folder
    (``sample.out_dir``). Writes ``dump/``, ``warc/`` and the manifest there and returns the manifest.
    ``articles_out``, when given, receives the parsed (page_id, Article) pairs."""
    return build_sample(outputs["dir"], params["sample"], params["collect"], articles_out=articles_out)
