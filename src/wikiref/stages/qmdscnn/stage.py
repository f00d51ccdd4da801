"""The QmdsCnn stage's jobs (Pasunuru et al., AAAI 2021, §3.1).

* :func:`standin` (``wikiref qmdscnn standin``, when ``qmdscnn.standin`` is auto/true): the Wikipedia
  sample dump -> a STAND-IN ``.story`` corpus (:mod:`wikiref.stages.qmdscnn.standin`);
* :func:`articles` (``wikiref qmdscnn articles``, one job per shard): stories + URL split lists -> one row
  per kept story (:data:`wikiref.schemas.QMDSCNN_ARTICLES`): split, title (the query), chunks of 1-4
  consecutive paragraphs (seeded per story) split into sentences, highlights; every drop counted;
* :func:`build` (``wikiref qmdscnn build``): every chunk of the corpus indexed with BM25, the top
  ``qmdscnn.retrieved`` chunks of other articles appended to each example as ``retrieved`` documents ->
  the common example files (:data:`wikiref.schemas.EXAMPLE`), the Table 1 statistics and the metrics.
"""

from __future__ import annotations

import logging
import random
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

from wikiref.stages.qmdscnn.corpus import CorpusError

log = logging.getLogger(__name__)

SOURCE = "qmdscnn"
TITLE = (
    "QmdsCnn statistics (Pasunuru et al. 2021, Table 1): CNN/DailyMail stories as query-focused multi-document examples"
)
MAX_LOCATIONS = 20  # files named in the stats per drop reason


def shard_of(sid: str, shards: int) -> int:
    """The shard of a story id (hex sha1; other names through a stable hash)."""
    from wikiref.files import stable_id

    try:
        value = int(sid, 16)
    except ValueError:
        value = int(stable_id(sid), 16)
    return value % int(shards)


def chunk_sizes(n_paragraphs: int, lo: int, hi: int, seed: int, sid: str) -> list[int]:
    """Paragraphs per chunk for a story: sizes drawn uniformly from [lo, hi] with an RNG seeded by
    (seed, story id), the last chunk taking what is left; a function of the story alone."""
    rng = random.Random(f"{seed}:{sid}")
    sizes, left = [], n_paragraphs
    while left > 0:
        size = min(rng.randint(lo, hi), left)
        sizes.append(size)
        left -= size
    return sizes


# --------------------------------------------------------------------------------------------- standin
def standin(params: Mapping, inputs: Mapping, outputs: Mapping) -> dict:
    """The standin job: ``inputs["dump"]`` (the sample's dump file) -> the STAND-IN corpus folder
    ``outputs["dir"]``, replaced as a whole once complete. Params: seed, text, collect, qmdscnn."""
    from wikiref.files import atomic_dir
    from wikiref.stages.qmdscnn import standin as builder
    from wikiref.text import from_params

    dump = Path(inputs["dump"])
    if not dump.is_file():
        raise FileNotFoundError(f"{dump}: the sample dump is missing (run `wikiref sample` first)")
    nlp = from_params(params["text"])
    with atomic_dir(outputs["dir"]) as tmp:
        manifest = builder.build(
            dump,
            tmp,
            seed=int(params["seed"]),
            collect=params["collect"],
            nlp=nlp,
            max_articles=int(params["qmdscnn"]["standin_articles"]),
        )
    return manifest


# -------------------------------------------------------------------------------------------- articles
def _title(fetcher, url: str, list_url: str, strip: list[str], stats: Counter) -> tuple[str, str, str]:
    """(title, query_origin, why the archived title was not used)."""
    from wikiref.stages.qmdscnn.corpus import clean_title, page_title, title_from_url

    why = "backend_none"
    if fetcher is not None:
        res = fetcher.fetch(url, archive_url=list_url)
        if res.ok:
            title = clean_title(page_title(res.body), strip)
            if title:
                stats["title:archived_title"] += 1
                return title, "archived_title", ""
            why = "no_title_in_page"
        else:
            why = res.reason or "fetch_failed"
    stats[f"title_fetch:{why}"] += 1
    title = title_from_url(list_url)
    if title:
        stats["title:url_path"] += 1
        return title, "url_path", why
    return "", "", why


def _fetcher(params: Mapping, warc_paths: Sequence[str]):
    from wikiref.web.fetch import fetcher_for

    return fetcher_for(params["collect"]["fetch"], params["qmdscnn"]["titles"]["backend"], warc_paths)


def _shard_stories(root: Path, q: Mapping, shard: int, tally) -> tuple[dict, dict, dict, list[str], list[str]]:
    """(URL -> split, story id -> URL, story id -> file, the shard's story ids, those to read): the
    stories of the shard that are neither missing, unlisted nor listed in several splits (counted drops)."""
    from wikiref.stages.qmdscnn.corpus import EXPECTED_LAYOUT, read_split_lists, story_id

    shards = int(q["shards"])
    stats, drop = tally.counts, tally.drop
    list_stats: Counter = Counter()
    url_split = read_split_lists(root, q["split_lists"], list_stats)
    if shard == 0:  # facts about the lists, counted once over the shards
        stats.update(list_stats)
    by_id = {story_id(u): u for u in url_split}
    files = {p.stem: p for p in sorted(root.glob("*.story"))}
    if not files:
        raise CorpusError(f"{root}: no .story files\n{EXPECTED_LAYOUT}")
    mine = sorted(s for s in set(by_id) | set(files) if shard_of(s, shards) == shard)
    for sid in mine:
        if sid not in files:
            drop("missing_story", f"{sid}.story ({by_id[sid]})")
        elif sid not in by_id:
            drop("not_in_split_lists", files[sid].name)
        elif url_split[by_id[sid]] is None:
            drop("url_in_several_splits", f"{files[sid].name} ({by_id[sid]})")
    todo = [s for s in mine if s in files and s in by_id and url_split[by_id[s]] is not None]
    stats["story_files"] = sum(1 for s in files if shard_of(s, shards) == shard)
    stats["listed_urls"] = sum(1 for s in by_id if shard_of(s, shards) == shard)
    return url_split, by_id, files, mine, todo


def _read_stories(params: Mapping, inputs: Mapping, todo: list[str], files: Mapping, by_id: Mapping, tally, log_as):
    """(story id, list URL, URL, title, query origin, title_fetch, story) of every readable story with a
    title (counted drops: ``not_utf8``, the parser's reasons, ``no_title``). ``log_as``: (shard, start time)."""
    from wikiref.stages.qmdscnn.corpus import original_url, parse_story

    q = params["qmdscnn"]
    shard, started = log_as
    warc_paths = inputs.get("warc_paths", q["titles"]["warc_paths"])
    fetcher = _fetcher(params, warc_paths)
    strip = list(q["titles"]["strip"])
    parsed = []
    for n, sid in enumerate(todo, 1):
        path = files[sid]
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError as exc:
            tally.drop("not_utf8", f"{path.name} (byte {exc.start})")
            continue
        story, reason = parse_story(text)
        if story is None:
            tally.drop(reason, path.name)
            continue
        list_url = by_id[sid]
        url = original_url(list_url)
        title, origin, why = _title(fetcher, url, list_url, strip, tally.counts)
        if not title:
            tally.drop("no_title", path.name)
            continue
        parsed.append((sid, list_url, url, title, origin, why, story))
        if n % 1000 == 0:
            log.info("shard %d: %d/%d stories read (%.0f/s)", shard, n, len(todo), n / (time.monotonic() - started))
    return parsed


def _article_rows(params: Mapping, parsed: list, url_split: Mapping, root: Path, standin: bool, stats) -> list[dict]:
    """One :data:`wikiref.schemas.QMDSCNN_ARTICLES` row per parsed story: its paragraphs split into
    sentences (one spaCy pass over the shard) and grouped into the story's seeded chunks."""
    from wikiref.text import from_params, split_sentences

    lo, hi = params["qmdscnn"]["chunk_paragraphs"]
    seed = int(params["seed"])
    # sentences of every paragraph (the project's spaCy pipeline, one pass over the shard)
    nlp = from_params(params["text"])
    paragraphs = [p for *_, story in parsed for p in story.paragraphs]
    batch = int(params["text"]["batch_size"])
    sentences = [[" ".join(s.split()) for s in sents] for sents in split_sentences(nlp, paragraphs, batch)]
    rows, k = [], 0
    for sid, list_url, url, title, origin, why, story in parsed:
        para_sents = sentences[k : k + len(story.paragraphs)]
        k += len(story.paragraphs)
        sizes = chunk_sizes(len(story.paragraphs), int(lo), int(hi), seed, sid)
        chunks, start = [], 0
        for size in sizes:
            chunks.append([s for ps in para_sents[start : start + size] for s in ps])
            start += size
        kept = [(c, n) for c, n in zip(chunks, sizes) if c]
        rows.append(
            {
                "story_id": sid,
                "split": url_split[list_url],
                "url": url,
                "list_url": list_url,
                "title": title,
                "query_origin": origin,
                "title_fetch": why,
                "chunks": [c for c, _ in kept],
                "chunk_paragraphs": [n for _, n in kept],
                "highlights": story.highlights,
                "standin": standin,
                "input_file": f"{root.name}/{sid}.story",
            }
        )
        stats[f"kept:{url_split[list_url]}"] += 1
        stats["chunks"] += len(kept)
        stats["paragraphs"] += len(story.paragraphs)
    return rows


def articles(params: Mapping, inputs: Mapping, outputs: Mapping, *, shard: int) -> dict:
    """The articles job of one shard.

    ``params``: seed, text, collect (``collect.fetch``: cache and HTTP settings of the title lookups),
    qmdscnn; ``inputs["stories"]``: the corpus folder (``.story`` files + URL lists), ``inputs["warc_paths"]``
    (optional): archives for the titles (default ``qmdscnn.titles.warc_paths``); ``outputs["articles"]``
    (parquet, :data:`wikiref.schemas.QMDSCNN_ARTICLES`, rows sorted by story id) and ``outputs["stats"]``
    (JSON counts). Stories whose sha1 falls in another shard are left to their own job. Counted drops:
    ``missing_story`` (listed, no file), ``not_in_split_lists`` (a file no list names), ``not_utf8``,
    ``no_highlights``, ``empty_article``, ``empty_highlights``, ``text_after_highlights``, ``no_title``,
    ``url_in_several_splits``; each with up to 20 file names in ``locations``."""
    import pyarrow as pa

    from wikiref.examples import Tally
    from wikiref.files import write_json, write_parquet
    from wikiref.schemas import QMDSCNN_ARTICLES
    from wikiref.stages.qmdscnn.corpus import is_standin_dir

    q = params["qmdscnn"]
    shards = int(q["shards"])
    if not 0 <= shard < shards:
        raise CorpusError(f"shard {shard} outside 0..{shards - 1} (qmdscnn.shards)")
    root = Path(inputs["stories"])
    tally = Tally(max_locations=MAX_LOCATIONS)
    stats = tally.counts
    url_split, by_id, files, mine, todo = _shard_stories(root, q, shard, tally)
    standin = is_standin_dir(root)
    started = time.monotonic()
    parsed = _read_stories(params, inputs, todo, files, by_id, tally, (shard, started))
    rows = _article_rows(params, parsed, url_split, root, standin, stats)
    stats["kept"] = len(rows)
    write_parquet(outputs["articles"], pa.Table.from_pylist(rows, schema=QMDSCNN_ARTICLES))
    out = {
        "shard": shard,
        "shards": shards,
        "standin": standin,
        "stories_dir": str(root),
        **tally.to_json(),
        "seconds": round(time.monotonic() - started, 3),
    }
    write_json(outputs["stats"], out)
    log.info("shard %d: %d stories kept of %d, %d chunks", shard, len(rows), len(mine), stats["chunks"])
    return out


# ----------------------------------------------------------------------------------------------- build
def _read_articles(paths: Sequence) -> list[dict]:
    """Every shard's article rows, ordered by story id (a story in two shards is an error)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from wikiref.schemas import QMDSCNN_ARTICLES, require_columns

    tables = []
    for path in paths:
        t = pq.read_table(str(path))
        require_columns(t.column_names, QMDSCNN_ARTICLES.names, str(path))
        tables.append(t.select(QMDSCNN_ARTICLES.names).cast(QMDSCNN_ARTICLES))
    arts = pa.concat_tables(tables).to_pylist() if tables else []
    arts.sort(key=lambda r: r["story_id"])
    dup = [k for k, v in Counter(r["story_id"] for r in arts).items() if v > 1]
    if dup:
        raise CorpusError(f"story ids in several shards: {dup[:5]}")
    return arts


def _shard_counts(paths: Sequence) -> tuple[Counter, dict[str, list[str]]]:
    """The articles jobs' counts summed and their drop locations joined."""
    from wikiref.files import read_json

    counts: Counter = Counter()
    locations: dict[str, list[str]] = {}
    for path in paths:
        shard_stats = read_json(path)
        counts.update(shard_stats["counts"])
        for reason, where in shard_stats.get("locations", {}).items():
            locations.setdefault(reason, []).extend(where)
    return counts, locations


def _example(art: Mapping, hits, owner: list, arts: list) -> dict:
    """One common example: the article's chunks (``original``) then the retrieved chunks of others."""
    from wikiref import examples

    sid = art["story_id"]
    docs = [
        examples.document(f"{sid}-c{j}", sents, title=art["title"], url=art["url"], origin="original")
        for j, sents in enumerate(art["chunks"])
    ]
    for hit in hits:
        a, j = owner[hit.chunk]
        other = arts[a]
        docs.append(
            examples.document(
                f"{other['story_id']}-c{j}",
                other["chunks"][j],
                title=other["title"],
                url=other["url"],
                origin="retrieved",
                score=hit.score,
            )
        )
    return examples.example(
        SOURCE,
        sid,
        split=art["split"],
        query=[art["title"]],
        documents=docs,
        summary=art["highlights"],
        query_origin=art["query_origin"],
        standin=art["standin"],
        input_file=art["input_file"],
        meta={
            "url": art["url"],
            "list_url": art["list_url"],
            "title_fetch": art["title_fetch"],
            "chunk_paragraphs": art["chunk_paragraphs"],
        },
    )


def _notes(q: Mapping, k: int, counts: Mapping) -> str:
    return (
        "Documents: the article's chunks of "
        f"{q['chunk_paragraphs'][0]}-{q['chunk_paragraphs'][1]} consecutive paragraphs (original) + the top "
        f"{k} BM25 chunks of other articles for the title (retrieved"
        + (", whole corpus as in the paper" if q["retrieve_across_splits"] else ", same split only")
        + "). Tokens: \\w+ runs and punctuation marks. Queries: "
        + ", ".join(f"{k.split(':', 1)[1]} {v}" for k, v in sorted(counts.items()) if k.startswith("title:"))
        + "."
    )


def build(params: Mapping, inputs: Mapping, outputs: Mapping) -> dict:
    """The build job: ``inputs["articles"]`` / ``inputs["stats"]`` (every shard) -> ``outputs["splits"]``
    (split -> common example file), ``outputs["table"]`` (stem) and ``outputs["metrics"]``. Params:
    profile, qmdscnn.

    Articles are ordered by story id (so the result does not depend on the number of shards); every
    chunk of every article is indexed with BM25 (:mod:`wikiref.stages.qmdscnn.retrieval`); an example's
    documents are its own chunks (``original``) then the ``qmdscnn.retrieved`` best chunks of other
    articles for its title (``retrieved``, with their BM25 score), from the whole corpus or, with
    ``retrieve_across_splits: false``, from its own split only. Fewer hits than asked (few chunks share a
    query word) are counted as ``few_retrieved``."""
    import numpy as np

    from wikiref import examples
    from wikiref.layout import SPLITS
    from wikiref.stages.qmdscnn.retrieval import ChunkIndex, tokenize

    q = params["qmdscnn"]
    arts = _read_articles(inputs["articles"])
    counts, locations = _shard_counts(inputs["stats"])

    chunk_text, groups, owner = [], [], []
    for i, art in enumerate(arts):
        for j, sents in enumerate(art["chunks"]):
            chunk_text.append(" ".join(sents))
            groups.append(i)
            owner.append((i, j))
    started = time.monotonic()
    index = ChunkIndex(tokenize(chunk_text), groups, k1=q["bm25"]["k1"], b=q["bm25"]["b"])
    index_seconds = time.monotonic() - started
    log.info("BM25 index: %d chunks of %d articles in %.1fs", len(chunk_text), len(arts), index_seconds)
    chunk_split = np.array([arts[i]["split"] for i, _ in owner]) if owner else np.array([], dtype=str)
    allowed = None if q["retrieve_across_splits"] else {s: chunk_split == s for s in SPLITS}
    k = int(q["retrieved"])
    query_tokens = tokenize([a["title"] for a in arts])
    rows = []
    started = time.monotonic()
    for i, art in enumerate(arts):
        if not art["chunks"]:
            counts["dropped:no_sentence"] += 1
            continue
        hits = index.top(
            query_tokens[i], k, exclude_group=i, allowed=None if allowed is None else allowed[art["split"]]
        )
        if len(hits) < k:
            counts["few_retrieved"] += 1
        rows.append(_example(art, hits, owner, arts))
        if (i + 1) % 10000 == 0:
            log.info("retrieval: %d/%d examples (%.0f/s)", i + 1, len(arts), (i + 1) / (time.monotonic() - started))
    retrieval_seconds = time.monotonic() - started
    counts["examples"] = len(rows)
    return examples.finish(
        SOURCE,
        rows,
        outputs,
        profile=params["profile"],
        title=TITLE,
        counts=counts,
        notes=_notes(q, k, counts),
        extra={
            "chunks": len(chunk_text),
            "index_bytes": index.nbytes(),
            "index_seconds": round(index_seconds, 3),
            "retrieval_seconds": round(retrieval_seconds, 3),
            "locations": locations,
            "retrieve_across_splits": bool(q["retrieve_across_splits"]),
        },
    )
