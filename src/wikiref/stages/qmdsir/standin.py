"""A STAND-IN MS MARCO QnA v2.1 pair of files built from the Wikipedia sample dump.

MS MARCO may not be redistributed, and the offline sample must run the QmdsIr builder end to end, so
this module writes ``train_v2.1.json`` and ``dev_v2.1.json`` in the real v2.1 column-oriented layout
(:mod:`wikiref.stages.qmdsir.reader` reads them like the real files) from the Wikipedia fragment
(``resources/sample/dump/enwiki-sample.xml.bz2``):

* one query per non-skipped article section with at least :data:`MIN_SENTENCES` spaCy sentences
  (the first :data:`MAX_SENTENCES` are used): ``f"{section heading} {article title}"`` lower-cased
  (the lead section: the title alone); ``query_id`` = 1, 2, ... in dump order; ``query_type``
  ``DESCRIPTION``; ``wellFormedAnswers`` ``"[]"``;
* passages = windows of :data:`WINDOW` consecutive sentences of the section, the window starting at
  sentence ``k`` with the URL ``https://standin.wikiref.invalid/<title-slug>/<section-slug>/<k>``;
  their order is shuffled (MS MARCO's passages are in ranking order, the selected one anywhere);
* a kind per query, drawn from a hash of the query seeded with ``seed`` (:data:`KINDS`), so that every
  filter of :mod:`wikiref.stages.qmdsir.build` fires on some records:

  ``overlap``  windows with stride 1; the selected window has a window on each side, which together
               contain all its sentences (covered); one in three also has an extra passage from the
               selected window's URL (the next sentence), which the builder omits as the source document;
  ``disjoint`` the selected window shares no sentence with the other passages (coverage fails; needs
               8 sentences, else ``overlap``);
  ``short``    the selected passage is a single sentence (summary too short);
  ``two``      only 2 passages (too few documents);
  ``none``     no selected passage, answers ``["No Answer Present."]``;

  answers = ``[the first sentence of the selected passage]``;
* about :data:`TRAIN_PERCENT` % of the queries (by another seeded hash of the query) go to train, the
  rest to dev; plus ``NOTICE.txt`` and ``MANIFEST.json`` (counts, sha256 of every file, ``standin: true``).

Deterministic: the same dump, params and seed give byte-identical files.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from wikiref.files import sha256_file, stable_id, write_json, write_text

URL_PREFIX = "https://standin.wikiref.invalid"
WINDOW = 3
MIN_SENTENCES = 6  # a section with fewer gives no query
MAX_SENTENCES = 12  # at most 10 windows per query, like MS MARCO's ~10 passages
DISJOINT_MIN_SENTENCES = 8
TRAIN_PERCENT = 75
KINDS = (("overlap", 60), ("disjoint", 13), ("short", 9), ("two", 9), ("none", 9))  # percent of the queries
NO_ANSWER = "No Answer Present."
FILES = {"train": "train_v2.1.json", "dev": "dev_v2.1.json"}
NOTICE = "NOTICE.txt"
MANIFEST = "MANIFEST.json"
STANDIN_NOTE = (
    "STAND-IN: built by `wikiref qmdsir standin` from the Wikipedia sample dump, not MS MARCO (which may "
    "not be redistributed); numbers computed on it are NOT comparable to the paper's QmdsIr."
)
STANDIN_NOTICE = f"""STAND-IN MS MARCO QnA v2.1 FILES - NOT MS MARCO

This folder is NOT the MS MARCO QnA dataset (Microsoft; it may not be redistributed), and MS MARCO
itself is only the open substitute for the private Bing logs of the QmdsIr paper (Pasunuru et al.,
AAAI 2021). It was built by `wikiref qmdsir standin` from the Wikipedia sample dump:
  queries   = "<section heading> <article title>", lower-cased, one per article section
  passages  = windows of {WINDOW} consecutive sentences of the section (stand-in URLs under {URL_PREFIX})
  selected  = one window per query (some queries: none, a one-sentence passage, only two passages,
              or a window that no other passage overlaps), so every filter of the builder is exercised
  answers   = the first sentence of the selected passage
It uses exactly the v2.1 column-oriented JSON layout so that the QmdsIr builder runs end to end
offline. Numbers computed on it are NOT comparable to the paper's QmdsIr statistics or results.
"""


@dataclass
class Query:
    query_id: int
    query: str
    split: str
    kind: str
    passages: list[dict]  # {"is_selected", "passage_text", "url"}, in the written order
    answers: list[str]


def slug(text: str) -> str:
    """``"History of Anarchism"`` -> ``"history-of-anarchism"`` (``"x"`` when nothing is left)."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def _hash(seed: int, *parts: str) -> int:
    return int(stable_id(str(seed), *parts), 16)


def kind_of(query: str, seed: int) -> str:
    """The query's kind (:data:`KINDS`), from a hash of the query seeded with ``seed``."""
    point = _hash(seed, "kind", query) % 100
    for kind, share in KINDS:
        if point < share:
            return kind
        point -= share
    return KINDS[0][0]


def split_of(query: str, seed: int) -> str:
    return "train" if _hash(seed, "split", query) % 100 < TRAIN_PERCENT else "dev"


def make_passages(kind: str, sentences: list[str], base_url: str, rng: random.Random) -> tuple[str, list[dict], list]:
    """``(kind actually used, passages, answers)`` for one section's sentences (at least
    :data:`MIN_SENTENCES`); ``rng`` (seeded from the query) picks the selected window, the extra
    source-URL passage and the passage order."""
    n = len(sentences)

    def window(k: int) -> str:
        return " ".join(sentences[k : k + WINDOW])

    def passage(k: int, text: str, selected: bool = False) -> dict:
        return {"is_selected": int(selected), "passage_text": text, "url": f"{base_url}/{k}"}

    if kind == "disjoint" and n < DISJOINT_MIN_SENTENCES:
        kind = "overlap"
    starts = range(n - WINDOW + 1)
    sel = 1 + rng.randrange(n - WINDOW - 1)  # a window with a neighbour on each side
    answers = [sentences[sel]]
    if kind == "overlap":
        passages = [passage(k, window(k), k == sel) for k in starts]
        if rng.randrange(3) == 0:  # another passage of the selected window's page: omitted by the builder
            passages.append(passage(sel, sentences[sel + WINDOW]))  # the selected window's URL
    elif kind == "disjoint":
        passages = [passage(0, window(0), True)] + [passage(k, window(k)) for k in starts if k >= WINDOW]
        answers = [sentences[0]]
    elif kind == "short":
        passages = [passage(k, sentences[k] if k == sel else window(k), k == sel) for k in starts]
    elif kind == "two":
        passages = [passage(sel - 1, window(sel - 1)), passage(sel, window(sel), True)]
    elif kind == "none":
        passages = [passage(k, window(k)) for k in starts]
        answers = [NO_ANSWER]
    else:
        raise ValueError(f"unknown stand-in kind {kind!r}")
    rng.shuffle(passages)
    return kind, passages, answers


def iter_articles(
    dump: str | Path, collect: Mapping
) -> Iterator[tuple[str, list[tuple[tuple[str, ...], str]], Counter]]:
    """Per article of the dump: its title, its sections with text as ``(heading path, text)``
    (paragraphs joined by line breaks, which always end a sentence) and the counts of its sections:
    ``sections``, ``sections_skipped`` (reference lists etc., ``collect.statements.skip_sections``),
    ``sections_empty``."""
    from wikiref.wiki.dump import iter_pages
    from wikiref.wiki.statements import StatementConfig, parse_article

    cfg = StatementConfig.from_params(collect)
    for page in iter_pages(dump, Counter()):
        article = parse_article(page.title, page.text, cfg)
        counts: Counter = Counter()
        sections = []
        for section in article.sections:
            counts["sections"] += 1
            if section.skipped:
                counts["sections_skipped"] += 1
                continue
            paragraphs = [p.strip() for p in section.paragraphs if p.strip()]
            if not paragraphs:
                counts["sections_empty"] += 1
                continue
            sections.append((tuple(section.query), "\n".join(paragraphs)))
        yield article.title, sections, counts


def build_queries(
    dump: str | Path, *, nlp, collect: Mapping, seed: int, max_queries: int = 0, batch_size: int = 64
) -> tuple[list[Query], Counter]:
    """The stand-in queries of the dump (at most ``max_queries``, the first ones in dump order; 0 = all)
    and the counts (``articles``, ``sections``, ``sections_skipped``, ``sections_empty``,
    ``sections_too_short``, ``queries``). Each article's sections are split into sentences with ``nlp``
    (the project's spaCy pipeline); reading stops at the article that completes ``max_queries``."""
    from wikiref.text import split_sentences

    stats: Counter = Counter()
    queries: list[Query] = []
    articles = iter_articles(dump, collect)
    try:
        for title, sections, counts in articles:
            stats["articles"] += 1
            stats.update(counts)
            per_section = split_sentences(nlp, (t for _, t in sections), batch_size)
            for (path, _), sentences in zip(sections, per_section):
                if len(sentences) < MIN_SENTENCES:
                    stats["sections_too_short"] += 1
                    continue
                heading = path[-1] if len(path) > 1 else ""
                query = f"{heading} {title}".strip().lower()
                base_url = f"{URL_PREFIX}/{slug(title)}/{slug(' '.join(path[1:])) if heading else 'lead'}"
                rng = random.Random(_hash(seed, "passages", query))
                kind, passages, answers = make_passages(kind_of(query, seed), sentences[:MAX_SENTENCES], base_url, rng)
                queries.append(Query(len(queries) + 1, query, split_of(query, seed), kind, passages, answers))
            if max_queries and len(queries) >= max_queries:
                del queries[max_queries:]
                break
    finally:
        articles.close()
    stats["queries"] = len(queries)
    return queries, stats


def columns(queries: list[Query]) -> dict:
    """The v2.1 column-oriented object of ``queries`` (row keys "0", "1", ... in list order; columns in
    the order of the real files)."""
    rows = [(str(i), q) for i, q in enumerate(queries)]
    return {
        "answers": {k: q.answers for k, q in rows},
        "passages": {k: q.passages for k, q in rows},
        "query": {k: q.query for k, q in rows},
        "query_id": {k: q.query_id for k, q in rows},
        "query_type": {k: "DESCRIPTION" for k, _ in rows},
        "wellFormedAnswers": {k: "[]" for k, _ in rows},
    }


def write_standin(
    out_dir: str | Path, queries: list[Query], stats: Mapping, *, seed: int, dump: str | Path, max_queries: int
) -> dict:
    """Write the two v2.1 files, ``NOTICE.txt`` and ``MANIFEST.json`` into ``out_dir`` (an empty folder:
    the caller swaps it in atomically); returns the manifest."""
    out_dir = Path(out_dir)
    files: dict[str, dict] = {}
    for split, name in FILES.items():
        part = [q for q in queries if q.split == split]
        write_text(out_dir / name, json.dumps(columns(part), ensure_ascii=False, separators=(",", ":")) + "\n")
        files[name] = {"split": split, "queries": len(part)}
    write_text(out_dir / NOTICE, STANDIN_NOTICE)
    files[NOTICE] = {}
    for name, entry in files.items():
        entry["bytes"] = (out_dir / name).stat().st_size
        entry["sha256"] = sha256_file(out_dir / name)
    manifest = {
        "standin": True,
        "note": STANDIN_NOTE,
        "format": "MS MARCO QnA v2.1 (column-oriented JSON)",
        "source": {"dump": Path(dump).name, "sha256": sha256_file(dump)},
        "seed": seed,
        "settings": {
            "window": WINDOW,
            "min_sentences": MIN_SENTENCES,
            "max_sentences": MAX_SENTENCES,
            "train_percent": TRAIN_PERCENT,
            "kinds_percent": dict(KINDS),
            "standin_queries": max_queries,
        },
        "counts": {
            **dict(sorted(stats.items())),
            "by_split": dict(sorted(Counter(q.split for q in queries).items())),
            "by_kind": dict(sorted(Counter(q.kind for q in queries).items())),
        },
        "files": files,
    }
    write_json(out_dir / MANIFEST, manifest)
    return manifest


def read_manifest(folder: str | Path) -> dict | None:
    """The folder's MANIFEST.json, or None when it has none (or an unreadable one)."""
    path = Path(folder) / MANIFEST
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
